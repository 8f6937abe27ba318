"""Peak memory of ``roofscope analyze`` against the size of the largest table it must keep.

    python bench/memory_bench.py [--sizes 250000 1000000 2000000]

For a rocprof v1 ``results.csv`` and a Kineto trace of each size (dispatches), measures the
peak RSS of the whole check-up (``analyze --json``) and of a 1,000-dispatch file (imports,
DuckDB, the catalogue: the fixed part). The largest table roofscope keeps is ``dispatches``:
seven 8-byte columns, 56 B per dispatch. Reported per size: peak RSS, what it adds over the
fixed part per dispatch, and that as a multiple of the table (the bound docs/bad-inputs.md
documents).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_results_csv import generate
from kineto_bench import write_trace
from measure import run_one

TABLE_BYTES_PER_DISPATCH = 7 * 8
KINETO_EVENTS_PER_KERNEL = 5  # cpu_op, launch, two flow events, the kernel


def write_v1(folder: Path, dispatches: int) -> Path:
    path = folder / "results.csv"
    generate(path, dispatches)
    return path


def write_kineto(folder: Path, dispatches: int) -> Path:
    path = folder / "rank-0.pt.trace.json"
    write_trace(path, dispatches * KINETO_EVENTS_PER_KERNEL)
    return path


def peak_mb(path: Path) -> float:
    run = run_one(path.name, [sys.executable, "-m", "roofscope", "analyze", str(path), "--json"])
    if run.exit_code:
        raise SystemExit(f"roofscope failed on {path}")
    return run.tree_rss_mb


def measure(name: str, write: Callable[[Path, int], Path], sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fixed = peak_mb(write(Path(tmp), 1000))
    print(f"{name}: fixed part (1,000 dispatches) {fixed:.0f} MB", flush=True)
    heads = ("dispatches", "file MB", "peak MB", "B/dispatch", "x table")
    print("  " + "  ".join(f"{h:>10}" for h in heads))
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = write(Path(tmp), n)
            size_mb = path.stat().st_size / 2**20
            peak = peak_mb(path)
        per = (peak - fixed) * 2**20 / n
        print(
            f"  {n:>10,}  {size_mb:>10.0f}  {peak:>10.0f}  {per:>10.0f}  "
            f"{per / TABLE_BYTES_PER_DISPATCH:>10.2f}",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250_000, 1_000_000, 2_000_000])
    args = parser.parse_args()
    measure("rocprof v1 results.csv", write_v1, args.sizes)
    measure("Kineto trace", write_kineto, args.sizes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
