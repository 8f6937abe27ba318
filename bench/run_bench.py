"""Benchmark roofscope against a DuckDB floor, pandas and a hand-written csv-module script.

Each contender runs as its own subprocess on the same rocprof ``results.csv``, ``--repeat``
times, the contenders taking turns so that a noisy stretch of the machine hits them all;
the runner keeps each one's median wall seconds (every run is kept in the JSON) and its
largest peak RSS (``os.wait4``).

    python bench/run_bench.py [--dispatches N] [--file PATH] [--python PYTHON] [--repeat N]
                              [--skip-csv-module] [--out RESULTS.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOR, ROOFSCOPE, CSV_MODULE = "duckdb-floor", "roofscope", "csv-module"

DUCKDB_CODE = """\
import sys, duckdb
duckdb.sql("SELECT KernelName, count(*), sum(EndNs - BeginNs) FROM read_csv($path) GROUP BY 1",
           params={"path": sys.argv[1]}).fetchall()
"""
PANDAS_CODE = """\
import sys, pandas as pd
df = pd.read_csv(sys.argv[1])
df.groupby("KernelName")["DurationNs"].agg(["count", "sum", "mean", "median", "min", "max", "std"])
"""
CSV_CODE = """\
import csv, sys
stats = {}
with open(sys.argv[1], newline="") as f:
    rows = csv.reader(f)
    header = next(rows)
    k, b, e = header.index("KernelName"), header.index("BeginNs"), header.index("EndNs")
    for row in rows:
        d = int(row[e]) - int(row[b])
        s = stats.get(row[k])
        if s is None:
            stats[row[k]] = [1, d, d, d]
        else:
            s[0] += 1
            s[1] += d
            if d < s[2]:
                s[2] = d
            if d > s[3]:
                s[3] = d
"""


@dataclass
class Result:
    name: str
    exit_code: int
    wall_s: float
    peak_rss_mb: float
    runs_s: tuple[float, ...] = ()

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def run_one(name: str, cmd: list[str], env: dict[str, str] | None = None) -> Result:
    """Run ``cmd`` once; return its wall time and its own peak RSS (MiB)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=HERE.parent, env=env
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-3:]
            print(f"[{name}] failed (exit {code}): " + " | ".join(tail), file=sys.stderr)
    rss_kib = usage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)  # bytes on macOS
    return Result(name, code, wall, rss_kib / 1024)


def summarise(name: str, runs: list[Result]) -> Result:
    """Median wall time and largest peak RSS of a contender's runs; failed if any run failed."""
    failed = [r for r in runs if not r.ok]
    if failed:
        return failed[0]
    walls = tuple(r.wall_s for r in runs)
    return Result(name, 0, statistics.median(walls), max(r.peak_rss_mb for r in runs), walls)


def _ok(r: Result | None) -> Result | None:
    return r if r is not None and r.ok else None


def targets(res: dict[str, Result]) -> list[tuple[str, str, str]]:
    """(target, measured value, PASS/FAIL/SKIP) for each goal of the issue."""
    roof, floor, csvm = (_ok(res.get(n)) for n in (ROOFSCOPE, FLOOR, CSV_MODULE))
    missing = "FAIL" if roof is None else "SKIP"  # no roofscope result fails every target
    goals = [
        ("wall <= 1.5x duckdb-floor", "n/a", missing),
        ("peak RSS <= 600 MB", "n/a", "FAIL"),
        (">= 10x faster than csv-module", "n/a", missing),
    ]
    if roof is not None:
        goals[1] = (goals[1][0], f"{roof.peak_rss_mb:.0f} MB", _pf(roof.peak_rss_mb <= 600))
        if floor is not None:
            ratio = roof.wall_s / floor.wall_s
            goals[0] = (goals[0][0], f"{ratio:.2f}x roofscope/floor", _pf(ratio <= 1.5))
        if csvm is not None:
            speedup = csvm.wall_s / roof.wall_s
            goals[2] = (goals[2][0], f"{speedup:.1f}x csv-module/roofscope", _pf(speedup >= 10))
    return goals


def _pf(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def report(res: dict[str, Result], goals: list[tuple[str, str, str]]) -> str:
    floor = _ok(res.get(FLOOR))
    lines = ["| contender | wall s | peak RSS MB | wall ratio vs duckdb-floor |"]
    lines.append("|---|---:|---:|---:|")
    for r in res.values():
        if not r.ok:
            lines.append(f"| {r.name} | failed (exit {r.exit_code}) | | |")
            continue
        ratio = f"{r.wall_s / floor.wall_s:.2f}x" if floor is not None else "n/a"
        lines.append(f"| {r.name} | {r.wall_s:.2f} | {r.peak_rss_mb:.0f} | {ratio} |")
    lines.append("")
    lines += [f"- {goal}: {value} -> **{verdict}**" for goal, value, verdict in goals]
    return "\n".join(lines)


def compiled() -> dict[str, str]:
    """The contenders' environment: Python writes the bytecode of the modules it compiles,
    as an installed package has it. With PYTHONDONTWRITEBYTECODE set (some machines set it)
    an editable install compiles roofscope's 150 modules on every run, some 0.1 s that no
    installed roofscope pays (the other contenders' modules are compiled at install)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def warm_page_cache(path: Path) -> None:
    with path.open("rb") as f:
        while f.read(1 << 24):
            pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dispatches", type=int, default=4_000_000)
    parser.add_argument("--file", type=Path, help="use this results.csv (generated if missing)")
    parser.add_argument("--python", default=sys.executable, help="interpreter for contenders")
    parser.add_argument("--repeat", type=int, default=3, help="runs per contender (median)")
    parser.add_argument("--skip-csv-module", action="store_true")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path: Path = args.file or Path(tmp) / "results.csv"
        generated = not path.exists()
        if generated:
            print(f"generating {args.dispatches} dispatches -> {path}", file=sys.stderr)
            gen = [sys.executable, str(HERE / "gen_results_csv.py"), str(path)]
            subprocess.run([*gen, "--dispatches", str(args.dispatches)], check=True)
        py, file = args.python, str(path.resolve())
        commands: dict[str, list[str]] = {
            ROOFSCOPE: [py, "-m", "roofscope", "analyze", file, "--json"],
            FLOOR: [py, "-c", DUCKDB_CODE, file],
            "pandas": [py, "-c", PANDAS_CODE, file],
            CSV_MODULE: [py, "-c", CSV_CODE, file],
        }
        if args.skip_csv_module:
            del commands[CSV_MODULE]
        warm_page_cache(path)  # no contender pays for the first read from disk
        env = compiled()
        run_one(ROOFSCOPE, commands[ROOFSCOPE], env)  # nor for compiling its modules
        runs: dict[str, list[Result]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, cmd in commands.items():
                runs[name].append(run_one(name, cmd, env))
        results = {name: summarise(name, rs) for name, rs in runs.items()}
        size_mb = path.stat().st_size / 2**20

    goals = targets(results)
    count = f", {args.dispatches} dispatches" if generated else ""
    print(f"file: {path} ({size_mb:.0f} MiB{count}); median of {args.repeat} run(s) each")
    print(report(results, goals))
    if args.out:
        payload = {
            "file": str(path),
            "file_mb": round(size_mb, 1),
            "dispatches": args.dispatches if generated else None,
            "python": py,
            "repeat": args.repeat,
            "contenders": [{**asdict(r), "ok": r.ok} for r in results.values()],
            "targets": [{"target": g, "value": v, "status": s} for g, v, s in goals],
        }
        args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
