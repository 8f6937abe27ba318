"""The header of an ``nsys stats --format csv`` report: finding it after nsys's progress lines,
splitting each field into its name and the unit in parentheses with that unit's scale, telling
a summary report's columns by name prefix, and reading a field as a scaled number."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import msgspec

from roofscope.errors import InputError
from roofscope.readers.io.stats_csv import PLAUSIBLE
from roofscope.readers.sniff import Head

SCALES = {
    "ns": 1.0,
    "us": 1e3,
    "μs": 1e3,
    "usec": 1e3,
    "ms": 1e6,
    "msec": 1e6,
    "s": 1e9,
    "sec": 1e9,
    "B": 1.0,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "KiB": 1024.0,
    "MiB": float(1 << 20),
    "GiB": float(1 << 30),
    "%": 1.0,
}
_FIELD = re.compile(r"^\s*(?P<base>[^(]*?)\s*(?:\((?P<unit>[^)]*)\))?\s*$")
_PREAMBLE = re.compile(r"^(Processing \[|Generating |NOTICE: |\s*\*\* |\s*$)")
_PREAMBLE_LINES = 20

# base-name prefix -> role of the column in a summary report (first match wins)
_SUMMARY_KEYS = (
    ("Total Time", "total"),
    ("Time", "pct"),
    ("Instances", "calls"),
    ("Num Calls", "calls"),
    ("Count", "calls"),
    ("Operations", "calls"),
    ("Avg", "mean"),
    ("Average", "mean"),
    ("Med", "med"),
    ("Min", "min"),
    ("Max", "max"),
    ("StdDev", "std"),
    ("Name", "name"),
    ("Operation", "name"),
)
REQUIRED = ("total", "calls", "name")  # the roles every summary report has


class Column(msgspec.Struct, frozen=True):
    """One header field: its position, its name without the unit, and the unit's scale."""

    index: int
    base: str
    unit: str | None
    scale: float | None  # to ns or bytes; None for a unit roofscope does not know

    @property
    def field(self) -> str:
        """The header field as written, less quotes and spaces: ``Total Time (ns)``."""
        return f"{self.base} ({self.unit})" if self.unit else self.base


def parse_field(index: int, field: str) -> Column:
    """``Total Time (ns)`` -> Column(base "Total Time", unit "ns", scale 1)."""
    m = _FIELD.match(field.strip().strip('"'))
    if m is None:  # a stray parenthesis: the whole field is the name
        return Column(index, field.strip(), None, 1.0)
    unit = m.group("unit")
    unit = unit.strip() if unit is not None else None
    return Column(index, m.group("base"), unit, SCALES.get(unit or "ns"))


class Header(msgspec.Struct, frozen=True):
    """Where the header is (1-based line) and its fields."""

    line: int
    fields: list[str]

    def columns(self) -> list[Column]:
        return [parse_field(i, f) for i, f in enumerate(self.fields)]


def is_preamble(line: str) -> bool:
    """Whether a line is nsys's progress chatter (or blank), not a report's."""
    return _PREAMBLE.match(line) is not None


def find_header(head: Head) -> Header | None:
    """The first line that is not nsys's progress chatter, split as CSV."""
    for number, line in enumerate(head.text.splitlines()[:_PREAMBLE_LINES], start=1):
        if is_preamble(line):
            continue
        try:
            fields = next(csv.reader(io.StringIO(line)), [])
        except csv.Error:
            return None
        return Header(number, [f.strip() for f in fields])
    return None


def summary_columns(header: Header) -> dict[str, Column] | None:
    """Summary role -> column, when the header is one of nsys's summary reports."""
    found: dict[str, Column] = {}
    for col in header.columns():
        if not col.base:  # the empty field after a trailing comma
            continue
        if col.scale is None:
            return None
        key = next((k for prefix, k in _SUMMARY_KEYS if col.base.startswith(prefix)), None)
        if key is None or key in found:
            return None
        found[key] = col
    return found if all(k in found for k in REQUIRED) else None


def number(path: Path, line: int, col: Column, text: str, *, required: bool) -> float | None:
    """The field as a finite number in the column's base unit; None when empty and optional."""
    token = text.strip()
    if not token and not required:
        return None
    try:
        value = float(token)
    except ValueError:
        value = float("nan")
    scaled = value * (col.scale or 1.0)
    if value != value or not abs(scaled) <= PLAUSIBLE:
        what = "not a number" if value != value else "beyond any count or time nsys writes"
        raise InputError(
            str(path),
            f"column {col.field!r} holds {token[:40]!r}, {what}",
            "pass the report as nsys stats wrote it",
            line=line,
        )
    return scaled
