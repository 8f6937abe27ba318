"""roofscope against the tools its users would pick instead, side by side on the same workloads
(issue 25): rocprof-compute 3.3.0 ``analyze`` on rocprof-compute workloads, HolisticTraceAnalysis
0.5.0's kernel breakdown on PyTorch profiler (Kineto) traces; and against the floors of issue 41,
bare scripts that only read the input and aggregate it (``FLOORS``: a DuckDB group-by of a
rocprof v1 CSV here, and whatever bench/floors.py adds).

    python bench/peer_bench.py [--roofscope "PYTHON -m roofscope"] [--rpc-python PY]
        [--hta-python PY] [--repeat 3] [--only NAME ...] [--docs docs/performance.md]

Each workload runs ``--repeat`` times, roofscope and the peer taking turns (a noisy stretch of a
shared machine hits both), after one untimed turn that leaves both tools' bytecode compiled;
the table gives the median wall seconds and the largest peak RSS of
each tool's process tree (bench/measure.py), their ratios against the issue's goals, and
whether the two answers agree: the top kernel, its calls and time, the total kernel time
(bench/peer_report.py). rocprof-compute writes into the workload folder, so each of its runs
gets a fresh copy (made outside the timing). Without ``--only``, the table replaces the
"Against the peers" section of ``--docs``.

The peers live in their own virtual environments (their pinned pandas/numpy differ from
roofscope's); without them the script prints how to make them. It is a bench, not a test:
``make test`` never runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_counter_workload  # noqa: E402
import gen_results_csv  # noqa: E402
import kineto_bench  # noqa: E402
from measure import Run, run_one  # noqa: E402
from peer_report import (  # noqa: E402
    SECTION,
    Answer,
    Floor,
    Result,
    differences,
    from_floor,
    from_hta,
    from_rocprof_compute,
    from_roofscope,
    table,
    with_section,
)

SCRATCH = Path("/work/scratch-bench")
RPC_SRC = Path("/work/shared/peers/rocprofiler-compute-3.3.0")
VCOPY = Path("/work/shared/corpus/amd/rocprof-compute-vcopy-2025")
HTA_DATA = Path("/work/shared/corpus/torch/hta-tests-data")
KINETO_EVENTS = 1_000_000
HTA_CODE = """\
import json, sys
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
_, kernels = analysis.get_gpu_kernel_breakdown(
    visualize=False, duration_ratio=1.0, num_kernels=10**9)
rows = []
for row in kernels.to_dict("records"):
    total, mean = float(row["sum (us)"]), float(row["mean (us)"])
    rows.append([str(row["name"]), round(total / mean) if mean else 0, total])
print(json.dumps(rows))
"""
HTA_ENV = {"HTA_DISABLE_NS_ROUNDING": "1"}
CSV_DISPATCHES = 2_000_000
# the floor for a dispatch CSV: DuckDB's own group-by (name, count, sum, median) of the
# file; its per-kernel rows printed for the answer check (300 rows: nothing to time)
DUCKDB_FLOOR = """\
import json, sys, duckdb
duckdb.execute("SET enable_progress_bar = false")  # it prints to stdout past 2 s
rows = duckdb.sql(
    "SELECT KernelName, count(*), sum(EndNs - BeginNs), median(EndNs - BeginNs) "
    "FROM read_csv($path) GROUP BY 1", params={"path": sys.argv[1]}).fetchall()
print(json.dumps([[name, calls, int(total)] for name, calls, total, _ in rows]))
"""
SETUP = f"""\
The peers need their own virtual environments (README in {RPC_SRC.parent}):
  python3 -m venv {SCRATCH}/rpc-venv
  {SCRATCH}/rpc-venv/bin/pip install -r {RPC_SRC}/requirements.txt pandas==2.3.1 numpy==2.3.2
  python3 -m venv {SCRATCH}/hta-venv
  {SCRATCH}/hta-venv/bin/pip install HolisticTraceAnalysis==0.5.0 pandas==2.2.3 numpy==2.2.6
then pass --rpc-python {SCRATCH}/rpc-venv/bin/python --hta-python {SCRATCH}/hta-venv/bin/python
(those are the defaults)."""


@dataclass
class Workload:
    name: str
    peer: str  # "rocprof-compute" or "HTA"
    inputs: list[Path]  # what roofscope analyzes
    peer_input: Path  # the workload folder (rocprof-compute) or the folder of ranks (HTA)
    goal: float
    rss_goal: float | None = None
    known: str = ""  # why the answers are known to differ, checked by hand
    floor: Floor | None = None  # the peer is this floor
    runs: dict[str, list[Run]] = field(default_factory=lambda: {"ours": [], "peer": []})


def hta_workloads() -> list[Workload]:
    """The six HTA test traces (HTA's tests/data, corpus torch/hta-tests-data); HTA reads a
    folder of rank files, roofscope the same files."""
    folders = {
        "HTA alexnet": "critical_path/alexnet",
        "HTA ns_resolution": "ns_resolution_trace",
        "HTA negative_queue": "negative_queue_length_values_check",
        "HTA trace_filter (2 ranks)": "trace_filter",
        "HTA nccl": "nccl_parser_config",
        "HTA amd mi250": "amd_trace",
    }
    out = []
    for name, rel in folders.items():
        folder = HTA_DATA / rel
        out.append(Workload(name, "HTA", sorted(folder.glob("*.json.gz")), folder, 0.33))
    # the trace holds 80 calls, 190,345 µs, of its top kernel and 401,445 µs of kernels in all
    # (json.load); 5 of those calls run after the last ProfilerStep ends
    out[2].known = "HTA leaves out the kernels after the last ProfilerStep"
    return out


WIDE = "MI300X GEMM, 301 dispatches, 2,024 columns"
KINETO = "Kineto 1 M events (200,000 kernels)"
CSV = "rocprof v1 CSV, 2 M dispatches"
# issue 41's trace: 10 names x 100,000 kernels, integer µs, gzipped (1 M kernels in 5 M events)
KINETO_1M_KERNELS = "Kineto 1 M kernels (10 names, gzipped)"


def duckdb_floor(inputs: list[Path]) -> list[str]:
    return [sys.executable, "-c", DUCKDB_FLOOR, str(inputs[0])]


def floors() -> dict[str, Floor]:
    """The floor of each workload that has one, by workload name: the CSV's here; a
    bench/floors.py beside this script adds its own ``FLOORS`` (the same dict: a workload
    name of :func:`workloads` -> :class:`peer_report.Floor`), each run as one more row of
    that workload against its floor."""
    found = {CSV: Floor("DuckDB group-by floor", duckdb_floor, 1.2)}
    if (HERE / "floors.py").exists():
        import floors as plugged  # bench/floors.py

        found.update(plugged.FLOORS)
    return found


def against(work: Workload, floor: Floor) -> Workload:
    """The workload run against its floor instead of its peer."""
    return Workload(
        work.name, floor.label, work.inputs, work.peer_input, floor.goal, floor.rss_goal,
        floor=floor,
    )  # fmt: skip


def workloads(scratch: Path) -> dict[str, Callable[[], Workload]]:
    """Each workload by name, made (and generated) only when it runs."""

    def vcopy(name: str) -> Callable[[], Workload]:
        folder = VCOPY / name
        return lambda: Workload(f"vcopy {name}", "rocprof-compute", [folder], folder, 0.08)

    def wide() -> Workload:
        folder = scratch / "mi300x-gemm-301"
        if not (folder / "pmc_perf.csv").exists():
            gen_counter_workload.write(folder, 301)
        return Workload(WIDE, "rocprof-compute", [folder], folder, 0.08, 1.2)

    def kineto() -> Workload:
        trace = scratch / "kineto-1m" / "rank-0.pt.trace.json"
        if not trace.exists():
            trace.parent.mkdir(parents=True, exist_ok=True)
            kineto_bench.write_trace(trace, KINETO_EVENTS)
        return Workload(KINETO, "HTA", [trace], trace.parent, 0.2)

    def kineto_kernels() -> Workload:
        trace = scratch / "kineto-1m-kernels" / "rank-0.pt.trace.json.gz"
        if not trace.exists():
            trace.parent.mkdir(parents=True, exist_ok=True)
            kineto_bench.write_trace(trace, 5_000_000, names=10, whole_us=True)
        return Workload(KINETO_1M_KERNELS, "", [trace], trace.parent, 0.0)  # against its floor

    def csv() -> Workload:
        path = scratch / "rocprof-v1-2m" / "results.csv"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            gen_results_csv.generate(path, CSV_DISPATCHES)
        return Workload(CSV, "", [path], path, 0.0)  # its contender is its floor

    made: dict[str, Callable[[], Workload]] = {
        f"vcopy {n}": vcopy(n) for n in ("MI200", "MI300X_A1_rocpd", "MI350")
    }
    made[WIDE] = wide
    made.update({w.name: (lambda w=w: w) for w in hta_workloads()})
    made[KINETO] = kineto
    made[KINETO_1M_KERNELS] = kineto_kernels
    made[CSV] = csv
    return with_floors(made, floors())


def with_floors(
    made: dict[str, Callable[[], Workload]], found: dict[str, Floor]
) -> dict[str, Callable[[], Workload]]:
    """``made`` with each floor's row: the CSV has no other peer, so its row is the one
    against its floor, and so has the 1 M-kernel Kineto trace's; another workload keeps its
    peer's row and gets one more."""
    out = dict(made)
    for name, floor in found.items():
        if name not in made:
            raise SystemExit(f"bench/floors.py: no workload named {name!r}; known: {list(made)}")
        key = name if name in (CSV, KINETO_1M_KERNELS) else f"{name} / {floor.label}"
        out[key] = lambda make=made[name], floor=floor: against(make(), floor)
    return out


def peer_cmd(work: Workload, args: argparse.Namespace, copy: Path) -> list[str]:
    if work.floor is not None:
        return work.floor.command(work.inputs)
    if work.peer == "HTA":
        return [args.hta_python, "-c", HTA_CODE, str(work.peer_input)]
    script = str(RPC_SRC / "src" / "rocprof-compute")
    return [args.rpc_python, script, "analyze", "-p", str(copy)]


def bytecode_env(scratch: Path) -> None:
    """Both sides run from compiled bytecode, as an installed tool does: rocprof-compute runs
    from its read-only source tree, where Python cannot write ``__pycache__``, and an editable
    roofscope's bytecode goes stale with every change; with ``PYTHONDONTWRITEBYTECODE`` set
    (as on this machine) both were compiled from source on every run (0.04-0.06 s of
    roofscope's 0.35-0.57 s on the small workloads). Bytecode goes under the scratch folder."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")


def run_workload(work: Workload, args: argparse.Namespace, scratch: Path) -> Result:
    """Take turns ``--repeat`` times, after one untimed turn that writes both sides' bytecode
    (:func:`bytecode_env`); the answers come from the first timed run of each."""
    ours_cmd = [*shlex.split(args.roofscope), "analyze", *map(str, work.inputs), "--json"]
    copy = scratch / "rpc-copy"
    outputs: dict[str, str] = {}
    for turn in range(-1, args.repeat):
        for side in ("ours", "peer"):
            if side == "peer" and work.peer == "rocprof-compute":
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(work.peer_input, copy)
            cmd = ours_cmd if side == "ours" else peer_cmd(work, args, copy)
            env = HTA_ENV if side == "peer" and work.peer == "HTA" else None
            with tempfile.TemporaryFile() as out:
                run = run_one(f"{work.name}: {side}", cmd, stdout=out, env=env)
                out.seek(0)
                if turn < 0:
                    continue
                outputs.setdefault(side, out.read().decode("utf-8", "replace"))
            work.runs[side].append(run)
            print(f"  {side:<4} {run.wall_s:7.2f} s {run.tree_rss_mb:7.0f} MiB", flush=True)
    return _result(work, outputs)


def _result(work: Workload, outputs: dict[str, str]) -> Result:
    failed = [s for s, rs in work.runs.items() if any(r.exit_code for r in rs)]
    agree = f"{' and '.join(failed)} failed" if failed else _agreement(work, outputs)
    ours, peer = work.runs["ours"], work.runs["peer"]
    return Result(
        work.name,
        work.peer,
        [r.wall_s for r in ours],
        [r.tree_rss_mb for r in ours],
        [r.wall_s for r in peer],
        [r.tree_rss_mb for r in peer],
        work.goal,
        work.rss_goal,
        agree,
    )


def _agreement(work: Workload, outputs: dict[str, str]) -> str:
    if work.floor is not None and not work.floor.answers:
        return NOT_COMPARED
    read_peer = from_hta if work.peer == "HTA" else from_rocprof_compute
    if work.floor is not None:
        read_peer = from_floor
    try:
        ours: Answer = from_roofscope(outputs["ours"])
        peer: Answer = read_peer(outputs["peer"])
    except (ValueError, KeyError, IndexError) as exc:
        return f"unreadable output ({type(exc).__name__}: {exc})"
    found = differences(ours, peer)
    if not found:
        return "yes"
    return "no: " + "; ".join(found) + (f" ({work.known})" if work.known else "")


NOT_COMPARED = "not compared (a floor that prints no answer)"


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def machine() -> str:
    """CPU model, cores and RAM of this machine (lscpu, /proc/meminfo)."""
    info = dict(
        line.split(":", 1)
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
        if ":" in line
    )
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    model = info.get("Model name", platform.processor()).strip()
    cores = info.get("CPU(s)", "?").strip()
    guest = f" ({info['Hypervisor vendor'].strip()} guest)" if "Hypervisor vendor" in info else ""
    return f"{model}, {cores} cores, {mem_kib / 2**20:.0f} GiB RAM{guest}"


def section(results: list[Result], args: argparse.Namespace, loads: tuple[str, str]) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    note = f" {args.note}" if args.note else ""
    head = textwrap.fill(
        f"`bench/peer_bench.py`, {when}, on {machine()}; load average (1, 5, 15 min) "
        f"{loads[0]} at the start of the run, {loads[1]} at its end.{note}",
        96,
        break_on_hyphens=False,
    )
    about = textwrap.fill(
        "roofscope `analyze --json` against rocprof-compute 3.3.0 `analyze` (pandas 2.3.1, "
        "numpy 2.3.2) and HolisticTraceAnalysis 0.5.0 `get_gpu_kernel_breakdown` (pandas "
        "2.2.3, numpy 2.2.6, `include_last_profiler_step=True`, `HTA_DISABLE_NS_ROUNDING=1`), "
        f"{args.repeat} runs each taking turns after an untimed turn, both from compiled "
        "bytecode (`PYTHONPYCACHEPREFIX` in the scratch folder): median wall seconds, "
        "largest peak RSS of the process tree (MiB, sampled every 10 ms), the ratios "
        "roofscope / peer, the issue's goal, and whether both name the same top kernel with "
        "the same calls and time and the same total kernel time. A floor (issue 41) is the "
        "peer of its row: for the rocprof v1 CSV, DuckDB's own group-by (name, count, sum, "
        "median of the duration) of the same file, in one Python process; for the 1 M-kernel "
        "Kineto trace, ISA-L's gunzip and msgspec's typed decode of its events, Python's "
        "garbage collector paused (bench/floors.py).",
        96,
        break_on_hyphens=False,
    )
    workloads = textwrap.fill(
        "Workloads: the vcopy folders are rocprof-compute's test workloads (corpus "
        "amd/rocprof-compute-vcopy-2025); the MI300X GEMM workload is written by "
        "bench/gen_counter_workload.py (rocprof-compute's full MI300X counter set, per-channel "
        "TCC columns); the HTA traces are HTA's own test data (its repository's tests/data, "
        "corpus torch/hta-tests-data); the 1 M-event Kineto trace is written by "
        "bench/kineto_bench.py; the rocprof v1 CSV (2,000,000 dispatches of 300 kernels, "
        "860 MiB) by bench/gen_results_csv.py.",
        96,
        break_on_hyphens=False,
    )
    return f"{SECTION}\n\n{head}\n\n{about}\n\n{table(results)}\n{workloads}\n"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roofscope", default=f"{sys.executable} -m roofscope")
    parser.add_argument("--rpc-python", default=str(SCRATCH / "rpc-venv/bin/python"))
    parser.add_argument("--hta-python", default=str(SCRATCH / "hta-venv/bin/python"))
    parser.add_argument("--scratch", type=Path, default=SCRATCH / "peer-bench")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="+", default=None, help="workloads whose name has this")
    parser.add_argument("--docs", type=Path, default=HERE.parent / "docs" / "performance.md")
    parser.add_argument("--note", default="", help="a sentence about the machine's load")
    parser.add_argument("--out", type=Path, default=None, help="every run as JSON")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    if not (Path(args.rpc_python).exists() and Path(args.hta_python).exists()) and not (
        args.only and all("CSV" in o for o in args.only)  # the CSV's floor needs no peer
    ):
        print(SETUP, file=sys.stderr)
        return 2
    args.scratch.mkdir(parents=True, exist_ok=True)
    bytecode_env(args.scratch)
    start_load = load_average()
    results, runs, ok = [], {}, True
    for name, make in workloads(args.scratch).items():
        if args.only and not any(o in name for o in args.only):
            continue
        work = make()
        print(f"{work.name} (against {work.peer})", flush=True)
        results.append(run_workload(work, args, args.scratch))
        agree = results[-1].agree
        ok &= agree in ("yes", NOT_COMPARED) or bool(work.known and agree.startswith("no:"))
        runs[work.name] = {s: [asdict(r) for r in rs] for s, rs in work.runs.items()}
    print(table(results))
    if args.out:
        args.out.write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")
    if not args.only:
        doc = args.docs.read_text(encoding="utf-8")
        loads = (start_load, load_average())
        args.docs.write_text(with_section(doc, section(results, args, loads)), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
