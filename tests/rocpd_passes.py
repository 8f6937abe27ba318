"""A rocprof-compute workload of the raw layout (``out/<pass>/<hostname>/<pid>.db`` with
``out/<pass>/<pid>_native_counter_collection.csv.gz``), BUILT from the real 17-pass RDNA 3.5
workload in tests/data/rocprof-compute-rdna35-passes: no workload of this layout is public yet.

Each pass ``results_pmc_perf_N.csv`` becomes ``out/pmc_perf_N/<hostname>/<pid>.db``, a rocpd
database with rocprofv3's own DDL (the tables, views and indexes of
tests/data/rocpd-mi250x/finite-difference_results.db, renamed to the pass's GUID), as
rocprofiler-compute's profile step leaves them (rocprofiler-compute sources: ``pass_dirs``,
``db_paths``, ``native_counters_csv``; ROCm/rocm-systems pull requests 10647 and 10646):

- the dispatches under rocprofiler's own dispatch ids (``3 + 2 x Dispatch_ID``: the per-pass
  CSV renumbered them from 0), and before them one dispatch of another kernel that counted
  nothing (a copy kernel, as a real process launches);
- with ``native``, the counters in the native CSV, each value split over two instance rows
  (the tool sums them per dispatch) and the database's counter tables left empty (the tool
  compacts them); else in ``rocpd_info_pmc`` / ``rocpd_pmc_event``, read through the
  ``counters_collection`` view.
"""

from __future__ import annotations

import csv
import gzip
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from tests.conftest import DATA

PASSES = DATA / "rocprof-compute-rdna35-passes"
TEMPLATE = DATA / "rocpd-mi250x" / "finite-difference_results.db"
_TEMPLATE_UUID = "0000e51f_93c6_73c6_94ef_3094a4d69efe"
FILL = "__amd_rocclr_copyBuffer"
AGENT = 1  # the passes' GPU_ID
HOST = "atg-KoratPlus-KRK2-ansari"  # sysinfo.csv hostname


def raw_id(dispatch: int) -> int:
    return 3 + 2 * dispatch


def build(tmp: Path, *, native: Callable[[int], bool] = lambda n: True) -> Path:
    """The workload folder in ``tmp``: sysinfo.csv and one out/pmc_perf_N per pass."""
    folder = tmp / "RDNA35_KRACKAN2"
    folder.mkdir()
    shutil.copy(PASSES / "sysinfo.csv", folder)
    for path in sorted(PASSES.glob("results_pmc_perf_*.csv")):
        n = int(path.stem.rsplit("_", 1)[1])
        write_pass(folder / "out" / f"pmc_perf_{n}", 5000 + n, rows_of(path), native(n))
    return folder


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def write_pass(pass_dir: Path, pid: int, rows: list[dict[str, str]], native: bool) -> None:
    db = pass_dir / HOST / f"{pid}.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    guid = rows[0]["GUID"]
    con = sqlite3.connect(db)
    with con:
        _schema(con, guid)
        _context(con, pid, guid)
        _dispatches(con, pid, guid, rows)
        if not native:
            _pmc(con, pid, guid, rows)
    con.close()
    if native:
        _native_csv(pass_dir / f"{pid}_native_counter_collection.csv.gz", rows)


def _schema(con: sqlite3.Connection, guid: str) -> None:
    template = sqlite3.connect(f"{TEMPLATE.resolve().as_uri()}?mode=ro", uri=True)
    ddl = template.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name != 'sqlite_sequence' "
        "ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, rowid"
    ).fetchall()
    template.close()
    uuid = guid.replace("-", "_")
    for (sql,) in ddl:
        con.execute(
            str(sql).replace(_TEMPLATE_UUID, uuid).replace(_TEMPLATE_UUID.replace("_", "-"), guid)
        )


def _table(con: sqlite3.Connection, view: str) -> str:
    (name,) = con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?", (f"{view}_0%",)
    ).fetchone()
    return f'"{name}"'


def _insert(con: sqlite3.Connection, view: str, row: dict[str, object]) -> None:
    marks = ", ".join("?" for _ in row)
    con.execute(
        f"INSERT INTO {_table(con, view)} ({', '.join(row)}) VALUES ({marks})", list(row.values())
    )


def _context(con: sqlite3.Connection, pid: int, guid: str) -> None:
    for tag, value in (("schema_version", "3"), ("uuid", "_" + guid.replace("-", "_"))):
        _insert(con, "rocpd_metadata", {"tag": tag, "value": value})
    _insert(con, "rocpd_metadata", {"tag": "guid", "value": guid})
    _insert(con, "rocpd_info_node", {"id": 1, "guid": guid, "hash": 7, "machine_id": "m"})
    _insert(con, "rocpd_info_process", {"id": pid, "guid": guid, "nid": 1, "ppid": 1, "pid": pid})
    _insert(
        con,
        "rocpd_info_thread",
        {"id": pid, "guid": guid, "nid": 1, "ppid": 1, "pid": pid, "tid": pid},
    )
    _insert(
        con,
        "rocpd_info_agent",
        {
            "id": AGENT,
            "guid": guid,
            "nid": 1,
            "pid": pid,
            "type": "GPU",
            "absolute_index": AGENT,
            "logical_index": 0,
            "type_index": 0,
            "name": "gfx1153",
            "product_name": "AMD Radeon 860M",
            "extdata": '{"cu_count": 4, "num_xcc": 1}',
        },
    )
    _insert(con, "rocpd_info_queue", {"id": 1, "guid": guid, "nid": 1, "pid": pid, "name": "Q"})
    _insert(con, "rocpd_info_stream", {"id": 0, "guid": guid, "nid": 1, "pid": pid, "name": "S"})
    _insert(con, "rocpd_string", {"id": 1, "guid": guid, "string": "KERNEL_DISPATCH"})


def _dispatches(con: sqlite3.Connection, pid: int, guid: str, rows: list[dict[str, str]]) -> None:
    first = {}
    for r in rows:
        first.setdefault(int(r["Dispatch_ID"]), r)
    names = [FILL, *dict.fromkeys(r["Kernel_Name"] for r in first.values())]
    for i, name in enumerate(names):
        row = first[min(first)]
        _insert(
            con,
            "rocpd_info_kernel_symbol",
            {
                "id": i + 1,
                "guid": guid,
                "nid": 1,
                "pid": pid,
                "code_object_id": 1,
                "kernel_name": f"{name}.kd",
                "display_name": name,
                "sgpr_count": int(row["SGPR"]),
                "arch_vgpr_count": int(row["Arch_VGPR"]),
                "accum_vgpr_count": int(row["Accum_VGPR"]),
            },
        )
    start = int(first[min(first)]["Start_Timestamp"]) - 50_000
    _dispatch(con, pid, guid, 1, raw_id(-1), 1, (start, start + 9_000), (4096, 256, 0, 0))
    for d, r in sorted(first.items()):
        shape = (
            int(r["Grid_Size"]),
            int(r["Workgroup_Size"]),
            int(r["LDS_Per_Workgroup"]),
            int(r["Scratch_Per_Workitem"]),
        )
        times = (int(r["Start_Timestamp"]), int(r["End_Timestamp"]))
        kernel = names.index(r["Kernel_Name"]) + 1
        _dispatch(con, pid, guid, int(r["Correlation_Id"]) + 1, raw_id(d), kernel, times, shape)


def _dispatch(
    con: sqlite3.Connection,
    pid: int,
    guid: str,
    event: int,
    dispatch: int,
    kernel: int,
    times: tuple[int, int],
    shape: tuple[int, int, int, int],
) -> None:
    _insert(
        con,
        "rocpd_event",
        {"id": event, "guid": guid, "category_id": 1, "stack_id": event, "correlation_id": event},
    )
    grid, workgroup, lds, scratch = shape
    _insert(
        con,
        "rocpd_kernel_dispatch",
        {
            "id": event,
            "guid": guid,
            "nid": 1,
            "pid": pid,
            "tid": pid,
            "agent_id": AGENT,
            "kernel_id": kernel,
            "dispatch_id": dispatch,
            "queue_id": 1,
            "stream_id": 0,
            "start": times[0],
            "end": times[1],
            "private_segment_size": scratch,
            "group_segment_size": lds,
            "workgroup_size_x": workgroup,
            "workgroup_size_y": 1,
            "workgroup_size_z": 1,
            "grid_size_x": grid,
            "grid_size_y": 1,
            "grid_size_z": 1,
            "region_name_id": 1,
            "event_id": event,
        },
    )


def halves(value: float) -> tuple[float, float]:
    """Two instance values that sum to ``value`` exactly (whole counts split, others not)."""
    if value.is_integer():
        low = float(int(value) // 2)
        return low, value - low
    return value, 0.0


def _native_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with gzip.open(path, "wt", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(
            [
                "dispatch_id",
                "gpu_id",
                "kernel_id",
                "lds_per_workgroup",
                "counter_id",
                "counter_name",
                "counter_value",
            ]
        )
        names = list(dict.fromkeys(r["Counter_Name"] for r in rows))
        for r in rows:
            for value in halves(float(r["Counter_Value"])):
                out.writerow(
                    [
                        raw_id(int(r["Dispatch_ID"])),
                        AGENT,
                        2,
                        r["LDS_Per_Workgroup"],
                        names.index(r["Counter_Name"]),
                        r["Counter_Name"],
                        repr(value),
                    ]
                )


def _pmc(con: sqlite3.Connection, pid: int, guid: str, rows: list[dict[str, str]]) -> None:
    names = list(dict.fromkeys(r["Counter_Name"] for r in rows))
    for i, name in enumerate(names):
        _insert(
            con,
            "rocpd_info_pmc",
            {
                "id": i + 1,
                "guid": guid,
                "nid": 1,
                "pid": pid,
                "agent_id": AGENT,
                "target_arch": "GPU",
                "name": name,
                "symbol": name,
                "value_type": "ABS",
                "is_constant": 0,
                "is_derived": 0,
            },
        )
    for r in rows:
        event = int(r["Correlation_Id"]) + 1
        for value in halves(float(r["Counter_Value"])):
            _insert(
                con,
                "rocpd_pmc_event",
                {
                    "guid": guid,
                    "event_id": event,
                    "pmc_id": names.index(r["Counter_Name"]) + 1,
                    "value": value,
                },
            )
