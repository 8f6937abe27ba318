"""The cluster summary of a many-rank job on one process, two local worker processes and a local
Dask cluster of two workers, side by side, at two sizes; and the merging process's peak RSS.

    python bench/cluster_bench.py [--sizes 2000000,20000000] [--ranks 20] [--format rocpd]
                                  [--repeat 1] [--no-analyze] [--modes A,B] [--data DIR]
                                  [--out RESULTS.json]

For each size, bench/gen_ranks.py writes ``--ranks`` rank files of size / ranks dispatches each
(300 kernels, rank 5 a straggler); the ranks stay fixed, so between sizes only the dispatches
per rank grow. Then, taking turns, each contender runs ``--repeat`` times in a fresh child
process that is the merging process, and reports its own wall time around the work and its own
peak RSS (``VmHWM`` of /proc/self/status: that process only, not its workers):

- ``partials-1``: ``roofscope.cluster.engine.merged(runs, jobs=1)`` (every run reduced in
  the merging process, each partial merged as it arrives, as ``analyze --scheduler`` does),
  then ``summary``;
- ``partials-2``: the same with ``jobs=2`` (two local worker processes);
- ``dask-2``: the same with ``scheduler=`` the address of a ``distributed.LocalCluster(
  n_workers=2, threads_per_worker=1)`` that this script starts once, before the first
  contender, its workers made to import roofscope (a cluster is long-lived: its start-up is
  reported apart, not in the wall time; ``partials-2`` starts its workers in its wall time);
- ``analyze-1`` / ``analyze-2`` (unless ``--no-analyze``): ``roofscope analyze DIR --json
  --jobs 1|2``, the full check-up that keeps every dispatch row in the main process, for
  reference.

Throughput is dispatches / wall seconds / workers (1, 2, 2). The partial contenders also
report the merge cost (the mean time of one merge call over the second half of the runs,
once the merged partial holds half of them: the cost of one more partial) and the pickled
size of a partial (what a worker sends back). Without
``roofscope.cluster`` (issue 24's parts A and B) only the analyze baselines run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_ranks import generate  # noqa: E402

KERNELS, STRAGGLER, SLOW = 300, 5, 1.2
PARTIAL_MODES = {"partials-1": 1, "partials-2": 2, "dask-2": 2}
ANALYZE_MODES = {"analyze-1": 1, "analyze-2": 2}
MISSING = (
    "roofscope.cluster is missing or incomplete ({why}): issue 24's parts A (partial.py: "
    "reduce_run, merge, summary) and B (engine.py: partials) have not landed in this checkout; "
    "running only the analyze baselines"
)


# -- in the child: the merging process ------------------------------------------------------


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def cluster_api() -> tuple[Any, Any]:
    """``(engine, summary)``; ImportError naming what is missing."""
    from roofscope.cluster import engine, partial
    from roofscope.cluster.summary import summary

    for module, name in ((engine, "merged"), (engine, "merge"), (partial, "reduce_run")):
        if not hasattr(module, name):
            raise ImportError(f"{module.__name__}.{name}")
    return engine, summary


def child_partials(runs: list[list[str]], jobs: int, scheduler: str | None) -> dict[str, Any]:
    """``engine.merged`` as ``analyze --scheduler`` runs it: each partial merged as it
    arrives. Every merge call is timed, and the first few arriving partials pickled (outside
    the wall time) for their size."""
    import pickle

    engine, summary = cluster_api()
    merge = engine.merge
    costs: list[float] = []
    sizes: list[int] = []
    aside = 0.0  # seconds spent pickling, taken out of the wall time

    def timed(parts: list[Any]) -> Any:
        nonlocal aside
        if len(sizes) < 3:
            t = time.perf_counter()
            sizes.append(len(pickle.dumps(parts[-1])))
            aside += time.perf_counter() - t
        t = time.perf_counter()
        out = merge(parts)
        costs.append(time.perf_counter() - t)
        return out

    engine.merge = timed
    start = time.perf_counter()
    whole, skipped = engine.merged(runs, jobs=jobs, scheduler=scheduler)
    reduced = time.perf_counter()
    doc = summary(whole)
    wall = time.perf_counter() - start - aside
    late = costs[len(costs) // 2 :] or costs  # none on Dask: its workers merge
    return {
        "wall_s": wall,
        "merge_s": sum(costs),
        "summary_s": time.perf_counter() - reduced,
        # the cost of one more partial once the merged one holds half the runs
        "merge_per_partial_s": statistics.mean(late) if late else None,
        "partial_bytes": statistics.mean(sizes) if sizes else None,
        "merged_bytes": len(pickle.dumps(whole)),
        "dispatches": doc.get("dispatches"),
        "skipped": len(skipped),
        "stragglers": [s.get("rank") for s in (doc.get("ranks") or {}).get("stragglers", [])],
    }


def child_analyze(root: str, jobs: int) -> dict[str, Any]:
    from roofscope.cli.app import main

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the JSON report is not the measurement
    start = time.perf_counter()
    code = main(["analyze", root, "--json", "--jobs", str(jobs)])
    return {"wall_s": time.perf_counter() - start, "exit_code": code}


def child(args: argparse.Namespace) -> int:
    runs = [[str(p)] for p in rank_files(Path(args.dir))]
    if args.child in ANALYZE_MODES:
        result = child_analyze(args.dir, ANALYZE_MODES[args.child])
    else:
        jobs = PARTIAL_MODES[args.child]
        scheduler = args.scheduler if args.child == "dask-2" else None
        result = child_partials(runs, jobs, scheduler)
    result["peak_rss_mb"] = _peak_rss_mb()
    Path(args.result).write_text(json.dumps(result), encoding="utf-8")
    return 0


# -- in the parent: data, cluster, turns, table --------------------------------------------


def rank_files(root: Path) -> list[Path]:
    return sorted([*root.rglob("*_results.db"), *root.rglob("*.pt.trace.json.gz")])


def job_dir(data: Path, fmt: str, ranks: int, dispatches: int) -> Path:
    """The job's files, generated unless a finished earlier generation is there."""
    root = data / f"{fmt}-{ranks}x{dispatches // ranks}"
    marker = root / "GENERATED.json"
    if not marker.exists():
        start = time.perf_counter()
        exp = generate(
            root, fmt=fmt, ranks=ranks, dispatches=dispatches // ranks, kernels=KERNELS,
            straggler=STRAGGLER, slow=SLOW,
        )  # fmt: skip
        size = sum(p.stat().st_size for p in exp.paths)
        doc = {"dispatches": exp.dispatches, "bytes": size, "seconds": time.perf_counter() - start}
        marker.write_text(json.dumps(doc), encoding="utf-8")
    return root


def start_cluster() -> tuple[Any, float]:
    from distributed import Client, LocalCluster

    start = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        silence_logs=40,
    )  # fmt: skip
    with Client(cluster) as client:  # a long-lived cluster's workers have roofscope imported
        client.run(importlib.import_module, "roofscope.cluster.partial")
    return cluster, time.perf_counter() - start


def run_child(mode: str, root: Path, scheduler: str | None) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        result = Path(f.name)
    cmd = [sys.executable, __file__, "--child", mode, "--dir", str(root), "--result", str(result)]
    if scheduler:
        cmd += ["--scheduler", scheduler]
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        result.unlink(missing_ok=True)
        return {"failed": f"exit {proc.returncode}: {tail}"}
    doc: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
    result.unlink()
    return doc


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| dispatches | contender | workers | wall s | dispatches/s per worker "
        "| merging process peak RSS MiB | merge per partial ms | partial KiB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if "failed" in r:
            lines.append(f"| {r['dispatches']:,} | {r['mode']} | | {r['failed']} | | | | |")
            continue
        rate = r["dispatches"] / r["wall_s"] / r["workers"]
        per = r.get("merge_per_partial_s")
        merge = "" if per is None else f"{1e3 * per:.2f}"
        size = f"{r['partial_bytes'] / 1024:.0f}" if r.get("partial_bytes") else ""
        lines.append(
            f"| {r['dispatches']:,} | {r['mode']} | {r['workers']} | {r['wall_s']:.1f} "
            f"| {rate:,.0f} | {r['peak_rss_mb']:.0f} | {merge} | {size} |"
        )
    return "\n".join(lines)


def contenders(args: argparse.Namespace) -> dict[str, int]:
    modes = {} if args.no_analyze else dict(ANALYZE_MODES)
    if args.modes:
        wanted = args.modes.split(",")
        modes = {m: w for m, w in modes.items() if m in wanted}
    try:
        cluster_api()
        import distributed  # noqa: F401
    except ImportError as exc:
        print(MISSING.format(why=exc), file=sys.stderr)
        if args.no_analyze:
            raise SystemExit("cluster_bench: nothing to run (--no-analyze)") from None
        return modes
    partial = {m: w for m, w in PARTIAL_MODES.items() if not args.modes or m in args.modes}
    return {**partial, **modes}


def parent(args: argparse.Namespace) -> int:
    modes = contenders(args)
    sizes = [int(s) for s in args.sizes.split(",")]
    roots = {n: job_dir(args.data, args.format, args.ranks, n) for n in sizes}
    for n, root in roots.items():
        doc = json.loads((root / "GENERATED.json").read_text(encoding="utf-8"))
        print(f"{n:,} dispatches: {doc['bytes'] / 2**20:,.0f} MiB of {args.format} in "
              f"{args.ranks} ranks under {root} (written in {doc['seconds']:.0f} s)")  # fmt: skip
    cluster, startup = start_cluster() if "dask-2" in modes else (None, 0.0)
    if cluster is not None:
        print(
            f"LocalCluster of 2 workers started in {startup:.1f} s at {cluster.scheduler_address}"
        )
    results = []
    try:
        for n, root in roots.items():
            for _ in range(args.repeat):
                for mode, workers in modes.items():
                    address = cluster.scheduler_address if cluster is not None else None
                    r = run_child(mode, root, address if mode == "dask-2" else None)
                    results.append({"dispatches": n, "mode": mode, "workers": workers, **r})
                    print(table(results[-1:]).splitlines()[-1], flush=True)
    finally:
        if cluster is not None:
            cluster.close()
    print(table(results))
    print(f"cores: {os.cpu_count()}; Dask cluster start-up {startup:.1f} s (not in wall times)")
    if args.out:
        meta = {
            "format": args.format,
            "ranks": args.ranks,
            "kernels": KERNELS,
            "repeat": args.repeat,
        }
        doc = {**meta, "cluster_startup_s": startup, "results": results}
        args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0 if all("failed" not in r for r in results) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000000,20000000", help="dispatches in all, per size")
    parser.add_argument("--ranks", type=int, default=20)
    parser.add_argument("--format", choices=("rocpd", "kineto"), default="rocpd")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-analyze", action="store_true", help="leave out analyze-1/-2")
    parser.add_argument("--modes", help="only these contenders, comma-separated")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "cluster-bench")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", choices=[*PARTIAL_MODES, *ANALYZE_MODES], help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--scheduler", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    return child(args) if args.child else parent(args)


if __name__ == "__main__":
    raise SystemExit(main())
