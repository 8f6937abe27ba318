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
from typing import Any

from roofscope.model.profile import Profile
from roofscope.model.schema import Table
from roofscope.readers.io.batches import Kind, column, fits, insert_lists, registered
from roofscope.readers.io.user_ranges import UserRange, around
from roofscope.readers.torch.kineto_events import NO_ARGS, Args, Event, Raw
from roofscope.readers.torch.kineto_meta import whole
from roofscope.readers.torch.kineto_rows import SMALL_BATCH, ns, ns_column

BATCH = 100_000  # rows written at a time

_OPERATOR: dict[str, Kind] = {
    "source": "int", "op_id": "int", "parent": "int", "name": "text", "start_ns": "int",
    "end_ns": "int", "dims": "text", "types": "text", "concrete": "text", "flops": "float",
    "bytes": "float",
}  # fmt: skip
_LAUNCH: dict[str, Kind] = {
    "source": "int",
    "correlation": "int",
    "start_ns": "int",
    "op_id": "int",
}
_USER_RANGE: dict[str, Kind] = {
    "source": "int", "range_id": "int", "name": "text", "start_ns": "int", "end_ns": "int"
}  # fmt: skip
_RANGE_LAUNCH: dict[str, Kind] = {"source": "int", "range_id": "int", "correlation": "int"}
_ANNOTATION: dict[str, Kind] = {
    "source": "int", "correlation": "int", "start_ns": "int", "flops": "float", "bytes": "float"
}  # fmt: skip

Thread = tuple[int | None, int | None]  # (pid, tid)
# an operator as read: start, end, name, dims, types, concrete, flops, bytes
Op = tuple[int, int, str, str | None, str | None, str | None, float | None, float | None]
STEP = re.compile(r"ProfilerStep#\d+$")  # torch.profiler's steps: every thread's launches


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
    """What one pass keeps of operators, launches and annotations; written at the end under
    the trace's dispatch source (which is known only once its kernels are written)."""

    def __init__(self) -> None:
        self.ops: defaultdict[Thread, list[Op]] = defaultdict(list)
        self.launches: defaultdict[Thread, list[tuple[Any, int]]] = defaultdict(list)
        self.annotations: list[tuple[Any, ...]] = []
        self.user: defaultdict[Thread, list[UserRange]] = defaultdict(list)
        self.texts: dict[str, str] = {}  # one string for each distinct input list
        self.raw: dict[bytes, str | None] = {}  # an input list's JSON text -> its text

    def user_range(self, event: Event, name: str) -> None:
        """A range the user named (a ``user_annotation`` event)."""
        start, dur = ns(event.ts), ns(event.dur)
        if start is not None and dur is not None:
            thread = (_id(event.pid), _id(event.tid))
            self.user[thread].append((start, start + dur, name, thread))

    def operator(self, event: Event, name: str) -> None:
        """Times in exact ns; the inputs as text, one string for each distinct list (a
        trace repeats its shapes every step: on the 1 M-event bench trace, 200,000
        operators share three strings)."""
        start, dur = ns(event.ts), ns(event.dur)
        if start is None or dur is None:
            return
        args = NO_ARGS if event.args is None else event.args
        dims, types, concrete = (self._text(v) for v in (args.dims, args.types, args.concrete))
        noted = annotated(args) if args.annotated else (None, None)
        thread = (_id(event.pid), _id(event.tid))
        self.ops[thread].append((start, start + dur, name, dims, types, concrete, *noted))

    def _text(self, value: object) -> str | None:
        """Python's text of an input list: of its JSON text, decoded once per distinct text
        (0.07 us an operator, where decoding every list and ``str`` of it took 5 us)."""
        if type(value) is Raw:
            key = bytes(value)
            if key not in self.raw:
                decoded = json.loads(key, parse_float=Decimal)
                self.raw[key] = None if decoded is None else self._text(decoded)
            return self.raw[key]
        return None if value is None else self.texts.setdefault(t := str(value), t)

    def launch(self, event: Event) -> None:
        correlation = None if event.args is None else _id(event.args.correlation)
        if correlation is not None:
            thread = (_id(event.pid), _id(event.tid))
            self.launches[thread].append((event.ts, correlation))

    def kernel(self, event: Event, args: Args) -> None:
        """A kernel event's annotations (only called for one that has them); the kernels of
        one graph launch share a correlation id, so its start tells them apart."""
        correlation, start = _id(args.correlation), ns(event.ts)
        flops, nbytes = annotated(args)
        if correlation is not None and (flops is not None or nbytes is not None):
            self.annotations.append((correlation, start, flops, nbytes))

    def write(self, profile: Profile, source: int) -> None:
        ops: list[tuple[Any, ...]] = []
        launches: list[tuple[Any, ...]] = []
        ids: dict[UserRange, int] = {}
        held: list[tuple[Any, ...]] = []
        steps = _steps(self.user)
        for thread, raw in self.launches.items():
            started = _timed_launches(raw)
            _sweep(self.ops.get(thread, []), started, ops, launches)
            mine = [r for r in self.user.get(thread, []) if not STEP.match(r[2])]
            if user := mine + steps.get(thread[0], []):
                around(user, started, ids, held)
        ranges = [(n, r[2], r[0], r[1]) for r, n in ids.items()]
        _insert(profile, Table.OPERATORS, _OPERATOR, source, ops)
        _insert(profile, Table.OP_LAUNCHES, _LAUNCH, source, launches)
        _insert(profile, Table.KERNEL_ANNOTATIONS, _ANNOTATION, source, self.annotations)
        _insert(profile, Table.USER_RANGES, _USER_RANGE, source, ranges)
        _insert(profile, Table.RANGE_LAUNCHES, _RANGE_LAUNCH, source, held)
        self.ops, self.launches, self.annotations = defaultdict(list), defaultdict(list), []
        self.user = defaultdict(list)


def _timed_launches(raw: list[tuple[Any, int]]) -> list[tuple[int, int]]:
    starts = ns_column([r[0] for r in raw])
    return [(s, r[1]) for s, r in zip(starts, raw, strict=True) if s is not None]


def _sweep(
    ops: list[Op],
    launches: list[tuple[int, int]],
    kept: list[tuple[Any, ...]],
    out: list[tuple[Any, ...]],
) -> None:
    """One thread's operators and launches in time order: each operator's parent (the
    innermost one open at its start) and each launch's operator; the operators around a
    launch (and so their parents) appended to ``kept`` with ids after those already there,
    the launches to ``out`` as (correlation, start, op id)."""
    ops.sort(key=lambda o: (o[0], -o[1]))  # an operator before those it holds
    launches.sort()
    parent = [-1] * len(ops)
    used = [False] * len(ops)
    stack: list[int] = []
    leaf: list[int] = []
    i = 0
    for start, _ in launches:
        while i < len(ops) and ops[i][0] <= start:
            while stack and ops[stack[-1]][1] < ops[i][0]:
                stack.pop()
            parent[i] = stack[-1] if stack else -1
            stack.append(i)
            i += 1
        while stack and ops[stack[-1]][1] < start:
            stack.pop()
        leaf.append(stack[-1] if stack else -1)
        if stack:
            used[stack[-1]] = True
    for j in range(i - 1, -1, -1):  # a parent comes before its child
        if used[j] and parent[j] >= 0:
            used[parent[j]] = True
    ids = {j: len(kept) + n for n, j in enumerate(j for j in range(i) if used[j])}
    for j, n in ids.items():
        start, end, *rest = ops[j]
        kept.append((n, ids.get(parent[j]), rest[0], start, end, *rest[1:]))
    out.extend((c, s, ids.get(n)) for (s, c), n in zip(launches, leaf, strict=True))


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
