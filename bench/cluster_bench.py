"""The check-up of a many-rank job read in one process, on two local worker processes
(``--jobs 2`` and ``--scheduler local --jobs 2``) and on a local Dask cluster of two workers,
side by side, at two sizes; and the merging process's peak RSS.

    python bench/cluster_bench.py [--sizes 2000000,20000000] [--ranks 20] [--format rocpd]
                                  [--repeat 1] [--modes A,B] [--data DIR] [--out RESULTS.json]

For each size, bench/gen_ranks.py writes ``--ranks`` rank files of size / ranks dispatches each
(300 kernels, rank 5 a straggler); the ranks stay fixed, so between sizes only the dispatches
per rank grow. Then, taking turns, each contender runs ``--repeat`` times in a fresh child
process that is the merging process, and reports its own wall time around ``roofscope
analyze DIR --json ...`` and its own peak RSS (``VmHWM`` of /proc/self/status: that process
only, not its workers). Since issue 37 every contender is the one engine (each run read into
its partial, the run's rows; the partials merged in the runs' order; one report), so all give
the same document but for its ``engine`` section, which the bench checks:

- ``analyze-1``: ``--jobs 1`` (every run read in the merging process);
- ``analyze-2``: ``--jobs 2`` (two local worker processes, as ``analyze`` picks for a big job);
- ``local-2``: ``--scheduler local --jobs 2``;
- ``dask-2``: ``--scheduler ADDR``, the address of a ``distributed.LocalCluster(n_workers=2,
  threads_per_worker=1)`` that this script starts once, before the first contender, its
  workers made to import roofscope (a cluster is long-lived: its start-up is reported apart,
  not in the wall time; the local contenders start their workers in their wall time).

Throughput is dispatches / wall seconds / workers (1, 2, 2, 2).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
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
MODES = {"analyze-1": 1, "analyze-2": 2, "local-2": 2, "dask-2": 2}
ARGS = {
    "analyze-1": ["--jobs", "1"],
    "analyze-2": ["--jobs", "2"],
    "local-2": ["--scheduler", "local", "--jobs", "2"],
    "dask-2": ["--scheduler"],  # + the cluster's address
}


# -- in the child: the merging process ------------------------------------------------------


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(args: argparse.Namespace) -> int:
    import hashlib

    from roofscope.cli.app import main

    argv = ["analyze", args.dir, "--json", *ARGS[args.child]]
    argv += [args.scheduler] if args.child == "dask-2" else []
    out = Path(args.result).with_suffix(".out")
    saved = os.dup(1)
    with out.open("wb") as f:
        os.dup2(f.fileno(), 1)  # the JSON report is not the measurement: kept aside for its digest
        start = time.perf_counter()
        code = main(argv)
        wall = time.perf_counter() - start
        sys.stdout.flush()
        os.dup2(saved, 1)
    doc = json.loads(out.read_text(encoding="utf-8")) if code == 0 else {}
    out.unlink()
    engine = doc.pop("engine", None)
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:12]
    stragglers = [s["rank"] for s in (doc.get("ranks") or {}).get("stragglers", [])]
    result = {"wall_s": wall, "exit_code": code, "digest": digest, "engine": engine,
              "stragglers": stragglers, "peak_rss_mb": _peak_rss_mb()}  # fmt: skip
    Path(args.result).write_text(json.dumps(result), encoding="utf-8")
    return 0


# -- in the parent: data, cluster, turns, table --------------------------------------------


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
        client.run(importlib.import_module, "roofscope.readers.load")
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
        "| merging process peak RSS MiB | document (sha256, engine left out) |",
        "|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        if "failed" in r:
            lines.append(f"| {r['dispatches']:,} | {r['mode']} | | {r['failed']} | | | |")
            continue
        rate = r["dispatches"] / r["wall_s"] / r["workers"]
        lines.append(
            f"| {r['dispatches']:,} | {r['mode']} | {r['workers']} | {r['wall_s']:.1f} "
            f"| {rate:,.0f} | {r['peak_rss_mb']:.0f} | {r['digest']} |"
        )
    return "\n".join(lines)


def contenders(args: argparse.Namespace) -> dict[str, int]:
    wanted = args.modes.split(",") if args.modes else list(MODES)
    modes = {m: w for m, w in MODES.items() if m in wanted}
    if "dask-2" in modes and importlib.util.find_spec("distributed") is None:
        print("no distributed installed (pip install roofscope[dask]): no dask-2", file=sys.stderr)
        modes.pop("dask-2")
    return modes


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
    for n in sizes:
        digests = {r["digest"] for r in results if r["dispatches"] == n and "digest" in r}
        print(f"{n:,} dispatches: {'one document' if len(digests) == 1 else 'DOCUMENTS DIFFER'}")
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
    parser.add_argument("--modes", help="only these contenders, comma-separated")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "cluster-bench")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", choices=list(MODES), help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--scheduler", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    return child(args) if args.child else parent(args)


if __name__ == "__main__":
    raise SystemExit(main())
