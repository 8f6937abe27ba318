"""Issue 38, points 2 and 3 on real Nsight Compute files: a grid that cannot fill the device
gets a launch-configuration finding with its numbers (ncu's own rule text leading where ncu
gave one), never memory-access advice; an SM busy issuing instructions is not "at the
hardware's limit". Every number is worked out here from the file's own columns."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, SHARED_CORPUS, run_json

RTX5090 = DATA / "ncu/llm-perf-opt-rtx5090"
FLASH = (
    SHARED_CORPUS
    / "nvidia/llm-perf-opt-rtx5090/ncu-v2/kernel_0013_178ff748c21ea29399b8568af3cd1f02"
)
GEMV = RTX5090 / "kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
H200 = DATA / "ncu/roofscope-profile-h200/ncu.csv"
RTX5070 = SHARED_CORPUS / "nvidia/gpu-roofline-profiler-rtx5070/gemm_naive.csv"
RTX5070_PEAKS = ["--peak-flops", "30.9e12", "--peak-bw", "672e9"]
RTX5090_SMS = 170  # GeForce RTX 5090: 170 SMs (NVIDIA's Blackwell GeForce whitepaper)
MEMORY_ACCESS = {"memory-far-below-roof", "low-l2-hit-rate"}
Cap = pytest.CaptureFixture[str]


def rows(path: Path) -> list[dict[str, str]]:
    """The CSV rows of an ncu export, from its header line on."""
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    return list(csv.DictReader(lines[start:]))


def product(dims: str) -> int:
    return math.prod(int(x) for x in dims.strip("()").split(","))


def findings(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["kind"] == "bottleneck"]


def own_rules(doc: dict[str, Any]) -> set[str]:
    """roofscope's rules, folded into ncu's or not."""
    return {f["evidence"].get("roofscope_rule") or f["rule"] for f in findings(doc)}


@pytest.mark.skipif(not FLASH.is_dir(), reason="needs ../shared/corpus")
def test_flash_splitkv_80_blocks_on_170_sms(capsys: Cap) -> None:
    """flash_fwd_splitkv: Grid Size (1, 8, 10) = 80 blocks of (128, 1, 1); ncu's SOLBottleneck
    says "only 0.5 full waves". 90 of 170 SMs idle: gain 1 x (1 - 80/170) (one kernel)."""
    (row,) = [r for r in rows(FLASH / "ncu.details.csv") if r["Rule Name"] == "SOLBottleneck"]
    blocks, size = product(row["Grid Size"]), product(row["Block Size"])
    doc = run_json(capsys, str(FLASH / "ncu.details.csv"), "--gpu", "rtx5090")
    (f,) = [f for f in findings(doc) if f["evidence"].get("roofscope_rule") == "launch-too-small"]
    assert f["rule"] == "ncu-sol-bottleneck"  # ncu's own text leads
    assert f["summary"].endswith(row["Rule Description"])
    e = f["evidence"]
    assert (e["blocks"], e["block_size"], e["compute_units"]) == (80, 128, RTX5090_SMS)
    assert (blocks, size) == (80, 128)
    assert e["ncu_full_waves"] == 0.5
    assert f["gain_share"] == pytest.approx(1 - blocks / RTX5090_SMS)
    assert f"{RTX5090_SMS - blocks} SMs had no work" in e["roofscope_summary"]
    assert not own_rules(doc) & MEMORY_ACCESS  # its 11.7 % L2 hit rate was told to tile


def test_gemv_224_blocks_less_than_a_wave(capsys: Cap) -> None:
    """cuBLAS GEMV: (224, 1, 1) blocks is more than 170 SMs, yet ncu says 0.7 full waves: its
    rule alone marks the launch, with no gain of roofscope's (the shape cannot say it)."""
    (row,) = [r for r in rows(GEMV / "ncu.details.csv") if r["Rule Name"] == "SOLBottleneck"]
    doc = run_json(capsys, str(GEMV / "ncu.details.csv"), "--gpu", "rtx5090")
    (f,) = [f for f in findings(doc) if f["evidence"].get("roofscope_rule") == "launch-too-small"]
    assert f["evidence"]["blocks"] == product(row["Grid Size"]) == 224
    assert f["evidence"]["ncu_full_waves"] == 0.7
    assert f["evidence"]["ncu_full_waves_from"] == "rule text"  # the trimmed page has no column
    assert f["gain_share"] is None and "0.7 full waves" in row["Rule Description"]
    assert not own_rules(doc) & MEMORY_ACCESS


def test_h200_grid_equal_to_the_sms_is_not_small(capsys: Cap) -> None:
    """H200 nvjet GEMM: Grid Size (2, 66, 1) = 132 blocks, device__attribute_multiprocessor_
    count 132: one block per SM is a full device, no launch finding."""
    found = rows(H200)
    sms = {r["Metric Value"] for r in found if r["Metric Name"].endswith("multiprocessor_count")}
    grids = {product(r["Grid Size"]) for r in found if r["Kernel Name"].startswith("nvjet")}
    assert (sms, grids) == ({"132"}, {132})
    doc = run_json(capsys, str(H200))
    assert "launch-too-small" not in own_rules(doc)


@pytest.mark.skipif(not RTX5070.is_file(), reason="needs ../shared/corpus")
def test_gemm_naive_sm_busy_is_not_the_roof(capsys: Cap, tmp_path: Path) -> None:
    """RTX 5070 gemm_naive: sm__throughput 97.32 % is issue activity, not math: no
    compute-near-roof. With its FLOPs given (N = 64 blocks x 32 threads = 2048, 2 N^3 FLOPs
    over gpu__time_duration.sum 9,589,248 ns) it is at 5.8 % of a 30.9 TFLOP/s roof."""
    m = {r["Metric Name"]: r["Metric Value"].replace(",", "") for r in rows(RTX5070)}
    sm = float(m["sm__throughput.avg.pct_of_peak_sustained_elapsed"])
    doc = run_json(capsys, str(RTX5070), *RTX5070_PEAKS)
    (f,) = [f for f in findings(doc) if f["rule"] == "busy-not-at-roof"]
    assert f["evidence"]["pct_of_peak"] == pytest.approx(sm) == pytest.approx(97.32)
    assert f["evidence"]["flop_pct_of_roof"] is None
    assert "compute-near-roof" not in own_rules(doc)
    n = 64 * 32
    flops, seconds = 2 * n**3, float(m["gpu__time_duration.sum"]) * 1e-9
    work = tmp_path / "work.toml"
    work.write_text(f'[[kernel]]\nmatch = "gemm_naive"\nflops = "{flops}"\nbytes = "1e8"\n')
    doc = run_json(capsys, str(RTX5070), *RTX5070_PEAKS, "--work", str(work))
    (f,) = [f for f in findings(doc) if f["rule"] == "compute-far-below-roof"]
    assert f["evidence"]["efficiency"] == pytest.approx(flops / seconds / 30.9e12)
    assert "compute-near-roof" not in own_rules(doc)
