"""A profiler's SQLite file, for the rocpd and nsys readers: opened read-only, with SQLite's
failures (locked, damaged, not a database) as one line each, and a value the reader could not
convert named by its row and column.

The nsys and rocpd readers fetch rows in batches and turn each column into a 64-bit numpy
array. A value that is text, a REAL beyond 64 bits, or a product of columns that overflowed
(SQLite then makes it a REAL) fails that conversion with a message that names neither row nor
column. After such a failure, :func:`refuse_bad_value` asks SQLite for the first offending row
with ``typeof`` and raises the error that names it; the happy path costs nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model import words
from roofscope.readers.io.batches import Kind

# (label shown to the user, SQL expression over the relation aliased t, kind it must be)
Value = tuple[str, str, Kind]

BUSY_TIMEOUT_S = 2.0  # how long to wait for a writer's lock before giving up
_ALLOWED = {"int": "('integer', 'null')", "float": "('integer', 'real', 'null')"}
_WHAT = {"int": "not a whole number within 64 bits", "float": "not a number"}


def refuse_bad_value(
    con: sqlite3.Connection,
    path: Path,
    relation: str,
    values: Iterable[Value],
    *,
    key: str,
    remedy: str,
) -> None:
    """An InputError naming the first row (by ``key``) and value of ``relation`` that is not
    of its kind; returns when every value is."""
    found: list[tuple[int, str, str, Kind]] = []
    for label, expression, kind in values:
        if kind == "text":
            continue
        row = con.execute(
            f"""SELECT {key}, {expression} FROM "{relation}" t
            WHERE typeof({expression}) NOT IN {_ALLOWED[kind]} ORDER BY {key} LIMIT 1"""
        ).fetchone()
        if row is not None and isinstance(row[0], int):
            found.append((row[0], label, _shown(row[1]), kind))
    if found:
        at, label, shown, kind = min(found)
        raise InputError(
            str(path), f"{relation} {key} {at}: {label} is {shown}, {_WHAT[kind]}", remedy
        )


def _shown(value: object) -> str:
    """A stored value as the error names it: a number in plain words (``a 301-digit
    number``, never ``1e+300``), anything else as Python writes it, cut to 40 characters."""
    if isinstance(value, float):
        return words.sized(value)
    return repr(value)[:40]


@contextmanager
def opened(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection; any SQLite error inside (or text that is not UTF-8, from a
    damaged page) becomes a one-line InputError."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)) as con:
            yield con
    except sqlite3.Error as exc:
        raise _failure(path, exc) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path),
            f"is a damaged SQLite database (text that is not UTF-8: {exc.reason})",
            "re-run the profiler; the file was cut short or overwritten",
        ) from None


def _failure(path: Path, exc: sqlite3.Error) -> InputError:
    why = " ".join(str(exc).split())
    if "locked" in why or "busy" in why:
        return InputError(
            str(path),
            f"is locked by another process ({why})",
            "wait for the profiler to finish writing it, or pass a copy",
        )
    if "malformed" in why or "not a database" in why or "corrupt" in why:
        return InputError(
            str(path),
            f"is a damaged SQLite database ({why})",
            "re-run the profiler; the file was cut short or overwritten",
        )
    return InputError(str(path), f"cannot be read as SQLite ({why})", "check the file")
