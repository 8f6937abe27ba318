"""Counter passes of one run (rocprofv3 ``-i`` with several ``pmc:`` lines: one ``pmc_N/`` or
``pass_N/`` folder per pass, each with the same pid and file name, dispatch ids restarting).

The passes are derived here, in ``tmp_path``, from real files (nothing is stored):

- MI300X: ``rocprof-compute-mi300x-rocpd/pmc_perf.csv`` (rocprof-compute 3.2's long table of a
  real 12-pass rocprofv3 run of vcopy, see its PROVENANCE.md) re-expressed as ONE rocprofv3
  ``counter_collection.csv`` (the 2025-08 layout, docs/formats/rocprofv3.md): per dispatch, each
  counter's first row, the first pass's Start/End timestamps, pid 4242. That file is then split
  by counter (names sorted, dealt round-robin) into three pass folders of the same file name:
  the same counters, in one file or in three passes. With the shared corpus, the whole table
  is also written as its 12 real passes, each with its own times.
- gfx1151: ``rocprofv3-counters/gfx1151_stall_counter_collection.csv`` split the same way, with
  the real kernel trace ``rocprofv3-layouts/gfx1151_decode_kernel_trace.csv`` beside it; and the
  stall and fetch files as they are, two real runs of one program (two passes).

Every pass must join the first pass's dispatches, so the analysis of the passes equals the
analysis of the one file in every number (speed of light, derived metrics, roofline, counters).
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from roofscope.readers.load import load
from tests.conftest import DATA, NAMED_COUNTERS, SHARED_CORPUS, run_json

MI300X = DATA / "rocprof-compute-mi300x-rocpd" / "pmc_perf.csv"
STALL = DATA / "rocprofv3-counters" / "gfx1151_stall_counter_collection.csv"
FETCH = DATA / "rocprofv3-counters" / "gfx1151_fetch_counter_collection.csv"
TRACE = DATA / "rocprofv3-layouts" / "gfx1151_decode_kernel_trace.csv"
COPIES = DATA / "rocprofv3-layouts" / "memory_copy_trace.csv"
API_STATS = DATA / "rocprofv3-layouts" / "hip_api_stats.csv"
VCOPY = SHARED_CORPUS / "amd" / "rocprof-compute-vcopy-2025" / "MI300X_A1_rocpd" / "pmc_perf.csv"
HEADER = ["Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id",
          "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size",
          "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Counter_Name",
          "Counter_Value", "Start_Timestamp", "End_Timestamp"]  # fmt: skip
NAME, ID = HEADER.index("Counter_Name"), HEADER.index("Dispatch_Id")
Rows = list[list[str]]
Cap = pytest.CaptureFixture[str]


def rocpd_table(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def v3_row(r: dict[str, str], start: str, end: str) -> list[str]:
    """A row of rocprof-compute's long rocpd table as a rocprofv3 counter_collection row."""
    d = r["Dispatch_ID"]
    return [d, d, f"Agent {r['GPU_ID']}", "1", "4242", "4242", r["Grid_Size"], r["Kernel_ID"],
            r["Kernel_Name"], r["Workgroup_Size"], r["LDS_Per_Workgroup"],
            r["Scratch_Per_Workitem"], r["Arch_VGPR"], r["Accum_VGPR"], r["SGPR"],
            r["Counter_Name"], r["Counter_Value"], start, end]  # fmt: skip


def mi300x_rows() -> Rows:
    """The MI300X rocpd table as rocprofv3 counter_collection rows (see the module text)."""
    times: dict[str, tuple[str, str]] = {}
    out: dict[tuple[str, str], list[str]] = {}
    for r in rocpd_table(MI300X):
        start, end = times.setdefault(r["Dispatch_ID"], (r["Start_Timestamp"], r["End_Timestamp"]))
        out.setdefault((r["Dispatch_ID"], r["Counter_Name"]), v3_row(r, start, end))
    return list(out.values())


def file_rows(path: Path) -> tuple[list[str], Rows]:
    with path.open(newline="") as f:
        header, *body = list(csv.reader(f))
    return header, body


def write(path: Path, header: list[str], body: Rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows([header, *body])
    return path


def split(
    folder: Path,
    header: list[str],
    body: Rows,
    name: str,
    *,
    prefix: str = "pass",
    n: int = 3,
    edit: Callable[[int, Rows], Rows] = lambda _, rows: rows,
) -> list[Path]:
    """``folder/{prefix}_1 … _n/name``, the counters dealt round-robin; ``edit(pass, rows)``."""
    counter = header.index("Counter_Name")
    names = sorted({r[counter] for r in body})
    out = []
    for i in range(n):
        mine = set(names[i::n])
        rows = edit(i + 1, [r for r in body if r[counter] in mine])
        out.append(write(folder / f"{prefix}_{i + 1}" / name, header, rows))
    return out


def same_analysis(one: dict[str, Any], passes: dict[str, Any]) -> None:
    """Every section but the paths read (inputs, runs) is equal, exactly, and so are the runs
    but for their paths: the passes are one run per process, never nested."""
    paths = ("inputs", "runs")
    assert {k: v for k, v in one.items() if k not in paths} == {
        k: v for k, v in passes.items() if k not in paths
    }
    runs = [{**doc["runs"], "read": len(doc["runs"]["read"])} for doc in (one, passes)]
    assert runs[0] == runs[1] and runs[1]["nested"] == []


def roles(doc: dict[str, Any]) -> list[str]:
    return [f["role"] for f in doc["inputs"]]


@pytest.mark.parametrize("prefix", ["pass", "pmc"])
def test_three_passes_equal_one_file(capsys: Cap, tmp_path: Path, prefix: str) -> None:
    body = mi300x_rows()
    write(tmp_path / "one" / "4242_counter_collection.csv", HEADER, body)
    split(tmp_path / "passes", HEADER, body, "4242_counter_collection.csv", prefix=prefix)
    one = run_json(capsys, str(tmp_path / "one"), "--gpu", "mi300x")
    passes = run_json(capsys, str(tmp_path / "passes"), "--gpu", "mi300x")
    assert roles(passes) == ["dispatches", "counter-pass", "counter-pass"]
    same_analysis(one, passes)
    # the 94 counters (279 values) of 3 dispatches give 15 speed-of-light and derived
    # metrics; before, the second pass's counters were lost and 3 metrics were left
    assert len(passes["metrics"]["whole"]) == 15
    # by hand: SQ_WAVES summed over the dispatches (first row of each in the rocpd table)
    waves = sum(float(r[NAME + 1]) for r in body if r[NAME] == "SQ_WAVES")
    assert passes["metrics"]["whole"]["Wavefronts (recomputed)"]["total"] == waves == 3 * 16384
    # every counter of every dispatch is on the first pass's dispatch rows
    profile = load([str(tmp_path / "passes")])
    kept = profile.con.execute("SELECT count(*) FROM counters").fetchone()
    assert kept == (len(body),) == (279,)  # every row of the trimmed table, once


def restart(n: int, rows: Rows) -> Rows:
    """Pass 2's ids start at 101 (a filtered run skips ids); pass 3 writes its dispatches in
    reverse (completion order), its ids kept."""
    if n == 2:
        return [[*r[:ID], str(int(r[ID]) + 100), *r[ID + 1 :]] for r in rows]
    return sorted(rows, key=lambda r: -int(r[ID])) if n == 3 else rows


def test_passes_whose_dispatch_ids_restart(capsys: Cap, tmp_path: Path) -> None:
    """Matched by kernel and occurrence in launch order, never by dispatch id or file order:
    gfx1151's 10 dispatches of 7 kernels (one of them thrice)."""
    header, body = file_rows(STALL)
    write(tmp_path / "one" / "2684167_counter_collection.csv", header, body)
    split(tmp_path / "passes", header, body, "2684167_counter_collection.csv", edit=restart)
    one = run_json(capsys, str(tmp_path / "one"))
    passes = run_json(capsys, str(tmp_path / "passes"))
    assert roles(passes) == ["dispatches", "counter-pass", "counter-pass"]
    same_analysis(one, passes)
    assert set(passes["metrics"]["whole"]) == {"Wavefronts", "MemUnitBusy", "WriteUnitStalled",
        "LDSBankConflict", "L2CacheHit", "OccupancyPercent"}  # fmt: skip


@pytest.mark.parametrize("every_pass", [False, True], ids=["trace-in-pass-1", "trace-in-each"])
def test_passes_with_a_kernel_trace(capsys: Cap, tmp_path: Path, every_pass: bool) -> None:
    """roofscope profile writes the trace in pass_1 only; rocprofv3 -i with --kernel-trace
    (and --memory-copy-trace --stats) writes them in every pmc_N: the later ones repeat the
    run and are not counted again. The copies and API stats are the 2025-08 docs sample's."""
    header, body = file_rows(STALL)
    name = "2684167_counter_collection.csv"
    write(tmp_path / "one" / name, header, body)
    split(tmp_path / "passes", header, body, name, prefix="pmc")
    beside = {TRACE: "kernel_trace", COPIES: "memory_copy_trace", API_STATS: "hip_api_stats"}
    for folder in [tmp_path / "one", *[tmp_path / "passes" / f"pmc_{i}" for i in (1, 2, 3)]]:
        for src, kind in beside.items():
            if every_pass or folder.name in ("one", "pmc_1"):
                shutil.copy(src, folder / f"2684167_{kind}.csv")
    one = run_json(capsys, str(tmp_path / "one"))
    passes = run_json(capsys, str(tmp_path / "passes"))
    beside_roles = [r for r in roles(one) if r not in ("dispatches", "counter-run")]
    assert beside_roles == ["api-summary", "copies"]
    counted = [r for r in roles(passes) if r != "pass-repeat"]
    assert counted == ["dispatches", "counter-run", "counter-pass", "counter-pass", *beside_roles]
    assert roles(passes).count("pass-repeat") == (6 if every_pass else 0)
    same_analysis(one, passes)
    with TRACE.open(newline="") as f:
        assert passes["summary"]["dispatches"] == len(list(csv.DictReader(f))) == 144
    assert len(passes["metrics"]["whole"]) == 6


def test_pass_with_other_dispatches_is_named(capsys: Cap, tmp_path: Path) -> None:
    """Pass 3 lost the last dispatch of a kernel: its counters cannot be matched, the warning
    names its folder and the kernel; pass 2 still joins the first pass."""
    header, body = file_rows(STALL)
    kernel = header.index("Kernel_Name")
    last = max(int(r[ID]) for r in body)
    (lost,) = {r[kernel] for r in body if int(r[ID]) == last}

    def drop(n: int, rows: Rows) -> Rows:
        return [r for r in rows if n != 3 or int(r[ID]) != last]

    split(tmp_path, header, body, "2684167_counter_collection.csv", edit=drop)
    doc = run_json(capsys, str(tmp_path))
    assert roles(doc) == ["dispatches", "counter-pass", "counter-run"]
    (warning,) = [w for w in doc["warnings"] if w["code"] == "pass-mismatch"]
    calls = sum(1 for r in body if r[kernel] == lost and r[NAME] == body[0][NAME])
    assert warning["message"] == (
        f"{tmp_path / 'pass_3' / '2684167_counter_collection.csv'}: pass folder "
        f"{tmp_path / 'pass_3'} saw other dispatches than the first pass {tmp_path / 'pass_1'} "
        f"(1 kernel differs; {lost[:60]!r}: {calls - 1} here, {calls} there), so its "
        "counters cannot be matched to the first pass's dispatches by kernel and occurrence: "
        "they are kept apart as a counter run (compared by kernel name only); re-run the "
        "passes on the same input, or analyse that pass alone"
    )
    profile = load([str(tmp_path)])
    third = set(sorted({r[NAME] for r in body})[2::3])
    on_first = {c for (c,) in profile.con.execute(
        f"SELECT DISTINCT c.counter FROM {NAMED_COUNTERS} c "
        "JOIN dispatches d ON d.rowid = c.row_id "
        "WHERE d.source = 0").fetchall()}  # fmt: skip
    assert on_first == {r[NAME] for r in body} - third


def test_passes_of_two_processes(capsys: Cap, tmp_path: Path) -> None:
    """Two processes in every pass folder (pid 4242: MI300X vcopy, pid 2684167: gfx1151
    decode): each pass of a process joins that process's first pass, by file name."""
    header, body = file_rows(STALL)
    write(tmp_path / "one" / "4242_counter_collection.csv", HEADER, mi300x_rows())
    write(tmp_path / "one" / "2684167_counter_collection.csv", header, body)
    split(tmp_path / "passes", HEADER, mi300x_rows(), "4242_counter_collection.csv")
    split(tmp_path / "passes", header, body, "2684167_counter_collection.csv")
    one = run_json(capsys, str(tmp_path / "one"), "--gpu", "mi300x")
    passes = run_json(capsys, str(tmp_path / "passes"), "--gpu", "mi300x")
    assert roles(passes) == ["dispatches"] * 2 + ["counter-pass"] * 4
    # the devices and ranks sections name each process's file: the same but for its folder
    first = json.dumps(passes).replace(str(tmp_path / "passes" / "pass_1"), str(tmp_path / "one"))
    same_analysis(one, json.loads(first))
    assert passes["summary"]["dispatches"] == 3 + 10


def test_two_real_passes(capsys: Cap, tmp_path: Path) -> None:
    """gfx1151's stall and fetch files are two real runs of the same decode (pids 2684167 and
    2684191, other timestamps, the same dispatch sequence): as pmc_1 and pmc_2 (fetch cut to
    the stall file's 10 dispatches), FETCH_SIZE joins the stall run's dispatches and gives
    each kernel its HBM read bytes, 1024 x its FETCH_SIZE (KiB)."""
    header, stall = file_rows(STALL)
    write(tmp_path / "pmc_1" / "2684167_counter_collection.csv", header, stall)
    fetch_header, fetch = file_rows(FETCH)
    first = {r[ID] for r in stall}
    write(tmp_path / "pmc_2" / "2684191_counter_collection.csv", fetch_header,
          [r for r in fetch if r[ID] in first])  # fmt: skip
    doc = run_json(capsys, str(tmp_path))
    assert roles(doc) == ["dispatches", "counter-pass"]
    kernel, value = fetch_header.index("Kernel_Name"), fetch_header.index("Counter_Value")
    by_hand: dict[str, float] = {}
    for r in fetch:
        if r[ID] in first:
            by_hand[r[kernel]] = by_hand.get(r[kernel], 0.0) + 1024 * float(r[value])
    got = {k["name"]: k["roofline"]["bytes"]["hbm-read"] for k in doc["kernels"]}
    assert got == pytest.approx(by_hand) and len(got) == 7
    assert doc["summary"]["dispatches"] == 10  # the first pass's, counted once


@pytest.mark.skipif(not VCOPY.is_file(), reason="needs ../shared/corpus")
def test_twelve_real_passes(capsys: Cap, tmp_path: Path) -> None:
    """The whole MI300X vcopy table (shared corpus; tests/data holds it trimmed): 12 real
    rocprofv3 passes, each dispatch's rows of one pass sharing that pass's Start_Timestamp.
    Written as pass_1 … pass_12 with each pass's own times, and as one file with the first
    pass's times: the same analysis, roofline included."""
    table = rocpd_table(VCOPY)
    starts: dict[str, list[int]] = {}  # each dispatch's rows' start times: one per pass
    for r in table:
        starts.setdefault(r["Dispatch_ID"], []).append(int(r["Start_Timestamp"]))
    first: dict[str, tuple[str, str]] = {}
    passes: dict[int, Rows] = {}
    for r in table:
        times = sorted(set(starts[r["Dispatch_ID"]]))
        n = times.index(int(r["Start_Timestamp"])) + 1
        if n == 1:
            first.setdefault(r["Dispatch_ID"], (r["Start_Timestamp"], r["End_Timestamp"]))
        passes.setdefault(n, []).append(v3_row(r, r["Start_Timestamp"], r["End_Timestamp"]))
    assert len(passes) == 12 and len(table) == 6027
    name = "4242_counter_collection.csv"
    write(tmp_path / "one" / name, HEADER, [v3_row(r, *first[r["Dispatch_ID"]]) for r in table])
    for n, rows in passes.items():
        write(tmp_path / "passes" / f"pass_{n}" / name, HEADER, rows)
    one = run_json(capsys, str(tmp_path / "one"), "--gpu", "mi300x")
    doc = run_json(capsys, str(tmp_path / "passes"), "--gpu", "mi300x")
    assert roles(doc) == ["dispatches"] + ["counter-pass"] * 11
    same_analysis(one, doc)
    assert len(doc["metrics"]["whole"]) == 39
    # vcopy -n 1048576 -i 3 (sysinfo.csv's command): 3 x 1048576 doubles written to HBM
    (k,) = doc["kernels"]
    assert k["roofline"]["bytes"]["hbm-write"] == 3 * 1048576 * 8
    assert k["roofline"]["bound"] == "memory"
