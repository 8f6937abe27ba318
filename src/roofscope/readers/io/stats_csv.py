"""Small aggregated CSVs (stats files): a name column followed by numbers, parsed from the right.

Old rocprof v1 builds write kernel names unquoted even when they contain commas, so the
numeric fields are taken from the end of the line and everything before them is the name.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path

import msgspec

from roofscope.model.profile import Profile
from roofscope.readers.sniff import read_text

_NULLS = {"", "None", "nan", "NaN"}
PLAUSIBLE = 1e18  # ns: 31 years; counts of calls are far below it too


class StatsRow(msgspec.Struct, frozen=True):
    line: int
    name: str
    values: tuple[float | None, ...]


def parse_stats(
    path: Path, numbers: int, *, skip_header: bool = True
) -> tuple[list[StatsRow], list[tuple[int, str]]]:
    """Rows of ``name,<numbers numeric fields>``; malformed rows are reported and skipped."""
    text = read_text(path)
    lines = text.splitlines()
    rows: list[StatsRow] = []
    bad: list[tuple[int, str]] = []
    start = 1 if skip_header else 0
    # a header ending in a comma (a spreadsheet's export) ends every row in an empty field
    trailing = _trailing_empty(lines[0]) if skip_header and lines else 0
    for number, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        row = _split(_without_trailing(line, trailing), numbers)
        if isinstance(row, str):
            last = number == len(lines) and not text.endswith(("\n", "\r"))
            bad.append((number, "truncated last row" if last else row))
        else:
            rows.append(StatsRow(number, row[0], row[1]))
    return rows, bad


def _trailing_empty(header: str) -> int:
    fields = header.split(",")
    return len(fields) - len(_without_trailing(header, len(fields) - 1).split(","))


def _without_trailing(line: str, empty: int) -> str:
    """``line`` without up to ``empty`` empty fields at its end."""
    for _ in range(empty):
        rest, comma, last = line.rpartition(",")
        if not comma or last.strip():
            break
        line = rest
    return line


def _split(line: str, numbers: int) -> tuple[str, tuple[float | None, ...]] | str:
    parts = line.split(",")
    if len(parts) < numbers + 1:
        return f"{len(parts)} fields where at least {numbers + 1} were expected"
    name = ",".join(parts[: len(parts) - numbers]).strip()
    if '"' in name:
        try:
            name = (
                next(csv.reader(io.StringIO(name)))[0] if name.count('"') == 2 else name.strip('"')
            )
        except (csv.Error, StopIteration, IndexError):
            name = name.strip('"')
    values: list[float | None] = []
    for field in parts[len(parts) - numbers :]:
        token = field.strip().strip('"')
        if token in _NULLS:
            values.append(None)
            continue
        try:
            value = float(token)
        except ValueError:
            return f"{token[:40]!r} is not a number"
        if math.isinf(value):
            return f"{token!r} is not a finite number"
        if abs(value) > PLAUSIBLE:
            return f"{token[:40]!r} is beyond any count or time in ns a profiler writes"
        values.append(value)
    if not name:
        return "the name field is empty"
    return name, tuple(values)


# raw name, calls, total, mean, min, max, std (ns); a total the file does not give is None
SummaryRow = tuple[str, int, float | None, float | None, float | None, float | None, float | None]


def insert_kernel_summary(
    profile: Profile,
    source: int,
    rows: Sequence[SummaryRow],
    *,
    pid: int | None = None,
    medians: Sequence[float | None] | None = None,
) -> None:
    """Rows of (raw name, calls, total_ns, mean_ns, min_ns, max_ns, std_ns), with each row's
    median (ns) where the summary gives one."""
    if not rows:
        return
    ids = profile.name_ids(r[0] for r in rows)
    columns = [list(c) for c in zip(*[(ids[r[0]], *r[1:]) for r in rows], strict=True)]
    columns.append(list(medians) if medians is not None else [None] * len(rows))
    types = ["INTEGER", "BIGINT", *["DOUBLE"] * 6]
    unnest = ", ".join(f"unnest(${i}::{t}[])" for i, t in enumerate(types, start=2))
    profile.con.execute(
        f"INSERT INTO kernel_summary SELECT $1, {unnest}, $10", [source, *columns, pid]
    )


def insert_activity(
    profile: Profile, source: int, kind: str, rows: list[tuple[str, int, float]]
) -> None:
    if not rows:
        return
    profile.con.executemany(
        "INSERT INTO activity_summary VALUES (?, ?, ?, ?, ?)",
        [(source, kind, *r) for r in rows],
    )
