"""One enormous line: a rocprof v1 header followed by a single line of N MiB (default 1024).

    python bench/long_line_bench.py [--mib 1024]

The promised behaviour (docs/bad-inputs.md, class 40) is one `roofscope:` error line with exit
1, in bounded memory: the line is never held whole (DuckDB stops at its line-size limit, and
the row repair refuses a rejected line beyond 64 MiB). Prints the wall time, the peak RSS of
the process tree and the exit code.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from measure import run_one  # noqa: E402

HEADER = ROOT / "tests" / "data" / "rocprofv1-mi250x" / "laplacian" / "results.csv"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.csv"
        with path.open("w", encoding="utf-8") as f:
            f.write(HEADER.read_text(encoding="utf-8").splitlines(keepends=True)[0])
            block = "9" * (1 << 20)
            for _ in range(args.mib):
                f.write(block)
        run = run_one("roofscope", [sys.executable, "-m", "roofscope", "analyze", str(path)])
    print(f"{args.mib} MiB line: exit {run.exit_code}, {run.wall_s:.2f} s, "
          f"peak tree RSS {run.tree_rss_mb:.0f} MB")  # fmt: skip
    return 0 if run.exit_code == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
