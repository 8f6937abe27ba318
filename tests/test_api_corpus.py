"""``roofscope.analyze(path)`` on every corpus profile and demo: its ``to_dict()`` is the CLI's
``analyze --json`` document (the committed digests of tests/data/json-digests.json, which
tests/test_json_unchanged.py holds the CLI to), it refuses what the CLI refuses with the same
line, and its ``to_pandas()`` has the document's kernels: name, calls and total_s.

And the one engine (issue 37): each profile is also read with ``scheduler="local", jobs=2``
(its runs on two worker processes, as ``analyze --scheduler local --jobs 2``); that report is
the same document but for its ``engine`` section, and the same text but for its ``engine:``
line.

Two analyses per profile, in worker processes (the profiles are independent)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from roofscope.errors import RoofscopeError
from tests.conftest import SHARED_CORPUS
from tests.test_json_unchanged import DIGESTS, _tool


def _cell(value: Any) -> Any:
    """A table cell as the JSON writes it: NaN (pandas' missing number) is null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def checked(path: Path, corpus: Path) -> tuple[str, str | None]:
    """(the digest of ``to_dict()``, or the refusal as the CLI words it; the first kernel
    whose row in ``to_pandas()`` differs from the document, or None)."""
    import roofscope
    from roofscope.checkup.options import worded

    tool = _tool()
    try:
        report = roofscope.analyze(path)
    except RoofscopeError as exc:
        line = tool._portable(f"roofscope: error: {worded(exc)}", corpus).strip()
        return f"exit {exc.exit_code}: {line.splitlines()[0]}", None
    doc = report.to_dict()
    if (other := _on_local_workers(path, report)) is not None:
        return "read apart", f"{path}: {other}"
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    digest = hashlib.sha256(tool._portable(text, corpus).encode()).hexdigest()
    if importlib.util.find_spec("pandas") is None:  # the digest alone: no roofscope[notebook]
        return digest, None
    frame = report.to_pandas()
    rows = zip(frame["name"], frame["calls"], frame["total_s"], strict=True)
    table = [(name, int(calls), _cell(total)) for name, calls, total in rows]
    wanted = [(k["name"], k["calls"], k["total_s"]) for k in doc["kernels"]]
    bad = next((f"{path}: {t} != {w}" for t, w in zip(table, wanted, strict=True) if t != w), None)
    return digest, bad if len(table) == len(wanted) else f"{path}: {len(table)} rows"


def _on_local_workers(path: Path, report: Any) -> str | None:
    """What differs when the runs are read on two local worker processes, or None."""
    import roofscope
    from roofscope.render.report.text import render_text

    apart = roofscope.analyze(path, scheduler="local", jobs=2)
    doc = apart.to_dict()
    if doc.pop("engine", None) is None:
        return "no engine section"
    if doc != report.to_dict():
        return "another document"
    lines = render_text(apart.checkup, width=100).splitlines(keepends=True)
    text = "".join(line for line in lines if not line.startswith("  engine: "))
    return None if text == render_text(report.checkup, width=100) else "another text"


def test_every_profile_as_the_cli() -> None:
    """Also the check that every corpus profile reads as before (tests/test_json_unchanged.py
    holds the demos through the command)."""
    committed = json.loads(DIGESTS.read_text(encoding="utf-8"))
    tool = _tool()
    paths = tool.profiles(SHARED_CORPUS) if SHARED_CORPUS.is_dir() else sorted(tool.DEMO.iterdir())
    with ProcessPoolExecutor(os.cpu_count() or 1, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(checked, paths, [SHARED_CORPUS] * len(paths)))
    keys = [tool.key(p, SHARED_CORPUS) for p in paths]
    differ = [k for k, (digest, _) in zip(keys, results, strict=True) if committed[k] != digest]
    assert differ == []
    assert [bad for _, bad in results if bad] == []
    assert len(paths) == len(committed) or not SHARED_CORPUS.is_dir()
