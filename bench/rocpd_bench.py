"""Many ranks' rocpd databases: roofscope on all cores against a sequential sqlite3 script.

    python bench/rocpd_bench.py [--ranks 64] [--repeat 3] [--jobs N] [--out RESULTS.json]

Generates ``--ranks`` per-process rocpd databases with the real schema (bench/gen_rocpd.py:
4 x 1004 dispatches each, 257,024 for 64 ranks, rank 37 made 20% slower in two kernels),
then runs, taking turns, ``--repeat`` times each:

- ``roofscope``: ``roofscope analyze DIR --json`` (the full check-up: every database merged,
  per-rank view, timeline, diagnosis), on every core;
- ``roofscope-1-job``: the same with ``--jobs 1`` (reading one database after another);
- ``sqlite3-dict``: a plain script that opens each database read-only one after another and
  sums ``end - start`` per kernel name from the ``kernels`` view into a dict.

Reports each contender's median wall seconds, its largest single-process peak RSS
(``os.wait4``), the peak of the summed RSS of its whole process tree (sampled from /proc every
10 ms, so worker processes count), and the ratios, all from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_rocpd import generate  # noqa: E402
from measure import take_turns  # noqa: E402

SQLITE_CODE = """\
import pathlib, sqlite3, sys
totals = {}
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.db")):
    con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    for name, start, end in con.execute('SELECT name, start, "end" FROM kernels'):
        t = totals.get(name)
        if t is None:
            totals[name] = [1, end - start]
        else:
            t[0] += 1
            t[1] += end - start
    con.close()
print(len(totals), sum(t[0] for t in totals.values()))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="roofscope --jobs (default: all)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "job"
        paths = generate(root, args.ranks, 4, 37 % args.ranks, 1.2)
        size = sum(p.stat().st_size for p in paths)
        print(f"{len(paths)} databases, {size / 2**20:.1f} MiB, under {root}")
        roofscope = [args.python, "-m", "roofscope", "analyze", str(root), "--json"]
        jobs = ["--jobs", str(args.jobs)] if args.jobs else []
        contenders = {
            "roofscope": roofscope + jobs,
            "roofscope-1-job": [*roofscope, "--jobs", "1"],
            "sqlite3-dict": [args.python, "-c", SQLITE_CODE, str(root)],
        }
        runs = take_turns(contenders, args.repeat)
    median = {n: statistics.median(r.wall_s for r in rs) for n, rs in runs.items()}
    print(f"{'contender':<18}{'wall s (median)':>16}{'peak RSS MB':>13}{'tree RSS MB':>13}")
    for name, rs in runs.items():
        rss = max(r.peak_rss_mb for r in rs)
        tree = max(r.tree_rss_mb for r in rs)
        print(f"{name:<18}{median[name]:>16.2f}{rss:>13.0f}{tree:>13.0f}")
    base = median["sqlite3-dict"]
    for name in ("roofscope", "roofscope-1-job"):
        print(f"{name} / sqlite3-dict: {median[name] / base:.2f}x the time")
    print(f"cores: {os.cpu_count()}")
    if args.out:
        doc = {n: [asdict(r) for r in rs] for n, rs in runs.items()}
        args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r.exit_code == 0 for rs in runs.values() for r in rs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
