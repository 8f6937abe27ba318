"""The host side of an Nsight Systems SQLite export (readers/nvidia/nsys_sqlite_host.py):
blocking and compiling runtime calls and compilers' NVTX ranges -> host_ranges, graph launches
(runtime rows and the kernels' graphNodeId) -> graph_launches.

The real export is CloverLeaf (CUDA) on an A100, nsys 2024.5.1 (tests/data/PROVENANCE.md):
every one of its 1,312 kernel launches is followed by a cudaDeviceSynchronize. The graph and
compile cases edit a copy of it (its own schema and rows) in tmp_path: no public export with
CUDA graphs or NVTX compile ranges was found.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from roofscope.cli.app import main
from roofscope.model.profile import Profile
from roofscope.readers.load import load
from tests.conftest import DATA

CLOVER = DATA / "nsys" / "cloverleaf-a100.sqlite"
NVTX_SQL = """CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER,
    eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT,
    globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER REFERENCES StringIds(id),
    domainId INTEGER)"""  # the columns of nsys 2022.2's NVTX_EVENTS, as its schema lists them


def file_rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def host(profile: Profile) -> dict[tuple[str, str], tuple[int, int]]:
    """(kind, name) -> (ranges, summed ns) of the profile's host ranges."""
    rows = profile.con.execute(
        "SELECT kind, name, count(*), sum(end_ns - start_ns) FROM host_ranges GROUP BY ALL"
    ).fetchall()
    return {(k, n): (c, s) for k, n, c, s in rows}


def test_cloverleaf_syncs_after_every_launch_are_sync_ranges() -> None:
    """The export's own rows, summed with sqlite3: 1,312 cudaDeviceSynchronize_v3020 (as many
    as kernels) and 279 cudaMemcpy_v3020 are "sync"; cudaLaunchKernel, cudaMalloc, cudaFree
    and cuModuleGetLoadingMode are not; no graph launch, no compile range."""
    want = {
        ("sync", name): (calls, ns)
        for name, calls, ns in file_rows(
            CLOVER,
            """SELECT s.value, count(*), sum(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r
            JOIN StringIds s ON s.id = r.nameId
            WHERE s.value IN ('cudaDeviceSynchronize_v3020', 'cudaMemcpy_v3020') GROUP BY 1""",
        )
    }
    ((kernels,),) = file_rows(CLOVER, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    profile = load([CLOVER])
    syncs = want[("sync", "cudaDeviceSynchronize_v3020")]
    # each of them the next call of its thread after a cudaLaunchKernel_v7000 (checked below)
    assert host(profile) == {**want, ("sync-after-launch", "cudaDeviceSynchronize_v3020"): syncs}
    assert want[("sync", "cudaDeviceSynchronize_v3020")][0] == kernels == 1312
    assert want[("sync", "cudaMemcpy_v3020")][0] == 279
    assert profile.con.execute("SELECT count(*) FROM graph_launches").fetchone() == (0,)
    sources = profile.con.execute("SELECT DISTINCT source FROM host_ranges").fetchall()
    assert sources == profile.con.execute("SELECT DISTINCT source FROM dispatches").fetchall()


def test_cloverleaf_synchronises_after_every_launch(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 38: "a cudaDeviceSynchronize after every launch (1,312 of them in a CloverLeaf
    nsys export)". The previous call of each cudaDeviceSynchronize on its thread, by a plain
    loop over the export's rows; the "api" summary is its calls per name, as nsys stats'
    cuda_api_sum counts them."""
    calls = file_rows(
        CLOVER,
        """SELECT r.globalTid, r.start, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r
        JOIN StringIds s ON s.id = r.nameId ORDER BY r.globalTid, r.start""",
    )
    after = sum(
        1
        for (tid, _, name), (ptid, _, prev) in zip(calls[1:], calls, strict=False)
        if name.startswith("cudaDeviceSynchronize") and ptid == tid and "LaunchKernel" in prev
    )
    launches = sum(1 for _, _, name in calls if name.startswith("cudaLaunchKernel"))
    assert after == launches == 1312
    assert main(["analyze", str(CLOVER), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [finding] = [f for f in doc["findings"] if f["rule"] == "sync-per-launch"]
    assert finding["summary"].startswith(
        "1,312 of 1,312 launches are followed by a synchronisation; the GPU sat idle"
    )
    api = {a["name"]: a["calls"] for a in doc["activity"] if a["kind"] == "api"}
    per_name = file_rows(
        CLOVER,
        """SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r
        JOIN StringIds s ON s.id = r.nameId GROUP BY 1""",
    )
    assert api == dict(per_name)


GRAPHED, EMPTY, UNLAUNCHED = 900_001, 900_002, 900_003


def edited(tmp_path: Path, *, graph_columns: bool = True) -> Path:
    """The CloverLeaf export with: kernels rowid 1-3 replayed by a cudaGraphLaunch_v10000
    (correlation GRAPHED, graphNodeId set), a second graph launch whose kernels are absent
    (EMPTY), kernels rowid 4-5 with graphNodeId but no launch row (UNLAUNCHED), a
    cuModuleLoadData_v2 of 2,000 ns, and NVTX ranges: nvFuser's CompiledKernel::compile
    (5,000 ns, by textId) and a user range "step" (not compilation)."""
    path = tmp_path / "clover-graphs.sqlite"
    shutil.copy(CLOVER, path)
    con = sqlite3.connect(path)
    ((top,),) = con.execute("SELECT max(id) FROM StringIds").fetchall()
    names = ["cudaGraphLaunch_v10000", "cuModuleLoadData_v2", "CompiledKernel::compile"]
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(names, top + 1)))
    for rows, corr in (((1, 2, 3), GRAPHED), ((4, 5), UNLAUNCHED)):
        con.execute(
            f"""UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = ?, graphNodeId = rowid
            WHERE rowid IN ({",".join(map(str, rows))})""",
            [corr],
        )
    insert = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, 1, ?, ?, 0, NULL)"
    con.executemany(insert, [(100, 150, GRAPHED, top + 1), (200, 260, EMPTY, top + 1),
                             (300, 2300, 1, top + 2)])  # fmt: skip
    con.execute(NVTX_SQL)
    con.executemany(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId) VALUES (?, ?, 59, ?, ?)",
        [(400, 5400, None, top + 3), (500, 900, "step", None), (600, None, "compile_fx", None)],
    )
    if not graph_columns:
        con.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN graphNodeId")
    con.commit()
    con.close()
    return path


def test_graph_launches_from_runtime_rows_and_graph_node_ids(tmp_path: Path) -> None:
    """Two cudaGraphLaunch rows and the graphNodeId kernels of a third correlation: three
    graph launches, the one without a launch row of unknown host times; 5 replayed kernels."""
    profile = load([edited(tmp_path)])
    launches = profile.con.execute(
        "SELECT correlation, start_ns, end_ns FROM graph_launches ORDER BY correlation"
    ).fetchall()
    assert launches == [(GRAPHED, 100, 150), (EMPTY, 200, 260), (UNLAUNCHED, None, None)]
    replayed = profile.con.execute(
        """SELECT count(*) FROM dispatches WHERE dispatch_id IN
        (SELECT correlation FROM graph_launches)"""
    ).fetchone()
    assert replayed == (5,)


def test_module_loads_and_compiler_ranges_are_compile(tmp_path: Path) -> None:
    """cuModuleLoadData_v2 and nvFuser's CompiledKernel::compile are "compile"; the user's
    "step" range and an unfinished (end NULL) compile_fx range are not host ranges."""
    got = host(load([edited(tmp_path)]))
    assert got[("compile", "cuModuleLoadData_v2")] == (1, 2000)
    assert got[("compile", "CompiledKernel::compile")] == (1, 5000)
    assert {k for k in got if k[0] == "compile"} == {
        ("compile", "cuModuleLoadData_v2"),
        ("compile", "CompiledKernel::compile"),
    }


def test_export_without_graph_columns(tmp_path: Path) -> None:
    """An older kernel table without graphNodeId: only the launch rows are graph launches."""
    profile = load([edited(tmp_path, graph_columns=False)])
    got = profile.con.execute("SELECT correlation FROM graph_launches ORDER BY 1").fetchall()
    assert got == [(GRAPHED,), (EMPTY,)]


def test_graph_launch_without_kernels_is_a_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The EMPTY launch has no kernel in the export: graph-kernels-missing, 1 of 3 launches."""
    assert main(["analyze", str(edited(tmp_path)), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    missing = [f for f in doc["findings"] if f["rule"] == "graph-kernels-missing"]
    assert len(missing) == 1
    assert missing[0]["evidence"]["graph_launches"] == 3
    assert missing[0]["evidence"]["graph_launches_without_kernels"] == 1


def test_runtime_time_not_a_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sync call whose start is text: one line naming the table, row and column."""
    path = tmp_path / "bad.sqlite"
    shutil.copy(CLOVER, path)
    con = sqlite3.connect(path)
    ((rowid,),) = con.execute(
        """SELECT min(r.rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s
        ON s.id = r.nameId WHERE s.value = 'cudaDeviceSynchronize_v3020'"""
    ).fetchall()
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 'abc' WHERE rowid = ?", [rowid])
    con.commit()
    con.close()
    assert main(["analyze", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"CUPTI_ACTIVITY_KIND_RUNTIME rowid {rowid}: start is 'abc', not a whole number" in err
    assert "nsys export --type sqlite" in err
