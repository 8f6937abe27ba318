"""A Kineto trace's operators and launches (docs/formats/pytorch-kineto.md, "Operators and
their kernels"): each ``cpu_op`` (``Operator``) event with its thread, times and recorded
inputs (``Input Dims``, ``Input type``, ``Concrete Inputs``: kept as the JSON text the trace
wrote, decoded only for the few distinct operators an analysis asks about), each kernel or
graph launch (a runtime event) with its correlation id and start, and the work a compiler
wrote on an operator or a kernel (Inductor's ``kernel_flop``, ``kernel_num_gb``).

Operators nest on their thread: once the trace is read, one sweep per thread in time order
gives each operator the one around it (``parent``) and each launch the innermost one around
it, which launched its kernels (their correlation id leads to the launch). Only the
operators around some launch are kept: ``aten::view``, ``aten::empty`` and the like launch
nothing (the H100 bert-small trace: 479 operators, 198 around a launch). ``External id`` is
not used for the link: older traces write the correlation id there (HTA's
``negative_queue_length_values_check``: kernel, launch and External id all 863350, its
operators' External ids in the hundreds).

The inputs are kept as Python's text of the decoded lists (``str``: 0.3 us an operator,
against 2 us for ``json.dumps``), which :func:`roofscope.analysis.ops.link` reads back with
``ast.literal_eval``.

The user's own ranges (``user_annotation`` events: ``record_function``, ``ProfilerStep#N``)
are kept per thread too; a second sweep gives each launch every user range of its thread
around it (nested ranges: each of them), and a ``ProfilerStep#N`` of its process whatever
the thread; only the ranges around some launch are kept (``user_ranges``,
``range_launches``: one row per launch and range around it).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from decimal import Decimal
from operator import attrgetter
from typing import Any

import msgspec

from roofscope.model.profile import Profile
from roofscope.model.schema import Table
from roofscope.readers.io.batches import Kind, column, fits, insert_lists, registered
from roofscope.readers.io.user_ranges import UserRange, around
from roofscope.readers.torch import kineto_nest as nest
from roofscope.readers.torch.kineto_events import NO_ARGS, Args, Event, Raw
from roofscope.readers.torch.kineto_meta import whole
from roofscope.readers.torch.kineto_rows import SMALL_BATCH, ends, ns, ns_column, seen, wholes

BATCH = 100_000  # rows written at a time

_USER_RANGE: dict[str, Kind] = {
    "source": "int", "range_id": "int", "name": "text", "start_ns": "int", "end_ns": "int"
}  # fmt: skip
_RANGE_LAUNCH: dict[str, Kind] = {"source": "int", "range_id": "int", "correlation": "int"}
_ANNOTATION: dict[str, Kind] = {
    "source": "int", "correlation": "int", "start_ns": "int", "flops": "float", "bytes": "float"
}  # fmt: skip

Thread = tuple[int | None, int | None]  # (pid, tid)
STEP = re.compile(r"ProfilerStep#\d+$")  # torch.profiler's steps: every thread's launches
_PID, _TID = attrgetter("pid"), attrgetter("tid")
_DIMS, _TYPES, _CONCRETE = attrgetter("dims"), attrgetter("types"), attrgetter("concrete")
_FLOP, _GB, _ARGS_OF = attrgetter("flop"), attrgetter("gb"), attrgetter("args")


def annotated(args: Args) -> tuple[float | None, float | None]:
    """The FLOPs and bytes an event's args were annotated with (``kernel_num_gb`` is in
    10^9 bytes, as Inductor's ``estimate_kernel_num_bytes() / 1e9`` writes it)."""
    flops, gb = _number(args.flop), _number(args.gb)
    return flops, None if gb is None else gb * 1e9


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    number = float(value)
    return number if 0 <= number < float("inf") else None


def _id(value: object) -> int | None:
    return value if type(value) is int else whole(value)


class Operators:
    """What one pass keeps of operators, launches and annotations: operators and launches
    staged in DuckDB a run at a time (:mod:`~roofscope.readers.torch.kineto_nest`), written
    at the end under the trace's dispatch source (known only once its kernels are written)."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.pending: list[Event] = []  # a run's operators (:meth:`add`)
        self.names: list[str] = []  # and their names
        self.called: list[Event] = []  # a run's launches (the caller appends)
        self.ops = self._batch(nest.OP_COLUMNS)
        self.launches = self._batch(nest.LAUNCH_COLUMNS)
        self.seq = 0  # operators and launches read, in reading order
        self.threads: dict[Thread, int] = {}  # (pid, tid) -> its number
        self.first: dict[int, None] = {}  # threads in the order of their first launch
        self.texts: dict[str, int] = {}  # a name or an input list's text -> its id
        self.raw: dict[bytes, int] = {}  # an input list's JSON text -> its text's id (-1: none)
        self.annotations: list[tuple[Any, ...]] = []
        self.user: defaultdict[Thread, list[UserRange]] = defaultdict(list)
        nest.create(profile)

    @staticmethod
    def _batch(kinds: dict[str, Kind]) -> dict[str, list[Any]]:
        return {c: [] for c in kinds}

    def user_range(self, event: Event, name: str) -> None:
        """A range the user named (a ``user_annotation`` event)."""
        start, dur = ns(event.ts), ns(event.dur)
        if start is not None and dur is not None:
            thread = (_id(event.pid), _id(event.tid))
            self.user[thread].append((start, start + dur, name, thread))

    def add(self, events: list[Event], names: list[str]) -> None:
        """Operator events and their names (``str`` of each event's name)."""
        self.pending += events
        self.names += names

    def take(self) -> None:
        """A run's operators and launches as columns, staged a batch at a time."""
        if self.pending:
            _extend(self.ops, self._op_columns(self.pending, self.names))
            self.pending, self.names = [], []
        if self.called:
            _extend(self.launches, self._launch_columns(self.called))
            self.called.clear()
        self._stage(nest.BATCH)

    def _stage(self, at: int) -> None:
        """The operators' and the launches' batches of ``at`` rows or more staged (of
        any rows, ``at`` 0)."""
        both = (
            (nest.OPS, nest.OP_COLUMNS, self.ops),
            (nest.LAUNCHES, nest.LAUNCH_COLUMNS, self.launches),
        )
        for table, kinds, batch in both:
            if len(batch["seq"]) >= max(at, 1):
                nest.stage(self.profile, table, kinds, batch)
                for values in batch.values():
                    values.clear()

    def _op_columns(self, events: list[Event], names: list[str]) -> dict[str, list[Any]]:
        """Times in exact ns; the thread, the name and inputs as ids, one for each distinct
        text (a trace repeats its shapes every step: on the 1 M-event bench trace, 200,000
        operators share three), a column at a time by C-level maps and dict lookups, an
        element missed (a new text or thread) looked up the slow way."""
        start, dur = ns_column([e.ts for e in events]), ns_column([e.dur for e in events])
        if None in start or None in dur:  # untimed operators are left out
            timed = [
                i
                for i, (s, d) in enumerate(zip(start, dur, strict=True))
                if s is not None and d is not None
            ]
            events, names = [events[i] for i in timed], [names[i] for i in timed]
            start, dur = [start[i] for i in timed], [dur[i] for i in timed]
        args = [NO_ARGS if (a := e.args) is None else a for e in events]
        flops, nbytes = self._annotations(args)
        return {
            "thread": self._threads(events),
            "seq": self._seqs(len(events)),
            "start_ns": start,
            "end_ns": ends(start, dur),
            "name": self._names(names),
            "dims": self._texts(list(map(_DIMS, args))),
            "types": self._texts(list(map(_TYPES, args))),
            "concrete": self._texts(list(map(_CONCRETE, args))),
            "flops": flops,
            "bytes": nbytes,
        }

    @staticmethod
    def _annotations(args: list[Args]) -> tuple[list[float | None], list[float | None]]:
        """The FLOPs and bytes columns; all unknown without a compiler's annotation."""
        n, unset = len(args), msgspec.UNSET
        flop, gb = list(map(_FLOP, args)), list(map(_GB, args))
        if flop.count(unset) == n and gb.count(unset) == n:
            return [None] * n, [None] * n
        noted = [annotated(a) if a.annotated else (None, None) for a in args]
        return [f for f, _ in noted], [b for _, b in noted]

    def _launch_columns(self, events: list[Event]) -> dict[str, list[Any]]:
        """The launches with a correlation id; those with a start staged (every one counts
        for its thread's place in the order of first launches)."""
        given = [None if (a := e.args) is None else a.correlation for e in events]
        correlations = wholes(given)
        if None in correlations:
            kept = [i for i, c in enumerate(correlations) if c is not None]
            events, correlations = [events[i] for i in kept], [correlations[i] for i in kept]
        threads = self._threads(events)
        self.first.update(dict.fromkeys(threads))
        start = ns_column([e.ts for e in events])
        if None in start:
            timed = [i for i, s in enumerate(start) if s is not None]
            threads, start = [threads[i] for i in timed], [start[i] for i in timed]
            correlations = [correlations[i] for i in timed]
        return {
            "thread": threads,
            "seq": self._seqs(len(start)),
            "start_ns": start,
            "correlation": correlations,
        }

    def _seqs(self, n: int) -> list[int]:
        self.seq += n
        return list(range(self.seq - n, self.seq))

    def _threads(self, events: list[Event]) -> list[int]:
        """Each event's thread number: a lookup of its (pid, tid) where both are ints (a
        bool or float equal to an int must not find that int's thread); one lookup for a
        run of one known thread's events (199 -> 94 ns an event)."""
        pids, tids = list(map(_PID, events)), list(map(_TID, events))
        if set(map(type, pids)) | set(map(type, tids)) != {int}:  # none, or a damaged one
            return [self._thread(e) for e in events]
        first = (pids[0], tids[0])
        n = len(pids)
        if first in self.threads and pids.count(first[0]) == n and tids.count(first[1]) == n:
            return [self.threads[first]] * n
        numbers = list(map(self.threads.get, zip(pids, tids, strict=True)))
        if None not in numbers:
            return numbers  # type: ignore[return-value]
        return [self._thread(e) if n is None else n for n, e in zip(numbers, events, strict=True)]

    def _thread(self, event: Event) -> int:
        pid, tid = event.pid, event.tid
        key = (pid, tid) if type(pid) is int and type(tid) is int else (_id(pid), _id(tid))
        return self.threads.setdefault(key, len(self.threads))

    def _names(self, names: list[str]) -> list[int]:
        texts = self.texts
        ids = list(map(texts.get, names))
        if None not in ids:
            return ids  # type: ignore[return-value]
        return [texts.setdefault(n, len(texts)) for n in names]

    def _texts(self, values: list[object]) -> list[int]:
        """The ids of input lists' texts (:meth:`_text`), -1 for none; JSON texts all seen
        before are looked up (:func:`~roofscope.readers.torch.kineto_rows.seen`)."""
        found = seen(values, self.raw)
        return [self._text(v) for v in values] if found is None else found

    def _text(self, value: object) -> int:
        """The id of Python's text of an input list, -1 for none (JSON null, or absent): of
        its JSON text, decoded once per distinct text (0.07 us an operator, where decoding
        every list and ``str`` of it took 5 us). No text has the id -1, so the operators'
        join to their texts gives it none."""
        if type(value) is Raw:
            key = bytes(value)
            if key not in self.raw:
                decoded = json.loads(key, parse_float=Decimal)
                self.raw[key] = self._text(decoded)
            return self.raw[key]
        if value is None:
            return -1
        return self.texts.setdefault(str(value), len(self.texts))

    def kernel(self, event: Event, args: Args) -> None:
        """A kernel event's annotations (only called for one that has them); the kernels of
        one graph launch share a correlation id, so its start tells them apart."""
        correlation, start = _id(args.correlation), ns(event.ts)
        flops, nbytes = annotated(args)
        if correlation is not None and (flops is not None or nbytes is not None):
            self.annotations.append((correlation, start, flops, nbytes))

    def write(self, profile: Profile, source: int) -> None:
        self.take()
        self._stage(0)
        threads = list(self.first)
        nest.nest(profile, source, threads, list(self.texts))
        ids: dict[UserRange, int] = {}
        held: list[tuple[Any, ...]] = []
        steps = _steps(self.user)
        numbers = {n: thread for thread, n in self.threads.items()}
        for number in threads:
            thread = numbers[number]
            mine = [r for r in self.user.get(thread, []) if not STEP.match(r[2])]
            if user := mine + steps.get(thread[0], []):
                around(user, nest.thread_launches(profile, number), ids, held)
        ranges = [(n, r[2], r[0], r[1]) for r, n in ids.items()]
        _insert(profile, Table.KERNEL_ANNOTATIONS, _ANNOTATION, source, self.annotations)
        _insert(profile, Table.USER_RANGES, _USER_RANGE, source, ranges)
        _insert(profile, Table.RANGE_LAUNCHES, _RANGE_LAUNCH, source, held)
        self.annotations, self.user = [], defaultdict(list)


def annotated_kernels(kernels: list[Event]) -> list[tuple[Event, Args]]:
    """The kernel events a compiler annotated with their work, and their args (none, nearly
    always: asked of the whole run in C-level maps first)."""
    args = list(map(_ARGS_OF, kernels))
    if None not in args:
        n, unset = len(args), msgspec.UNSET
        if list(map(_FLOP, args)).count(unset) == n and list(map(_GB, args)).count(unset) == n:
            return []
    return [(e, a) for e, a in zip(kernels, args, strict=True) if a is not None and a.annotated]


def _extend(batch: dict[str, list[Any]], columns: dict[str, list[Any]]) -> None:
    for name, values in columns.items():
        batch[name] += values


def _steps(user: dict[Thread, list[UserRange]]) -> dict[int | None, list[UserRange]]:
    """The ``ProfilerStep#N`` ranges by process: a step holds the launches of every thread
    of its process (the autograd thread launches the backward's kernels), as HTA's
    iterations do; other ranges hold only their own thread's."""
    steps: defaultdict[int | None, list[UserRange]] = defaultdict(list)
    for (pid, _), ranges in user.items():
        steps[pid].extend(r for r in ranges if STEP.match(r[2]))
    return steps


def _insert(
    profile: Profile, table: str, kinds: dict[str, Kind], source: int, rows: list[tuple[Any, ...]]
) -> None:
    """``rows`` (without their source) into ``table``, a batch at a time; an integer past 64
    bits (a damaged time or id) is left unknown."""
    names = list(kinds)[1:]
    for at in range(0, len(rows), BATCH):
        batch = rows[at : at + BATCH]
        columns: dict[str, tuple[Kind, list[Any]]] = {"source": ("int", [source] * len(batch))}
        for name, values in zip(names, zip(*batch, strict=True), strict=True):
            kind = kinds[name]
            if kind == "int" and not all(v is None or fits(v) for v in values):
                values = tuple(None if v is not None and not fits(v) else v for v in values)
            columns[name] = (kind, list(values))
        if len(batch) < SMALL_BATCH:
            insert_lists(profile, table, columns)
        else:
            arrays = {c: column(v, kind) for c, (kind, v) in columns.items()}
            with registered(profile, "kineto_ops_batch", arrays) as con:
                con.execute(
                    f"INSERT INTO {table} ({', '.join(arrays)}) SELECT * FROM kineto_ops_batch"
                ).fetchall()
