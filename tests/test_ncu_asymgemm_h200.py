"""Issue 38, points 1 and 2 on a real H200 file whose tensor work ncu counted per instruction:
bytedance-iaas/AsymGEMM's ``ncu --page raw --csv`` export of four sm90 bf16 GEMMs (one row per
kernel, one column per metric; tests/data/PROVENANCE.md). Every expected number is worked out
here from the file's own columns, the kernels' template shapes or ncu's own rates."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, run_json

MLP = DATA / "ncu/asymgemm-h200/mlp_1b_raw.csv"
AGGREGATE = "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
HGMMA = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum"
H200_BF16_DENSE = 1979e12 / 2  # NVIDIA H200 product page: 1,979 TFLOPS bf16 with sparsity
MEMORY_ACCESS = {"memory-far-below-roof", "low-l2-hit-rate"}
Cap = pytest.CaptureFixture[str]


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def header_at(text: list[str]) -> int:
    """The index of the CSV header: ncu's ``==PROF==`` lines come first."""
    return next(i for i, line in enumerate(text) if line.startswith('"ID"'))


def kernels(path: Path = MLP) -> list[dict[str, str]]:
    """One dict per kernel row (the units row after the header left out)."""
    text = lines(path)
    rows = list(csv.DictReader(text[header_at(text) :]))
    return rows[1:]


def value(row: dict[str, str], metric: str) -> float:
    return float(row[metric].replace(",", ""))


def template_work(name: str) -> int:
    """2 M N K from the kernel's shape parameters ``sm90_bf16_asym_gemm_impl<a, b, M, N, K``."""
    match = re.search(r"asym_gemm_impl<\d+, \d+, (\d+), (\d+), (\d+),", name)
    assert match
    return 2 * math.prod(int(d) for d in match.groups())


def without_column(tmp_path: Path, metric: str) -> Path:
    """A copy of the export with one metric's column left out, ncu's preamble kept."""
    text = lines(MLP)
    start = header_at(text)
    table = list(csv.reader(text[start:]))
    drop = table[0].index(metric)
    out = tmp_path / "raw.csv"
    with out.open("w", newline="") as f:
        f.writelines(text[:start])
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(r[:drop] + r[drop + 1 :] for r in table)
    return out


def roofs(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k["raw_names"][0]: k["roofline"] for k in doc["kernels"]}


def test_one_hgmma_op_is_one_flop_of_the_kernel_shape() -> None:
    """Each GEMM is 64 x 65536 x 8192 (in some order): 2^36 FLOPs, which both the aggregate
    and the per-instruction counter report; no sparse, HMMA or other-type work."""
    found = kernels()
    assert len(found) == 4 and {r["device__attribute_display_name"] for r in found} == {
        "NVIDIA H200"
    }
    for row in found:
        assert value(row, HGMMA) == value(row, AGGREGATE) == template_work(row["Kernel Name"])
        assert template_work(row["Kernel Name"]) == 2**36
        assert value(row, HGMMA.replace("sparsity_off", "sparsity_on")) == 0
        assert value(row, HGMMA.replace("hgmma", "hmma")) == 0


def test_each_gemm_sits_under_the_bf16_matrix_roof(capsys: Cap) -> None:
    """Achieved = the counter over gpu__time_duration.sum, which is ncu's own
    ``...sparsity_off.sum.per_second``; the roof is H200's dense bf16 ceiling."""
    found = roofs(run_json(capsys, str(MLP)))
    for row in kernels():
        roof = found[row["Kernel Name"]]
        flops, seconds = value(row, HGMMA), value(row, "gpu__time_duration.sum") * 1e-9
        assert roof["flops_by_ceiling"]["bf16-matrix"] == roof["flops"] == flops
        assert (roof["ceiling"], roof["work_source"]) == ("bf16-matrix", "counters")
        assert roof["achieved_flops_s"] == pytest.approx(flops / seconds, rel=1e-12)
        assert roof["achieved_flops_s"] == pytest.approx(value(row, f"{HGMMA}.per_second"))
        assert roof["attainable_flops_s"] == H200_BF16_DENSE
        assert roof["efficiency"] == pytest.approx(flops / seconds / H200_BF16_DENSE)


def test_per_instruction_counters_alone_give_the_same_work(tmp_path: Path, capsys: Cap) -> None:
    """A ``--metrics`` export of ncu's HierarchicalTensorRoofline section has only the
    ``op_<instruction>`` counters: without the aggregate the work is their sum, once."""
    found = roofs(run_json(capsys, str(without_column(tmp_path, AGGREGATE))))
    for row in kernels():
        assert found[row["Kernel Name"]]["flops_by_ceiling"]["bf16-matrix"] == value(row, HGMMA)


def test_128_blocks_on_132_sms_is_a_launch_finding(capsys: Cap) -> None:
    """Two of the GEMMs launch launch__grid_size 128 blocks on device__attribute_
    multiprocessor_count 132 SMs (ncu: launch__waves_per_multiprocessor 0.97); the two with
    1024 blocks (7.76 waves) get no launch finding, and none gets memory-access advice."""
    doc = run_json(capsys, str(MLP))
    total = sum(value(r, "gpu__time_duration.sum") for r in kernels())
    small = {r["Kernel Name"]: r for r in kernels() if value(r, "launch__grid_size") < 132}
    assert {r["launch__waves_per_multiprocessor"] for r in small.values()} == {"0.97"}
    assert {r["device__attribute_multiprocessor_count"] for r in small.values()} == {"132"}
    told = [f for f in doc["findings"] if f["rule"] == "launch-too-small"]
    assert {f["kernel"] for f in told} == set(small) and len(small) == 2
    for f in told:
        share = value(small[f["kernel"]], "gpu__time_duration.sum") / total
        assert (f["evidence"]["blocks"], f["evidence"]["compute_units"]) == (128, 132)
        assert f["evidence"]["share"] == pytest.approx(share)
        assert f["gain_share"] == pytest.approx(share * (1 - 128 / 132))
        assert "4 SMs had no work" in f["summary"]
    assert not {f["rule"] for f in doc["findings"]} & MEMORY_ACCESS


def test_waves_per_sm_come_from_ncu_own_column(capsys: Cap) -> None:
    """The raw page has no rule text; its launch__waves_per_multiprocessor column gives the
    small launches' waves (0.97 = 128 blocks over 132 SMs of one block each), in the evidence
    and the summary."""
    doc = run_json(capsys, str(MLP))
    small = {r["Kernel Name"]: r for r in kernels() if value(r, "launch__grid_size") < 132}
    told = [f for f in doc["findings"] if f["rule"] == "launch-too-small"]
    assert {f["kernel"] for f in told} == set(small)
    for f in told:
        waves = value(small[f["kernel"]], "launch__waves_per_multiprocessor")
        assert waves == round(128 / 132, 2)
        assert f["evidence"]["ncu_full_waves"] == waves
        assert f["evidence"]["ncu_full_waves_from"] == "launch__waves_per_multiprocessor"
        assert f"Nsight Compute: {waves} waves per SM" in f["summary"]


def test_without_the_waves_column_the_waves_are_unknown(tmp_path: Path, capsys: Cap) -> None:
    """The same export without launch__waves_per_multiprocessor (and no rule text): the
    launch finding stands on blocks and SMs alone, its waves unknown, not guessed."""
    doc = run_json(capsys, str(without_column(tmp_path, "launch__waves_per_multiprocessor")))
    told = [f for f in doc["findings"] if f["rule"] == "launch-too-small"]
    assert len(told) == 2
    for f in told:
        assert f["evidence"]["ncu_full_waves"] is None is f["evidence"]["ncu_full_waves_from"]
        assert "waves per SM" not in f["summary"]


def test_ncu_own_percentages_above_100_are_not_called_damaged(capsys: Cap) -> None:
    """ncu itself writes percentages of a peak above 100 (here the max over sub-partitions of
    smsp__issue_inst0, up to 108.96 %): no ``percent-out-of-range`` for this unedited file."""
    issue = "smsp__issue_inst0.max.pct_of_peak_sustained_active"
    assert max(value(r, issue) for r in kernels()) == 108.96
    doc = run_json(capsys, str(MLP))
    assert not [w for w in doc["warnings"] if w["code"] == "percent-out-of-range"]


def test_gemms_on_the_tensor_cores_are_not_told_to_move_their_math_there() -> None:
    """Issue 38 point 1: every FLOP of these kernels is an HGMMA op (bf16-matrix); a kernel
    far below that roof is told to keep the matrix cores fed, never to put its math on them."""
    import roofscope

    report = roofscope.analyze(MLP).checkup
    far = [f for f in report.findings if f.rule == "compute-far-below-roof"]
    assert len(far) == 4
    for f in far:
        assert f.evidence["ceiling"] == "bf16-matrix"
        assert f.prescription.startswith("its math already runs on the matrix cores")
        assert "put the dominant math on the matrix cores" not in f.prescription


def test_rates_of_ops_are_known_units() -> None:
    """The raw page writes the tensor ops' rates in 1/s, 1/ns and 1/cycle (896 values each
    here) and replays in 'pass': plain counts per time or cycle, not unknown units."""
    import roofscope
    from roofscope.readers.nvidia.ncu_units import unit_factor

    assert (unit_factor("1/s"), unit_factor("1/cycle")) == (1.0, 1.0)
    assert unit_factor("1/ns") == pytest.approx(1e9)
    assert unit_factor("pass") == 1.0
    report = roofscope.analyze(MLP).checkup
    [unknown] = [w for w in report.warnings if w.code == "ncu-unknown-unit"]
    assert unknown.message.endswith("kept as written: '%/byte' (4), '%/register' (4)")
