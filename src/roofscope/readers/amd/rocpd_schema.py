"""Recognising a rocpd database (docs/formats/rocprofv3.md, "rocpd
database"): the un-suffixed views roofscope
queries, the schema version it reads, and what any other SQLite file handed to it is."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model import words
from roofscope.readers.io.sqlite_file import opened

SUPPORTED_SCHEMAS = ("3",)
_VIEWS = ("rocpd_metadata", "kernels")


def _objects(con: sqlite3.Connection) -> dict[str, str]:
    return {str(n): str(t) for n, t in con.execute("SELECT name, type FROM sqlite_master")}


def require_rocpd(path: Path) -> None:
    """Nothing for a rocpd database; a one-line InputError naming what any other SQLite
    file is (a rocprof v1 ``results.db``, ...) or why it cannot be read."""
    with opened(path) as con:
        require_views(path, con)


def require_views(path: Path, con: sqlite3.Connection) -> None:
    objects = _objects(con)
    missing = [v for v in _VIEWS if v not in objects]
    if not missing:
        return
    if any(n.startswith("rocpd_") for n in objects):
        raise InputError(
            str(path),
            f"is a rocpd database without the {', '.join(missing)} "
            f"{words.plural(len(missing), 'view')}",
            "pass the database as rocprofv3 wrote it (its views query the uuid tables)",
        )
    if "KERN" in objects:
        what, remedy = (
            "a rocprof v1 results.db",
            "pass the results.csv that rocprof wrote beside it",
        )
    elif any(n.startswith("compute_") for n in objects):
        what, remedy = "a rocprof-compute analysis database", "pass its workload folder"
    else:
        what = f"tables: {', '.join(sorted(objects)[:5]) or 'none'}"
        remedy = "pass rocprofv3 rocpd, CSV or JSON output (see `roofscope formats`)"
    raise InputError(str(path), f"is an SQLite database without rocpd's views ({what})", remedy)


def is_rocpd(path: Path) -> bool:
    try:
        require_rocpd(path)
    except InputError:
        return False
    return True


def check_schema(path: Path, con: sqlite3.Connection) -> None:
    seen = sorted(
        {
            str(v)
            for (v,) in con.execute("SELECT value FROM rocpd_metadata WHERE tag = 'schema_version'")
        }
    )
    unknown = [v for v in seen if v not in SUPPORTED_SCHEMAS]
    if unknown or not seen:
        found = ", ".join(unknown) if unknown else "none"
        raise InputError(
            str(path),
            f"has rocpd schema_version {found}; roofscope reads schema_version "
            f"{', '.join(SUPPORTED_SCHEMAS)}",
            "convert it with a matching rocprofv3 (rocpd2csv) and pass the CSV files",
        )
