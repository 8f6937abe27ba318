"""roofscope's speed-of-light metrics against rocprof-compute 3.3.0's own System Speed-of-Light
tables of the same vcopy workloads (tests/data/rocprof-compute-3.3.0-sol, written by its
``analyze --save-dfs``; see that folder's PROVENANCE.md), and the deliberate difference in
Wavefront Occupancy worked by hand from the counters (docs/rocprof-compute.md).

MI200 is read from tests/data (whole files); MI100, MI300A_A1 and the two MI300X workloads from
the shared corpus, skipped where it is not beside the project.
"""

from __future__ import annotations

import csv
import json
import shutil
from functools import cache
from html import escape
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from roofscope.analysis.counters import Counters
from roofscope.analysis.metrics.column import Column
from roofscope.analysis.metrics.derived import CATALOGUE, metrics, peak
from roofscope.analysis.metrics.machine import Machine, machine_for
from roofscope.analysis.metrics.value import ALL, MetricValue
from roofscope.readers.load import load
from roofscope.render.report.text import render_text
from roofscope.report import analyse
from tests.conftest import DATA, SHARED_CORPUS, run_json

TABLES = DATA / "rocprof-compute-3.3.0-sol"
VCOPY = SHARED_CORPUS / "amd" / "rocprof-compute-vcopy-2025"
WORKLOADS = {
    "mi100": VCOPY / "MI100",
    "mi200": DATA / "rocprof-compute-mi200",
    "mi300a": VCOPY / "MI300A_A1",
    "mi350": DATA / "rocprof-compute-mi350",
    "mi300x": VCOPY / "MI300X_A1",
    "mi300x-rocpd": VCOPY / "MI300X_A1_rocpd",
}
OCCUPANCY, PEER = "Wavefront Occupancy", "Wavefront Occupancy (rocprof-compute)"


def _folder(workload: str) -> Path:
    """The workload's folder; the test is skipped where the corpus is not beside the project."""
    folder = WORKLOADS[workload]
    if not folder.is_dir():
        pytest.skip(f"{folder} is not beside the project")
    return folder


@cache
def _values(workload: str) -> dict[str, MetricValue]:
    folder = _folder(workload)
    profile = load([str(folder)])
    return metrics(profile, profile.sources("dispatches"), machine_for(profile, None))[ALL]


def _table(workload: str) -> dict[str, dict[str, str]]:
    with (TABLES / f"{workload}.csv").open(newline="") as f:
        return {r["Metric"]: r for r in csv.DictReader(f)}


def _six(value: float | None) -> float:
    """As rocprof-compute printed it with --decimal 6."""
    assert value is not None
    return round(value, 6)


@pytest.mark.parametrize("workload", list(WORKLOADS))
@pytest.mark.parametrize("row", ["VMEM Utilization", "Branch Utilization"])
def test_unit_utilisation_as_rocprof_compute(workload: str, row: str) -> None:
    expected, values = _table(workload)[row], _values(workload)
    if workload == "mi100":  # gfx908: no formula in rocprof-compute's table, none here
        assert expected["Avg"] == "" and row not in values
        return
    got = values[row]
    assert (got.unit, got.peak) == ("%", float(expected["Peak"]))
    assert _six(got.value_dispatch_mean) == float(expected["Avg"])
    assert _six(got.pct_of_peak) == float(expected["Pct of Peak"])


# rocprof-compute's row names that differ from roofscope's
ALIAS = {
    "MFMA IOPs (Int8)": "MFMA IOPs (INT8)",
    "Theoretical LDS Bandwidth": "LDS Bandwidth",
    "vL1D Cache Hit Rate": "Vector L1D Cache Hit Rate",
    "vL1D Cache BW": "Vector L1D Cache Bandwidth",
    "L2 Cache BW": "L2 Cache Bandwidth",
    "L2-Fabric Read BW": "L2-Fabric Read Bandwidth",
    "L2-Fabric Write BW": "L2-Fabric Write Bandwidth",
    "sL1D Cache Hit Rate": "Scalar L1D Cache Hit Rate",
    "sL1D Cache BW": "Scalar L1D Cache Bandwidth",
    "L1I Hit Rate": "Instruction Cache Hit Rate",
    "L1I BW": "Instruction Cache Bandwidth",
    "L1I Fetch Latency": "Instruction Fetch Latency",
}
COLUMNS = (("Avg", "value_dispatch_mean"), ("Peak", "peak"), ("Pct of Peak", "pct_of_peak"))
# the cells that differ on purpose (docs/rocprof-compute.md), each tested below
_VALUE = {"Avg", "Pct of Peak"}
ON_PURPOSE = {
    **{(w, "Wavefront Occupancy"): _VALUE for w in ("mi100", "mi200", "mi300a", "mi300x")},
    ("mi200", "L2 Cache BW"): {"Peak", "Pct of Peak"},
    **{(w, f"L2-Fabric {x} BW"): {"Peak"} for w in ("mi300a",) for x in ("Read", "Write")},
    **{("mi100", f"L2-Fabric {x}"): _VALUE for x in ("Read BW", "Write BW")},
    **{("mi100", f"L2-Fabric {x} Latency"): _VALUE for x in ("Read", "Write")},
}


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_every_row_as_rocprof_compute_or_documented(workload: str) -> None:
    values = _values(workload)
    for row, expected in _table(workload).items():
        got = values.get(ALIAS.get(row, row))
        if "Avg" in ON_PURPOSE.get((workload, row), ()):
            continue
        if expected["Avg"] == "":  # counters not collected: no value (it still prints a peak)
            assert got is None or got.value_dispatch_mean is None, row
            continue
        assert got is not None, row
        if expected["Avg"] == "inf":  # End == Start (MI300X_A1): left out of the rate here
            assert (got.value_dispatch_mean, got.dispatches, got.left_out) == (None, 0, 3), row
            continue
        for column, attr in COLUMNS:
            if column in ON_PURPOSE.get((workload, row), ()):
                continue
            cell, value = expected[column], getattr(got, attr)
            assert _agrees(workload, column, cell, value, got.kind), (row, column)


def _agrees(workload: str, column: str, cell: str, value: float | None, kind: str) -> bool:
    if workload == "mi350" and column != "Avg" and cell in ("0.0", "inf") and value is None:
        return True  # its sysinfo's max_sclk is 0: a peak of 0 there, unknown here
    if cell == "" or value is None:
        return cell == "" and value is None
    if workload == "mi350" and column == "Avg" and kind == "rate":  # durations in whole ns
        return value == pytest.approx(float(cell), rel=2e-5)
    return _six(value) == float(cell)


def test_l2_peak_on_mi200_at_128_bytes_per_channel_clock() -> None:
    """1700 MHz x 32 channels x 128 B; rocprof-compute's gfx90a peak counts 64 B, half, below
    the L2 bandwidth the workload's own roofline.csv measured (5018.2891 GB/s, device 0)."""
    got, theirs = _values("mi200")["L2 Cache Bandwidth"], _table("mi200")["L2 Cache BW"]
    assert got.peak == pytest.approx(1700 * 32 * 128 / 1000) == 6963.2
    assert float(theirs["Peak"]) == 1700 * 32 * 64 / 1000 < 5018.2891 < got.peak
    assert _six(got.value_dispatch_mean) == float(theirs["Avg"])  # the value agrees
    assert got.pct_of_peak == pytest.approx(float(theirs["Pct of Peak"]) / 2, abs=1e-6)


def test_unit_utilisation_by_hand() -> None:
    """The vcopy workloads count no SQ_ACTIVE_INST_VMEM (all 0): both terms, worked by hand.
    CU cycles = 800 / 8 XCDs x 10 CUs = 1000; VMEM 100 x (300 + 100) / 1000 = 40 %, Branch
    100 x 50 / 1000 = 5 %."""
    c = Counters({
        "SQ_ACTIVE_INST_FLAT": Column([300.0]), "SQ_ACTIVE_INST_VMEM": Column([100.0]),
        "SQ_ACTIVE_INST_MISC": Column([50.0]), "GRBM_GUI_ACTIVE": Column([800.0]),
    })  # fmt: skip
    m = Machine(arch="gfx942", compute_units=10, num_xcd=8)
    wanted = ("VMEM Utilization", "Branch Utilization")
    units = [x for x in CATALOGUE if x.name in wanted and x.applies(m.arch)]
    got = {x.name: x.per_dispatch(c, m, Column([1.0])) for x in units}
    assert (got["VMEM Utilization"][0], got["Branch Utilization"][0]) == (40.0, 5.0)


def test_unit_utilisation_absent_on_gfx908() -> None:
    """rocprof-compute's gfx908 table has ``value: None`` for both rows."""
    mi100 = Machine(arch="gfx908", compute_units=120, num_xcd=1)
    assert peak("VMEM Utilization", mi100) is None and peak("Branch Utilization", mi100) is None
    assert peak("VMEM Utilization", Machine(arch="gfx90a")) == 100


def _columns(path: Path, *names: str) -> dict[str, np.ndarray]:
    """Columns of a wide workload CSV; a name repeated in the header: its first column, as
    pandas (and so rocprof-compute) reads it."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    return {n: np.array([float(r[rows[0].index(n)]) for r in rows[1:]]) for n in names}


# (workload, XCDs): waves of SQ_LEVEL_WAVES.csv over its own GRBM_GUI_ACTIVE (roofscope) or
# over pmc_perf.csv's (rocprof-compute), per XCD, mean over the 3 dispatches
@pytest.mark.parametrize(
    ("workload", "xcds"), [("mi100", 1), ("mi200", 1), ("mi300a", 6), ("mi300x", 8)]
)
def test_wavefront_occupancy_note_and_rocprof_compute_value(workload: str, xcds: int) -> None:
    folder = WORKLOADS[workload]
    values = _values(workload)
    own = _columns(folder / "SQ_LEVEL_WAVES.csv", "SQ_ACCUM_PREV_HIRES", "GRBM_GUI_ACTIVE")
    other = _columns(folder / "pmc_perf.csv", "GRBM_GUI_ACTIVE")["GRBM_GUI_ACTIVE"]
    ours = (own["SQ_ACCUM_PREV_HIRES"] / (own["GRBM_GUI_ACTIVE"] / xcds)).mean()
    theirs = (own["SQ_ACCUM_PREV_HIRES"] / (other / xcds)).mean()
    occupancy, peer = values[OCCUPANCY], values[PEER]
    assert occupancy.value_dispatch_mean == pytest.approx(ours, rel=1e-12)
    assert peer.value_dispatch_mean == pytest.approx(theirs, rel=1e-12)
    assert _six(peer.value_dispatch_mean) == float(_table(workload)[OCCUPANCY]["Avg"])
    assert occupancy.peer == PEER and peer.peak == occupancy.peak
    assert occupancy.note is not None and "that pass's own GRBM_GUI_ACTIVE" in occupancy.note
    assert peer.note is None and peer.peer is None


def test_wavefront_occupancy_hand_values() -> None:
    """The numbers themselves: 0.5 % apart on MI100, 2.9 % on MI200, 3.2x on MI300A_A1, 5.6x on
    MI300X_A1."""
    mi100, mi300a = _values("mi100"), _values("mi300a")
    assert round(mi100[OCCUPANCY].value_dispatch_mean or 0, 2) == 2239.61
    assert round(mi100[PEER].value_dispatch_mean or 0, 2) == 2229.11
    assert round(mi300a[OCCUPANCY].value_dispatch_mean or 0, 2) == 1381.18
    assert round(mi300a[PEER].value_dispatch_mean or 0, 2) == 432.10
    mi200 = _values("mi200")
    assert round(mi200[OCCUPANCY].value_dispatch_mean or 0, 2) == 1816.75
    assert round(mi200[PEER].value_dispatch_mean or 0, 2) == 1765.97
    mi300x = _values("mi300x")
    assert round(mi300x[OCCUPANCY].value_dispatch_mean or 0, 2) == 2563.26
    assert round(mi300x[PEER].value_dispatch_mean or 0, 2) == 456.70


def test_wavefront_occupancy_without_the_pass_clock_is_rocprof_computes() -> None:
    """rocpd: the SQ_LEVEL_WAVES pass has no GRBM_GUI_ACTIVE of its own, so both tools divide
    by the one the file has; no note, no second value."""
    values = _values("mi300x-rocpd")
    occupancy = values[OCCUPANCY]
    assert _six(occupancy.value_dispatch_mean) == float(_table("mi300x-rocpd")[OCCUPANCY]["Avg"])
    assert (occupancy.note, occupancy.peer) == (None, None)
    assert PEER not in values


def test_note_in_terminal_json_and_html(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = WORKLOADS["mi200"]
    html = tmp_path / "r.html"
    doc = run_json(capsys, str(folder), "--html", str(html))
    schema = resources.files("roofscope").joinpath("schema/report-v1.schema.json").read_text()
    jsonschema.Draft202012Validator(json.loads(schema)).validate(doc)
    (kernel,) = doc["kernels"]
    occupancy = kernel["metrics"][OCCUPANCY]
    assert occupancy["peer"] == PEER and "another pass" in occupancy["note"]
    assert round(kernel["metrics"][PEER]["value_dispatch_mean"], 6) == 1765.965389
    assert kernel["metrics"]["VMEM Utilization"]["note"] is None
    # 1765.97 to 3 significant figures, no exponent (it read "1.77e+03 waves [1.79e+03]")
    line = f"{OCCUPANCY}: {occupancy['note']}, which gives 1,770 waves [1,790 waves]"
    page = html.read_text(encoding="utf-8")
    assert f'<small class="note">{escape(line.split(": ", 1)[1])}</small>' in page
    text = render_text(analyse(load([str(folder)])), width=1000).splitlines()
    assert f"    {line}" in text


def test_rocprof_computes_occupancy_above_peak_is_no_validity_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """MI200 with pmc_perf.csv's GRBM_GUI_ACTIVE divided by 4: rocprof-compute's way gives 4 x
    1765.97 = 7063.86 waves, 212 % of the 3328 slots; roofscope's value (SQ_LEVEL_WAVES.csv's
    own clock) is unchanged and no finding rests on the other tool's number."""
    folder = tmp_path / "mi200"
    shutil.copytree(WORKLOADS["mi200"], folder)
    with (folder / "pmc_perf.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    i = rows[0].index("GRBM_GUI_ACTIVE")
    for r in rows[1:]:
        r[i] = str(int(r[i]) / 4)
    with (folder / "pmc_perf.csv").open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    doc = run_json(capsys, str(folder))
    (kernel,) = doc["kernels"]
    peer, occupancy = kernel["metrics"][PEER], kernel["metrics"][OCCUPANCY]
    assert round(peer["value_dispatch_mean"], 2) == round(4 * 1765.965389, 2)
    assert peer["pct_of_peak"] > 200
    assert round(occupancy["value_dispatch_mean"], 2) == 1816.75
    assert not [f for f in doc["findings"] if f["rule"] == "metric-above-peak"]


def test_l2_fabric_on_mi100_where_rocprof_compute_has_none() -> None:
    """rocprof-compute 3.3.0's gfx908 table reads TCC_EA0_RDREQ_* (the gfx94x names), which a
    gfx908 profile does not have: no value. roofscope reads TCC_EA_RDREQ_* as Omniperf 1.0.3
    did; by hand: mean of (32 x RDREQ_32B + 64 x (RDREQ - RDREQ_32B)) / (End - Start)."""
    folder = _folder("mi100")
    names = ("TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum", "Start_Timestamp", "End_Timestamp")
    c = _columns(folder / "pmc_perf.csv", *names)
    with (folder / "pmc_perf.csv").open(newline="") as f:
        assert not [n for n in next(csv.reader(f)) if n.startswith("TCC_EA0_")]
    r32, reads = c["TCC_EA_RDREQ_32B_sum"], c["TCC_EA_RDREQ_sum"]
    rate = (32 * r32 + 64 * (reads - r32)) / (c["End_Timestamp"] - c["Start_Timestamp"])
    got = _values("mi100")["L2-Fabric Read Bandwidth"]
    assert got.value_dispatch_mean == pytest.approx(rate.mean(), rel=1e-12)
    assert _table("mi100")["L2-Fabric Read BW"]["Avg"] == ""


def test_hbm_peak_on_mi300a_from_the_profiles_sysinfo() -> None:
    """sysinfo.csv's hbm_bw (5324.8 GB/s, AMD's 5.3 TB/s) against rocprof-compute 3.3.0's
    recomputed max_mclk x 32 B x num_hbm_channels = 1300 x 32 x 96 / 1000 = 3993.6 GB/s."""
    with (_folder("mi300a") / "sysinfo.csv").open(newline="") as f:
        info = next(csv.DictReader(f))
    got = _values("mi300a")["L2-Fabric Read Bandwidth"]
    assert got.peak == float(info["hbm_bw"]) == 5324.8
    theirs = float(_table("mi300a")["L2-Fabric Read BW"]["Peak"])
    assert theirs == pytest.approx(1300 * 32 * 96 / 1000) == 3993.6
    assert (info["max_mclk"], info["num_hbm_channels"]) == ("1300", "96")


def test_mi350_rates_from_whole_ns_durations() -> None:
    """rocprof-compute 3.1 wrote each Start/End as a mean over passes (…386.5); roofscope
    keeps whole ns (half up), rocprof-compute the floats: VALU IOPs 5 ppm apart, by hand."""
    names = ("SQ_INSTS_VALU_INT32", "SQ_INSTS_VALU_INT64", "Start_Timestamp", "End_Timestamp")
    c = _columns(WORKLOADS["mi350"] / "pmc_perf.csv", *names)
    iops = 64 * (c["SQ_INSTS_VALU_INT32"] + c["SQ_INSTS_VALU_INT64"])
    floats = c["End_Timestamp"] - c["Start_Timestamp"]
    whole = np.floor(c["End_Timestamp"] + 0.5) - np.floor(c["Start_Timestamp"] + 0.5)
    assert _six((iops / floats).mean()) == float(_table("mi350")["VALU IOPs"]["Avg"]) == 287.226112
    got = _values("mi350")["VALU IOPs"].value_dispatch_mean
    assert got == pytest.approx((iops / whole).mean(), rel=1e-12)
    assert round(got or 0, 6) == 287.224586
