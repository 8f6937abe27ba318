"""Tensor-core work from every ncu operation-counter partition (issue 38, point 1), on the
real H200 profile (tests/data/ncu/roofscope-profile-h200: three 4096^3 bf16 products) and
on copies of it whose counters carry the names a ``--metrics`` export of ncu's
HierarchicalTensorRoofline section writes (per instruction: ``op_hgmma``)."""

from __future__ import annotations

import csv
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from roofscope.analysis.counters import Counters, evaluate
from roofscope.analysis.metrics.column import Column
from roofscope.analysis.work import nvidia
from roofscope.cli.app import main
from tests.conftest import DATA, run_json
from tests.test_json_schema import assert_valid

H200_CSV = DATA / "ncu" / "roofscope-profile-h200" / "ncu.csv"
GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
SRC = "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
HGMMA = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum"
BF16_PEAK = 1979e12 / 2  # H200 SXM dense bf16: NVIDIA datasheet 1,979 TFLOPS with sparsity
BYTE_METRICS = ("dram__bytes", "lts__t_bytes", "l1tex__t_bytes")


def report_schema() -> jsonschema.Draft202012Validator:
    text = resources.files("roofscope").joinpath("schema", "report-v1.schema.json").read_text()
    return jsonschema.Draft202012Validator(json.loads(text))


def gemm_values(metric: str) -> list[float]:
    """The file's own values of ``metric`` on the products' rows, thousands separators off."""
    lines = H200_CSV.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = csv.DictReader(lines[start:])
    return [
        float(r["Metric Value"].replace(",", ""))
        for r in rows
        if r["Kernel Name"] == GEMM and r["Metric Name"] == metric
    ]


def rewritten(tmp_path: Path, rename: dict[str, str], drop: tuple[str, ...] = ()) -> Path:
    """A copy of the H200 export with metrics renamed and the rows of ``drop`` left out."""
    lines = []
    for line in H200_CSV.read_text().splitlines(keepends=True):
        if any(f'"{d}' in line for d in drop):
            continue
        for old, new in rename.items():
            line = line.replace(f'"{old}"', f'"{new}"')
        lines.append(line)
    out = tmp_path / "ncu.csv"
    out.write_text("".join(lines))
    return out


def gemm_roof(doc: dict[str, Any]) -> dict[str, Any]:
    (k,) = [k for k in doc["kernels"] if k["name"].startswith(GEMM)]
    roof: dict[str, Any] = k["roofline"]
    return roof


def test_one_tensor_op_is_one_flop_on_a_known_shape() -> None:
    # three 4096^3 bf16 products: 2 * 4096^3 FLOPs each (a multiply-add is two)
    assert gemm_values(SRC) == [2 * 4096**3] * 3


def test_per_instruction_counters_place_the_product_under_bf16(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before issue 38 only ``sm__ops_path_tensor_src_*`` was read: with the hgmma counter
    alone the product got its few vector FLOPs and no bf16 work."""
    path = rewritten(tmp_path, {SRC: HGMMA})
    roof = gemm_roof(run_json(capsys, str(path)))
    flops = sum(gemm_values(SRC))  # now named HGMMA; one op = one FLOP
    assert roof["flops_by_ceiling"]["bf16-matrix"] == flops == 3 * 2 * 4096**3
    assert (roof["bound"], roof["ceiling"]) == ("compute", "bf16-matrix")


def test_without_byte_counters_the_bound_is_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = rewritten(tmp_path, {SRC: HGMMA}, drop=BYTE_METRICS)
    doc = run_json(capsys, str(path))
    assert_valid(report_schema(), doc)  # the schema knows no_bound
    roof = gemm_roof(doc)
    seconds = sum(gemm_values("gpu__time_duration.sum")) * 1e-9
    flops = sum(gemm_values(SRC))
    assert (roof["bound"], roof["no_bound"], roof["ceiling"]) == (None, "no-bytes", "bf16-matrix")
    assert roof["bytes"] == {} and roof["limiting_level"] is None
    assert roof["attainable_flops_s"] == BF16_PEAK
    assert roof["efficiency"] == pytest.approx(flops / seconds / BF16_PEAK, rel=1e-12)
    assert main(["analyze", str(path)]) == 0
    assert "unknown (no byte counters)" in capsys.readouterr().out


def ops(values: dict[str, float]) -> dict[str, float]:
    c = Counters({k: Column([v]) for k, v in values.items()})
    return {k: float(v[0]) for k, v in evaluate(nvidia.FLOPS, c).items()}


T = "sm__ops_path_tensor_"


def test_instructions_are_summed_and_each_counted_once() -> None:
    parts = {
        f"{T}op_hgmma_src_bf16_dst_fp32_sparsity_off.sum": 1000.0,
        f"{T}op_hgmma_src_bf16_dst_fp32_sparsity_on.sum": 10.0,
        f"{T}op_hmma_src_bf16_dst_fp32_sparsity_off.sum": 200.0,
        f"{T}op_hgmma_src_fp16_sparsity_off.sum": 30.0,
        f"{T}op_hmma_src_fp16_dst_fp32_sparsity_off.sum": 4.0,
        f"{T}op_igmma_src_int8_sparsity_off.sum": 5.0,
    }
    flops = ops(parts)
    assert (flops["bf16-matrix"], flops["fp16-matrix"], flops["int8-matrix"]) == (1210, 34, 5)
    # an instruction's coarser counter, where collected, stands for its finer ones
    coarse = ops({**parts, f"{T}op_hgmma_src_bf16_dst_fp32.sum": 1010.0})
    assert coarse["bf16-matrix"] == 1010 + 200


def test_a_coarser_partition_wins_over_the_instructions() -> None:
    per_op = {f"{T}op_hgmma_src_bf16_dst_fp32_sparsity_off.sum": 1000.0}
    assert ops({**per_op, f"{T}src_bf16_dst_fp32.sum": 1000.0})["bf16-matrix"] == 1000
    sparse = {f"{T}src_fp8_sparsity_off.sum": 70.0, f"{T}src_fp8_sparsity_on.sum": 7.0}
    assert ops({**sparse, f"{T}op_qgmma_src_fp8_sparsity_off.sum": 70.0})["fp8-matrix"] == 77
    # a destination ncu lists beside the declared ones is added (RTX 5090: dst_bf16)
    dst = {f"{T}src_bf16_dst_fp32.sum": 50.0, f"{T}src_bf16_dst_bf16.sum": 6.0}
    assert ops(dst)["bf16-matrix"] == 56
    # an aggregate over several source types is never read
    assert ops({f"{T}op_hmma_src_fp16_bf16_dst_fp32_sparsity_off.sum": 9.0}) == {}


def test_smsp_sass_counts_are_the_same_totals() -> None:
    smsp = {f"smsp__sass_thread_inst_executed_op_f{op}_pred_on.sum": v
            for op, v in {"fma": 10.0, "add": 3.0, "mul": 5.0}.items()}  # fmt: skip
    assert ops(smsp)["fp32-vector"] == 2 * 10 + 3 + 5
