"""Roofline arithmetic against values worked out by hand, and its invariants."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofscope.analysis.roofline import _kernel
from roofscope.analysis.work.model import Work
from roofscope.catalogue.ceilings import Ceiling
from tests.conftest import DATA, PEAKS, SUMMARY, SUMMARY_WORK, kernels_by_name, run_json


def test_the_issue_example(capsys: pytest.CaptureFixture[str]) -> None:
    """Shares, intensities, efficiencies and bounds of the issue, computed by hand.

    Total time 5.8 ms; ridge = 22.6e12 / 1.6e12 = 14.125 FLOP/B. For each kernel:
    intensity = FLOPs / bytes, achieved = FLOPs / time, attainable = min(22.6e12,
    1.6e12 * intensity), e.g. vector_add 1e9 / 8e8 = 1.25 FLOP/B, 312.5 GFLOP/s achieved
    of 2 TFLOP/s attainable = 15.6 %, memory-bound; mat_mul 43.3 FLOP/B is past the ridge:
    20 TFLOP/s of 22.6 = 88.5 %, compute-bound.
    """
    doc = run_json(capsys, str(SUMMARY), *SUMMARY_WORK, *PEAKS)
    k = kernels_by_name(doc)
    expected = {
        # name: (share, intensity, efficiency, bound, achieved, attainable)
        "vector_add": (3.2 / 5.8, 1.25, 1e9 / 3.2e-3 / 2.0e12, "memory", 1e9 / 3.2e-3, 2.0e12),
        "mat_mul": (1.3 / 5.8, 2.6e10 / 6e8, 2.6e10 / 1.3e-3 / 22.6e12, "compute", 2e13, 22.6e12),
        "softmax": (0.8 / 5.8, 6.25, 4e9 / 0.8e-3 / 1e13, "memory", 5e12, 1.6e12 * 6.25),
        "layer_norm": (0.5 / 5.8, 7.5, 1.8e9 / 0.5e-3 / 1.2e13, "memory", 3.6e12, 1.6e12 * 7.5),
    }
    assert [n for n in k] == ["vector_add", "mat_mul", "softmax", "layer_norm"]
    for name, (share, ai, eff, bound, achieved, attainable) in expected.items():
        r = k[name]["roofline"]
        assert k[name]["share"] == pytest.approx(share, rel=1e-12)
        assert r["ai"]["hbm"] == pytest.approx(ai, rel=1e-12)
        assert r["efficiency"] == pytest.approx(eff, rel=1e-12)
        assert r["bound"] == bound
        assert r["achieved_flops_s"] == pytest.approx(achieved, rel=1e-12)
        assert r["attainable_flops_s"] == pytest.approx(attainable, rel=1e-12)
        assert r["work_source"] == f"--work {name}"
    # the figures as the issue prints them
    rounded = {n: (round(100 * k[n]["share"], 1), round(k[n]["roofline"]["ai"]["hbm"], 2),
                   round(100 * k[n]["roofline"]["efficiency"], 1)) for n in k}  # fmt: skip
    assert rounded == {
        "vector_add": (55.2, 1.25, 15.6),
        "mat_mul": (22.4, 43.33, 88.5),
        "layer_norm": (8.6, 7.5, 30.0),
        "softmax": (13.8, 6.25, 50.0),
    }
    device = doc["device"]
    assert device["ridge_flop_per_byte"] == {"hbm": pytest.approx(14.125, rel=1e-12)}
    assert [(c["name"], c["value"], c["source"], c["origin"]) for c in device["ceilings"]] == [
        ("fp32-vector", 22.6e12, "user: --peak-flops", "user"),
        ("hbm", 1.6e12, "user: --peak-bw", "user"),
    ]
    assert device["problem"] is None


def test_without_ceilings_the_hotspots_still_run(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(SUMMARY), *SUMMARY_WORK)
    assert doc["summary"]["kernels"] == 4
    assert doc["device"]["problem"].startswith("no roofline: the GPU is not known from the profile")
    assert "pass --gpu NAME" in doc["device"]["problem"]
    vector_add = kernels_by_name(doc)["vector_add"]["roofline"]
    assert vector_add["efficiency"] is None and vector_add["ai"] == {"hbm": 1.25}


def test_ceilings_file_overrides_the_command_line_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """User values all rank first; a file adds data types the flags cannot name."""
    path = tmp_path / "mine.toml"
    path.write_text(
        '[provenance]\nmethod = "stream triad"\n[ceilings]\nhbm = 2.0e12\n"fp16-matrix" = 181e12\n',
        encoding="utf-8",
    )
    doc = run_json(capsys, str(SUMMARY), "--work", "mat_mul=2.6e10:6.0e8@fp16-matrix",
                   "--ceilings", str(path))  # fmt: skip
    r = kernels_by_name(doc)["mat_mul"]["roofline"]
    assert r["ceiling"] == "fp16-matrix"
    assert r["attainable_flops_s"] == pytest.approx(min(181e12, 2.0e12 * 2.6e10 / 6e8))
    assert r["bound"] == "memory"  # 43.3 FLOP/B < 181 / 2 = 90.5
    sources = {c["name"]: c["source"] for c in doc["device"]["ceilings"]}
    assert sources == {
        "fp16-matrix": f"user: {path} (stream triad)",
        "hbm": f"user: {path} (stream triad)",
    }


def test_work_file_per_call_over_launch_fields(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """laplacian results.csv: every launch of the kernel has grd 16777216 (checked below)."""
    trace = DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv"
    work = tmp_path / "work.toml"
    work.write_text(
        "[constants]\nBYTES_PER_POINT = 16\n\n"
        '[[kernel]]\nmatch = "laplacian"\nper = "call"\n'
        'flops = "9 * grid_size"\nbytes = "BYTES_PER_POINT * grid_size"\n',
        encoding="utf-8",
    )
    doc = run_json(capsys, str(trace), "--work", str(work), *PEAKS)
    lap = next(k for k in doc["kernels"] if "laplacian" in k["name"])
    calls, grid = lap["calls"], _grid_of(trace, "laplacian")
    r = lap["roofline"]
    assert r["flops"] == 9 * grid * calls
    assert r["bytes"] == {"hbm": 16 * grid * calls}
    assert r["ai"]["hbm"] == pytest.approx(9 / 16)
    assert r["achieved_flops_s"] == pytest.approx(9 * grid * calls / lap["total_s"])
    assert r["work_source"] == f"{work} [[kernel]] #1"


def _grid_of(path: Path, needle: str) -> int:
    import csv

    with path.open(newline="") as f:
        grids = {int(r["grd"]) for r in csv.DictReader(f) if needle in r["KernelName"]}
    assert len(grids) == 1
    return grids.pop()


# -- properties ---------------------------------------------------------------------------

CEILINGS = {
    "fp32-vector": Ceiling("compute", 22.6e12, "t", "user", dtype="fp32", unit="vector"),
    "fp64-vector": Ceiling("compute", 11.3e12, "t", "user", dtype="fp64", unit="vector"),
}
MEMORY = {
    "hbm": Ceiling("memory", 1.6e12, "t", "user", level="hbm"),
    "l2": Ceiling("memory", 6.0e12, "t", "user", level="l2"),
}
positive = st.floats(1e3, 1e16, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    flops=positive,
    hbm=positive,
    l2=positive,
    time_s=st.floats(1e-9, 10),
    dtype=st.sampled_from(["fp32-vector", "fp64-vector"]),
)
def test_roofline_invariants(
    flops: float, hbm: float, l2: float, time_s: float, dtype: str
) -> None:
    w = Work({dtype: flops}, {"hbm": hbm, "l2": l2}, "t")
    k = _kernel("k", 1, time_s, w, CEILINGS, MEMORY)
    assert k.attainable_flops_s is not None and k.efficiency is not None
    assert k.attainable_flops_s <= CEILINGS[dtype].value * (1 + 1e-12)
    for level, ceiling in MEMORY.items():
        assert k.attainable_flops_s <= ceiling.value * k.intensity[level] * (1 + 1e-12)
    assert k.efficiency >= 0
    assert k.bound == ("memory" if k.limiting_level else "compute")
    doubled = _kernel(
        "k", 1, time_s, Work({dtype: flops}, {"hbm": 2 * hbm, "l2": l2}, "t"), CEILINGS, MEMORY
    )
    assert doubled.intensity["hbm"] <= k.intensity["hbm"]
    assert doubled.attainable_flops_s is not None
    assert doubled.attainable_flops_s <= k.attainable_flops_s * (1 + 1e-12)


def test_kernels_without_flops_are_placed_by_bandwidth() -> None:
    copy = _kernel(
        "copy",
        10,
        1e-3,
        Work({"fp32-vector": 0.0}, {"hbm": 1.2e9, "l2": 1.2e9}, "t"),
        CEILINGS,
        MEMORY,
    )
    assert copy.placed_by == "bandwidth" and copy.bound == "memory"
    assert copy.limiting_level == "hbm"  # 1.2e12 B/s is 75 % of HBM, 20 % of L2
    assert copy.efficiency == pytest.approx(0.75)
    unknown = _kernel("copy", 10, 1e-3, Work(None, {"hbm": 1.2e9}, "counters"), CEILINGS, MEMORY)
    assert unknown.flops is None and unknown.achieved_flops_s is None
    assert unknown.efficiency == pytest.approx(0.75) and unknown.bound == "memory"


# -- which GPU ------------------------------------------------------------------------------


def test_demo_gpu_is_one_mi250_gcd(capsys: pytest.CaptureFixture[str]) -> None:
    """results.sysinfo.txt says "AMD Instinct MI250X/MI250", gfx90a, 104 compute units: an
    MI250 GCD (208 CUs / 2; an MI250X GCD has 110, an MI210 is not an MI250X/MI250)."""
    from tests.conftest import DEMO

    doc = run_json(capsys, str(DEMO))
    device = doc["device"]
    assert (device["key"], device["arch"], device["scope"]) == ("mi250", "gfx90a", "gcd")
    assert device["detected_from"] == "profile: AMD Instinct MI250X/MI250 / gfx90a with 104 CUs"
    values = {c["name"]: c["value"] for c in device["ceilings"]}
    # gpu_specs_research.csv, MI250 row: 3200 GB/s, FP64 vector 45.3 TF, FP16 matrix 362.1 TF
    assert values["hbm"] == pytest.approx(3200e9 / 2)
    assert values["fp64-vector"] == pytest.approx(45.3e12 / 2)
    assert values["fp16-matrix"] == pytest.approx(362.1e12 / 2)
    assert all(c["origin"] == "catalogue" and c["scope"] == "gcd" for c in device["ceilings"])
    assert device["problem"].startswith("no roofline: no kernel has known work")


def test_gpu_option_and_its_errors(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(SUMMARY), "--gpu", "AMD Instinct MI100", *SUMMARY_WORK)
    assert doc["device"]["key"] == "mi100" and doc["device"]["detected_from"] == "--gpu"
    mat_mul = kernels_by_name(doc)["mat_mul"]["roofline"]
    assert mat_mul["ceiling"] == "fp32-vector"
    assert mat_mul["efficiency"] == pytest.approx(2.6e10 / 1.3e-3 / 23.1e12)  # MI100 FP32 23.1 TF
    # a user's --peak-bw beats the catalogue's 1228 GB/s; the rest stays from the catalogue
    doc = run_json(capsys, str(SUMMARY), "--gpu", "mi100", "--peak-bw", "1.0e12", *SUMMARY_WORK)
    origins = {c["name"]: c["origin"] for c in doc["device"]["ceilings"]}
    assert origins["hbm"] == "user" and origins["fp32-vector"] == "catalogue"
    from roofscope.cli.app import main

    assert main(["analyze", str(SUMMARY), "--gpu", "mi2"]) == 2
    err = capsys.readouterr().err
    assert (
        err.strip() == "roofscope: error: --gpu 'mi2' is not in the catalogue; other parts of its "
        "generation: mi210, mi250, mi250x; `roofscope devices` lists every GPU, or pass "
        "--peak-flops and --peak-bw"
    )


def test_devices_command(capsys: pytest.CaptureFixture[str]) -> None:
    import csv

    from roofscope.cli.app import main

    assert main(["devices"]) == 0
    listed = capsys.readouterr().out.strip().splitlines()
    table = Path(__file__).parents[1] / "data" / "gpus"
    keys = set()
    for path in table.glob("*.csv"):
        if path.name != "archs.csv" and not path.name.endswith(".sources.csv"):
            with path.open(newline="", encoding="utf-8") as f:
                keys |= {r["device"] for r in csv.DictReader(f)}
    assert len(listed) == len(keys)
    assert main(["devices", "mi100"]) == 0
    shown = capsys.readouterr().out
    assert "fp32-vector" in shown and "23.1 TFLOP/s" in shown
    assert "ROCm" in shown and "  CUs = 120  [AMD " in shown


# -- work from counters --------------------------------------------------------------------

OMNIPERF_MI100 = Path(__file__).parents[2] / "shared/corpus/amd/omniperf-v1-2022/Axes1/mi100"


def _omniperf_value(folder: Path, panel: str, metric: str) -> float:
    import csv

    with (folder / "prev_analysis" / f"{panel}.csv").open(newline="") as f:
        return float(next(r for r in csv.DictReader(f) if r["Metric"] == metric)["Value"])


@pytest.mark.skipif(not OMNIPERF_MI100.is_dir(), reason="needs ../shared/corpus")
def test_hbm_bandwidth_as_omniperf_computes_it(capsys: pytest.CaptureFixture[str]) -> None:
    """Omniperf 1.x averages per-dispatch rates: its L2-Fabric Read/Write BW (201.csv, GB/s)."""
    doc = run_json(capsys, str(OMNIPERF_MI100))
    q = doc["traffic"]["quantities"]
    read = _omniperf_value(OMNIPERF_MI100, "201", "L2-Fabric Read BW")
    write = _omniperf_value(OMNIPERF_MI100, "201", "L2-Fabric Write BW")
    assert q["hbm-read"]["dispatch_mean_per_s"] == pytest.approx(read * 1e9, rel=1e-3)
    assert q["hbm-write"]["dispatch_mean_per_s"] == pytest.approx(write * 1e9, rel=1e-3)
    # the time-weighted figure is reported beside it, and is total bytes over total time
    time_s = doc["traffic"]["time_s"]
    assert q["hbm-read"]["time_weighted_per_s"] == pytest.approx(q["hbm-read"]["total"] / time_s)
    assert doc["traffic"]["dispatches"] == 167
    # gfx908 has no FLOP counters: unknown, never zero, and said so
    assert doc["device"]["key"] == "mi100"
    assert all(k["roofline"]["flops"] is None for k in doc["kernels"] if k["roofline"])
    assert "no-flop-counters" in {w["code"] for w in doc["warnings"]}


# -- rocprof-compute vcopy on five GPUs ------------------------------------------------------

VCOPY = Path(__file__).parents[2] / "shared/corpus/amd/rocprof-compute-vcopy-2025"


def _vcopy(doc: dict[str, object]) -> dict[str, object]:
    kernels = doc["kernels"]
    assert isinstance(kernels, list)
    found: dict[str, object] = next(k for k in kernels if k["name"].startswith("vecCopy("))
    return found


@pytest.mark.skipif(not VCOPY.is_dir(), reason="needs ../shared/corpus")
@pytest.mark.parametrize(
    ("folder", "key", "alternatives", "hbm_origin", "placed_by"),
    [
        ("MI100", "mi100", [], "catalogue", "bandwidth"),  # no VALU instruction counters
        ("MI200", "mi210", ["mi250"], "measured", "iops"),  # 104 CUs: MI210 or one MI250 GCD
        ("MI300X_A1_rocpd", "mi300x", [], "catalogue", "iops"),
    ],
)
def test_vcopy_is_memory_bound(
    capsys: pytest.CaptureFixture[str],
    folder: str,
    key: str,
    alternatives: list[str],
    hbm_origin: str,
    placed_by: str,
) -> None:
    doc = run_json(capsys, str(VCOPY / folder))
    assert (doc["device"]["key"], doc["device"]["alternatives"]) == (key, alternatives)
    r = _vcopy(doc)["roofline"]
    assert isinstance(r, dict)
    # its only work is integer address arithmetic: on the IOP roofline, below the HBM ridge,
    # so its efficiency is still its HBM bandwidth over the HBM ceiling
    assert (r["bound"], r["placed_by"], r["limiting_level"]) == ("memory", placed_by, "hbm")
    assert r["ceiling"] == {"iops": "int32-vector", "bandwidth": "hbm"}[placed_by]
    assert 0 < r["efficiency"] < 1
    hbm = next(c for c in doc["device"]["ceilings"] if c["name"] == "hbm")
    assert hbm["origin"] == hbm_origin
    assert r["efficiency"] == pytest.approx(r["achieved_bytes_s"]["hbm"] / hbm["value"])


def test_vcopy_mi200_against_its_measured_roofline(capsys: pytest.CaptureFixture[str]) -> None:
    """HBM bytes by the gfx90a formula and End - Start, with the csv module, over HBMBw."""
    import csv

    folder = DATA / "rocprof-compute-mi200"
    with (folder / "pmc_perf.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Kernel_Name"].startswith("vecCopy(")]
    with (folder / "roofline.csv").open(newline="") as f:
        hbm_bw = float(next(csv.DictReader(f))["HBMBw"]) * 1e9  # device 0, GB/s

    def n(r: dict[str, str], c: str) -> float:
        return float(r[c])

    moved = sum(
        32 * n(r, "TCC_EA_RDREQ_32B_sum")
        + 64 * (n(r, "TCC_EA_RDREQ_sum") - n(r, "TCC_EA_RDREQ_32B_sum"))
        + 64 * n(r, "TCC_EA_WRREQ_64B_sum")
        + 32 * (n(r, "TCC_EA_WRREQ_sum") - n(r, "TCC_EA_WRREQ_64B_sum"))
        for r in rows
    )
    seconds = sum(n(r, "End_Timestamp") - n(r, "Start_Timestamp") for r in rows) / 1e9
    r = _vcopy(run_json(capsys, str(folder)))["roofline"]
    assert isinstance(r, dict)
    assert r["bytes"]["hbm"] == pytest.approx(moved, rel=1e-12)
    assert r["efficiency"] == pytest.approx(moved / seconds / hbm_bw, rel=1e-9)


@pytest.mark.skipif(not VCOPY.is_dir(), reason="needs ../shared/corpus")
@pytest.mark.parametrize("folder", ["MI300A_A1", "MI300X_A1"])
def test_zero_length_timestamps_give_no_rates(
    capsys: pytest.CaptureFixture[str], folder: str
) -> None:
    """These files were re-saved and their timestamps damaged: Start == End everywhere."""
    doc = run_json(capsys, str(VCOPY / folder))
    r = _vcopy(doc)["roofline"]
    assert isinstance(r, dict)
    assert r["efficiency"] is None and r["achieved_bytes_s"] == {} and r["bound"] is None
    # the rounding explains the 0 ns and the missing rates in one warning (tests/test_long_trace)
    assert [w["code"] for w in doc["warnings"]] == ["rounded-timestamp"]


def test_the_same_profile_gives_the_same_json_under_any_hash_seed() -> None:
    """Three workloads whose kernels meet two ceilings as often (a tie for the chart's main
    ceiling) and share a kernel name (its bytes summed level by level): the document is the
    same byte for byte whatever the interpreter's string hashing. It was not: the tie went to
    a set's order and the summed levels came in a set intersection's, four documents under
    six seeds."""
    import os
    import subprocess
    import sys

    folders = [str(DATA / f"rocprof-compute-{g}") for g in ("mi200", "mi300a", "mi350")]
    code = "import sys; from roofscope.cli.app import main; sys.exit(main(sys.argv[1:]))"
    outputs = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code, "analyze", *folders, "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
