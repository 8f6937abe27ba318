"""NVIDIA and PyTorch inputs through the whole check-up (``roofscope analyze`` / ``compare``):
hotspots, roofline, metrics, diagnosis, ranks and the report run unchanged on them.

The readers themselves are pinned against independent parses in test_ncu.py, test_nsys.py
and test_kineto.py; here the numbers are worked out by hand from the files."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, SHARED_CORPUS, run_json
from tests.test_compare import compare_json

NCU = DATA / "ncu"
SGEMM = "ampere_sgemm_32x32_sliced1x4_tn"


def kernel(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(k for k in doc["kernels"] if k["name"] == name)


def test_ncu_roofline_by_hand(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """leleucas nsight_virtual.csv (ncu 2022, NERSC metric set, A100): launch 0 did
    2*65,536 FFMA + 6,144 FADD + 8,192 FMUL = 145,408 FP32 FLOPs in 7,488 ns over 512 DRAM
    bytes and 233,856 L2 bytes. Against the A100 SXM4 40GB of the catalogue (FP32 19.5
    TFLOP/s) with an L2 of 7.05 TB/s (NVIDIA's GTC21 talk S33322; no datasheet states one, so
    it is given as a ceilings file) its roof is the L2 line at 0.6218 FLOP/B."""
    path = NCU / "leleucas-opanalysis-a100" / "nsight_virtual.csv"
    l2 = tmp_path / "l2.toml"
    l2.write_text("[ceilings]\nl2 = 7.05e12\n", encoding="utf-8")
    doc = run_json(capsys, str(path), "--gpu", "NVIDIA A100-SXM4-40GB", "--ceilings", str(l2))
    k = kernel(doc, SGEMM)
    assert k["calls"] == 1 and round(k["total_s"] * 1e9) == 7488
    roof = k["roofline"]
    flops = 2 * 65_536 + 6_144 + 8_192
    assert roof["flops"] == flops and roof["flops_by_ceiling"]["fp32-vector"] == flops
    assert roof["bytes"] == {"hbm": 512, "l2": 233_856, "vl1d": 384}
    assert roof["achieved_flops_s"] == pytest.approx(flops / 7488e-9)
    assert roof["ai"]["hbm"] == pytest.approx(flops / 512)
    assert roof["ai"]["l2"] == pytest.approx(flops / 233_856)
    assert roof["bound"] == "memory"
    assert roof["attainable_flops_s"] == pytest.approx(flops / 233_856 * 7.05e12, rel=1e-3)
    assert doc["devices"] == []  # ncu replays kernels: no timeline
    rules = {f["rule"] for f in doc["findings"] if f["kernel"] == SGEMM}
    assert "memory-far-below-roof" in rules


def _details(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(section, label) -> (unit, value) of launch 0 of an ncu details page, by hand."""
    lines = [x for x in path.read_text(encoding="utf-8-sig").splitlines() if x.startswith('"')]
    out = {}
    for r in csv.DictReader(lines):
        if r["ID"] == "0" and r.get("Metric Name"):
            out[(r["Section Name"], r["Metric Name"])] = (r["Metric Unit"], r["Metric Value"])
    return out


def test_ncu_metrics_and_rules_on_rtx5090(capsys: pytest.CaptureFixture[str]) -> None:
    """llm-perf-opt kernel_0001 (ncu 2025.1.1): the L2 hit rate and the occupancies are the
    file's own values; DRAM bandwidth = 2.33 Mbyte / 6.75 us = 345.2 GB/s (the file prints
    345.14 Gbyte/s); the achieved occupancy under 50% is a finding, the L2 hit rate under 50%
    is not: ncu's own rule says the grid is too small (issue 38, point 2)."""
    path = NCU / "llm-perf-opt-rtx5090" / "kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
    details = _details(path / "ncu.details.csv")
    doc = run_json(capsys, str(path / "ncu.details.csv"))
    assert doc["run"]["arch"] == "sm_120"
    (k,) = doc["kernels"]
    m = {n: v["value_dispatch_mean"] for n, v in k["metrics"].items()}
    hit = float(details[("Memory Workload Analysis", "L2 Hit Rate")][1])
    occupancy = float(details[("Occupancy", "Achieved Occupancy")][1])
    assert m["L2 Cache Hit Rate"] == pytest.approx(hit)
    assert m["Achieved Occupancy"] == pytest.approx(occupancy)
    assert m["DRAM Bandwidth"] == pytest.approx(2.33e6 / 6.75e-6 / 1e9)
    found = {f["rule"]: f for f in doc["findings"]}
    # issue 38: ncu's own SOLBottleneck says the grid is too small to fill the device, so
    # the launch shape leads and the L2 hit rate under 50% gets no memory-access advice
    assert "grid is too small to fill" in found["ncu-sol-bottleneck"]["summary"]
    assert hit < 50 and "low-l2-hit-rate" not in found
    # roofscope's occupancy-limited folds into ncu's TheoreticalOccupancy rule (same cause)
    folded = found["ncu-theoretical-occupancy"]["evidence"]
    assert folded["roofscope_rule"] == "occupancy-limited"
    assert folded["achieved_pct"] == pytest.approx(occupancy)


def test_ncu_busy_kernel_is_not_occupancy_limited(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same launch with its SM throughput (the section label and the raw metric row)
    rewritten to 75%: a unit near its peak, so more resident warps would not help and no
    occupancy finding is made."""
    src = NCU / "llm-perf-opt-rtx5090" / "kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
    text = (src / "ncu.details.csv").read_text(encoding="utf-8")
    for label in ("Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"):
        start = text.index(f'"{label}","%","') + len(label) + 8
        text = text[:start] + "75" + text[text.index('"', start) :]
    (tmp_path / "ncu.details.csv").write_text(text, encoding="utf-8")
    doc = run_json(capsys, str(tmp_path / "ncu.details.csv"))
    assert doc["kernels"][0]["metrics"]["Compute (SM) Throughput"]["value_dispatch_mean"] == 75
    rules = {f["rule"] for f in doc["findings"]}
    assert "occupancy-limited" not in rules | {
        f["evidence"].get("roofscope_rule") for f in doc["findings"]
    }
    assert "ncu-theoretical-occupancy" in rules  # ncu's own rule stands, with nothing folded


def test_nsys_trace_through_the_check_up(capsys: pytest.CaptureFixture[str]) -> None:
    """zisk-zorch cuda_gpu_trace (RTX 5090): 5 kernels, 635,007 ns of kernel time by hand
    (338,079 + 291,008 + 4,160 + 928 + 832), the 3 memory rows as copies, one device."""
    doc = run_json(capsys, str(DATA / "nsys" / "host_cuda_gpu_trace.csv"))
    assert round(doc["summary"]["kernel_time_s"] * 1e9) == 338_079 + 291_008 + 4_160 + 928 + 832
    assert doc["run"]["gpu"] == "NVIDIA GeForce RTX 5090"
    assert sum(a["calls"] for a in doc["activity"] if a["kind"] == "copy") == 3
    assert len(doc["devices"]) == 1


@pytest.mark.skipif(not SHARED_CORPUS.exists(), reason="shared corpus not present")
def test_kineto_ranks_and_communication(capsys: pytest.CaptureFixture[str]) -> None:
    """HTA's sampled_rank-0/1 traces as one job: ranks 0 and 1 from distributedInfo, the NCCL
    send/receive kernel marked as communication, and its share (over 20%) a finding."""
    folder = SHARED_CORPUS / "torch" / "hta-tests-data" / "trace_filter"
    doc = run_json(capsys, str(folder))
    assert doc["ranks"]["ranks"] == [0, 1]
    comm = [k for k in doc["kernels"] if k["communication"]]
    assert comm and all("nccl" in k["name"].lower() for k in comm)
    assert not [k for k in doc["kernels"] if "nccl" in k["name"].lower() and not k["communication"]]
    (f,) = [f for f in doc["findings"] if f["rule"] == "communication-share"]
    total = sum(k["total_s"] for k in comm)
    assert f["evidence"]["communication_s"] == pytest.approx(total)


def test_kineto_compare_against_itself(capsys: pytest.CaptureFixture[str]) -> None:
    trace = str(DATA / "kineto" / "event_sync_trace.json.gz")
    doc = compare_json(capsys, trace, trace)
    assert doc["end_to_end"]["speedup"] == 1.0
    assert doc["added"] == [] and doc["removed"] == []


def test_ncu_rules_kept_as_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    """superbench's cuBLASLt log (ncu --set full): the kernel carries ncu's rule rows, the
    same distinct (section, rule, type, speedup) as the file's rule rows read with csv."""
    path = NCU / "superbench-cublaslt-ncu" / "cublaslt_ncu.log"
    lines = [x for x in path.read_text(encoding="utf-8-sig").splitlines() if x.startswith('"')]
    expected = set()
    for r in csv.DictReader(lines):
        if r.get("Rule Name"):
            pct = r.get("Estimated Speedup") or None
            expected.add((r["Section Name"], r["Rule Name"], r["Rule Type"],
                          None if pct is None else float(pct)))  # fmt: skip
    doc = run_json(capsys, str(path))
    (k,) = doc["kernels"]
    got = {(r["section"], r["rule"], r["kind"], r["speedup_pct"]) for r in k["profiler_rules"]}
    assert got == expected and len(expected) > 3
    assert max(r["speedup_pct"] or 0 for r in k["profiler_rules"]) == 81.25
