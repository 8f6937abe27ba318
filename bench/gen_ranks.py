"""Per-rank profiles of a many-rank job with the real schemas: rocpd databases or Kineto traces.

    python bench/gen_ranks.py OUT_DIR [--format rocpd|kineto] [--ranks 16] [--dispatches 125000]
                              [--kernels 300] [--straggler 5] [--slow 1.2] [--seed 1]

Writes ``--ranks`` files of ``--dispatches`` kernel dispatches each (N x M in all):

- ``rocpd``: ``node<R // 8>/<pid>_results.db``, a copy of the rocpd template of
  bench/gen_rocpd.py (tests/data/rocpd-mi250x, rocprofv3's DDL, schema_version 3) whose
  dispatches, events and kernel symbols are replaced; pid 10000 + rank and
  ``OMPI_COMM_WORLD_RANK`` in the process environment (roofscope reads it as the rank), one
  gfx90a GCD per rank (HSA node 8 + rank % 8).
- ``kineto``: ``rank-<R>.pt.trace.json.gz``, a PyTorch profiler trace shaped as those of
  HolisticTraceAnalysis' tests/data (integer microsecond ``ts``/``dur`` as in
  negative_queue_length_values_check/rank0.json.gz): per launch a ``cpu_op``, its
  ``cudaLaunchKernel``, the ``ac2g`` flow start and finish and the ``kernel``;
  ``distributedInfo.rank`` = R.

The kernel mix (plan.py): ``--kernels`` distinct names from the families a training or HPC job
launches (Tensile GEMMs, PyTorch elementwise and reduction kernels, RCCL collectives, MIOpen
convolutions, ROCclr blits), call counts Zipf-distributed over them (exact, by largest
remainder), each kernel's mean duration log-uniform in 2 us .. 3 ms, each dispatch log-normal
about its kernel's mean. On ``--straggler`` every duration is ``--slow`` times as long (a
throttled GPU). :func:`generate` returns the expected per-kernel calls and total ns of every
rank, computed here, so tests check readers against the generator's own arithmetic.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sqlite3
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_rocpd import TEMPLATE, table  # noqa: E402
from rank_plan import RankPlan, kernel_catalogue, rank_plan  # noqa: E402

FORMATS = ("rocpd", "kineto")


@dataclass(frozen=True)
class Expected:
    """What the generator wrote: per rank, per kernel name, calls and total duration in ns."""

    names: tuple[str, ...]
    calls: np.ndarray  # (ranks, kernels) int64
    total_ns: np.ndarray  # (ranks, kernels) int64
    paths: tuple[Path, ...]
    straggler: int

    @property
    def dispatches(self) -> int:
        return int(self.calls.sum())


# -- rocpd --------------------------------------------------------------------------------


def _rocpd_symbols(con: sqlite3.Connection, names: tuple[str, ...], process_id: int) -> None:
    """Replace the template's kernel symbols (and their strings) by ``names``: ids 1..K."""
    symbol, string = table(con, "rocpd_info_kernel_symbol"), table(con, "rocpd_string")
    guid, nid = con.execute(f"SELECT guid, nid FROM {symbol} LIMIT 1").fetchone()
    con.execute(f"DELETE FROM {symbol}")
    rows = []
    for i, name in enumerate(names, start=1):
        mangled = f"_Z{len(name)}{name.split('(')[0].replace(' ', '_')}.kd"
        ext = {"kernel_id": i, "kernel_name": mangled, "formatted_kernel_name": name}
        obj = 0x7F2A_0000_0000 + 64 * i
        rows.append(
            (i, guid, nid, process_id, 2, mangled, name, obj, 320, 16, 0, 0, 32, 24, 0, ext)
        )
    con.executemany(
        f"INSERT INTO {symbol} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(*r[:-1], json.dumps(r[-1])) for r in rows],
    )
    strings = [(guid, s) for name in names for s in (name, f"{name} [clone .kd]")]
    con.executemany(f"INSERT OR IGNORE INTO {string} (guid, string) VALUES (?, ?)", strings)


def _rocpd_rows(plan: RankPlan, guid: str, nid: int, ids: int, agent: int) -> Iterator[tuple]:
    """The dispatch rows; ``ids`` is the template's process and thread id (foreign keys)."""
    kid, start, end = plan.kernel.tolist(), plan.start_ns.tolist(), plan.end_ns.tolist()
    grid, block = plan.grid.tolist(), plan.block.tolist()
    for i, (k, s, e) in enumerate(zip(kid, start, end, strict=True), start=1):
        g, b = grid[k], block[k]
        yield (i, guid, nid, ids, ids, agent, k + 1, i, 1, 0, s, e, 0, 0, b, 1, 1, g, 1, 1, 1, i)


def write_rocpd(path: Path, plan: RankPlan, names: tuple[str, ...], rank: int) -> None:
    pid = 10_000 + rank
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TEMPLATE, path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA synchronous = OFF")
    with con:
        event, kernel = table(con, "rocpd_event"), table(con, "rocpd_kernel_dispatch")
        process, thread = table(con, "rocpd_info_process"), table(con, "rocpd_info_thread")
        guid, nid, ids = con.execute(f"SELECT guid, nid, pid FROM {kernel} LIMIT 1").fetchone()
        con.execute(f"DELETE FROM {kernel}")
        con.execute(f"DELETE FROM {event}")
        _rocpd_symbols(con, names, ids)
        category = con.execute("SELECT id FROM rocpd_string WHERE string = 'KERNEL_DISPATCH'")
        (cat,) = category.fetchone()
        con.executemany(
            f"INSERT INTO {event} (id, guid, category_id, stack_id, parent_stack_id, "
            "correlation_id) VALUES (?, ?, ?, ?, ?, 0)",
            ((i, guid, cat, i, i) for i in range(1, len(plan.kernel) + 1)),
        )
        marks = ", ".join("?" * 22)
        kernel_cols = "id, guid, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, "
        kernel_cols += 'stream_id, start, "end", private_segment_size, group_segment_size, '
        kernel_cols += "workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, "
        kernel_cols += "grid_size_y, grid_size_z, region_name_id, event_id"
        rows = _rocpd_rows(plan, guid, nid, ids, 8 + rank % 8)
        con.execute("PRAGMA defer_foreign_keys = ON")
        con.executemany(f"INSERT INTO {kernel} ({kernel_cols}) VALUES ({marks})", rows)
        _rocpd_process(con, process, thread, pid, rank, plan)
    con.close()


def _rocpd_process(
    con: sqlite3.Connection, process: str, thread: str, pid: int, rank: int, plan: RankPlan
) -> None:
    """The process (and its one thread) become this rank's: pid, MPI rank, its time span."""
    (env,) = con.execute(f"SELECT environment FROM {process}").fetchone()
    environment = {**json.loads(env), "OMPI_COMM_WORLD_RANK": str(rank)}
    lo, hi = int(plan.start_ns[0]), int(plan.end_ns[-1])
    con.execute(
        f'UPDATE {process} SET pid = ?, environment = ?, init = ?, start = ?, fini = ?, "end" = ?',
        (pid, json.dumps(environment), lo, lo, hi, hi),
    )
    con.execute(f"UPDATE {thread} SET pid = ?, tid = ?", (pid, pid))


# -- Kineto -------------------------------------------------------------------------------

_DEVICE = {  # the MI250 GCD of HTA's amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz
    "name": "AMD Radeon Graphics",
    "totalGlobalMem": 68702699520,
    "computeMajor": 9,
    "computeMinor": 0,
    "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536,
    "warpSize": 64,
    "sharedMemPerBlock": 65536,
    "numSms": 104,
    "maxSharedMemoryPerMultiProcessor": 65536,
}


def _kineto_events(plan: RankPlan, names: tuple[str, ...], pid: int, device: int) -> Iterator[str]:
    """Five events per launch, as PyTorch on ROCm writes them (integer microseconds)."""
    kid, start, end = plan.kernel.tolist(), plan.start_ns.tolist(), plan.end_ns.tolist()
    quoted = [json.dumps(n) for n in names]
    for i, (k, s, e) in enumerate(zip(kid, start, end, strict=True)):
        ts, dur, cpu, corr = s // 1000, (e - s) // 1000, s // 1000 - 6, 1_000 + i
        grid, block = int(plan.grid[k] // plan.block[k]), int(plan.block[k])
        yield (
            f'{{"ph": "X", "cat": "cpu_op", "name": "aten::op{k}", "pid": {pid}, "tid": {pid}, '
            f'"ts": {cpu}, "dur": 5, "args": {{"External id": {corr}, "Ev Idx": {i}}}}},\n'
            f'{{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": {pid}, '
            f'"tid": {pid}, "ts": {cpu + 1}, "dur": 3, "args": {{"External id": {corr}, '
            f'"correlation": {corr}}}}},\n'
            f'{{"ph": "s", "id": {corr}, "pid": {pid}, "tid": {pid}, "ts": {cpu + 1}, '
            f'"cat": "ac2g", "name": "ac2g"}},\n'
            f'{{"ph": "f", "id": {corr}, "pid": {device}, "tid": 0, "ts": {ts}, '
            f'"cat": "ac2g", "name": "ac2g", "bp": "e"}},\n'
            f'{{"ph": "X", "cat": "kernel", "name": {quoted[k]}, "pid": {device}, "tid": 0, '
            f'"ts": {ts}, "dur": {dur}, "args": {{"External id": {corr}, "queued": 0, '
            f'"device": {device}, "context": 1, "stream": 0, "correlation": {corr}, '
            f'"grid": [{grid}, 1, 1], "block": [{block}, 1, 1]}}}}'
        )


def write_kineto(path: Path, plan: RankPlan, names: tuple[str, ...], rank: int, ranks: int) -> None:
    pid, device = 400_000 + rank, rank % 8
    head = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": d, **_DEVICE} for d in range(8)],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": ranks},
        "record_shapes": 1,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as f:
        f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        f.write(
            f'{{"name": "process_name", "ph": "M", "ts": {plan.start_ns[0] // 1000 - 100}, '
            f'"pid": {pid}, "tid": 0, "args": {{"name": "python3"}}}},\n'
        )
        for i, chunk in enumerate(_kineto_events(plan, names, pid, device)):
            f.write(chunk if i == 0 else ",\n" + chunk)
        f.write('\n], "traceName": "' + path.name + '", "displayTimeUnit": "ms"}\n')


# -- the job ------------------------------------------------------------------------------


def rank_path(out: Path, fmt: str, rank: int) -> Path:
    if fmt == "rocpd":
        return out / f"node{rank // 8}" / f"{10_000 + rank}_results.db"
    return out / f"rank-{rank}.pt.trace.json.gz"


def generate(
    out: Path,
    *,
    fmt: str = "rocpd",
    ranks: int = 16,
    dispatches: int = 125_000,
    kernels: int = 300,
    straggler: int = 5,
    slow: float = 1.2,
    seed: int = 1,
) -> Expected:
    """Write the job's files under ``out``; return what they hold."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    cat = kernel_catalogue(kernels, seed)
    calls = np.zeros((ranks, kernels), dtype=np.int64)
    totals = np.zeros((ranks, kernels), dtype=np.int64)
    paths = []
    for r in range(ranks):
        factor = slow if r == straggler else 1.0
        quantum = 1 if fmt == "rocpd" else 1000
        plan = rank_plan(cat, dispatches, r, seed, slow=factor, quantum_ns=quantum)
        calls[r], totals[r] = plan.totals(kernels)
        path = rank_path(out, fmt, r)
        if fmt == "rocpd":
            write_rocpd(path, plan, cat.names, r)
        else:
            write_kineto(path, plan, cat.names, r, ranks)
        paths.append(path)
    return Expected(cat.names, calls, totals, tuple(paths), straggler)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--format", choices=FORMATS, default="rocpd")
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--dispatches", type=int, default=125_000, help="per rank")
    parser.add_argument("--kernels", type=int, default=300)
    parser.add_argument("--straggler", type=int, default=5)
    parser.add_argument("--slow", type=float, default=1.2)
    parser.add_argument("--seed", type=int, default=1)
    a = parser.parse_args()
    start = time.perf_counter()
    exp = generate(
        a.out,
        fmt=a.format,
        ranks=a.ranks,
        dispatches=a.dispatches,
        kernels=a.kernels,
        straggler=a.straggler,
        slow=a.slow,
        seed=a.seed,
    )
    size = sum(p.stat().st_size for p in exp.paths)
    print(
        f"wrote {len(exp.paths)} {a.format} files, {exp.dispatches} dispatches, "
        f"{size / 2**20:.1f} MiB under {a.out} in {time.perf_counter() - start:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
