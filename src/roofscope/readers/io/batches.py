"""Rows gathered in Python, handed to DuckDB a batch at a time as numpy columns.

The rocpd reader (rows fetched from SQLite) and the Kineto reader (events streamed from JSON)
build their tables this way: one numpy array per column (a missing integer masked, not
zero), kernel names turned into name ids, and the batch registered as a view for the INSERTs
that read it. Each INSERT's result is fetched before the view is dropped, so that the next
batch can be registered under the same name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, cast

from roofscope.model.duck import duckdb
from roofscope.model.profile import Profile

if TYPE_CHECKING:
    import numpy.typing as npt

    Column = npt.NDArray[Any]

Kind = Literal["text", "float", "int"]
INT64 = 2**63 - 1  # the largest value of an "int" column (DuckDB BIGINT)


def fits(number: float) -> bool:
    """Whether ``number`` is finite and fits a 64-bit integer column."""
    return -INT64 <= number <= INT64


def column(values: Sequence[object], kind: Kind) -> Column:
    """``values`` as one numpy column; a None among integers is masked (integers that are
    all None are objects)."""
    import numpy as np  # loaded by the readers that stage rows this way, when they do

    if kind == "text":
        return np.array(values, dtype=object)
    if kind == "float":  # None is NaN, which DuckDB reads as NULL; a column of None (a
        if values.count(None) == len(values):  # trace's FLOPs, nearly always) at once: numpy
            return np.full(len(values), np.nan)  # converts each None at 56 ns
        return np.array(values, dtype=np.float64)
    if None not in values:
        return np.array(values, dtype=np.int64)
    if all(v is None for v in values):  # DuckDB reads NULLs, without numpy.ma (6 ms to load)
        return np.full(len(values), None, dtype=object)
    data = np.array([0 if v is None else v for v in values], dtype=np.int64)
    return np.ma.masked_array(data, mask=np.array([v is None for v in values]))


def name_ids(profile: Profile, names: Sequence[object]) -> Column:
    """Kernel names as the profile's name ids (None stays missing), registering new names."""
    return column(name_id_list(profile, names), "int")


def name_id_list(profile: Profile, names: Sequence[object]) -> list[int | None]:
    """:func:`name_ids` as a list; names that are all strings (nearly always) are looked up
    in one map."""
    if set(map(type, names)) <= {str}:
        strings = cast("Sequence[str]", names)
        known = profile.name_ids(sorted(set(strings)))
        return list(map(known.__getitem__, strings))
    ids = profile.name_ids(sorted({str(v) for v in names if v is not None}))
    return [None if v is None else ids[str(v)] for v in names]


SQL_TYPES: dict[Kind, str] = {"text": "VARCHAR", "float": "DOUBLE", "int": "BIGINT"}  # per Kind


def insert_lists(
    profile: Profile, table: str, columns: Mapping[str, tuple[Kind, Sequence[object]]]
) -> None:
    """INSERT rows given as columns (each its kind and values, all of one length) into
    ``table``, the columns passed as DuckDB lists and unnested side by side: for a batch
    too small for numpy columns to pay (numpy takes 37 ms to load). An integer past 64 bits
    raises OverflowError, as numpy's conversion does."""
    params = [_int_text(v) if kind == "int" else list(v) for kind, v in columns.values()]
    select = ", ".join(
        f"unnest(${i}::{'VARCHAR::' if isinstance(p, str) else ''}{SQL_TYPES[kind]}[])"
        for i, (p, (kind, _)) in enumerate(zip(params, columns.values(), strict=True), start=1)
    )
    profile.con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {select}", params)


def _int_text(values: Sequence[object]) -> str | list[object]:
    """An integer column as the text of a DuckDB list (``[1, NULL, 3]``), which DuckDB casts
    to ``BIGINT[]`` in less than half the time it takes to convert a Python list (7 columns
    of 5,000 rows: 24.8 -> 10.2 ms); the list itself where a value is no plain int or None
    (a bool, a float: converted as before). An integer past 64 bits raises OverflowError."""
    plain = True
    for v in values:
        if type(v) is int:
            if not -INT64 <= v <= INT64:  # fits(v), inlined: a call per value costs
                raise OverflowError("an integer past 64 bits")
        elif v is not None:
            plain = False
            if isinstance(v, int) and not fits(v):
                raise OverflowError("an integer past 64 bits")
    return str(list(values)).replace("None", "NULL") if plain else list(values)


HOST_RANGE_COLUMNS: tuple[tuple[str, Kind], ...] = (
    ("source", "int"), ("kind", "text"), ("name", "text"), ("start_ns", "int"), ("end_ns", "int"),
)  # fmt: skip
GRAPH_LAUNCH_COLUMNS: tuple[tuple[str, Kind], ...] = (
    ("source", "int"), ("correlation", "int"), ("start_ns", "int"), ("end_ns", "int"),
)  # fmt: skip


LIST_ROWS = 4096  # fewer rows than this are written as DuckDB lists, without numpy


def insert_rows(
    profile: Profile,
    table: str,
    columns: Sequence[tuple[str, Kind]],
    rows: Sequence[Sequence[object]],
) -> None:
    """Rows (tuples in ``columns``' order) into ``table`` as numpy columns: DuckDB's
    executemany takes about 0.2 ms a row (33 s for 159,100 host ranges), its lists 5 µs, these
    1 µs; fewer than LIST_ROWS go as lists, so that a small input loads no numpy (37 ms). A
    value not of its column's kind raises ValueError, TypeError or OverflowError."""
    if not rows:
        return
    values = list(zip(*rows, strict=True))
    if len(rows) < LIST_ROWS:
        lists = {c: (k, list(v)) for (c, k), v in zip(columns, values, strict=True)}
        for kind, given in lists.values():
            if kind == "int" and not all(x is None or type(x) is int for x in given):
                raise TypeError("a value of an integer column is no integer")
        insert_lists(profile, table, lists)
        return
    arrays = {c: column(v, k) for (c, k), v in zip(columns, values, strict=True)}
    names = ", ".join(c for c, _ in columns)
    with registered(profile, "rows_batch", arrays) as duck:
        duck.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM rows_batch").fetchall()


@contextmanager
def registered(
    profile: Profile, view: str, arrays: dict[str, Column]
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The profile's connection with ``arrays`` readable as the view ``view``."""
    duck = profile.con
    duck.register(view, arrays)
    try:
        yield duck
    finally:
        duck.unregister(view)
