"""A dispatch CSV's kernel names read straight into their ids, where the sample holds them all.

The loader (:mod:`~roofscope.readers.io.csvload`) turns each row's name into its id through a
DuckDB ENUM of the names in the file's first rows: a ``TRY_CAST`` of the name read as text,
with the names it does not know kept as text. Where the ENUM holds every name of the file,
``read_csv`` can type the name column as that ENUM itself and the text is never built: 0.07 s
of CPU less of the INSERT's 1.74 s at 2 M dispatches (the bench's file, 300 names of 264
characters). A name the ENUM lacks is a conversion error that stops that scan before it
inserts a row, and the loader reads the file as before: so the typed scan is tried only
where the file's end, read here, holds whole rows whose names the sample has (a cut last row,
or new kernels late in a run, would cost that scan for nothing).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection
from pathlib import Path
from typing import NamedTuple

from roofscope.model.duck import duckdb
from roofscope.model.schema import DISPATCH_COLUMNS
from roofscope.readers.io.barriers import is_barrier
from roofscope.readers.io.csv_layout import CsvLayout
from roofscope.readers.io.duck_sql import ident, read_csv

# what a strict scan raises at a row it cannot read (cut, extra field, bad UTF-8: invalid
# input; text in a number column, or a name an ENUM lacks: conversion); any other error (an
# interrupt) stands
BAD_ROW = (duckdb.InvalidInputException, duckdb.ConversionException)
# the end of the file read for its names: some 580 rows of the bench's rocprof v1 CSV, in
# 1.8 ms (a MiB took 7 ms)
TAIL_BYTES = 256 << 10
# files from this size on are worth that read: the typed scan saves some 0.08 ms of CPU a MiB
TYPED_BYTES = 64 << 20
# what read_csv reads as no name (duck_sql.read_csv's nullstr): NULL, never in the ENUM
NO_NAME = ("None", "")


def typed_first(path: Path, layout: CsvLayout, sampled: list[str]) -> bool:
    """Whether to try the scan with the names typed as the sample's ENUM first: a file
    without counters, no model column reading the name as text, whose end names only
    sampled kernels."""
    plain = not layout.counters and names_typed(layout)
    return plain and sample_covers_end(path, layout, sampled)


def sample_covers_end(path: Path, layout: CsvLayout, sampled: Collection[str]) -> bool:
    """Whether ``path`` is large enough to be worth the typed scan (:data:`TYPED_BYTES`) and
    the whole rows in its last :data:`TAIL_BYTES` parse to the layout's fields and name only
    kernels of ``sampled``."""
    with path.open("rb") as f:
        size = f.seek(0, io.SEEK_END)
        if size < TYPED_BYTES:
            return False
        start = max(0, size - TAIL_BYTES)
        f.seek(start)
        tail = f.read()
    if not tail.endswith(b"\n"):
        return False  # a cut last row, or one the scan may reject
    lines = tail.split(b"\n", 1)[1] if start or layout.header else tail
    try:
        rows = list(csv.reader(io.StringIO(lines.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error):
        return False
    index = [c for c, _ in layout.columns].index(layout.name)
    known = set(sampled).union(NO_NAME)
    return all(len(r) == len(layout.columns) and r[index] in known for r in rows)


def typed_reader(path: Path, layout: CsvLayout, enum: str) -> str:
    """``read_csv`` of ``path`` with its name column typed as the ENUM ``enum``: strict, so
    a name the ENUM lacks (or any row it cannot read) stops the scan with an error."""
    columns = [(c, enum if c == layout.name else t) for c, t in layout.columns]
    return read_csv(path, columns, header=layout.header, strict=True)


def names_typed(layout: CsvLayout) -> bool:
    """Whether the name column can be read as an ENUM: no model column reads it as text."""
    return all(ident(layout.name) not in layout.mapping[c] for c in layout.mapping)


class TypedRows(NamedTuple):
    """A typed scan: its rows' SQL, each dispatch column's SQL over them, the parameters."""

    rows: str
    exprs: dict[str, str]
    params: list[object]


def barrier_codes_sql(column: str, sampled: list[str], source: int) -> str:
    """A row's ``source`` from the ENUM code of its name in ``column``: barrier packets go to
    the source after the file's own (as csvload's text test sends them)."""
    codes = [str(i) for i, name in enumerate(sampled) if is_barrier(name)]
    if not codes:
        return str(source)
    barrier = f"enum_code({column}) IN ({', '.join(codes)})"
    return f"CASE WHEN {barrier} THEN {source + 1} ELSE {source} END"


def typed_rows(
    path: Path, layout: CsvLayout, enum: str, sampled: list[str], source: int, code_ids: list[int]
) -> TypedRows:
    """The rows of ``path`` with the name ``_k`` read as the ENUM ``enum`` of ``sampled``
    (ids ``code_ids``), each dispatch column's SQL over them, and its parameters."""
    code, params = name_id_sql(code_ids)
    src = barrier_codes_sql("_k", sampled, source) if layout.barriers else str(source)
    model = {c: layout.mapping[c] for c in DISPATCH_COLUMNS if c in layout.mapping}
    exprs = {"source": src, "name_id": code, "raw_overflow": "NULL::VARCHAR", **model}
    rows = f"SELECT {ident(layout.name)} AS _k, * FROM {typed_reader(path, layout, enum)}"
    return TypedRows(rows, exprs, params)


def name_id_sql(code_ids: list[int]) -> tuple[str, list[object]]:
    """The SQL of a row's name id from its ENUM code ``_k``, and its parameters: the code
    plus the first id where the ids run on from it (names registered in sample order, as in
    a fresh profile), some 0.02 s of CPU less at 4 M dispatches than a lookup in the list."""
    if not code_ids:
        return "NULL", []
    first = code_ids[0]
    if code_ids == list(range(first, first + len(code_ids))):
        return f"enum_code(_k)::INTEGER + {first}", []
    return "list_extract($1::INTEGER[], enum_code(_k) + 1)", [code_ids]
