"""rocpd SQLite databases: the corpus file against the rocprof v1 run it was made from.

``synthetic-rocpd-mi250x/finite-difference_results.db`` re-expresses the dispatches of
``hpctraining-rocprofv1-mi250x/finite-difference/`` in rocpd form (see its PROVENANCE.md), so
its per-kernel calls and nanoseconds must equal that run's ``results.stats.csv``.
"""

from __future__ import annotations

import csv
import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from roofscope.cli.app import main
from roofscope.model.names import normalise
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.amd import rocpd
from roofscope.readers.io import sqlite_file
from roofscope.readers.load import load
from roofscope.readers.sniff import read_head
from tests.conftest import NAMED_COUNTERS, SHARED_CORPUS, rocpd_table, run_json

DB = SHARED_CORPUS / "amd" / "synthetic-rocpd-mi250x" / "finite-difference_results.db"
V1 = SHARED_CORPUS / "amd" / "hpctraining-rocprofv1-mi250x" / "finite-difference"
pytestmark = pytest.mark.skipif(not DB.exists(), reason="shared corpus not present")


def v1_stats() -> dict[str, tuple[int, int]]:
    """results.stats.csv: normalised kernel name -> (calls, total ns), read with csv."""
    with (V1 / "results.stats.csv").open(newline="") as f:
        return {
            normalise(r["Name"]): (int(r["Calls"]), int(r["TotalDurationNs"]))
            for r in csv.DictReader(f)
        }


def per_kernel(profile: Profile, sql: str) -> dict[str, tuple[int, int]]:
    rows = profile.con.execute(sql).fetchall()
    return {str(k): (int(c), int(t)) for k, c, t in rows}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def error_of(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    """``roofscope analyze PATH``: asserts exit 1 and one line on stderr, and returns it."""
    assert main(["analyze", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_dispatches_equal_v1_stats() -> None:
    profile = load([str(DB)])
    got = per_kernel(
        profile,
        """SELECT n.kernel, count(*), sum(d.end_ns - d.start_ns)
        FROM dispatches d JOIN names n USING (name_id) GROUP BY n.kernel""",
    )
    assert got == v1_stats()
    assert sum(c for c, _ in got.values()) == 1004
    assert sum(t for _, t in got.values()) == 2_610_787_312
    devices = profile.con.execute("SELECT DISTINCT device, pid FROM dispatches").fetchall()
    assert devices == [(8, 2046349)]


def test_top_kernels_cross_check_equals_v1_stats(capsys: pytest.CaptureFixture[str]) -> None:
    profile = load([str(DB)])
    assert [(f.role, f.rows) for f in profile.inputs] == [("dispatches", 1004), ("cross-check", 4)]
    got = per_kernel(
        profile,
        """SELECT n.kernel, sum(s.calls), sum(s.total_ns)
        FROM kernel_summary s JOIN names n USING (name_id) GROUP BY n.kernel""",
    )
    assert got == v1_stats()
    doc = run_json(capsys, str(DB))
    assert not [w for w in doc["warnings"] if w["code"] == "stats-mismatch"]


def test_top_kernels_as_kernel_summary() -> None:
    profile = Profile.empty()
    rocpd.Rocpd().read(DB, read_head(DB), profile, role=Role.KERNEL_SUMMARY)
    assert profile.count("dispatches") == 0
    rows = profile.con.execute(
        "SELECT kernel, calls, total_ns, mean_ns FROM kernel_summary JOIN names USING (name_id)"
    ).fetchall()
    laplacian = [r for r in rows if "laplacian" in r[0]]
    assert laplacian == [(laplacian[0][0], 1001, 2_608_618_986.0, 2_606_012.0)]


def test_gpu_from_agents() -> None:
    run = load([str(DB)]).run
    assert (run.producer, run.gpu, run.arch) == ("rocprofv3", "AMD Instinct MI250X/MI250", "gfx90a")
    assert (run.compute_units, run.xcds) == (104, 1)


def test_launch_shapes() -> None:
    profile = load([str(DB)])
    rows = profile.launches().fetchall()
    assert sum(r[-1] for r in rows) == 1004
    cols = [c for c in profile.launches().columns]
    shapes = {
        tuple(r[cols.index(c)] for c in ("grid_size", "workgroup_size", "sgpr")) for r in rows
    }
    assert (134217728, 256, 32) in shapes


def test_input_unchanged() -> None:
    before = sha256(DB)
    load([str(DB)])
    assert sha256(DB) == before


def _add_copy_and_counter(db: Path) -> None:
    """One device-to-host copy and an SQ_WAVES value (two instances) for dispatch 2."""
    con = sqlite3.connect(db)
    tables = {
        n.rsplit("_", 5)[0]: n
        for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    (nid,) = con.execute(f"SELECT id FROM {tables['rocpd_info_node']}").fetchone()
    string = tables["rocpd_string"]
    con.execute(f"INSERT INTO {string} (string) VALUES ('MEMORY_COPY'), ('MEMORY_COPY_D2H')")
    name_id = con.execute(f"SELECT id FROM {string} WHERE string = 'MEMORY_COPY_D2H'").fetchone()
    category = con.execute(f"SELECT id FROM {string} WHERE string = 'MEMORY_COPY'").fetchone()
    cur = con.execute(f"INSERT INTO {tables['rocpd_event']} (category_id) VALUES (?)", category)
    con.execute(
        f"""INSERT INTO {tables["rocpd_memory_copy"]} (nid, pid, tid, start, "end", name_id,
        dst_agent_id, src_agent_id, size, event_id) VALUES (?, 2046349, 2046349, 1000, 1500, ?,
        0, 8, 4, ?)""",
        (nid, name_id[0], cur.lastrowid),
    )
    cur = con.execute(
        f"""INSERT INTO {tables["rocpd_info_pmc"]} (nid, pid, agent_id, target_arch, name,
        symbol) VALUES (?, 2046349, 8, 'GPU', 'SQ_WAVES', 'SQ_WAVES')""",
        (nid,),
    )
    (event,) = con.execute(
        f"SELECT event_id FROM {tables['rocpd_kernel_dispatch']} WHERE dispatch_id = 2"
    ).fetchone()
    con.executemany(
        f"INSERT INTO {tables['rocpd_pmc_event']} (event_id, pmc_id, value) VALUES (?, ?, ?)",
        [(event, cur.lastrowid, 3.0), (event, cur.lastrowid, 4.0)],
    )
    con.commit()
    con.close()


def test_copies_apart_and_counters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "copy.db"
    shutil.copyfile(DB, db)
    _add_copy_and_counter(db)
    profile = load([str(db)])
    assert profile.con.execute("SELECT * FROM copies").fetchall() == [
        (2, 2046349, "MEMORY_COPY_D2H", "Agent 8", "Agent 0", 1000, 1500)
    ]
    assert [f.role for f in profile.inputs] == ["dispatches", "cross-check", "copies"]
    counters = profile.con.execute(
        f"""SELECT d.dispatch_id, c.counter, c.value FROM {NAMED_COUNTERS} c
        JOIN dispatches d ON d.rowid = c.row_id"""
    ).fetchall()
    assert counters == [(2, "SQ_WAVES", 7.0)]
    doc = run_json(capsys, str(db))
    assert sum(k["calls"] for k in doc["kernels"]) == 1004
    assert [(a["kind"], a["calls"]) for a in doc["activity"]] == [("copy", 1)]


def test_unknown_schema_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "v9.db"
    shutil.copyfile(DB, db)
    with sqlite3.connect(db) as con:
        table = rocpd_table(con, "metadata")
        con.execute(f"UPDATE {table} SET value = '9' WHERE tag = 'schema_version'")
    con.close()
    err = error_of(capsys, db)
    assert err == (
        f"roofscope: error: {db}: has rocpd schema_version 9; roofscope reads schema_version 3; "
        "convert it with a matching rocprofv3 (rocpd2csv) and pass the CSV files\n"
    )


def without_dispatches(tmp_path: Path, calls: list[str]) -> Path:
    """The real database without its kernel dispatches, its region table holding ``calls``
    (HIP API calls as rocprofv3 records them: a name in rocpd_string, the run's node,
    process and thread, an event id of the database)."""
    tmp_path.mkdir(exist_ok=True)
    db = tmp_path / "nokernels.db"
    shutil.copyfile(DB, db)
    with sqlite3.connect(db) as con:
        con.execute(f"DELETE FROM {rocpd_table(con, 'kernel_dispatch')}")
        strings, regions = rocpd_table(con, "string"), rocpd_table(con, "region")
        (guid, nid, pid, tid) = con.execute(
            "SELECT P.guid, P.nid, P.id, T.id FROM rocpd_info_process P "
            "JOIN rocpd_info_thread T ON T.pid = P.id"
        ).fetchone()
        events = [e for (e,) in con.execute("SELECT id FROM rocpd_event ORDER BY id LIMIT 9")]
        for i, name in enumerate(calls):
            con.execute(
                f"INSERT OR IGNORE INTO {strings} (guid, string) VALUES (?, ?)", [guid, name]
            )
            (string_id,) = con.execute(
                f"SELECT id FROM {strings} WHERE string = ?", [name]
            ).fetchone()
            con.execute(
                f"INSERT INTO {regions} (guid, nid, pid, tid, start, end, name_id, event_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [guid, nid, pid, tid, 1000 * i, 1000 * i + 500, string_id, events[i]],
            )
    con.close()
    return db


def test_no_kernel_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """API calls recorded, none of them a launch: the traced range launched no kernel."""
    db = without_dispatches(tmp_path, ["hipMalloc", "hipMemcpy", "hipFree"])
    assert error_of(capsys, db) == (
        f"roofscope: error: {db}: no kernel ran in the captured range: the profiler traced "
        "kernels and recorded none (the capture holds 3 API calls); profile a range in which "
        "the program launches kernels (rocprofv3 --collection-period, or the roctx range or "
        "--kernel-include-regex that selected none)\n"
    )


def test_kernels_not_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Launches in the API trace and no dispatch: kernel tracing was off."""
    db = without_dispatches(tmp_path, ["hipMalloc", "hipLaunchKernel", "hipLaunchKernel"])
    assert error_of(capsys, db) == (
        f"roofscope: error: {db}: has no kernel dispatches, though its API trace holds 2 "
        "kernel launches: rocprofv3 did not record kernels; re-run rocprofv3 with "
        "--kernel-trace (or --pmc) so that dispatches are recorded\n"
    )
    empty = without_dispatches(tmp_path / "empty", [])
    assert "nor any other activity; re-run rocprofv3 with --kernel-trace" in error_of(capsys, empty)


def test_rocprof_v1_results_db_refused(capsys: pytest.CaptureFixture[str]) -> None:
    path = V1 / "results.db"
    err = error_of(capsys, path)
    assert err == (
        f"roofscope: error: {path}: is an SQLite database without rocpd's views (a rocprof v1 "
        "results.db); pass the results.csv that rocprof wrote beside it\n"
    )


def test_rocprof_v1_folder_still_reads_its_csv(capsys: pytest.CaptureFixture[str]) -> None:
    """The folder's results.db is skipped; its results.csv is read, and the re-run in its
    sub-folder is a nested run, left out (issue 19: it was merged)."""
    doc = run_json(capsys, str(V1))
    runs = [f for f in doc["inputs"] if f["role"] == "dispatches"]
    assert [f["format"] for f in runs] == ["rocprof-v1-csv"]
    assert sum(k["calls"] for k in doc["kernels"]) == 1004
    assert doc["runs"]["nested"] == [str(V1 / "xr_laplacian_dp_kernel1")]
    assert not [f for f in doc["inputs"] if f["path"].endswith(".db")]


@pytest.mark.parametrize("size", [100, 65536, 557056])
def test_truncated(tmp_path: Path, size: int, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cut.db"
    db.write_bytes(DB.read_bytes()[:size])
    err = error_of(capsys, db)
    assert err == (
        f"roofscope: error: {db}: is a damaged SQLite database (database disk image is "
        "malformed); re-run the profiler; the file was cut short or overwritten\n"
    )


def test_locked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "busy.db"
    shutil.copyfile(DB, db)
    monkeypatch.setattr(sqlite_file, "BUSY_TIMEOUT_S", 0.05)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        err = error_of(capsys, db)
    finally:
        writer.close()
    assert err == (
        f"roofscope: error: {db}: is locked by another process (database is locked); "
        "wait for the profiler to finish writing it, or pass a copy\n"
    )
