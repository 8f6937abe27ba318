"""How a dispatch CSV's columns map onto the model (:class:`CsvLayout`), and how its header
fields are named: shared by the CSV loader (:mod:`~roofscope.readers.io.csvload`), its counter
columns (:mod:`~roofscope.readers.io.csv_counters`) and the readers that build layouts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec


class CsvLayout(msgspec.Struct, frozen=True):
    """How a dispatch CSV maps onto the model.

    ``columns`` are the file's columns in order with their DuckDB types; ``mapping`` gives
    for each model column an SQL expression over those columns; ``name`` is the column
    holding the kernel name; ``counters`` are columns kept as counters. ``loose`` names, for
    each launch field read from text with TRY_CAST, the file column it comes from: text there
    that is not a number makes the field unknown, and a warning counts it.
    """

    columns: Sequence[tuple[str, str]]
    mapping: dict[str, str]
    name: str
    counters: Sequence[str] = ()
    header: bool = True
    loose: Mapping[str, str] = msgspec.field(default_factory=dict)
    # the producer lists barrier packets among its kernels (rocprof v1): their rows go to
    # the source after the file's own, an input of their own role (see barrier_rows)
    barriers: bool = False


def header_name(raw: str, index: int) -> str:
    """A header field as a column name: stripped; an empty one (the field after a trailing
    comma, as spreadsheets write) named by its position, ``(column 23)``."""
    return raw.strip() or f"(column {index + 1})"


def is_unnamed(raw: str) -> bool:
    """Whether a header field names nothing: such a column is read past, never a counter."""
    return not raw.strip()
