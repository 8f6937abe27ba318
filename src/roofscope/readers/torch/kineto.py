"""PyTorch profiler / Kineto chrome traces (``*.pt.trace.json[.gz]``;
docs/formats/pytorch-kineto.md), read as a stream: the document is never loaded whole (traces
reach GBs), one event object at a time is decoded from a bounded sliding text buffer
(:class:`~roofscope.readers.io.json_stream.EventStream`).

Kernel events become dispatches and launches, copy and set events copies (never kernel time);
metadata and data-loader steps are read by :mod:`~roofscope.readers.torch.kineto_meta`. Times are
microseconds converted to integer ns exactly, from each number's literal text (float64 loses
the last ns at 1.7e15 µs): see "Time base" and "Into the model" of that page. PyTorch
execution traces (``schema`` + ``nodes``) are recognised and refused with one line.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.model.words import count
from roofscope.readers.io.batches import fits
from roofscope.readers.io.host_calls import call_kind, insert_ranges, range_kind
from roofscope.readers.io.json_keys import Malformed, TopKeys, Unfinished
from roofscope.readers.io.json_stream import GZIP_ERRORS, open_text, paused_gc
from roofscope.readers.io.no_kernels import (
    KINETO_WIDEN,
    held,
    is_launch,
    kernels_not_recorded,
    no_kernel_ran,
)
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head
from roofscope.readers.torch import kineto_nest as nest
from roofscope.readers.torch.kineto_events import Event, KinetoEvents
from roofscope.readers.torch.kineto_meta import (
    CAPTURE_BEGIN,
    GRAPH_LAUNCH,
    LOADER,
    LOADER_CATS,
    PRODUCER,
    arch_doubt,
    insert_graph_launches,
    run_info,
    run_rank,
    waves,
    whole,
)
from roofscope.readers.torch.kineto_ops import Operators, annotated_kernels
from roofscope.readers.torch.kineto_rows import (
    COPY_COLUMNS,
    KERNEL_COLUMNS,
    NAME,
    STAGE,
    Rows,
    copy_columns,
    kernel_columns,
    ns,
    texts,
)
from roofscope.readers.torch.kineto_syncs import OTHER, SYNCED, Calls, after_launch, order_role

KERNEL_CATS = frozenset({"kernel", "Kernel"})
COPY_CATS = frozenset({"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"})
RUNTIME_CATS = frozenset({"cuda_runtime", "Runtime", "cuda_driver"})
HOST_CATS = frozenset({"cpu_op", "Operator", *RUNTIME_CATS})
# torch.profiler with experimental_config(profiler_metrics=...): CUPTI's range profiler
# replaces each kernel's trace event by a range event holding its counters
PROFILER_RANGE_CAT = "cuda_profiler_range"
# distinct names whose facts are remembered (a trace may name every range apart)
NAMES_KEPT = 10_000
# how far detection reads a JSON object's top-level values looking for ``traceEvents``
DETECT_LIMIT_CHARS = 64 << 20


# -- one pass over the events -------------------------------------------------------------


class Facts(NamedTuple):
    """What a runtime call's name says (:meth:`_Pass._call`)."""

    kind: str | None  # its host range's kind (a blocking call, a module load), or none
    launch: bool  # a kernel launch
    graph: bool  # a graph launch
    role: int  # its part in a launch-then-sync (kineto_syncs)
    capture: bool  # the start of a stream capture
    hip: bool  # a HIP call


class _Pass:
    """What one pass over ``traceEvents`` keeps: staged rows and a few facts."""

    def __init__(self, profile: Profile, path: Path) -> None:
        self.kernels = Rows(profile, path, STAGE, KERNEL_COLUMNS, kernel_columns)
        self.copies = Rows(profile, path, f"{STAGE}_m", COPY_COLUMNS, copy_columns)
        self.os_pid: int | None = None
        self.hip = False
        self.runtime = 0  # CUDA/HIP runtime and driver calls: the GPU was traced
        self.captures = 0  # stream captures begun: graphs built, their launches ran nothing
        self.launches = 0  # of them, kernel launches: kernels ran
        self.ranges = 0  # CUPTI profiler ranges: kernels measured by counters, not traced
        # data-loader steps and blocking runtime calls: (kind, name, start, end) (kineto_meta)
        self.host: list[tuple[str, str, int, int]] = []
        self.graphs: list[tuple[int | None, int | None, int | None]] = []  # graph launches
        self.operators = Operators(profile)  # operators, launches, compilers' annotations
        self.calls: dict[str, Facts] = {}  # call names: _call
        self.others = Calls()  # runtime calls but launches: what a sync may follow
        self.plain: set[str] = set()  # operator names neither a loader step nor a compile
        self.ops: list[Event] = []  # a run's operators
        self.called: list[Event] = []  # a run's runtime calls
        # what a complete ("X") event of each category is read for, one dict lookup an
        # event: the kernels, copies, operators and runtime calls gathered for the run's
        # end (a method call an event cost 0.4-1 us of a million operators and as many
        # launches), an annotation (a user range or a data-loader step) and a range read
        self.readers: dict[str, Callable[[Event], None]] = {
            **dict.fromkeys(KERNEL_CATS, self.kernels.pending.append),
            **dict.fromkeys(COPY_CATS, self.copies.pending.append),
            **dict.fromkeys(HOST_CATS & LOADER_CATS, self.ops.append),
            **dict.fromkeys(RUNTIME_CATS, self.called.append),
            **dict.fromkeys(LOADER_CATS - HOST_CATS, self._annotation),
            PROFILER_RANGE_CAT: self._range,
        }

    def run(self, events: list[Any]) -> None:
        """A run of events (:meth:`EventStream.runs`), each gathered or read by its
        category's reader; then each category's read together."""
        readers = self.readers
        for event in events:
            if event is not None and event.ph == "X":
                cat = event.cat  # none, or not a string: a damaged event
                read = readers.get(cat) if type(cat) is str else None
                if read is not None:
                    read(event)
        if self.os_pid is None and (self.ops or self.called):
            self._first_pid(events)
        if self.ops:
            self._operators(self.ops)
            self.ops.clear()
        if self.called:
            self._runtime(self.called)
            self.called.clear()
        for event, args in annotated_kernels(self.kernels.pending):
            self.operators.kernel(event, args)
        self.kernels.take()
        self.copies.take()
        self.operators.take()

    @property
    def untimed(self) -> int:
        return self.kernels.untimed + self.copies.untimed

    def _operators(self, events: list[Event]) -> None:  # both host events and a loader's
        """A run's operators (a million a trace: what a name says is asked once a name,
        and only an event whose name is a loader step's or a compile's is read alone)."""
        names = texts(list(map(NAME, events)))
        plain = self.plain
        if not plain.issuperset(names):
            for event, name in zip(events, names, strict=True):
                if name not in plain:
                    self._loader_step(event, name)
                    self._hip(name)
        self.operators.add(events, names)

    def _runtime(self, events: list[Event]) -> None:
        """A run's runtime calls: counted and their launches staged by what their names
        say, asked once a name; only a call that is a blocking call, a graph launch or
        neither a launch nor a query is read alone."""
        names = texts(list(map(NAME, events)))
        facts = {n: self.calls.get(n) or self._call(n) for n in set(names)}
        self.runtime += len(events)
        if any(f.hip for f in facts.values()):
            self.hip = True
        if captures := {n for n, f in facts.items() if f.capture}:
            self.captures += sum(n in captures for n in names)
        launch = {n for n, f in facts.items() if f.launch}
        called = events if len(launch) == len(facts) else [
            e for e, n in zip(events, names, strict=True) if n in launch
        ]  # fmt: skip
        self.launches += len(called)
        self.operators.called += called
        alone = {n for n, f in facts.items()
                 if f.kind is not None or f.graph or f.role in (OTHER, SYNCED)}  # fmt: skip
        for event, name in zip(events, names, strict=True) if alone else ():
            if name in alone:
                fact = facts[name]
                if fact.kind is not None:  # a blocking call, a module load
                    self._host_range(event, fact.kind, name)
                if fact.role in (OTHER, SYNCED):  # not a launch (staged by kineto_ops), no query
                    self.others.add(event, fact.role, name)
                if fact.graph:
                    self.graphs.append(_graph_launch(event))

    def _call(self, name: str) -> Facts:
        """What a runtime call's name says (its host-range kind, a launch, a graph launch, its
        part in a launch-then-sync, the start of a stream capture, a HIP call), matched once a
        name: a trace repeats a few call names a million times."""
        graph = GRAPH_LAUNCH.match(name) is not None
        capture = CAPTURE_BEGIN.match(name) is not None
        hip = name.startswith("hip")
        facts = Facts(call_kind(name), is_launch(name), graph, order_role(name), capture, hip)
        if len(self.calls) < NAMES_KEPT:
            self.calls[name] = facts
        return facts

    def _annotation(self, event: Event) -> None:  # user_annotation: a user range
        name = str(event.name)
        self._loader_step(event, name)
        self.operators.user_range(event, name)

    def _range(self, event: Event) -> None:
        self.ranges += 1

    def _loader_step(self, event: Event, name: str) -> None:
        """A data-loader step, or a range a JIT compiler names (host_calls.range_kind)."""
        if name in self.plain:
            return
        if LOADER.search(name):
            self._host_range(event, "data-loader", name)
        elif (kind := range_kind(name)) is not None:
            self._host_range(event, kind, name)
        elif len(self.plain) < NAMES_KEPT:  # neither: not matched again
            self.plain.add(name)

    def _host_range(self, event: Event, kind: str, name: str) -> None:
        start, dur = ns(event.ts), ns(event.dur)
        if start is not None and dur is not None:
            self.host.append((kind, name, start, start + dur))

    def _first_pid(self, events: list[Any]) -> None:
        """The process id: the first host event's (an operator, a runtime call) pid that is
        an integer of 64 bits."""
        for event in events:
            if event is None or event.ph != "X" or type(event.cat) is not str:
                continue
            if event.cat in HOST_CATS and (pid := whole(event.pid)) is not None and fits(pid):
                self.os_pid = pid
                return

    def _hip(self, name: str) -> None:
        if name.startswith("hip"):
            self.hip = True


def captured(path: Path, captures: int) -> str:
    """What a trace that captured graphs is for: the operators of another trace's replays."""
    return (
        f"{path}: it captured {count(captures, 'CUDA/HIP graph')} (stream captures): the "
        "launches inside a capture run no kernel until the graph is replayed; to give a "
        "replay trace's graph kernels this trace's operators and shapes, read the replay "
        f"trace with --graph-capture {path}"
    )


def _graph_launch(event: Event) -> tuple[int | None, int | None, int | None]:
    """A graph launch's correlation id (its kernels carry it), start and end in ns."""
    start, dur = ns(event.ts), ns(event.dur)
    correlation = None if event.args is None else whole(event.args.correlation)
    return correlation, start, None if start is None or dur is None else start + dur


# -- writing the model --------------------------------------------------------------------


def _create_stage(profile: Profile) -> None:
    duck = profile.con
    duck.execute(f"CREATE TEMP TABLE {STAGE} ({', '.join(f'{c} BIGINT' for c in KERNEL_COLUMNS)})")
    duck.execute(
        f"""CREATE TEMP TABLE {STAGE}_m (direction VARCHAR, src_agent VARCHAR,
        dst_agent VARCHAR, start_ns BIGINT, end_ns BIGINT)"""
    )
    duck.execute(f"CREATE TEMP TABLE {STAGE}_w (device BIGINT, wave_size BIGINT)")


def _insert_kernels(profile: Profile, source: int, pid: int | None, waves: list[Any]) -> None:
    duck = profile.con
    duck.execute(  # one statement: executemany costs a statement per row
        f"INSERT INTO {STAGE}_w SELECT unnest($1::BIGINT[]), unnest($2::BIGINT[])",
        [[w[0] for w in waves], [w[1] for w in waves]],
    )
    duck.execute(
        f"""INSERT INTO dispatches (source, name_id, pid, device, dispatch_id, start_ns,
        end_ns) SELECT {source}, name_id, $1, device, dispatch_id, start_ns, end_ns
        FROM {STAGE}""",
        [pid],
    )
    duck.execute(
        f"""INSERT INTO launches (source, name_id, stream, grid_size, workgroup_size,
        lds_bytes, arch_vgpr, wave_size, dispatches)
        SELECT {source}, k.name_id, k.stream, k.grid_size, k.workgroup_size, k.lds_bytes,
        k.arch_vgpr, coalesce(w.wave_size, d.wave_size), count(*)
        FROM {STAGE} k LEFT JOIN {STAGE}_w w ON w.device = k.device
        CROSS JOIN (SELECT wave_size FROM {STAGE}_w WHERE device = -1) d
        GROUP BY ALL ORDER BY min(k.start_ns)"""
    )
    for table in (STAGE, f"{STAGE}_w"):  # read: their memory to what comes next
        duck.execute(f"DROP TABLE {table}")


def _insert_copies(
    profile: Profile, path: Path, pid: int | None, rows: int, rank: int | None
) -> None:
    if rows:
        source = profile.begin_input()
        profile.con.execute(f"INSERT INTO copies SELECT {source}, $1, * FROM {STAGE}_m", [pid])
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
            f"its runtime trace holds {count(seen.launches, 'kernel launch')}",
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


def not_a_trace(head: Head) -> str | None:
    """None when the file is a JSON object with a ``traceEvents`` array wherever that stands
    among its keys (or an execution trace's ``schema`` and ``nodes``, refused when read);
    else what it is instead. The top-level values are skipped, not decoded: the head's text
    first, then the file, where metadata runs past the head (docs/formats/pytorch-kineto.md,
    "Top level and metadata")."""
    if not head.text.lstrip().startswith("{"):
        return "it is no JSON object"
    try:
        return _keys_say(TopKeys(io.StringIO(head.text), limit=len(head.text)))
    except Unfinished:
        pass  # the head ends inside the top-level values: read on in the file
    except Malformed as exc:
        return f"it is no JSON object ({exc})"
    try:
        with open_text(head.path, gzipped=head.gzip) as text:
            return _keys_say(TopKeys(text, limit=DETECT_LIMIT_CHARS))
    except Malformed as exc:
        return f"no traceEvents array was found ({exc})"
    except GZIP_ERRORS as exc:
        return f"its gzip stream is damaged ({exc})"


def _keys_say(scan: TopKeys) -> str | None:
    seen: set[str] = set()
    for key, first in scan.pairs():
        if key == "traceEvents":
            return None if first == "[" else "its traceEvents is no array"
        seen.add(key)
        if {"schema", "nodes"} <= seen:
            return None
    return "it is a JSON object without a traceEvents array"


class KinetoTrace(Reader):
    name = "kineto"
    description = (
        "PyTorch profiler / Kineto chrome trace (.json or .json.gz; kernels, memcpy/memset, "
        "rank and GPU from deviceProperties)"
    )
    producer = PRODUCER
    compressed = True

    def detect(self, head: Head) -> bool:
        return self.mismatch(head) is None

    def mismatch(self, head: Head) -> str | None:
        """:func:`not_a_trace` of ``head``, asked once: ``--format kineto`` asks detection,
        then this, of the same head, and a file that is no trace may take a 64 MiB scan."""
        last = self._last
        if last is None or last[0] is not head:
            last = self._last = (head, not_a_trace(head))
        return last[1]

    _last: tuple[Head, str | None] | None = None

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        _create_stage(profile)
        try:
            with paused_gc():
                self._read(path, head, profile, role)
        finally:
            for suffix in ("", "_m", "_w"):
                profile.con.execute(f"DROP TABLE IF EXISTS {STAGE}{suffix}")
            nest.drop(profile)

    def _read(self, path: Path, head: Head, profile: Profile, role: Role) -> None:
        seen = _Pass(profile, path)
        with open_text(path, gzipped=head.gzip) as text:
            stream = KinetoEvents(text, str(path), refuse=_graph_key)
            for run in stream.runs():
                seen.run(run)
            meta = stream.meta
        seen.kernels.flush()
        seen.copies.flush()
        if not seen.kernels.count:
            raise _no_kernels(path, meta, seen)
        if seen.untimed:
            profile.warn(
                "kineto-untimed",
                f"{path}: {count(seen.untimed, 'GPU event')} without ts/dur left out",
            )
        source = profile.begin_input()
        _insert_kernels(profile, source, seen.os_pid, waves(meta, seen.hip))
        insert_ranges(profile, source, seen.host)
        insert_graph_launches(profile, source, seen.graphs)
        seen.operators.write(profile, source)  # then the launches are all staged
        insert_ranges(profile, source, after_launch(profile, seen.others, seen.operators.threads))
        nest.drop(profile)  # the staged launches, read: their memory to the analyses
        rank = run_rank(meta)
        profile.add_input(str(path), self.name, seen.kernels.count, role, rank=rank)
        profile.warn_deviceless(path, source, "neither args.device nor pid is an integer")
        _insert_copies(profile, path, seen.os_pid, seen.copies.count, rank)
        top = seen.kernels.devices.most_common(1)
        device = top[0][0] if top else None
        profile.set_run(run_info(meta, device, seen.hip))
        if doubt := arch_doubt(meta, device, seen.hip):
            profile.warn("kineto-gpu-unnamed", f"{path}: {doubt}; pass --gpu NAME")
        if seen.captures:
            profile.warn("kineto-graph-capture", captured(path, seen.captures))
