"""No false alarms from roofscope's own bookkeeping (issue 38, point 8): counter runs
compared one by one with the trace, ncu's own percentages, measured ceilings a benchmark
under-measured, one roof verdict per kernel."""

from __future__ import annotations

import csv
import difflib
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import roofscope
from roofscope.cli.app import main
from roofscope.model.names import normalise
from tests.conftest import DATA, SHARED_CORPUS, run_json

needs_corpus = pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="needs ../shared/corpus")
STENCILS = SHARED_CORPUS / "amd/hpctraining-rocprofv1-mi250x/seismic-stencils"
LAPLACIAN = DATA / "rocprofv1-mi250x" / "laplacian"


def rules(doc: dict[str, Any], rule: str) -> dict[str | None, dict[str, Any]]:
    return {f["kernel"]: f for f in doc["findings"] if f["rule"] == rule}


def calls_per_kernel(path: Path) -> Counter[str]:
    """The file's own rows per KernelName (rocprof v1 writes one row per dispatch)."""
    with path.open(newline="") as f:
        return Counter(row["KernelName"] for row in csv.DictReader(f))


@needs_corpus
def test_two_counter_runs_are_not_summed(capsys: pytest.CaptureFixture[str]) -> None:
    """xr_stencils_R4_64_64_1: the trace and each of its two counter runs (bankconflicts.csv,
    data_movement.csv) saw every kernel as often (100 for each compute_fd_* kernel): no
    run-dispatch mismatch (it said "200 against 100" when the runs were summed), and every
    hot kernel keeps its verdict."""
    folder = STENCILS / "xr_stencils_R4_64_64_1"
    trace = calls_per_kernel(folder / "results.csv")
    runs = [calls_per_kernel(folder / f) for f in ("bankconflicts.csv", "data_movement.csv")]
    assert all(run == trace for run in runs)
    assert trace["compute_fd_z_kernel"] == 100
    doc = run_json(capsys, str(folder))
    assert not rules(doc, "pass-dispatch-mismatch")
    hot = [k["name"] for k in doc["kernels"] if k["name"].startswith("compute_fd_")]
    assert len(hot) == 10
    assert not [f for f in doc["findings"] if f["kind"] == "validity"]
    # the verdicts are back: each hot kernel under half its roof is told so (none was before)
    low = {
        k["name"] for k in doc["kernels"] if k["name"] in hot and k["roofline"]["efficiency"] < 0.5
    }
    assert {"compute_fd_xy_kernel", "compute_fd_y_kernel"} <= low
    assert set(rules(doc, "memory-far-below-roof")) >= low


def test_runs_compared_one_by_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """laplacian with a second counter run: a whole copy agrees with the trace; a copy with
    half the laplacian rows is the one run that differs, named with both runs' counts."""
    shutil.copy(LAPLACIAN / "results.csv", tmp_path / "results.csv")
    shutil.copy(LAPLACIAN / "data_movement.csv", tmp_path / "data_movement.csv")
    shutil.copy(LAPLACIAN / "data_movement.csv", tmp_path / "second_pass.csv")
    trace = calls_per_kernel(LAPLACIAN / "results.csv")
    (lap,) = [k for k in trace if "laplacian" in k]
    assert not rules(run_json(capsys, str(tmp_path)), "pass-dispatch-mismatch")
    with (LAPLACIAN / "data_movement.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    name = rows[0].index("KernelName")
    ours = [r for r in rows[1:] if r[name] == lap]
    others = [r for r in rows[1:] if r[name] != lap]
    with (tmp_path / "second_pass.csv").open("w", newline="") as f:
        csv.writer(f).writerows([rows[0], *others, *ours[: len(ours) // 2]])
    found = rules(run_json(capsys, str(tmp_path)), "pass-dispatch-mismatch")
    (kernel,) = [k for k in found if k and "laplacian" in k]
    evidence = found[kernel]["evidence"]
    assert evidence["counter_run_calls"] == trace[lap] // 2
    assert evidence["trace_calls"] == trace[lap]
    assert evidence["counter_runs"] == f"{trace[lap]} and {trace[lap] // 2}"


def test_ncu_own_percentage_above_100(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A percentage ncu wrote above 100 (its L1/TEX Cache Throughput can read 147 %, on its
    Speed-of-Light and details pages alike) is ncu's number, not a damaged column: saxpy.csv's
    sm__throughput "22.30" made "147.00" stays in the limiter, at 147 %, leading it ahead of
    the DRAM's 90.35 %, with a note that says it is ncu's."""
    real = DATA / "ncu/gpu-roofline-profiler-rtx5070/saxpy.csv"
    text = real.read_text(encoding="utf-8-sig")
    assert text.count('"%","22.30"') == 1
    path = tmp_path / "saxpy.csv"
    path.write_text(text.replace('"%","22.30"', '"%","147.00"'))
    doc = run_json(capsys, str(path), "--peak-flops", "30.9e12", "--peak-bw", "672e9")
    (k,) = [k for k in doc["kernels"] if "saxpy_kernel" in k["name"]]
    top = k["limiter"]["units"][0]
    assert (top["unit"], top["pct_of_peak"]) == ("SM", 147.0)
    assert not [w for w in doc["warnings"] if w["code"] == "percent-out-of-range"]
    (w,) = [w for w in doc["warnings"] if w["code"] == "ncu-percent-above-100"]
    assert "Compute (SM) Throughput reads 147 %, ncu's own number" in w["message"]


@needs_corpus
def test_at_measured_roof_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    """Omniperf's MI200 roofline benchmark: its kernels above roofline.csv's measured HBMBw
    (1404.9331 GB/s, the file's own row) are at-measured-roof, and none is also
    memory-near-roof (83 kernels were both): the caveat already says 'at the roof; only less
    work makes it faster'. Kernels at 90-100 % of the roof keep memory-near-roof."""
    folder = SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1/mi200"
    with (folder / "roofline.csv").open(newline="") as f:
        hbm = float(next(csv.DictReader(f))["HBMBw"]) * 1e9
    doc = run_json(capsys, str(folder))
    (ceiling,) = [c for c in doc["device"]["ceilings"] if c["name"] == "hbm"]
    assert ceiling["value"] == pytest.approx(hbm, rel=1e-12)
    at_roof, near = rules(doc, "at-measured-roof"), rules(doc, "memory-near-roof")
    assert len(at_roof) == 93 and near
    assert not set(at_roof) & set(near)
    roofs = {k["name"]: k["roofline"] for k in doc["kernels"] if k["roofline"]}
    assert all(roofs[k]["efficiency"] <= 1 for k in near)
    memory_above = {k for k, r in roofs.items() if r["bound"] == "memory" and r["efficiency"] > 1}
    assert memory_above and memory_above <= set(at_roof)


def test_work_naming_no_kernel_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--work 'gemm=1.7e10:1e8' on the laplacian profile (no kernel named gemm) was silently
    unused; now one line, exit 2, naming the closest of the file's own KernelNames (difflib
    over them, worked out here). A rule that names one of them still runs."""
    # the file's KernelNames, normalised (rocprof's ".kd" suffix dropped); plain names, each
    # its own base name
    kernels = sorted({normalise(k) for k in calls_per_kernel(LAPLACIAN / "results.csv")})
    assert "laplacian_kernel" in kernels and "__amd_rocclr_fillBufferAligned" in kernels
    closest = difflib.get_close_matches("laplacian", kernels, n=3, cutoff=0.0)
    assert closest[0] == "laplacian_kernel"
    offered = ", ".join(repr(c) for c in closest)
    assert main(["analyze", str(LAPLACIAN), "--work", "laplacian=1.7e10:1e8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == (
        "roofscope: error: --work 'laplacian=1.7e10:1e8': no kernel of the profile is named "
        "'laplacian' (a whole normalised name or its base name); closest: "
        f"{offered}; use one of those names\n"
    )
    # the Python API says it in its own words: work='…'
    with pytest.raises(roofscope.UsageError, match=r"^work='gemm=1.7e10:1e8': no kernel"):
        roofscope.analyze(LAPLACIAN, work="gemm=1.7e10:1e8")
    doc = run_json(capsys, str(LAPLACIAN), "--work", "laplacian_kernel=1.7e10:1e8")
    (lap,) = [k for k in doc["kernels"] if k["name"] == "laplacian_kernel"]
    assert lap["roofline"]["flops"] == 1.7e10 and lap["roofline"]["bytes"]["hbm"] == 1e8
