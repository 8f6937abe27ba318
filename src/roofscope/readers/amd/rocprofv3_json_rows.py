"""The records of one process of a rocprofv3 ``results.json``, staged and then resolved into
the model's tables (docs/formats/rocprofv3.md, "JSON output").

Dispatch, counter and copy records name their kernel by ``kernel_id``, their GPU by an agent
``handle`` and their counters by a counter ``handle``; those are resolved once the process's
``kernel_symbols``, ``agents`` and ``counters`` are known (the writer puts them first, a file
re-serialised with sorted keys puts them after), so the records wait in DuckDB temp tables,
a batch at a time, never all in Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.readers.io.batches import Kind, column, fits, insert_lists, registered

BATCH = 50_000  # records staged in Python before they go to DuckDB
SMALL_BATCH = 4096  # fewer rows than this go to DuckDB as lists, without numpy
STAGE = "v3json"
REMEDY = "pass the results.json rocprofv3 wrote, unedited"

# staged dispatch columns: ``src`` 0 for buffer_records.kernel_dispatch, 1 for the dispatch of
# a callback_records.counter_collection record (the dispatches when no kernel trace was taken)
DISPATCH = (
    "k",
    "src",
    "kernel_id",
    "agent",
    "queue",
    "stream",
    "tid",
    "dispatch_id",
    "start_ns",
    "end_ns",
    "grid_size",
    "workgroup_size",
    "lds_bytes",
    "scratch_bytes",
    "external",
)
COUNTER = ("dispatch_id", "agent", "counter", "value")
COPY = ("operation", "src_agent", "dst_agent", "start_ns", "end_ns")
_INT: Kind = "int"


def _volume(dims: Any) -> Any:
    """x*y*z of a ``{"x", "y", "z"}`` object (grid and workgroup sizes count work-items); a
    field that is no whole number leaves a product that is none (text, a Decimal), which
    :func:`_whole` refuses."""
    return None if dims is None else dims["x"] * dims["y"] * dims["z"]


def _handle(value: Any) -> Any:
    return None if value is None else value["handle"]


def dispatch_row(data: Mapping[str, Any], tid: Any, stream: Any) -> list[Any]:
    """One dispatch's staged fields (less ``k`` and ``src``) from a kernel_dispatch record or
    a counter record's ``dispatch_data``; KeyError or TypeError where a field is missing."""
    info = data["dispatch_info"]
    return [
        info["kernel_id"],
        _handle(info["agent_id"]),
        _handle(info.get("queue_id")),
        _handle(stream),
        tid,
        info["dispatch_id"],
        data.get("start_timestamp"),
        data.get("end_timestamp"),
        _volume(info.get("grid_size")),
        _volume(info.get("workgroup_size")),
        info.get("group_segment_size"),
        info.get("private_segment_size"),
        (data.get("correlation_id") or {}).get("external"),
    ]


def refuse(path: Path, where: str, why: str) -> InputError:
    return InputError(str(path), f"{where}: {why}", REMEDY)


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"lacks the field {exc}"
    if isinstance(exc, ArithmeticError):
        return "holds a number out of any range (its grid or workgroup size)"
    return f"is not shaped as rocprofv3 writes it ({exc})"


class Staged(msgspec.Struct):
    """The records of one process waiting for their names: appended a record at a time,
    flushed to the temp tables a batch at a time."""

    profile: Profile
    path: Path
    dispatches: list[list[Any]] = msgspec.field(default_factory=list)
    counters: list[tuple[int, int, int, float]] = msgspec.field(default_factory=list)
    copies: list[list[Any]] = msgspec.field(default_factory=list)
    rows: int = 0  # dispatch records staged so far (their ``k``)

    def create(self) -> None:
        con = self.profile.con
        con.execute(f"CREATE TEMP TABLE {STAGE}_d ({', '.join(f'{c} BIGINT' for c in DISPATCH)})")
        con.execute(
            f"CREATE TEMP TABLE {STAGE}_c (dispatch_id BIGINT, agent BIGINT, counter BIGINT, "
            "value DOUBLE)"
        )
        con.execute(f"CREATE TEMP TABLE {STAGE}_m ({', '.join(f'{c} BIGINT' for c in COPY)})")
        con.execute(  # the copies resolved, of every process, until their input is added
            f"CREATE TEMP TABLE {STAGE}_f (pid BIGINT, direction VARCHAR, src_agent VARCHAR, "
            "dst_agent VARCHAR, start_ns BIGINT, end_ns BIGINT)"
        )

    def drop(self) -> None:
        for suffix in ("d", "c", "m", "f", "s", "a", "n", "r", "o"):
            self.profile.con.execute(f"DROP TABLE IF EXISTS {STAGE}_{suffix}")

    def dispatch(self, record: Mapping[str, Any], src: int, where: str) -> None:
        """A kernel_dispatch record (src 0), or a counter record's dispatch (src 1)."""
        try:
            if src == 0:
                row = dispatch_row(record, record.get("thread_id"), record.get("stream_id"))
            else:
                data = record["dispatch_data"]
                row = dispatch_row(data, record.get("thread_id"), record.get("stream_id"))
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            raise refuse(self.path, where, _why(exc)) from None
        _whole(self.path, where, row)
        self.dispatches.append([self.rows, src, *row])
        self.rows += 1
        if src == 1:
            self._counter_values(record, row[1], row[5], where)
        if len(self.dispatches) >= BATCH:
            self.flush()

    def _counter_values(
        self, record: Mapping[str, Any], agent: int, dispatch: int, where: str
    ) -> None:
        """A counter record's values summed per counter, as rocprofv3 sums the instances
        (XCCs, shader engines, channels) before it writes the CSV."""
        totals: dict[int, float] = {}
        try:
            for value in record["records"]:
                counter, number = value["counter_id"]["handle"], value["value"]
                if not isinstance(counter, int) or not isinstance(number, int | Decimal):
                    raise ValueError(f"{counter!r}: {number!r}")
                totals[counter] = totals.get(counter, 0.0) + float(number)
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            where = f"{where}.records"
            raise refuse(self.path, where, _why(exc)) from None
        self.counters += [(dispatch, agent, c, v) for c, v in totals.items()]

    def copy(self, record: Mapping[str, Any], where: str) -> None:
        try:
            row = [
                record["operation"],
                _handle(record["src_agent_id"]),
                _handle(record["dst_agent_id"]),
                record["start_timestamp"],
                record["end_timestamp"],
            ]
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
            raise refuse(self.path, where, _why(exc)) from None
        _whole(self.path, where, row)
        self.copies.append(row)
        if len(self.copies) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the staged rows: through numpy columns, or, fewer than SMALL_BATCH, as
        DuckDB lists (a small file's check-up loads no numpy)."""
        for table, names, rows in (
            ("d", DISPATCH, self.dispatches),
            ("c", COUNTER, self.counters),
            ("m", COPY, self.copies),
        ):
            if rows:
                kinds: list[Kind] = ["float" if n == "value" else _INT for n in names]
                columns = dict(
                    zip(names, zip(kinds, zip(*rows, strict=True), strict=True), strict=True)
                )
                try:
                    _insert(self.profile, f"{STAGE}_{table}", columns, len(rows))
                except OverflowError:
                    raise _beyond(self.path, rows) from None
                rows.clear()


def _insert(
    profile: Profile, table: str, columns: Mapping[str, tuple[Kind, Sequence[Any]]], rows: int
) -> None:
    if rows < SMALL_BATCH:
        insert_lists(profile, table, columns)
        return
    arrays = {name: column(values, kind) for name, (kind, values) in columns.items()}
    with registered(profile, f"{table}_batch", arrays) as con:
        con.execute(f"INSERT INTO {table} SELECT {', '.join(arrays)} FROM {table}_batch").fetchall()


def _beyond(path: Path, rows: Sequence[Sequence[Any]]) -> InputError:
    """The error naming the first number past 64 bits (numpy names none)."""
    value = next(v for row in rows for v in row if isinstance(v, int) and not fits(v))
    return refuse(path, "a record", f"holds {value}, past 64 bits")


_WHOLE = frozenset({int, type(None)})


def _whole(path: Path, where: str, row: Sequence[Any]) -> None:
    """Every staged field a whole number (or absent): never text, a fraction or true/false."""
    if _WHOLE.issuperset(map(type, row)):
        return
    value = next(v for v in row if type(v) not in _WHOLE)
    raise refuse(path, where, f"holds {value!r} where a whole number belongs")
