"""Omniperf / rocprof-compute workload folders, generations 1-5, against the files themselves.

Expected values are read here from the same CSV files with the csv module, or written by
hand from what the files say (sysinfo.csv, roofline.csv, pmc_kernel_top.csv). The folders
under tests/data are real workloads (some trimmed; see each PROVENANCE.md); the full ones
of the shared corpus are checked too when it sits beside the project.
"""

from __future__ import annotations

import csv
import shutil
import statistics
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest

from roofscope.analysis.checks import check
from roofscope.analysis.hotspots import hotspots
from roofscope.catalogue.ceilings import Ceiling
from roofscope.errors import InputError
from roofscope.model.names import normalise
from roofscope.model.profile import Profile, RunInfo
from roofscope.readers.amd.compute.rocprof_compute_sysinfo import read_sysinfo
from roofscope.readers.load import load
from tests.conftest import DATA, NAMED_COUNTERS, SHARED_CORPUS, run_json

CORPUS = SHARED_CORPUS / "amd"
VCOPY = CORPUS / "rocprof-compute-vcopy-2025"
needs_corpus = pytest.mark.skipif(not VCOPY.is_dir(), reason="shared corpus not beside the project")

# folder -> RunInfo, written by hand from its sysinfo.csv and log.txt (clocks: max_sclk and
# max_mclk, 1.x sclk and mclk; 0 or empty is unknown: MI350's 0 and '', RDNA 3.5's max_mclk 0)
RUNS = {
    "rocprof-compute-omniperf1-mi200": RunInfo(
        "omniperf", None, "MI200", "gfx90a", 104, clock_mhz=1700, memory_clock_mhz=1600
    ),
    "rocprof-compute-mi200": RunInfo(
        "omniperf", "2.0.0-RC1", "MI200", "gfx90a", 104, 1, clock_mhz=1700, memory_clock_mhz=1600
    ),
    "rocprof-compute-mi300a": RunInfo(
        "omniperf", "2.0.0", "MI300A_A1", "gfx942", 228, 6, "SPX", 2100, 1300
    ),
    "rocprof-compute-mi350": RunInfo("rocprof-compute", "3.1.0", "MI350", "gfx950", 128, 8, "SPX"),
    "rocprof-compute-mi300x-rocpd": RunInfo(
        "rocprof-compute", "3.2.0", "MI300X_A1", "gfx942", 304, 8, "SPX", clock_mhz=2100
    ),
    "rocprof-compute-rdna35": RunInfo(
        "rocprof-compute", None, "RDNA35_KRACKAN2", "gfx1153", 4, 1, clock_mhz=2700
    ),
    "rocprof-compute-omniperf2-mi300a": RunInfo(
        "omniperf", "2.0.1", "MI300A_A1", "gfx942", 228, 6, "SPX", 2100, 1300
    ),
}
FOLDERS = [DATA / name for name in RUNS]
# full workloads of the shared corpus: folder -> (gpu, arch)
CORPUS_FOLDERS = {
    "omniperf-v1-2022/Axes1/mi100": ("MI100", "gfx908"),
    "omniperf-v1-2022/Axes1/mi200": ("MI200", "gfx90a"),
    "omniperf-v1-2022/roof_only_Axes1/mi200": ("MI200", "gfx90a"),
    "rocprof-compute-vcopy-2025/MI100": ("MI100", "gfx908"),
    "rocprof-compute-vcopy-2025/MI200": ("MI200", "gfx90a"),
    "rocprof-compute-vcopy-2025/MI300A_A1": ("MI300A_A1", "gfx942"),
    "rocprof-compute-vcopy-2025/MI300X_A1": ("MI300X_A1", "gfx942"),
    "rocprof-compute-vcopy-2025/MI300X_A1_rocpd": ("MI300X_A1", "gfx942"),
    "rocprof-compute-vcopy-2025/MI350": ("MI350", "gfx950"),
    "hpctraining-omniperf2-mi300a/problem/MI300A_A1": ("MI300A_A1", "gfx942"),
    "rocprof-compute-rdna35/RDNA35_KRACKAN2": ("RDNA35_KRACKAN2", "gfx1153"),
}
SAMPLES = ("SQ_WAVES", "GRBM_GUI_ACTIVE", "TCC_HIT[3]", "TCC_HIT[95]", "TCC_EA_RDREQ_sum")


def dispatch_file(folder: Path) -> Path:
    """The file the workload's dispatches come from."""
    for name in ("pmc_perf.csv", "timestamps.csv", "results_pmc_perf_2.csv"):
        if (folder / name).is_file():
            return folder / name
    raise AssertionError(folder)


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def dispatch_id(row: dict[str, str]) -> int:
    return int(row["Dispatch_ID"] if "Dispatch_ID" in row else row["Index"])


def is_long(path: Path) -> bool:
    return "Counter_Name" in rows_of(path)[0]


def whole_ns(text: str) -> int:
    """A timestamp as the tool wrote it (``1248227792617386.5``) in whole ns, half up."""
    return int(Decimal(text).to_integral_value(rounding=ROUND_HALF_UP))


def analysed(profile: Profile, sql: str) -> list[tuple[Any, ...]]:
    """``sql`` over the dispatches analyses look at, as ``d`` (with ``c``ounters where named)."""
    sources = ", ".join(map(str, profile.sources("dispatches")))
    return profile.con.execute(sql.format(where=f"d.source IN ({sources})")).fetchall()


def counters_of(profile: Profile, name: str) -> dict[int, float]:
    rows = analysed(
        profile,
        f"SELECT d.dispatch_id, c.value FROM {NAMED_COUNTERS} c "
        "JOIN dispatches d ON d.rowid = c.row_id "
        f"WHERE {{where}} AND c.counter = '{name}'",
    )
    return {int(i): float(v) for i, v in rows}


def counter_names(profile: Profile) -> set[str]:
    rows = profile.con.execute(f"SELECT DISTINCT counter FROM {NAMED_COUNTERS}").fetchall()
    return {str(r[0]) for r in rows}


# -- one run per folder ---------------------------------------------------------------------


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_one_dispatch_per_row_and_the_gpu(folder: Path) -> None:
    profile = load([str(folder)])
    path = dispatch_file(folder)
    rows = rows_of(path)
    expected = len({dispatch_id(r) for r in rows}) if is_long(path) else len(rows)
    assert [(Path(i.path).name, i.rows) for i in profile.inputs if i.role == "dispatches"] == [
        (path.name, expected)
    ]
    assert analysed(profile, "SELECT count(*) FROM dispatches d WHERE {where}") == [(expected,)]
    assert profile.run == RUNS[folder.name]


@needs_corpus
@pytest.mark.parametrize("rel", list(CORPUS_FOLDERS), ids=lambda r: r.replace("/", "-"))
def test_full_corpus_workloads(rel: str) -> None:
    folder = CORPUS / rel
    profile = load([str(folder)])
    path = dispatch_file(folder)
    rows = rows_of(path)
    expected = len({dispatch_id(r) for r in rows}) if is_long(path) else len(rows)
    assert sum(i.rows for i in profile.inputs if i.role == "dispatches") == expected
    assert (profile.run.gpu, profile.run.arch) == CORPUS_FOLDERS[rel]


@needs_corpus
def test_omniperf1_mi100_counts_each_dispatch_once(capsys: pytest.CaptureFixture[str]) -> None:
    """pmc_perf.csv, five SQ_*.csv and timestamps.csv each list the 167 dispatches: 167, not
    7 x 167; prev_analysis/1.csv is Omniperf's own top-10 table of the same run."""
    folder = CORPUS / "omniperf-v1-2022/Axes1/mi100"
    doc = run_json(capsys, str(folder))
    assert doc["summary"]["dispatches"] == len(rows_of(folder / "pmc_perf.csv")) == 167
    roles = {Path(i["path"]).name: i["role"] for i in doc["inputs"]}
    assert roles == {
        "pmc_perf.csv": "dispatches",
        **{p.name: "counter-run" for p in folder.glob("SQ_*.csv")},
        "sysinfo.csv": "metadata",  # no roofline.csv: Omniperf 1.x wrote none
    }
    assert not (folder / "roofline.csv").exists()
    assert (doc["run"]["gpu"], doc["run"]["arch"]) == ("MI100", "gfx908")
    got = {k["name"]: k for k in doc["kernels"]}
    for row in rows_of(folder / "prev_analysis" / "1.csv"):
        k = got[normalise(row["KernelName"])]
        assert k["calls"] == int(row["Count"])
        assert round(k["total_s"] * 1e9) == int(float(row["Sum(ns)"]))


# -- times --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "folder", [f for f in FOLDERS if not is_long(dispatch_file(f))], ids=lambda p: p.name
)
def test_wide_times_are_the_files(folder: Path) -> None:
    """Start/End as written (averaged floats of rocprof-compute 3.x: whole ns, half up)."""
    rows = rows_of(dispatch_file(folder))
    start = "Start_Timestamp" if "Start_Timestamp" in rows[0] else "BeginNs"
    end = "End_Timestamp" if "End_Timestamp" in rows[0] else "EndNs"
    want = {dispatch_id(r): (whole_ns(r[start]), whole_ns(r[end])) for r in rows}
    profile = load([str(folder)])
    got = analysed(profile, "SELECT dispatch_id, start_ns, end_ns FROM dispatches d WHERE {where}")
    assert {int(i): (s, e) for i, s, e in got} == want
    assert profile.count("dispatches") == len(want)


def test_zero_length_timestamps_load_and_are_reported() -> None:
    """MI300A_A1: every timestamp re-saved as 1.62068E+14, so Start equals End."""
    profile = load([str(DATA / "rocprof-compute-mi300a")])
    times = analysed(profile, "SELECT start_ns, end_ns FROM dispatches d WHERE {where}")
    assert times == [(162068000000000, 162068000000000)] * 3
    (warning,) = [*profile.warnings, *check(profile)]  # one cause, one warning
    assert (warning.code, warning.count) == ("rounded-timestamp", 3)
    assert '(e.g. "1.62068E+14" ns in the file)' in warning.message  # as the file writes it
    assert "3 show 0 ns" in warning.message


def test_kernel_times_match_pmc_kernel_top() -> None:
    """Omniperf 2.0.1's own analysis of the same folder (Count, Sum(ns))."""
    folder = DATA / "rocprof-compute-omniperf2-mi300a"
    got = {k.name: k for k in hotspots(load([str(folder)])).kernels}
    top = rows_of(folder / "pmc_kernel_top.csv")
    assert set(got) == {normalise(r["Kernel_Name"]) for r in top}
    for row in top:
        k = got[normalise(row["Kernel_Name"])]
        assert (k.calls, k.total_ns) == (int(row["Count"]), float(row["Sum(ns)"]))


def test_rocpd_long_table_one_dispatch_per_id() -> None:
    """Rows of 12 passes per dispatch: one dispatch each, the median of End - Start over its
    counter rows as its duration, the earliest pass's start, each counter's value."""
    folder = DATA / "rocprof-compute-mi300x-rocpd"
    rows = rows_of(folder / "pmc_perf.csv")
    durations: dict[int, list[int]] = defaultdict(list)
    starts: dict[int, list[int]] = defaultdict(list)
    values: dict[tuple[int, str], float] = {}
    for r in rows:
        i = int(r["Dispatch_ID"])
        durations[i].append(int(r["End_Timestamp"]) - int(r["Start_Timestamp"]))
        starts[i].append(int(r["Start_Timestamp"]))
        values[(i, r["Counter_Name"])] = float(r["Counter_Value"])
    assert len({(int(r["Dispatch_ID"]), r["Start_Timestamp"]) for r in rows}) == 3 * 12
    profile = load([str(folder)])
    got = analysed(
        profile, "SELECT dispatch_id, start_ns, end_ns FROM dispatches d WHERE {where} ORDER BY 1"
    )
    want = [
        (i, min(starts[i]), min(starts[i]) + whole_ns(str(statistics.median(durations[i]))))
        for i in sorted(durations)
    ]
    assert got == want
    stored = analysed(
        profile,
        f"SELECT d.dispatch_id, c.counter, c.value FROM {NAMED_COUNTERS} c "
        "JOIN dispatches d ON d.rowid = c.row_id WHERE {where}",
    )
    assert {(int(i), str(n)): float(v) for i, n, v in stored} == values
    (warning,) = [w for w in profile.warnings if w.code == "pass-timestamps-differ"]
    assert "3 dispatches recorded once per pass" in warning.message
    assert "12 passes" in warning.message


# -- counters -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "folder", [f for f in FOLDERS if not is_long(dispatch_file(f))], ids=lambda p: p.name
)
def test_counter_cells(folder: Path) -> None:
    """Native names, one value per dispatch, equal to the CSV cell (floats such as 630.0)."""
    rows = rows_of(dispatch_file(folder))
    profile = load([str(folder)])
    checked = 0
    for name in SAMPLES:
        if name in rows[0]:
            assert counters_of(profile, name) == {dispatch_id(r): float(r[name]) for r in rows}
            checked += 1
    assert checked >= 3


def test_rdna_long_file_with_guid() -> None:
    folder = DATA / "rocprof-compute-rdna35"
    rows = rows_of(folder / "results_pmc_perf_2.csv")
    profile = load([str(folder)])
    name = rows[0]["Counter_Name"]
    assert counters_of(profile, name) == {
        int(r["Dispatch_ID"]): float(r["Counter_Value"]) for r in rows if r["Counter_Name"] == name
    }
    assert counter_names(profile) == {r["Counter_Name"] for r in rows}


def test_pass_copies_are_dropped_and_accumulators_named() -> None:
    """Omniperf 2.0.1 merged the SQ runs into pmc_perf.csv: GRBM_COUNT_13 is GRBM_COUNT of
    another pass; SQ_ACCUM_PREV_HIRES_13 integrates SQ_LEVEL_WAVES, the column before it."""
    folder = DATA / "rocprof-compute-omniperf2-mi300a"
    rows = rows_of(folder / "pmc_perf.csv")
    profile = load([str(folder)])
    names = counter_names(profile)
    assert {"GRBM_COUNT_13", "SQ_WAVES_13", "wave_size_1", "obj_13"}.isdisjoint(names)
    assert {"SQC_DCACHE_REQ_READ_16", "SQC_DCACHE_REQ_READ_1", "SQ_WAVES_LT_16"} <= names
    assert "SQ_ACCUM_PREV_HIRES" not in names
    by_id = {dispatch_id(r): r for r in rows}
    for counter, column in [
        ("GRBM_COUNT", "GRBM_COUNT"),
        ("SQ_IFETCH_LEVEL_ACCUM", "SQ_ACCUM_PREV_HIRES"),
        ("SQ_INST_LEVEL_LDS_ACCUM", "SQ_ACCUM_PREV_HIRES_10"),
        ("SQ_INST_LEVEL_SMEM_ACCUM", "SQ_ACCUM_PREV_HIRES_11"),
        ("SQ_INST_LEVEL_VMEM_ACCUM", "SQ_ACCUM_PREV_HIRES_12"),
        ("SQ_LEVEL_WAVES_ACCUM", "SQ_ACCUM_PREV_HIRES_13"),
    ]:
        assert counters_of(profile, counter) == {i: float(r[column]) for i, r in by_id.items()}
    # every SQ_*.csv counter is already in pmc_perf.csv: no counter run adds anything
    assert not (folder / "roofline.csv").exists()
    assert [(Path(i.path).name, i.role) for i in profile.inputs] == [
        ("pmc_perf.csv", "dispatches"),
        ("sysinfo.csv", "metadata"),
    ]


@pytest.mark.parametrize(
    ("folder", "copies"),
    [
        ("rocprof-compute-mi350", {"Kernel_ID", "Kernel_ID_1", "Kernel_ID_12"}),
        ("rocprof-compute-mi300a", {"XCC_Index", "XCC_Index_3", "Correlation_ID_1", "Wave_Size_1"}),
        ("rocprof-compute-mi200", {"wave_size_1", "obj_18", "obj"}),
    ],
)
def test_fixed_columns_and_their_copies_are_no_counters(folder: str, copies: set[str]) -> None:
    names = counter_names(load([str(DATA / folder)]))
    assert copies.isdisjoint(names)
    assert "SQC_DCACHE_REQ_READ_16" in names


@pytest.mark.parametrize("folder", ["rocprof-compute-mi200", "rocprof-compute-omniperf1-mi200"])
def test_sq_runs_attach_to_the_same_dispatches(folder: str) -> None:
    """Each SQ_<LEVEL>.csv gives its level counter and SQ_ACCUM_PREV_HIRES (as <LEVEL>_ACCUM)
    to the pmc_perf.csv dispatch of the same index; counters pmc_perf.csv has keep its value."""
    path = DATA / folder
    profile = load([str(path)])
    runs = sorted(path.glob("SQ_*.csv"))
    assert [Path(i.path).name for i in profile.inputs if i.role == "counter-run"] == [
        p.name for p in runs
    ]
    for run in runs:
        level = run.stem
        rows = rows_of(run)
        assert counters_of(profile, level) == {dispatch_id(r): float(r[level]) for r in rows}
        assert counters_of(profile, f"{level}_ACCUM") == {
            dispatch_id(r): float(r["SQ_ACCUM_PREV_HIRES"]) for r in rows
        }
    pmc = rows_of(path / "pmc_perf.csv")
    assert counters_of(profile, "GRBM_COUNT") == {
        dispatch_id(r): float(r["GRBM_COUNT"]) for r in pmc
    }


def _copy(folder: str, tmp_path: Path) -> Path:
    dst = tmp_path / folder
    shutil.copytree(DATA / folder, dst)
    return dst


def test_timestamps_csv_when_pmc_perf_is_absent(tmp_path: Path) -> None:
    folder = _copy("rocprof-compute-mi200", tmp_path)
    (folder / "pmc_perf.csv").unlink()
    profile = load([str(folder)])
    roles = {Path(i.path).name: i.role for i in profile.inputs}
    assert roles["timestamps.csv"] == "dispatches"
    rows = rows_of(folder / "SQ_LEVEL_WAVES.csv")
    assert counters_of(profile, "SQ_WAVES") == {dispatch_id(r): float(r["SQ_WAVES"]) for r in rows}


def test_sq_run_with_other_rows_is_skipped(tmp_path: Path) -> None:
    folder = _copy("rocprof-compute-mi200", tmp_path)
    sq = folder / "SQ_LEVEL_WAVES.csv"
    sq.write_bytes(b"".join(sq.read_bytes().splitlines(keepends=True)[:-1]))
    profile = load([str(folder)])
    (warning,) = [w for w in profile.warnings if w.code == "counter-run-skipped"]
    assert warning.message == (
        f"{sq} has 2 dispatch rows where pmc_perf.csv has 3; "
        "its counters are not added to the dispatches"
    )
    assert counters_of(profile, "SQ_LEVEL_WAVES_ACCUM") == {}
    assert "SQ_LEVEL_WAVES.csv" not in {Path(i.path).name for i in profile.inputs}


def _edit_first_field(path: Path, line: int, text: str) -> None:
    """Replace the first field (Dispatch_ID) of one line of a CSV."""
    lines = path.read_bytes().splitlines(keepends=True)
    lines[line] = text.encode() + lines[line][lines[line].index(b",") :]
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        # two dispatches of pmc_perf.csv share id 0: a run row of id 0 names both
        (("pmc_perf.csv", 2, "0"), "cannot be matched: pmc_perf.csv repeats dispatch ids"),
        (("SQ_LEVEL_WAVES.csv", 3, "9"), "has 1 dispatch id that pmc_perf.csv does not"),
    ],
)
def test_sq_run_that_cannot_be_matched_is_skipped(
    tmp_path: Path, edit: tuple[str, int, str], why: str
) -> None:
    folder = _copy("rocprof-compute-mi200", tmp_path)
    name, line, text = edit
    _edit_first_field(folder / name, line, text)
    profile = load([str(folder)])
    skipped = [w.message for w in profile.warnings if w.code == "counter-run-skipped"]
    sq = folder / "SQ_LEVEL_WAVES.csv"
    assert f"{sq} {why}; its counters are not added to the dispatches" in skipped
    assert counters_of(profile, "SQ_LEVEL_WAVES_ACCUM") == {}


# -- measured ceilings ----------------------------------------------------------------------

ROOFLINE = [
    ("HBMBw", "memory", None, None, "hbm"),
    ("L2Bw", "memory", None, None, "l2"),
    ("L1Bw", "memory", None, None, "vl1d"),
    ("LDSBw", "memory", None, None, "lds"),
    ("FP64Flops", "compute", "fp64", "vector", None),
    ("FP32Flops", "compute", "fp32", "vector", None),
    ("MFMAF64Flops", "compute", "fp64", "matrix", None),
    ("MFMAF32Flops", "compute", "fp32", "matrix", None),
    ("MFMAF16Flops", "compute", "fp16", "matrix", None),
    ("MFMABF16Flops", "compute", "bf16", "matrix", None),
    ("MFMAI8Ops", "compute", "int8", "matrix", None),
]


@pytest.mark.parametrize(
    ("folder", "devices"), [("rocprof-compute-mi200", 4), ("rocprof-compute-omniperf1-mi200", 1)]
)
def test_roofline_csv_gives_measured_ceilings(folder: str, devices: int) -> None:
    path = DATA / folder / "roofline.csv"
    rows = rows_of(path)
    assert len(rows) == devices
    device0 = next(r for r in rows if r["device"] == "0")
    profile = load([str(DATA / folder)])
    want = {
        Ceiling(
            kind,
            float(device0[col]) * 1e9,
            f"measured: {path} ({col})",
            "measured",
            "device",
            dtype,
            unit,
            level,
        )
        for col, kind, dtype, unit, level in ROOFLINE
    }
    assert set(profile.ceilings) == want and len(profile.ceilings) == len(want)
    hbm = next(c for c in profile.ceilings if c.level == "hbm")
    assert hbm.value == float(device0["HBMBw"]) * 1e9  # 1388.9302 GB/s on the MI200 vcopy run
    differ = [w for w in profile.warnings if w.code == "roofline-devices-differ"]
    assert len(differ) == (1 if devices > 1 else 0)
    if differ:
        assert differ[0].message.endswith("the ceilings are device 0's")


def test_mi200_hbm_peak_by_hand() -> None:
    profile = load([str(DATA / "rocprof-compute-mi200")])
    assert [c.value for c in profile.ceilings if c.level == "hbm"] == [1388.9302e9]


def test_sysinfo_hbm_bw_is_no_ceiling() -> None:
    """hbm_bw (GB/s) is the tool's computed peak; without roofline.csv there is no ceiling."""
    folder = DATA / "rocprof-compute-mi300a"
    assert read_sysinfo(folder / "sysinfo.csv")["hbm_bw"] == "5324.8"
    assert load([str(folder)]).ceilings == []


def test_roofline_33_columns_zero_unsupported_and_partition_scope(tmp_path: Path) -> None:
    """The rocprof-compute 3.3 header (MALLBw, FP8/FP16/BF16, I8Ops, MFMAF4/F6/F8, each with
    Low/High); 0 means not supported; a CPX partition makes the peaks per XCD."""
    folder = _copy("rocprof-compute-mi350", tmp_path)
    peaks = {
        "HBMBw": 4100.5, "MALLBw": 9000.0, "L2Bw": 12000.0, "L1Bw": 20000.0, "LDSBw": 40000.0,
        "FP32Flops": 100.0, "FP64Flops": 80.0, "FP16Flops": 160.0, "BF16Flops": 150.0,
        "FP8Flops": 0.0, "I8Ops": 300.0, "I32Ops": 90.0, "I64Ops": 40.0,
        "MFMAF64Flops": 70.0, "MFMAF32Flops": 140.0, "MFMAF16Flops": 2000.0,
        "MFMABF16Flops": 1900.0, "MFMAF8Flops": 4000.0, "MFMAF6Flops": 0.0,
        "MFMAF4Flops": 0.0, "MFMAI8Ops": 3900.0,
    }  # fmt: skip
    header = ["device", *(f"{k}{s}" for k in peaks for s in ("", "Low", "High"))]
    values = ["0", *(str(v) for v in peaks.values() for _ in range(3))]
    (folder / "roofline.csv").write_text(",".join(header) + "\n" + ",".join(values) + "\n")
    sysinfo = folder / "sysinfo.csv"
    sysinfo.write_text(sysinfo.read_text().replace(",SPX,NPS1,", ",CPX,NPS1,"))
    profile = load([str(folder)])
    got = {(c.name, c.value, c.scope) for c in profile.ceilings}
    assert got == {
        ("hbm", 4100.5e9, "xcd"), ("mall", 9000e9, "xcd"), ("l2", 12000e9, "xcd"),
        ("vl1d", 20000e9, "xcd"), ("lds", 40000e9, "xcd"), ("fp32-vector", 100e9, "xcd"),
        ("fp64-vector", 80e9, "xcd"), ("fp16-vector", 160e9, "xcd"),
        ("bf16-vector", 150e9, "xcd"), ("int8-vector", 300e9, "xcd"),
        ("fp64-matrix", 70e9, "xcd"), ("fp32-matrix", 140e9, "xcd"),
        ("fp16-matrix", 2000e9, "xcd"), ("bf16-matrix", 1900e9, "xcd"),
        ("fp8-matrix", 4000e9, "xcd"), ("int8-matrix", 3900e9, "xcd"),
    }  # fmt: skip
    assert profile.run.partition == "CPX"


# -- sysinfo.csv --------------------------------------------------------------------------


def test_sysinfo_values_as_written() -> None:
    one = read_sysinfo(DATA / "rocprof-compute-omniperf1-mi200" / "sysinfo.csv")
    assert (one["gpu_soc"], one["numCU"], one["name"], one["hbmBW"]) == (
        "gfx90a",
        "104",
        "mi200",
        "1638.4",
    )
    three = read_sysinfo(DATA / "rocprof-compute-mi350" / "sysinfo.csv")
    assert (three["max_sclk"], three["max_mclk"], three["gpu_series"]) == ("0", "", "MI350")
    newest = read_sysinfo(DATA / "rocprof-compute-rdna35" / "sysinfo.csv")
    assert newest["workload_path"].endswith("/vcopy/RDNA35_KRACKAN2")
    assert newest["compute_partition"] == "N/A"


def test_a_pmc_perf_csv_alone_is_read_as_dispatches() -> None:
    profile = load([str(DATA / "rocprof-compute-mi300a" / "pmc_perf.csv")])
    assert [(i.role, i.format, i.rows) for i in profile.inputs] == [
        ("dispatches", "rocprof-compute-csv", 3),
        ("metadata", "rocprof-compute-sysinfo", 1),  # the sysinfo.csv beside it (issue 19)
    ]
    assert profile.run.producer == "rocprof-compute"
    assert (profile.run.gpu, profile.run.arch) == ("MI300A_A1", "gfx942")  # its gpu_model, _arch
    rows = rows_of(DATA / "rocprof-compute-mi300a" / "pmc_perf.csv")
    assert counters_of(profile, "TCC_HIT[95]") == {
        dispatch_id(r): float(r["TCC_HIT[95]"]) for r in rows
    }


# -- bad workloads: one line naming the file, what was expected and what to do ---------------


def _error(paths: list[Path]) -> str:
    with pytest.raises(InputError) as info:
        load([str(p) for p in paths])
    message = str(info.value)
    assert "\n" not in message
    return message


def test_empty_dispatch_filter() -> None:
    folder = DATA / "rocprof-compute-empty-mi200"
    assert _error([folder]) == (
        f"{folder}: is a rocprof-compute workload without dispatch rows (no pmc_perf.csv; "
        "header only: timestamps.csv, pmc_perf_3.csv); the profiled run launched no kernel "
        "that its --kernel/--dispatch filter kept; re-run rocprof-compute profile with a "
        "filter that matches"
    )


def test_sysinfo_without_values(tmp_path: Path) -> None:
    folder = _copy("rocprof-compute-mi200", tmp_path)
    sysinfo = folder / "sysinfo.csv"
    sysinfo.write_text(sysinfo.read_text().splitlines()[0] + "\n")
    assert _error([folder]) == (
        f"{sysinfo}: has no row of values under its header; re-run rocprof-compute profile "
        "(it writes sysinfo.csv when profiling starts)"
    )


def test_sysinfo_with_a_damaged_count(tmp_path: Path) -> None:
    folder = _copy("rocprof-compute-mi200", tmp_path)
    sysinfo = folder / "sysinfo.csv"
    sysinfo.write_text(sysinfo.read_text().replace(",gfx90a,16,8192,104,", ",gfx90a,16,8192,1x4,"))
    assert _error([folder]) == (
        f"{sysinfo}:2: field cu_per_gpu = '1x4' is not a whole number from 0 to 1,000,000; "
        "the file is damaged; copy it again from the workload folder"
    )


def test_roofline_with_a_bad_peak(tmp_path: Path) -> None:
    folder = _copy("rocprof-compute-mi200", tmp_path)
    roofline = folder / "roofline.csv"
    roofline.write_text(roofline.read_text().replace("0,1388.9302,", "0,fast,", 1))
    assert _error([folder]) == (
        f"{roofline}: field HBMBw = 'fast' (device 0) is not a peak in GB/s or GFLOP/s; "
        "re-run the roofline benchmark (rocprof-compute profile --roof-only)"
    )
