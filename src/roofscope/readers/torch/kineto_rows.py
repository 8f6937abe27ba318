"""A Kineto trace's kernel and copy rows (see :mod:`~roofscope.readers.torch.kineto`): the events
of one kind gathered while a run of events is read, converted a column at a time once the run
is done, and written to DuckDB a batch at a time: through numpy columns, or, a batch too small
for numpy to pay, as DuckDB lists (a small trace's check-up then loads no numpy).

A column is converted in one list comprehension, with a fast path for the common type (an
``int`` taken as it is, a ``Decimal`` of ``ts`` scaled and rounded in place), where a method
per event converted a field at a time: on 200,000 events of the 1 M-event trace of
bench/kineto_bench.py, the pass and its staging took 0.345 s of CPU that way, and 0.195 s
this way (0.225 s when the fields were converted a batch of 50,000 kernels later, out of the
processor's caches).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_EVEN, Context, Decimal, Overflow
from math import prod
from operator import attrgetter, mul
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.readers.io.batches import (
    Kind,
    column,
    fits,
    insert_lists,
    name_id_list,
    name_ids,
    registered,
)
from roofscope.readers.torch.kineto_events import NO_ARGS, Event, Raw
from roofscope.readers.torch.kineto_meta import BEYOND, whole

if TYPE_CHECKING:
    from roofscope.readers.io.batches import Column

T = TypeVar("T")
BATCH = 100_000  # rows gathered before they are written to DuckDB
SMALL_BATCH = 4096  # fewer rows than this go to DuckDB as lists, without numpy
STAGE = "kineto_k"
_EXACT = Context(prec=60, Emax=60, rounding=ROUND_HALF_EVEN)  # 10^60 ns: past it is damage
_STREAM_TID = re.compile(r"stream (\d+)$")
_AGENTS = re.compile(r"\((.+?) -> (.+?)\)")

# staged kernel columns, every one a 64-bit integer -> what of the event it comes from
KERNEL_COLUMNS = {
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
COPY_COLUMNS = {
    "direction": "name",
    "src_agent": "name",
    "dst_agent": "name",
    "start_ns": "ts",
    "end_ns": "ts + dur",
}

# -- values -------------------------------------------------------------------------------


def ns(value: object) -> int | None:
    """Microseconds as written (int, or Decimal of the literal) -> exact integer ns."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value * 1000
    if isinstance(value, Decimal) and value.is_finite():
        try:
            return round(value.scaleb(3, _EXACT))  # round(): half to even, to an int
        except Overflow:  # past _EXACT's exponent limit, far past 64 bits
            return BEYOND
    return None


def ns_column(values: Sequence[object]) -> list[int | None]:
    """:func:`ns` of each value. An int (an integer-µs trace's every value) is scaled in the
    comprehension, and so is a Decimal (the decoder's are finite: it gives NaN and Infinity
    as floats): 0.27 µs a Decimal against 0.63 µs through :func:`ns` (a function call and
    three type checks)."""
    if set(map(type, values)) <= {int}:  # an integer-µs trace: one C-level pass to know
        return [v * 1000 for v in values]  # type: ignore[operator]
    try:
        return [
            v * 1000
            if type(v) is int
            else round(v.scaleb(3, _EXACT))
            if type(v) is Decimal
            else ns(v)
            for v in values
        ]
    except Overflow:  # a literal past 10^57 µs: again, value by value
        return [ns(v) for v in values]


def wholes(values: Sequence[object]) -> list[int | None]:
    """:func:`~roofscope.readers.torch.kineto_meta.whole` of each value; an int (nearly every
    value) is taken as it is: 35 ns a value against 104 ns through the call; a column of
    ints only, in one map of ``type``."""
    if set(map(type, values)) <= {int}:  # every value: one C-level pass
        return list(values)  # type: ignore[arg-type]
    return [v if type(v) is int else whole(v) for v in values]


def product(dims: object) -> int | None:
    """The product of a non-empty list of JSON integers (a launch's grid or block)."""
    if type(dims) is list and len(dims) == 3:  # [x, y, z], as every profiler writes it
        x, y, z = dims
        if type(x) is int and type(y) is int and type(z) is int:
            return x * y * z
    if not isinstance(dims, list) or not dims:
        return None
    ints = [whole(d) for d in dims]
    return None if None in ints else prod(i for i in ints if i is not None)


# a grid's or block's JSON text -> its product, for the texts seen (a trace repeats a few)
_PRODUCTS: dict[bytes, int | None] = {}
PRODUCTS_KEPT = 100_000


def products(values: list[object]) -> list[int | None]:
    """:func:`product` of each grid or block, given as its JSON text (msgspec's Raw) or as
    decoded (the stdlib's); texts all seen before are looked up (:func:`seen`)."""
    found = seen(values, _PRODUCTS)
    return [_product_of(v) for v in values] if found is None else found


def seen(values: list[object], known: dict[bytes, T]) -> list[T] | None:
    """What ``known`` holds for each value's JSON text, where every value is msgspec's Raw
    (bytes() of a stdlib's list of small ints is a text too: ``bytes([91, 93]) == b"[]"``)
    and every text is known; else None. A value equal to the one before (``Raw == Raw``,
    16 ns) is not looked up again: ``bytes(Raw)`` costs 100-300 ns."""
    if set(map(type, values)) != {Raw}:
        return None
    raws = cast("list[Raw]", values)
    last: Raw | None = None
    found: Any = None  # known[bytes(last)]: the first value never equals None
    try:  # a new text: KeyError
        return [found if v == last else (found := known[bytes(last := v)]) for v in raws]
    except KeyError:
        return None


def _product_of(value: object) -> int | None:
    if type(value) is not Raw:
        return product(value)
    key = bytes(value)
    if key in _PRODUCTS:
        return _PRODUCTS[key]
    found = product(json.loads(key, parse_float=Decimal))
    if len(_PRODUCTS) < PRODUCTS_KEPT:
        _PRODUCTS[key] = found
    return found


def tid_stream(tid: object) -> int | None:
    """The stream a kernel's ``tid`` names ("stream 7", or the number itself)."""
    if isinstance(tid, str) and (m := _STREAM_TID.match(tid)):
        return int(m.group(1))
    return whole(tid)


def ends(starts: list[int | None], durations: list[int | None]) -> list[int | None]:
    return [
        None if s is None or d is None else s + d for s, d in zip(starts, durations, strict=True)
    ]


# -- the columns of a run's events --------------------------------------------------------

# a run's events of one kind -> their staged columns, in the table's order
Convert = Callable[[list[Event]], dict[str, list[Any]]]


def kernel_columns(events: list[Event]) -> dict[str, list[Any]]:
    """A column at a time, by C-level maps where every value is of the common type (an int,
    a str, a known grid) and one comprehension where some value is not."""
    args = [NO_ARGS if (a := e.args) is None else a for e in events]
    start = ns_column(list(map(_TS, events)))
    grids, blocks = products(list(map(_GRID, args))), products(list(map(_BLOCK, args)))
    device, stream = wholes(list(map(_DEVICE, args))), wholes(list(map(_STREAM, args)))
    if None in device:  # no args.device: the pid
        device = [whole(e.pid) if d is None else d for d, e in zip(device, events, strict=True)]
    if None in stream:  # no args.stream: the tid ("stream 7")
        stream = [
            tid_stream(e.tid) if s is None else s for s, e in zip(stream, events, strict=True)
        ]
    return {
        "name_id": texts(list(map(NAME, events))),
        "device": device,
        "dispatch_id": wholes(list(map(_CORRELATION, args))),
        "start_ns": start,
        "end_ns": ends(start, ns_column(list(map(_DUR, events)))),
        "stream": stream,
        "grid_size": _times(grids, blocks),
        "workgroup_size": blocks,
        "lds_bytes": wholes(list(map(_SHARED, args))),
        "arch_vgpr": wholes(list(map(_REGISTERS, args))),
    }


_TS, _DUR, NAME = attrgetter("ts"), attrgetter("dur"), attrgetter("name")
_GRID, _BLOCK, _CORRELATION = attrgetter("grid"), attrgetter("block"), attrgetter("correlation")
_DEVICE, _STREAM = attrgetter("device"), attrgetter("stream")
_SHARED, _REGISTERS = attrgetter("shared_memory"), attrgetter("registers")


def _times(a: list[int | None], b: list[int | None]) -> list[int | None]:
    if None in a or None in b:
        return [None if x is None or y is None else x * y for x, y in zip(a, b, strict=True)]
    return list(map(mul, a, b))


def texts(values: list[object]) -> list[str]:
    """``str`` of each value (a name the trace wrote as no string)."""
    return values if set(map(type, values)) <= {str} else list(map(str, values))  # type: ignore[return-value]


def copy_columns(events: list[Event]) -> dict[str, list[Any]]:
    direction = [str(e.name) for e in events]
    agents = [_AGENTS.search(n) for n in direction]
    start = ns_column([e.ts for e in events])
    return {
        "direction": direction,
        "src_agent": [a.group(1) if a else None for a in agents],
        "dst_agent": [a.group(2) if a else None for a in agents],
        "start_ns": start,
        "end_ns": ends(start, ns_column([e.dur for e in events])),
    }


# -- staging ----------------------------------------------------------------------------------


class Rows:
    """Events of one kind: a run's events gathered in ``pending`` (the caller appends them),
    converted to columns once the run is read, written to a DuckDB table a batch at a time.
    An event without ``ts`` or ``dur`` is counted in ``untimed`` and left out."""

    def __init__(
        self, profile: Profile, path: Path, table: str, columns: dict[str, str], convert: Convert
    ) -> None:
        self.profile, self.path, self.table = profile, path, table
        self.fields, self.convert = columns, convert
        self.pending: list[Event] = []
        self.batch: dict[str, list[Any]] = {c: [] for c in columns}
        self.count = self.untimed = 0
        self.devices: Counter[int] = Counter()  # kernels per device

    def take(self) -> None:
        """The pending events converted, while they are fresh in the processor's caches:
        converting them a batch of 50,000 kernels later cost 0.4 us more a kernel."""
        if not self.pending:
            return
        converted = self._timed(self.convert(self.pending))
        self.pending.clear()
        for name, values in converted.items():
            self.batch[name] += values
        if "device" in converted:
            self.devices.update(d for d in converted["device"] if d is not None)
        if len(self.batch["start_ns"]) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the batch (names become name ids): through numpy columns, or, a batch of
        fewer than SMALL_BATCH rows, as DuckDB lists, so that a small trace's check-up
        loads no numpy."""
        batch, rows = self.batch, len(self.batch["start_ns"])
        if not rows:
            return
        try:
            if rows < SMALL_BATCH:
                insert_lists(self.profile, self.table, self._lists(batch))
            else:
                self._insert_arrays(batch)
        except OverflowError:
            self._refuse_beyond(batch)
            raise
        self.count += rows
        self.batch = {c: [] for c in batch}

    def _insert_arrays(self, batch: dict[str, list[Any]]) -> None:
        arrays = {c: self._array(c, v) for c, v in batch.items()}
        with registered(self.profile, "kineto_batch", arrays) as batch_con:
            batch_con.execute(
                f"INSERT INTO {self.table} SELECT {', '.join(batch)} FROM kineto_batch"
            ).fetchall()

    def _lists(self, batch: dict[str, list[Any]]) -> dict[str, tuple[Kind, list[Any]]]:
        return {
            c: ("int", name_id_list(self.profile, v)) if c == "name_id" else (self._kind(c), v)
            for c, v in batch.items()
        }

    def _timed(self, converted: dict[str, list[Any]]) -> dict[str, list[Any]]:
        """The columns without the events that lack a start or an end."""
        starts, ends = converted["start_ns"], converted["end_ns"]
        if None not in starts and None not in ends:
            return converted
        timed = enumerate(zip(starts, ends, strict=True))
        keep = [i for i, (s, e) in timed if s is not None and e is not None]
        self.untimed += len(starts) - len(keep)
        return {c: [values[i] for i in keep] for c, values in converted.items()}

    def _array(self, name: str, values: list[Any]) -> Column:
        if name == "name_id":
            return name_ids(self.profile, values)
        return column(values, self._kind(name))

    @staticmethod
    def _kind(name: str) -> Kind:
        return "text" if name in ("direction", "src_agent", "dst_agent") else "int"

    def _refuse_beyond(self, converted: dict[str, list[Any]]) -> None:
        """The error naming the first event with a number past 64 bits (numpy names none)."""
        columns = list(converted.items())
        for i in range(len(columns[0][1])):
            for name, values in columns:
                if isinstance(values[i], int) and not fits(values[i]):
                    what = "kernel" if self.table == STAGE else "memcpy/memset"
                    raise InputError(
                        str(self.path),
                        f"{what} event {self.count + i + 1} ({str(columns[0][1][i])[:60]!r}): "
                        f"{self.fields[name]} is past 64 bits",
                        "pass the trace the profiler wrote",
                    )
