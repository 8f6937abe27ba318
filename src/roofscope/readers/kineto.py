"""PyTorch profiler / Kineto chrome traces (``*.pt.trace.json[.gz]``;
docs/formats/pytorch-kineto.md), read as a stream: the document is never loaded whole (traces
reach GBs), one event object at a time is decoded from a bounded sliding text buffer
(:class:`~roofscope.readers.json_stream.EventStream`).

Kernel events become dispatches and launches, copy and set events copies (never kernel time);
metadata and data-loader steps are read by :mod:`~roofscope.readers.kineto_meta`. Times are
microseconds converted to integer ns exactly, from each number's literal text (float64 loses
the last ns at 1.7e15 µs): see "Time base" and "Into the model" of that page. PyTorch
execution traces (``schema`` + ``nodes``) are recognised and refused with one line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, Context, Decimal, Overflow
from math import prod
from pathlib import Path
from typing import Any

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.batches import Kind, column, fits, name_ids, registered
from roofscope.readers.json_stream import EventStream, open_text, paused_gc
from roofscope.readers.kineto_meta import (
    BEYOND,
    LOADER,
    LOADER_CATS,
    PRODUCER,
    insert_loader_steps,
    run_info,
    run_rank,
    waves,
    whole,
)
from roofscope.readers.no_kernels import (
    KINETO_WIDEN,
    held,
    is_launch,
    kernels_not_recorded,
    no_kernel_ran,
)
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

KERNEL_CATS = frozenset({"kernel", "Kernel"})
COPY_CATS = frozenset({"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"})
HOST_CATS = frozenset({"cpu_op", "Operator", "cuda_runtime", "Runtime", "cuda_driver"})
RUNTIME_CATS = frozenset({"cuda_runtime", "Runtime", "cuda_driver"})
# torch.profiler with experimental_config(profiler_metrics=...): CUPTI's range profiler
# replaces each kernel's trace event by a range event holding its counters
PROFILER_RANGE_CAT = "cuda_profiler_range"
BATCH = 100_000  # rows gathered before they are written to DuckDB
_STAGE = "kineto_k"
_EXACT = Context(prec=60, Emax=60)  # 10^60 ns: any time past it is damage
_STREAM_TID = re.compile(r"stream (\d+)$")
_AGENTS = re.compile(r"\((.+?) -> (.+?)\)")
_KINETO_KEYS = re.compile(r'"(schemaVersion|deviceProperties|distributedInfo)"\s*:')
_KINETO_CATS = re.compile(
    r'"cat"\s*:\s*"(kernel|Kernel|cpu_op|Operator|cuda_runtime|Runtime|user_annotation)"'
)
_ET_KEYS = ('"schema"', '"nodes"')

# staged kernel columns, every one a 64-bit integer -> what of the event it comes from
_KERNEL_COLUMNS = {
    "name_id": "name",
    "device": "args.device (else pid)",
    "dispatch_id": "args.correlation",
    "start_ns": "ts",
    "end_ns": "ts + dur",
    "stream": "args.stream (else tid)",
    "grid_size": "args.grid x args.block",
    "workgroup_size": "args.block",
    "lds_bytes": "args.shared memory",
    "arch_vgpr": "args.registers per thread",
}
_COPY_COLUMNS = {
    "direction": "name",
    "src_agent": "name",
    "dst_agent": "name",
    "start_ns": "ts",
    "end_ns": "ts + dur",
}
_TEXT = {"direction", "src_agent", "dst_agent"}


# -- values -------------------------------------------------------------------------------


def ns(value: object) -> int | None:
    """Microseconds as written (int, or Decimal of the literal) -> exact integer ns."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value * 1000
    if isinstance(value, Decimal) and value.is_finite():
        try:
            return int(value.scaleb(3, _EXACT).to_integral_value(ROUND_HALF_EVEN, _EXACT))
        except Overflow:  # past _EXACT's exponent limit, far past 64 bits
            return BEYOND
    return None


def _stream(event: dict[str, Any], args: dict[str, Any]) -> int | None:
    stream = whole(args.get("stream"))
    if stream is not None:
        return stream
    tid = event.get("tid")
    if isinstance(tid, str) and (m := _STREAM_TID.match(tid)):
        return int(m.group(1))
    return whole(tid)


def _product(dims: object) -> int | None:
    if not isinstance(dims, list) or not dims:
        return None
    ints = [whole(d) for d in dims]
    return None if None in ints else prod(i for i in ints if i is not None)


def _args(event: dict[str, Any]) -> dict[str, Any]:
    args = event.get("args")
    return args if isinstance(args, dict) else {}


# -- one pass over the events -------------------------------------------------------------


class _Rows:
    """Rows of one kind gathered in memory and written to a DuckDB table a batch at a time."""

    def __init__(self, profile: Profile, path: Path, table: str, columns: dict[str, str]) -> None:
        self.profile, self.path, self.table = profile, path, table
        self.fields, self.columns = columns, tuple(columns)
        self.rows: list[tuple[object, ...]] = []
        self.count = 0

    def add(self, row: tuple[object, ...]) -> None:
        self.rows.append(row)
        if len(self.rows) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the gathered rows through numpy columns (names become name ids)."""
        if not self.rows:
            return
        values = list(zip(*self.rows, strict=True))
        try:
            arrays = {
                c: name_ids(self.profile, v) if c == "name_id" else column(v, _kind(c))
                for c, v in zip(self.columns, values, strict=True)
            }
        except OverflowError:
            self._refuse_beyond()
            raise
        with registered(self.profile, "kineto_batch", arrays) as batch_con:
            batch_con.execute(
                f"INSERT INTO {self.table} SELECT {', '.join(self.columns)} FROM kineto_batch"
            ).fetchall()
        self.count += len(self.rows)
        self.rows = []

    def _refuse_beyond(self) -> None:
        """The error naming the first event with a number past 64 bits (numpy names none)."""
        for i, row in enumerate(self.rows):
            for name, value in zip(self.columns, row, strict=True):
                if isinstance(value, int) and not fits(value):
                    what = "kernel" if self.table == _STAGE else "memcpy/memset"
                    raise InputError(
                        str(self.path),
                        f"{what} event {self.count + i + 1} ({str(row[0])[:60]!r}): "
                        f"{self.fields[name]} is past 64 bits",
                        "pass the trace the profiler wrote",
                    )


def _kind(name: str) -> Kind:
    return "text" if name in _TEXT else "int"


class _Pass:
    """What one pass over ``traceEvents`` keeps: staged rows and a few facts."""

    def __init__(self, profile: Profile, path: Path) -> None:
        self.kernels = _Rows(profile, path, _STAGE, _KERNEL_COLUMNS)
        self.copies = _Rows(profile, path, f"{_STAGE}_m", _COPY_COLUMNS)
        self.devices: Counter[int] = Counter()
        self.os_pid: int | None = None
        self.hip = False
        self.untimed = 0
        self.runtime = 0  # CUDA/HIP runtime and driver calls: the GPU was traced
        self.launches = 0  # of them, kernel launches: kernels ran
        self.ranges = 0  # CUPTI profiler ranges: kernels measured by counters, not traced
        self.loader: list[tuple[str, int, int]] = []  # data-loader steps (kineto_meta)

    def event(self, event: object) -> None:
        if not isinstance(event, dict) or event.get("ph") != "X":
            return
        cat = event.get("cat")
        if not isinstance(cat, str):  # a damaged event: no category to go by
            return
        if cat in LOADER_CATS and LOADER.search(name := str(event.get("name", ""))):
            start, dur = ns(event.get("ts")), ns(event.get("dur"))
            if start is not None and dur is not None:
                self.loader.append((name, start, start + dur))
        if cat in KERNEL_CATS:
            self._kernel(event)
        elif cat in COPY_CATS:
            self._copy(event)
        elif cat in HOST_CATS:
            self._host(event)
            if cat in RUNTIME_CATS:
                self.runtime += 1
                self.launches += is_launch(str(event.get("name", "")))
        elif cat == PROFILER_RANGE_CAT:
            self.ranges += 1

    def _times(self, event: dict[str, Any]) -> tuple[int, int] | None:
        start, dur = ns(event.get("ts")), ns(event.get("dur"))
        if start is None or dur is None:
            self.untimed += 1
            return None
        return start, start + dur

    def _kernel(self, event: dict[str, Any]) -> None:
        times, args = self._times(event), _args(event)
        if times is None:
            return
        device = whole(args.get("device"))
        device = whole(event.get("pid")) if device is None else device
        if device is not None:
            self.devices[device] += 1
        block = _product(args.get("block"))
        grid = _product(args.get("grid"))
        self.kernels.add(
            (
                str(event.get("name", "")),
                device,
                whole(args.get("correlation")),
                *times,
                _stream(event, args),
                None if grid is None or block is None else grid * block,
                block,
                whole(args.get("shared memory")),
                whole(args.get("registers per thread")),
            )
        )

    def _copy(self, event: dict[str, Any]) -> None:
        times = self._times(event)
        if times is None:
            return
        name = str(event.get("name", ""))
        agents = _AGENTS.search(name)
        src, dst = (agents.group(1), agents.group(2)) if agents else (None, None)
        self.copies.add((name, src, dst, *times))

    def _host(self, event: dict[str, Any]) -> None:
        if self.os_pid is None and (pid := whole(event.get("pid"))) is not None:
            self.os_pid = pid if fits(pid) else None
        if not self.hip and str(event.get("name", "")).startswith("hip"):
            self.hip = True


# -- writing the model --------------------------------------------------------------------


def _create_stage(profile: Profile) -> None:
    duck = profile.con
    duck.execute(
        f"CREATE TEMP TABLE {_STAGE} ({', '.join(f'{c} BIGINT' for c in _KERNEL_COLUMNS)})"
    )
    duck.execute(
        f"""CREATE TEMP TABLE {_STAGE}_m (direction VARCHAR, src_agent VARCHAR,
        dst_agent VARCHAR, start_ns BIGINT, end_ns BIGINT)"""
    )
    duck.execute(f"CREATE TEMP TABLE {_STAGE}_w (device BIGINT, wave_size BIGINT)")


def _insert_kernels(profile: Profile, source: int, pid: int | None, waves: list[Any]) -> None:
    duck = profile.con
    duck.execute(  # one statement: executemany costs a statement per row
        f"INSERT INTO {_STAGE}_w SELECT unnest($1::BIGINT[]), unnest($2::BIGINT[])",
        [[w[0] for w in waves], [w[1] for w in waves]],
    )
    duck.execute(
        f"""INSERT INTO dispatches (source, name_id, pid, device, dispatch_id, start_ns,
        end_ns) SELECT {source}, name_id, $1, device, dispatch_id, start_ns, end_ns
        FROM {_STAGE}""",
        [pid],
    )
    duck.execute(
        f"""INSERT INTO launches (source, name_id, stream, grid_size, workgroup_size,
        lds_bytes, arch_vgpr, wave_size, dispatches)
        SELECT {source}, k.name_id, k.stream, k.grid_size, k.workgroup_size, k.lds_bytes,
        k.arch_vgpr, coalesce(w.wave_size, d.wave_size), count(*)
        FROM {_STAGE} k LEFT JOIN {_STAGE}_w w ON w.device = k.device
        CROSS JOIN (SELECT wave_size FROM {_STAGE}_w WHERE device = -1) d
        GROUP BY ALL ORDER BY min(k.start_ns)"""
    )


def _insert_copies(
    profile: Profile, path: Path, pid: int | None, rows: int, rank: int | None
) -> None:
    if rows:
        source = profile.begin_input()
        profile.con.execute(f"INSERT INTO copies SELECT {source}, $1, * FROM {_STAGE}_m", [pid])
        profile.add_input(str(path), KinetoTrace.name, rows, Role.COPIES, rank=rank)


def _graph_key(path: str, key: str, meta: Mapping[str, Any]) -> InputError | None:
    """Stop at an execution trace's ``nodes`` (its operator graph) once ``schema`` was read."""
    return execution_trace(path, meta["schema"]) if key == "nodes" and "schema" in meta else None


def execution_trace(path: str, schema: object) -> InputError:
    return InputError(
        path,
        f"is a PyTorch execution trace (ExecutionTraceObserver output, schema {schema}: an "
        "operator graph without GPU kernel times), not a profiler trace",
        "pass the Kineto trace (torch.profiler's *.pt.trace.json[.gz]) of the same run",
    )


def _no_kernels(path: Path, meta: dict[str, Any], seen: _Pass) -> InputError:
    if "nodes" in meta and "schema" in meta:
        return execution_trace(str(path), meta["schema"])
    if seen.ranges:
        return InputError(
            str(path),
            f"holds {seen.ranges:,} CUPTI profiler ranges (kernels measured by counters: "
            "torch.profiler's experimental_config profiler_metrics) and no kernel events, "
            "which roofscope reads for kernel times",
            "profile the same steps again without profiler_metrics (ProfilerActivity.CUDA) "
            "for the kernel trace",
        )
    if seen.launches:
        return kernels_not_recorded(
            str(path),
            f"its runtime trace holds {seen.launches:,} kernel launch(es)",
            "profile again with ProfilerActivity.CUDA in torch.profiler's activities, and check "
            "the profiler's log for dropped activity records",
        )
    if seen.runtime or seen.copies.count:
        what = held([(seen.runtime, "runtime calls"), (seen.copies.count, "memcpys/memsets")])
        return no_kernel_ran(str(path), what, KINETO_WIDEN)
    return InputError(
        str(path),
        "holds no GPU kernels (no traceEvents with cat kernel/Kernel: a CPU-only trace?)",
        "profile with ProfilerActivity.CUDA in torch.profiler's activities",
    )


class KinetoTrace(Reader):
    name = "kineto"
    description = (
        "PyTorch profiler / Kineto chrome trace (.json or .json.gz; kernels, memcpy/memset, "
        "rank and GPU from deviceProperties)"
    )
    producer = PRODUCER
    compressed = True

    def detect(self, head: Head) -> bool:
        text = head.text.lstrip()
        if not text.startswith("{"):
            return False
        top = text[:4096]
        if _KINETO_KEYS.search(top) or all(k in top for k in _ET_KEYS):
            return True
        return '"traceEvents"' in top and bool(_KINETO_CATS.search(text))

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        _create_stage(profile)
        try:
            with paused_gc():
                self._read(path, head, profile, role)
        finally:
            for suffix in ("", "_m", "_w"):
                profile.con.execute(f"DROP TABLE IF EXISTS {_STAGE}{suffix}")

    def _read(self, path: Path, head: Head, profile: Profile, role: Role) -> None:
        seen = _Pass(profile, path)
        with open_text(path, gzipped=head.gzip) as text:
            stream = EventStream(text, str(path), refuse=_graph_key)
            for event in stream.events():
                seen.event(event)
            meta = stream.meta
        seen.kernels.flush()
        seen.copies.flush()
        if not seen.kernels.count:
            raise _no_kernels(path, meta, seen)
        if seen.untimed:
            profile.warn(
                "kineto-untimed", f"{path}: {seen.untimed} GPU event(s) without ts/dur left out"
            )
        source = profile.begin_input()
        _insert_kernels(profile, source, seen.os_pid, waves(meta, seen.hip))
        insert_loader_steps(profile, source, seen.loader)
        rank = run_rank(meta)
        profile.add_input(str(path), self.name, seen.kernels.count, role, rank=rank)
        profile.warn_deviceless(path, source, "neither args.device nor pid is an integer")
        _insert_copies(profile, path, seen.os_pid, seen.copies.count, rank)
        top = seen.devices.most_common(1)
        profile.set_run(run_info(meta, top[0][0] if top else None))
