"""Parse again, in Python, the CSV rows that a strict CSV parser rejected.

Profilers write kernel names that break CSV: rocprof v1 never escapes embedded quotes and
older builds do not quote names at all, so a name such as ``f<int, 2>(int*, int)`` spans
several comma-separated fields. Every other field is a number or a simple token, so the
row is split from both ends: the fields before the name from the left, the fields after
it from the right, and whatever lies between is the name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

import msgspec

from roofscope.errors import InputError
from roofscope.readers.io.batches import fits
from roofscope.readers.io.csvload import Rejected

_NULLS = {"", "None"}


class Fixed(msgspec.Struct, frozen=True):
    """Rows recovered, and rows that stay malformed (line number, reason)."""

    rows: list[list[object]]
    malformed: list[tuple[int, str]]
    not_utf8: list[int]


MAX_LINE_BYTES = 64 << 20  # a rejected line longer than this is refused, never held whole


def read_lines(path: Path, rejected: Sequence[Rejected]) -> dict[int, bytes]:
    """The raw bytes of each rejected line, found by byte offset (or by counting lines);
    a line beyond :data:`MAX_LINE_BYTES` is an error, so memory stays bounded."""
    out: dict[int, bytes] = {}
    with path.open("rb") as f:
        if all(r.byte_offset is not None for r in rejected):
            for r in rejected:
                f.seek(max(0, int(r.byte_offset or 0) - 1))  # DuckDB counts from 1
                out[r.line] = _line(f, path, r.line)
            return out
        wanted = {r.line for r in rejected}
        number = 0
        while len(out) < len(wanted):
            number += 1
            raw = _line(f, path, number)
            if not raw:
                break
            if number in wanted:
                out[number] = raw
    return out


def _line(f: BinaryIO, path: Path, number: int) -> bytes:
    raw = f.readline(MAX_LINE_BYTES + 1)
    if len(raw) > MAX_LINE_BYTES:
        raise InputError(
            str(path),
            f"line {number} is longer than {MAX_LINE_BYTES >> 20} MiB",
            "the file is damaged or not a profiler's CSV; use the profiler's own output",
            line=number,
        )
    return raw


def fix_rows(
    lines: dict[int, bytes], columns: Sequence[tuple[str, str]], name_column: str
) -> Fixed:
    """Split each raw line around the name column and convert fields to their types."""
    name_at = [c for c, _ in columns].index(name_column)
    rows: list[list[object]] = []
    malformed: list[tuple[int, str]] = []
    not_utf8: list[int] = []
    for number, raw in sorted(lines.items()):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            not_utf8.append(number)
        text = text.rstrip("\r\n")
        row, reason = split_row(text, columns, name_at)
        if row is None:
            # only the file's last line lacks a newline; a short one was cut while written
            cut = not raw.endswith(b"\n") and "fields where" in reason
            malformed.append((number, "truncated last row" if cut else reason))
        else:
            rows.append(row)
    return Fixed(rows, malformed, not_utf8)


def split_row(
    text: str, columns: Sequence[tuple[str, str]], name_at: int
) -> tuple[list[object] | None, str]:
    parts = text.split(",")
    after = len(columns) - name_at - 1
    if len(parts) < len(columns):
        return None, f"{len(parts)} fields where {len(columns)} were expected"
    head = parts[:name_at]
    tail = parts[len(parts) - after :] if after else []
    name = ",".join(parts[name_at : len(parts) - after]).strip()
    if name.startswith('"') and not name.endswith('"'):  # quoted name closed: extra fields
        return None, f"more fields than the header's {len(columns)} (a comma inside a number?)"
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1]
    values: list[object] = []
    for (col, typ), field in zip(columns, [*head, name, *tail], strict=True):
        value, ok = _convert(field if col == columns[name_at][0] else field.strip(), typ)
        if not ok:
            what = "an integer" if typ == "INTEGER" else f"a {typ.lower()}"
            return None, f"field {col} = {field.strip()[:40]!r} is not {what}"
        values.append(value)
    return values, ""


def convert_row(fields: Sequence[str], columns: Sequence[tuple[str, str]]) -> list[object] | None:
    """Typed values for already separated text fields; None if one does not convert."""
    values: list[object] = []
    for (_, typ), field in zip(columns, fields, strict=True):
        value, ok = _convert(field, typ)
        if not ok:
            return None
        values.append(value)
    return values


def _convert(field: str, typ: str) -> tuple[object, bool]:
    if typ == "VARCHAR":
        if len(field) >= 2 and field[0] == field[-1] == '"':
            field = field[1:-1]
        return (None if field in _NULLS else field), True
    token = field.strip('"')
    if token in _NULLS:
        return None, True
    try:
        if typ == "DOUBLE":
            return float(token), True
        number = int(token)
    except ValueError:
        return None, False
    return number, fits(number) if typ == "BIGINT" else -(2**31) <= number < 2**31
