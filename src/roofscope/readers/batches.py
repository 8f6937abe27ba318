"""Rows gathered in Python, handed to DuckDB a batch at a time as numpy columns.

The rocpd reader (rows fetched from SQLite) and the Kineto reader (events streamed from JSON)
build their tables this way: one numpy array per column (a missing integer masked, not
zero), kernel names turned into name ids, and the batch registered as a view for the INSERTs
that read it. Each INSERT's result is fetched before the view is dropped, so that the next
batch can be registered under the same name.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import duckdb
import numpy as np
import numpy.typing as npt

from roofscope.model.profile import Profile

Column = npt.NDArray[Any]
Kind = Literal["text", "float", "int"]
INT64 = 2**63 - 1  # the largest value of an "int" column (DuckDB BIGINT)


def fits(number: float) -> bool:
    """Whether ``number`` is finite and fits a 64-bit integer column."""
    return -INT64 <= number <= INT64


def column(values: Sequence[object], kind: Kind) -> Column:
    """``values`` as one numpy column; a None among integers is masked (integers that are
    all None are objects)."""
    if kind == "text":
        return np.array(values, dtype=object)
    if kind == "float":
        return np.array(values, dtype=np.float64)
    if None not in values:
        return np.array(values, dtype=np.int64)
    if all(v is None for v in values):  # DuckDB reads NULLs, without numpy.ma (6 ms to load)
        return np.full(len(values), None, dtype=object)
    data = np.array([0 if v is None else v for v in values], dtype=np.int64)
    return np.ma.masked_array(data, mask=np.array([v is None for v in values]))


def name_ids(profile: Profile, names: Sequence[object]) -> Column:
    """Kernel names as the profile's name ids (None stays missing), registering new names."""
    ids = profile.name_ids(sorted({str(v) for v in names if v is not None}))
    return column([None if v is None else ids[str(v)] for v in names], "int")


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
