"""The JSON of every corpus profile and of the demo, as sha256 digests: a check that a change
meant to keep behaviour (a refactor) kept it.

    python tools/json_snapshot.py OUT.json [--corpus DIR] [--keep FOLDER]

Every folder under the corpus (recursively, so nested runs and single runs alike) and every
shipped demo profile is analysed in this process (``roofscope analyze PATH --json``); the file
maps each folder, relative to the corpus, to the digest of its JSON, or to ``exit N: first
line of the error`` when it is refused. ``--keep`` writes each JSON document too, for a diff.
tests/test_json_unchanged.py compares the committed digests with today's.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
DEMO = ROOT / "src" / "roofscope" / "data" / "demo"


def profiles(corpus: Path) -> list[Path]:
    """Every folder of the corpus, then the demo profiles shipped with the package."""
    demos = sorted(DEMO.iterdir())
    return sorted(p for p in corpus.rglob("*") if p.is_dir()) + demos


def analysed(path: Path, corpus: Path) -> tuple[str, str]:
    """(digest or refusal, the JSON) of ``roofscope analyze PATH --json``, with the corpus and
    demo folders written as ``<corpus>`` and ``<demo>`` so that a clone elsewhere agrees."""
    from roofscope.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["analyze", str(path), "--json"])
    if code != 0:
        first = (_portable(err.getvalue(), corpus).strip().splitlines() or [""])[0]
        return f"exit {code}: {first}", ""
    doc = _portable(out.getvalue(), corpus)
    return hashlib.sha256(doc.encode()).hexdigest(), doc


def _portable(text: str, corpus: Path) -> str:
    return text.replace(str(corpus), "<corpus>").replace(str(DEMO), "<demo>")


def key(path: Path, corpus: Path) -> str:
    return str(path.relative_to(corpus)) if path.is_relative_to(corpus) else f"demo:{path.name}"


def snapshot(corpus: Path, keep: Path | None = None, jobs: int = 1) -> dict[str, str]:
    """Each profile's digest; ``jobs`` worker processes share the profiles."""
    paths = profiles(corpus)
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(analysed, paths, [corpus] * len(paths)))
    digests = {}
    for path, (digest, doc) in zip(paths, results, strict=True):
        name = key(path, corpus)
        digests[name] = digest
        if keep is not None and doc:
            (keep / (name.replace("/", "__") + ".json")).write_text(doc, encoding="utf-8")
    return digests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    digests = snapshot(args.corpus, args.keep, args.jobs)
    args.out.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(digests)} profiles -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
