"""Derived counter metrics against the tools' own numbers and independent recomputation.

- Omniperf 1.0.3's speed-of-light table (``prev_analysis/201.csv``) of its MI100 test
  workload, computed by Omniperf from the same counters: every row with a value is
  reproduced to 0.1%, its Peak too. The expected values are read from 201.csv here.
- rocprof v1 derived columns (tests/data/rocprofv1-mi250x): the file's values, aggregated
  here with the csv module; the raw counters to recompute them were not collected there.
- A small synthetic profile with hand-computed values: recomputed columns beside the file's,
  absent metrics, left-out dispatches and the two aggregations.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from roofscope.analysis.counters import Counters, dispatch_counters
from roofscope.analysis.metrics.column import Column
from roofscope.analysis.metrics.derived import CATALOGUE, aggregate, metrics, peak
from roofscope.analysis.metrics.machine import Machine, machine_for
from roofscope.analysis.metrics.value import ALL, MetricValue
from roofscope.catalogue import devices
from roofscope.model.profile import Profile
from roofscope.readers.load import load
from tests.conftest import DATA, SHARED_CORPUS, insert_counters

MI100 = SHARED_CORPUS / "amd" / "omniperf-v1-2022" / "Axes1" / "mi100"
MI200 = SHARED_CORPUS / "amd" / "omniperf-v1-2022" / "Axes1" / "mi200"
V1 = DATA / "rocprofv1-mi250x"

# 201.csv row -> metric name here
SOL_ROWS = {
    "VALU FLOPs": "VALU FLOPs",
    "VALU IOPs": "VALU IOPs",
    "MFMA FLOPs (BF16)": "MFMA FLOPs (BF16)",
    "MFMA FLOPs (F16)": "MFMA FLOPs (F16)",
    "MFMA FLOPs (F32)": "MFMA FLOPs (F32)",
    "MFMA FLOPs (F64)": "MFMA FLOPs (F64)",
    "MFMA IOPs (Int8)": "MFMA IOPs (INT8)",
    "Active CUs": "Active CUs",
    "SALU Util": "SALU Utilization",
    "VALU Util": "VALU Utilization",
    "MFMA Util": "MFMA Utilization",
    "VALU Active Threads/Wave": "VALU Active Threads",
    "IPC - Issue": "IPC (Issue)",
    "LDS BW": "LDS Bandwidth",
    "LDS Bank Conflict": "LDS Bank Conflicts/Access",
    "Instr Cache Hit Rate": "Instruction Cache Hit Rate",
    "Instr Cache BW": "Instruction Cache Bandwidth",
    "Scalar L1D Cache Hit Rate": "Scalar L1D Cache Hit Rate",
    "Scalar L1D Cache BW": "Scalar L1D Cache Bandwidth",
    "Vector L1D Cache Hit Rate": "Vector L1D Cache Hit Rate",
    "Vector L1D Cache BW": "Vector L1D Cache Bandwidth",
    "L2 Cache Hit Rate": "L2 Cache Hit Rate",
    "L2-Fabric Read BW": "L2-Fabric Read Bandwidth",
    "L2-Fabric Write BW": "L2-Fabric Write Bandwidth",
    "L2-Fabric Read Latency": "L2-Fabric Read Latency",
    "L2-Fabric Write Latency": "L2-Fabric Write Latency",
    "Wave Occupancy": "Wavefront Occupancy",
    "Instr Fetch BW": "Instruction Fetch Bandwidth",
    "Instr Fetch Latency": "Instruction Fetch Latency",
}
# Omniperf took these from their own run's file: SQ_LEVEL_WAVES.csv's GRBM_GUI_ACTIVE, and
# SQ_IFETCH_LEVEL.csv's timestamps, which differ from pmc_perf.csv's (0.8% and 2.6% apart);
# the workload reader keeps each run's own as GRBM_GUI_ACTIVE@run and duration_ns@run.
# test_own_run_rows checks the formulas on the run's file alone.
OWN_RUN = {
    "Wave Occupancy": ("SQ_LEVEL_WAVES.csv", "SQ_LEVEL_WAVES_ACCUM"),
    "Instr Fetch BW": ("SQ_IFETCH_LEVEL.csv", "SQ_IFETCH_LEVEL_ACCUM"),
}


def _sol_row(folder: Path, row: str) -> dict[str, str]:
    with (folder / "prev_analysis" / "201.csv").open(newline="") as f:
        return next(r for r in csv.DictReader(f) if r["Metric"] == row)


@pytest.fixture(scope="module")
def mi100() -> tuple[Machine, dict[str, MetricValue]]:
    if not (MI100 / "prev_analysis" / "201.csv").is_file():
        pytest.skip(f"{MI100} is not beside the project")
    profile = load([str(MI100)])
    machine = machine_for(profile, devices.find("MI100"))
    return machine, metrics(profile, profile.sources("dispatches"), machine)[ALL]


def _close(got: float | None, expected: str) -> bool:
    return got is not None and got == pytest.approx(float(expected), rel=1e-3, abs=1e-12)


@pytest.mark.parametrize("row", list(SOL_ROWS))
def test_speed_of_light_value_as_omniperf(
    row: str, mi100: tuple[Machine, dict[str, MetricValue]]
) -> None:
    _, values = mi100
    expected = _sol_row(MI100, row)
    got = values.get(SOL_ROWS[row])
    if not expected["Value"]:  # Omniperf has no value: no counters, or no dispatch qualifies
        assert got is None or got.value_dispatch_mean is None
        return
    assert got is not None, f"{SOL_ROWS[row]} absent"
    assert _close(got.value_dispatch_mean, expected["Value"])
    if expected["PoP"]:
        assert _close(got.pct_of_peak, expected["PoP"])


@pytest.mark.parametrize("row", list(SOL_ROWS))
def test_speed_of_light_peak_as_omniperf(
    row: str, mi100: tuple[Machine, dict[str, MetricValue]]
) -> None:
    machine, _ = mi100
    expected = _sol_row(MI100, row)["Peak"]
    got = peak(SOL_ROWS[row], machine)
    assert got is None if not expected else _close(got, expected)


@pytest.mark.parametrize("row", list(OWN_RUN))
def test_own_run_rows(row: str, mi100: tuple[Machine, dict[str, MetricValue]]) -> None:
    """With the run's own GRBM_GUI_ACTIVE and timestamps the formulas give Omniperf's value."""
    machine, _ = mi100
    file, accum = OWN_RUN[row]
    with (MI100 / file).open(newline="") as f:
        rows = list(csv.DictReader(f))
    columns = {k: np.array([float(r[k]) for r in rows]) for k in rows[0] if k.isupper()}
    columns[accum] = columns["SQ_ACCUM_PREV_HIRES"]
    duration = np.array([float(r["EndNs"]) - float(r["BeginNs"]) for r in rows])
    metric = next(m for m in CATALOGUE if m.name == SOL_ROWS[row] and m.applies("gfx908"))
    c = Counters({k: Column(v.tolist()) for k, v in columns.items()})
    value = aggregate(metric, metric.parts(c, machine, Column(duration.tolist())), machine)
    expected = _sol_row(MI100, row)
    assert _close(value.value_dispatch_mean, expected["Value"])
    assert _close(peak(metric.name, machine), expected["Peak"])


def test_mi200_has_no_stored_analysis() -> None:
    """The corpus's MI200 copy of the same workload has no prev_analysis to compare with."""
    if not MI200.is_dir():
        pytest.skip(f"{MI200} is not beside the project")
    assert not (MI200 / "prev_analysis").exists()


def _pmc(column: str) -> np.ndarray:
    with (MI100 / "pmc_perf.csv").open(newline="") as f:
        return np.array([float(r[column]) for r in csv.DictReader(f)])


def test_aggregations_differ_where_dispatches_differ(
    mi100: tuple[Machine, dict[str, MetricValue]],
) -> None:
    _, values = mi100
    duration = _pmc("EndNs") - _pmc("BeginNs")
    r32, reads = _pmc("TCC_EA_RDREQ_32B_sum"), _pmc("TCC_EA_RDREQ_sum")
    read = values["L2-Fabric Read Bandwidth"]
    pooled = (32 * r32 + 64 * (reads - r32)).sum() / duration.sum()
    assert read.value_time_weighted == pytest.approx(pooled)  # 468 GB/s against a mean of 833
    assert read.aggregation_differs
    assert (read.dispatches, read.left_out) == (167, 0)
    threads = values["VALU Active Threads"]
    pooled = _pmc("SQ_THREAD_CYCLES_VALU").sum() / _pmc("SQ_ACTIVE_INST_VALU").sum()
    assert threads.value_time_weighted == pytest.approx(pooled)
    assert not threads.aggregation_differs
    # rocprof-compute 3.x: numActiveCUs of SUM(4 * SQ_BUSY_CU_CYCLES) / SUM(GRBM per XCD)
    busy = round(4 * _pmc("SQ_BUSY_CU_CYCLES").sum() / _pmc("GRBM_GUI_ACTIVE").sum())
    assert values["Active CUs"].value_time_weighted == min(busy / 40 * 8 + min(busy % 40, 8), 120)


def test_machine_from_omniperf1_sysinfo(mi100: tuple[Machine, dict[str, MetricValue]]) -> None:
    machine, _ = mi100
    with (MI100 / "sysinfo.csv").open(newline="") as f:
        info = next(csv.DictReader(f))
    assert machine.arch == info["gpu_soc"] == "gfx908"
    assert machine.compute_units == int(info["numCU"])
    assert machine.max_sclk_mhz == float(info["sclk"])
    assert machine.max_waves_per_cu == int(info["maxWavesPerCU"])
    assert machine.sqc_per_gpu == int(info["numSQC"])
    assert machine.hbm_bandwidth_gbs == float(info["hbmBW"])
    assert machine.l2_channels == int(info["L2Banks"])
    assert machine.num_xcd == 1 and machine.source_of("num_xcd") == "gfx908: one XCD per agent"


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        ("rocprof-compute-mi200", {"arch": "gfx90a", "num_xcd": 1, "hbm_bandwidth_gbs": 1638.4,
                                   "max_sclk_mhz": 1700.0, "lds_banks_per_cu": 32}),
        ("rocprof-compute-mi300x-rocpd", {"arch": "gfx942", "num_xcd": 8, "compute_units": 304,
                                          "max_mclk_mhz": None, "hbm_bandwidth_gbs": None}),
        ("rocprof-compute-mi350", {"arch": "gfx950", "max_sclk_mhz": None, "num_xcd": 8,
                                   "sqc_per_gpu": 64}),
        ("rocprof-compute-omniperf1-mi200", {"arch": "gfx90a", "max_mclk_mhz": 1600.0,
                                             "se_per_gpu": 8, "hbm_bandwidth_gbs": 1638.4}),
    ],
)  # fmt: skip
def test_machine_from_each_sysinfo_version(folder: str, expected: dict[str, object]) -> None:
    machine = machine_for(load([str(DATA / folder)]), None)
    assert {k: getattr(machine, k) for k in expected} == expected


def test_machine_from_run_then_catalogue() -> None:
    stencils = load([str(V1 / "stencils")])  # rocprof v1: no sysinfo, arch and CUs known
    machine = machine_for(stencils, None)
    assert (machine.arch, machine.compute_units, machine.num_xcd) == ("gfx90a", 104, 1)
    assert machine.max_sclk_mhz is None and machine.hbm_bandwidth_gbs is None
    bare = load([str(V1 / "laplacian")])  # nothing known at all
    assert machine_for(bare, None) == Machine()
    mi100 = machine_for(bare, devices.find("MI100"))
    assert (mi100.compute_units, mi100.max_sclk_mhz) == (120, 1502.0)
    assert mi100.source_of("compute_units") == "catalogue mi100"
    mi300x = machine_for(bare, devices.find("MI300X"))  # may be a partition: CUs unknown
    assert mi300x.compute_units is None and mi300x.num_xcd == 8


def test_grbm_per_xcd_on_gfx942() -> None:
    profile = load([str(DATA / "rocprof-compute-mi300x-rocpd")])
    machine = machine_for(profile, None)
    table = dispatch_counters(profile, profile.sources("dispatches"))
    assert table is not None
    c = table.counters
    valu = 100 * c["SQ_ACTIVE_INST_VALU"] / (c["GRBM_GUI_ACTIVE"] / 8 * 304)
    got = metrics(profile, profile.sources("dispatches"), machine)[ALL]["VALU Utilization"]
    assert got.value_dispatch_mean == pytest.approx(valu.mean())


# --- rocprof v1 derived columns -------------------------------------------------------------


def _column_by_kernel(path: Path, column: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            out[r["KernelName"]].append(float(r[column]))
    return out


def _names(profile: Profile) -> dict[str, int]:
    return dict(profile.con.execute("SELECT raw_name, name_id FROM names").fetchall())


def test_rocprof_v1_fetch_and_write_size_as_the_file_says() -> None:
    profile = load([str(V1 / "laplacian")])
    runs = profile.sources("counter-run")  # data_movement.csv, a run of its own (no timestamps)
    found = metrics(profile, runs, Machine(arch="gfx90a"))
    names = _names(profile)
    for column in ("FETCH_SIZE", "WRITE_SIZE"):
        per_kernel = _column_by_kernel(V1 / "laplacian" / "data_movement.csv", column)
        everything = [v for vs in per_kernel.values() for v in vs]
        whole = found[ALL][column]
        assert (whole.unit, whole.kind, whole.dispatches) == ("KiB", "amount", 1004)
        assert whole.total == pytest.approx(sum(everything))
        assert whole.value_dispatch_mean == pytest.approx(sum(everything) / len(everything))
        assert whole.value_time_weighted is None
        for kernel, values in per_kernel.items():
            assert found[names[kernel]][column].total == pytest.approx(sum(values))
        assert f"{column} (recomputed)" not in found[ALL]  # no TCC_EA_* counters collected
    # vL1D hit rate needs the atomic TCP_TCC counters: absent, not 0
    assert "Vector L1D Cache Hit Rate" not in found[ALL]
    bandwidth = found[ALL]["Vector L1D Cache Bandwidth"]  # no durations: every dispatch left out
    assert (bandwidth.value_dispatch_mean, bandwidth.dispatches, bandwidth.left_out) == (
        None,
        0,
        1004,
    )


@pytest.mark.parametrize(("column", "unit"), [("LDSBankConflict", "%"), ("LDSInsts", "instr/wave")])
def test_rocprof_v1_lds_columns_as_the_file_says(column: str, unit: str) -> None:
    profile = load([str(V1 / "stencils")])
    found = metrics(profile, profile.sources("counter-run"), machine_for(profile, None))
    names = _names(profile)
    per_kernel = _column_by_kernel(V1 / "stencils" / "bankconflicts.csv", column)
    for kernel, values in per_kernel.items():
        got = found[names[kernel]][column]
        assert (got.unit, got.kind, got.dispatches) == (unit, "level", len(values))
        assert got.value_dispatch_mean == pytest.approx(sum(values) / len(values))
        assert got.value_time_weighted is None  # this run has no timestamps
    # the raw counters (SQ_LDS_BANK_CONFLICT, SQ_INSTS_LDS, ...) were not collected
    assert f"{column} (recomputed)" not in found[ALL]


# --- a synthetic profile with values worked out by hand ------------------------------------

#                 start  end   FETCH_SIZE RDREQ RDREQ_32B HIT MISS SQ_WAVES
_DISPATCHES = [
    ("a", 0, 100, 1.0, 16, 0, 1, 1, 4),
    ("a", 200, 500, 2.5, 48, 16, 9, 1, None),
    ("b", None, None, 0.25, 8, 8, 0, 0, 4),
]  # fmt: skip


def _synthetic() -> Profile:
    profile = Profile.empty()
    ids = profile.name_ids(["a", "b"])
    profile.add_input("synthetic", "test", len(_DISPATCHES), "dispatches")
    counters = ("FETCH_SIZE", "TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum", "TCC_HIT_sum",
                "TCC_MISS_sum", "SQ_WAVES")  # fmt: skip
    for row_id, (name, start, end, *values) in enumerate(_DISPATCHES):
        profile.con.execute(
            "INSERT INTO dispatches (source, name_id, start_ns, end_ns) VALUES (0, ?, ?, ?)",
            [ids[name], start, end],
        )
        for counter, value in zip(counters, values, strict=True):
            if value is not None:
                insert_counters(profile, [(row_id, counter, value)])
    return profile


def test_synthetic_aggregations_left_out_and_absent() -> None:
    profile = _synthetic()
    found = metrics(profile, [0], Machine(arch="gfx90a", hbm_bandwidth_gbs=1000.0))
    read = found[ALL]["L2-Fabric Read Bandwidth"]  # 1024 B / 100 ns, 2560 B / 300 ns, no time
    assert read.value_dispatch_mean == pytest.approx((1024 / 100 + 2560 / 300) / 2)
    assert read.value_time_weighted == pytest.approx((1024 + 2560) / 400)
    assert (read.dispatches, read.left_out, read.aggregation_differs) == (2, 1, True)
    assert read.pct_of_peak == pytest.approx(100 * read.value_dispatch_mean / 1000)
    hits = found[ALL]["L2 Cache Hit Rate"]  # 50% and 90%; the third has no L2 access
    assert (hits.value_dispatch_mean, hits.value_time_weighted) == (
        pytest.approx(70),
        pytest.approx(1000 / 12),
    )
    assert (hits.dispatches, hits.left_out) == (2, 1)
    fetch, recomputed = found[ALL]["FETCH_SIZE"], found[ALL]["FETCH_SIZE (recomputed)"]
    assert fetch.total == recomputed.total == pytest.approx(1.0 + 2.5 + 0.25)
    assert found[_names(profile)["a"]]["FETCH_SIZE (recomputed)"].total == pytest.approx(3.5)
    # missing counters: absent, never 0 (no WRREQ; SQ_WAVES lacks a dispatch; no GRBM)
    for absent in ("L2-Fabric Write Bandwidth", "Wavefronts (recomputed)", "VALU Utilization"):
        assert absent not in found[ALL]


def test_arch_specific_metrics_need_the_arch() -> None:
    found = metrics(_synthetic(), [0], Machine())
    assert "L2-Fabric Read Bandwidth" not in found[ALL]  # 64 or 128-byte reads: arch unknown
    assert "FETCH_SIZE" in found[ALL]  # the file's own column needs no arch


def test_per_dispatch_values() -> None:
    metric = next(m for m in CATALOGUE if m.name == "L2 Cache Hit Rate" and m.applies("gfx90a"))
    c = Counters({"TCC_HIT_sum": Column([1.0, 9.0, 0.0]), "TCC_MISS_sum": Column([1.0, 1, 0])})
    values = metric.per_dispatch(c, Machine(), Column([1.0, 1.0, 1.0]))
    assert values.tolist()[:2] == [50.0, 90.0] and math.isnan(values[2])


def test_rocprofv3_summed_instances_stand_for_sum_columns() -> None:
    """rocprofv3 reports TCC_HIT per instance; summed, it is rocprof-compute's TCC_HIT_sum."""
    c = Counters({"TCC_HIT": Column([30.0]), "TCC_MISS": Column([10.0])})
    assert c["TCC_HIT_sum"][0] == 30.0 and "TCC_MISS_sum" in c
    assert "TCC_EA_RDREQ_sum" not in c
    metric = next(m for m in CATALOGUE if m.name == "L2 Cache Hit Rate" and m.applies("gfx942"))
    num, den = metric.parts(c, Machine(arch="gfx942"), Column([1.0]))
    assert float(num[0] / den[0]) == 75.0  # 100 * 30 / (30 + 10)
