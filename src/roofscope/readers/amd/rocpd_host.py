"""The host side of a rocpd database (docs/formats/rocprofv3.md, "rocpd database"): HIP API
regions that block (``hipDeviceSynchronize``, ``hipStreamSynchronize``, ``hipMemcpy``, ...) ->
``host_ranges`` "sync"; module loads and HIPRTC compiles, and ROCTx ranges a compiler names
itself -> "compile" (names matched by readers/io/host_calls.py).

The region names are classified once per distinct name (``rocpd_region`` joined with
``rocpd_string`` on id and guid), then only the regions of those names are fetched.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.readers.io.batches import HOST_RANGE_COLUMNS, insert_rows
from roofscope.readers.io.host_calls import call_kind, range_kind

_FROM = """FROM rocpd_region R JOIN rocpd_string S ON S.id = R.name_id AND S.guid = R.guid"""
_VIEWS = ("rocpd_region", "rocpd_string")
_CHUNK = 100_000
_IN = 500  # names per IN (...) list: far under SQLite's limit on parameters
_REMEDY = "pass the database as rocprofv3 wrote it"


def region_kind(name: str) -> str | None:
    """The host_ranges kind of a region: an API call's, else an annotation range's."""
    return call_kind(name) or range_kind(name)


def read_host(con: sqlite3.Connection, profile: Profile, path: Path, source: int) -> None:
    """The blocking and compiling regions, under the kernels' ``source``."""
    present = {str(n) for (n,) in con.execute("SELECT name FROM sqlite_master")}
    if not set(_VIEWS) <= present:
        return
    names = [str(n) for (n,) in con.execute(f"SELECT DISTINCT S.string {_FROM}")]
    wanted = {n: k for n in names if (k := region_kind(n)) is not None}
    keys = sorted(wanted)
    for at in range(0, len(keys), _IN):
        part = keys[at : at + _IN]
        cursor = con.execute(
            f"""SELECT R.id, R.start, R."end", S.string {_FROM}
            WHERE S.string IN ({", ".join("?" * len(part))})""",
            part,
        )
        while batch := cursor.fetchmany(_CHUNK):
            rows = [(source, wanted[str(n)], str(n)[:200], a, b) for _, a, b, n in batch]
            try:
                insert_rows(profile, "host_ranges", HOST_RANGE_COLUMNS, rows)
            except (ValueError, TypeError, OverflowError):
                for region, start, end, _ in batch:
                    _times(path, region, start, end)
                raise


def _times(path: Path, region: object, start: object, end: object) -> None:
    """An InputError naming the region and the column where a time is not a whole number."""
    for label, value in (("start", start), ("end", end)):
        if not (isinstance(value, int) and -(2**63) < value < 2**63):
            raise InputError(
                str(path),
                f"rocpd_region id {region}: {label} is {value!r:.40}, "
                "not a whole number within 64 bits",
                _REMEDY,
            )
