"""The host side of a rocpd database (readers/amd/rocpd_host.py): HIP API regions that block
-> host_ranges "sync", module loads and compilers' ROCTx ranges -> "compile".

No public rocpd database with API regions under a permissive licence was found (the corpus's
finite-difference database is a kernel trace; its region table is empty), so the regions are
written into a copy of it here, as rocprofv3 records them: a name in rocpd_string, the run's
node, process and thread, an event of the database.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from roofscope.cli.app import main
from roofscope.readers.load import load
from tests.conftest import DATA, rocpd_table

DB = DATA / "rocpd-mi250x" / "finite-difference_results.db"
T0 = 1915914098849134  # the first kernel's start in the database


def with_regions(tmp_path: Path, regions: list[tuple[str, object, object]]) -> Path:
    """A copy of the database whose region table holds ``regions`` (name, start, end)."""
    db = tmp_path / "regions.db"
    shutil.copyfile(DB, db)
    with sqlite3.connect(db) as con:
        strings, table = rocpd_table(con, "string"), rocpd_table(con, "region")
        (guid, nid, pid, tid) = con.execute(
            "SELECT P.guid, P.nid, P.id, T.id FROM rocpd_info_process P "
            "JOIN rocpd_info_thread T ON T.pid = P.id"
        ).fetchone()
        events = [e for (e,) in con.execute("SELECT id FROM rocpd_event ORDER BY id")]
        for i, (name, start, end) in enumerate(regions):
            con.execute(
                f"INSERT OR IGNORE INTO {strings} (guid, string) VALUES (?, ?)", [guid, name]
            )
            (string_id,) = con.execute(
                f"SELECT id FROM {strings} WHERE string = ?", [name]
            ).fetchone()
            con.execute(
                f"INSERT INTO {table} (guid, nid, pid, tid, start, end, name_id, event_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [guid, nid, pid, tid, start, end, string_id, events[i]],
            )
    con.close()
    return db


REGIONS = [
    ("hipDeviceSynchronize", T0 + 1_000, T0 + 41_000),
    ("hipDeviceSynchronize", T0 + 50_000, T0 + 60_000),
    ("hipMemcpy", T0 + 70_000, T0 + 75_000),
    ("hipStreamSynchronize", T0 + 80_000, T0 + 82_000),
    ("hipLaunchKernel", T0 + 90_000, T0 + 90_500),
    ("hipMemcpyAsync", T0 + 91_000, T0 + 91_400),
    ("hipModuleLoadData", T0 + 92_000, T0 + 99_000),
    ("hipMalloc", T0 + 100_000, T0 + 100_300),
]


def test_blocking_hip_calls_are_sync_ranges(tmp_path: Path) -> None:
    """Two hipDeviceSynchronize (40 + 10 µs), hipMemcpy and hipStreamSynchronize are "sync";
    hipModuleLoadData is "compile"; the launch, hipMemcpyAsync and hipMalloc are neither."""
    profile = load([with_regions(tmp_path, REGIONS)])
    got = profile.con.execute(
        "SELECT kind, name, count(*), sum(end_ns - start_ns) FROM host_ranges GROUP BY ALL "
        "ORDER BY kind, name"
    ).fetchall()
    assert got == [
        ("compile", "hipModuleLoadData", 1, 7_000),
        ("sync", "hipDeviceSynchronize", 2, 50_000),
        ("sync", "hipMemcpy", 1, 5_000),
        ("sync", "hipStreamSynchronize", 1, 2_000),
    ]
    sources = profile.con.execute("SELECT DISTINCT source FROM host_ranges").fetchall()
    assert sources == profile.con.execute("SELECT DISTINCT source FROM dispatches").fetchall()


def test_database_without_regions_has_no_host_ranges() -> None:
    """The corpus database as it is: its region table is empty, so no host range."""
    profile = load([DB])
    assert profile.con.execute("SELECT count(*) FROM host_ranges").fetchone() == (0,)


def test_region_time_not_a_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hipDeviceSynchronize whose end is text: one line naming the region and the column."""
    db = with_regions(tmp_path, [("hipDeviceSynchronize", T0, "soon")])
    assert main(["analyze", str(db)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "rocpd_region id 1: end is 'soon', not a whole number within 64 bits" in err
