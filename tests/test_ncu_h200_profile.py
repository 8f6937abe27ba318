"""A real H200 profile that ``roofscope profile --with ncu`` wrote (tests/data/ncu/
roofscope-profile-h200): the GPU is found from the device attributes profile records, and the
roofline of a bf16 matrix product and an elementwise add is worked out by hand from the
workload (three 4096^3 bf16 products, three adds of 2^26 fp32 elements) and the ncu rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, run_json

H200 = DATA / "ncu" / "roofscope-profile-h200"
GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
ADD = "void at::vectorized_elementwise_kernel<4, at::CUDAFunctor_add<float>"
# gpu__time_duration.sum of the three products (IDs 4, 6, 8) and adds (IDs 5, 7, 9), ns
GEMM_NS = (157_888, 158_144, 159_040)
ADD_NS = (181_824, 180_576, 181_920)
# dram__bytes.sum of the three products and the three adds, bytes
GEMM_DRAM = (176_103_680, 176_389_376, 175_319_296)
ADD_DRAM = (785_670_144, 786_271_232, 785_686_272)
BF16_PEAK = 1979e12 / 2  # H200 SXM dense bf16: NVIDIA datasheet 1,979 TFLOPS with sparsity


def kernel(doc: dict[str, Any], prefix: str) -> dict[str, Any]:
    (found,) = [k for k in doc["kernels"] if k["name"].startswith(prefix)]
    return found


def test_the_gpu_is_found_from_the_recorded_device_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = run_json(capsys, str(H200))
    device = doc["device"]
    assert (device["key"], device["detected_from"]) == ("h200-sxm", "profile: NVIDIA H200")


def test_the_matrix_product_is_compute_bound_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(H200))
    gemm = kernel(doc, GEMM)
    seconds = sum(GEMM_NS) * 1e-9  # 475,072 ns
    flops = 3 * 2 * 4096**3  # 412,316,860,416: two FLOPs per multiply-add
    assert (gemm["calls"], gemm["total_s"]) == (3, pytest.approx(seconds, rel=1e-12))
    roof = gemm["roofline"]
    assert roof["flops_by_ceiling"]["bf16-matrix"] == flops
    assert roof["bytes"]["hbm"] == sum(GEMM_DRAM)  # 527,812,352
    assert roof["achieved_flops_s"] == pytest.approx(flops / seconds, rel=1e-12)  # 868 TFLOP/s
    assert (roof["bound"], roof["ceiling"]) == ("compute", "bf16-matrix")
    assert roof["efficiency"] == pytest.approx(flops / seconds / BF16_PEAK, rel=1e-12)  # 87.8 %


def test_the_add_is_memory_bound_near_its_roof(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(H200))
    add = kernel(doc, ADD)
    assert (add["calls"], add["total_s"]) == (3, pytest.approx(sum(ADD_NS) * 1e-9, rel=1e-12))
    roof = add["roofline"]
    assert (roof["bound"], roof["limiting_level"]) == ("memory", "hbm")
    assert roof["bytes"]["hbm"] == sum(ADD_DRAM)  # near 3 x 805 MB: two 256 MiB in, one out
    rate = sum(ADD_DRAM) / (sum(ADD_NS) * 1e-9)  # 4.33 TB/s
    assert roof["achieved_bytes_s"]["hbm"] == pytest.approx(rate, rel=1e-12)
    assert roof["efficiency"] == pytest.approx(rate / 4.8e12, rel=1e-12)  # 90.2 %
    assert [f["rule"] for f in doc["findings"] if f["kernel"] == add["name"]] == [
        "memory-near-roof"
    ]


def test_above_a_measured_roof_but_under_the_datasheet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """roofscope peaks on this H200 measured bf16 at 773 TFLOP/s (random data); the profiled
    product of all-ones matrices reached 868: 112 % of the measurement, 88 % of the 989 the
    datasheet states. Not 'more than the hardware can do'."""
    ceilings = tmp_path / "h200.toml"
    ceilings.write_text('[ceilings]\n"bf16-matrix" = 773e12\n', encoding="utf-8")
    doc = run_json(capsys, str(H200), "--ceilings", str(ceilings))
    achieved = 3 * 2 * 4096**3 / (sum(GEMM_NS) * 1e-9)
    assert not [f for f in doc["findings"] if f["rule"] == "above-roof"]
    (f,) = [f for f in doc["findings"] if f["rule"] == "at-measured-roof"]
    assert f["kernel"] == GEMM
    assert f["evidence"]["efficiency"] == pytest.approx(achieved / 773e12, rel=1e-12)
    assert f["evidence"]["efficiency_of_theoretical"] == pytest.approx(
        achieved / BF16_PEAK, rel=1e-12
    )
