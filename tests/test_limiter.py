"""The limiter (issue 20, point 1): each kernel's busiest unit and how near its peak, worked
out by hand from the raw counters of real profiles; and the diagnosis obeying it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from roofscope.errors import RoofscopeError
from roofscope.readers.load import load
from roofscope.report import analyse
from tests.conftest import (
    DATA,
    PEAKS,
    SHARED_CORPUS,
    SUMMARY,
    SUMMARY_WORK,
    on_every_core,
    plain_html,
    run_json,
)

OMNIPERF_MI200 = SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1/mi200"
RTX5070 = SHARED_CORPUS / "nvidia/gpu-roofline-profiler-rtx5070"
RTX5070_PEAKS = ["--peak-flops", "30.9e12", "--peak-bw", "672e9"]
needs_corpus = pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="needs ../shared/corpus")
# prescriptions about memory access, bytes or latency hiding
MEMORY_SIDE = ("memory-far-below-roof", "memory-near-roof", "low-l2-hit-rate", "occupancy-limited")


def kernel(doc: dict[str, Any], prefix: str) -> dict[str, Any]:
    (found,) = [k for k in doc["kernels"] if k["name"].startswith(prefix)]
    return found


def rules(doc: dict[str, Any], name: str) -> list[str]:
    return [f["rule"] for f in doc["findings"] if f["kernel"] == name]


def busiest(k: dict[str, Any]) -> tuple[str, str, str, float]:
    b = k["limiter"]["busiest"]
    return b["unit"], b["side"], b["evidence"], b["pct_of_peak"]


@needs_corpus
def test_integer_kernel_is_valu_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """Omniperf MI200 ``benchmark_func<int, 256, 8u, 512u>`` (pmc_perf.csv; sysinfo.csv
    numCU 104, one XCD): VALU Utilization = 100 * SQ_ACTIVE_INST_VALU / (GRBM_GUI_ACTIVE *
    CUs) = 100 * 540,934,144 / (5,256,429 * 104) = 98.951 %. It counts no FLOPs, so the
    roofline placed it by bandwidth (2.8 % of HBM) and told it to fix its access pattern."""
    doc = run_json(capsys, str(OMNIPERF_MI200))
    k = kernel(doc, "void benchmark_func<int, 256, 8u, 512u>")
    assert busiest(k)[:3] == ("VALU", "compute", "VALU Utilization")
    assert busiest(k)[3] == pytest.approx(100 * 540_934_144 / (5_256_429 * 104), rel=1e-9)
    found = rules(doc, k["name"])
    assert "compute-near-roof" in found and not set(found) & set(MEMORY_SIDE)


@needs_corpus
def test_half2_kernel_is_valu_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """Omniperf MI200 ``benchmark_func<__half2, 256, 8u, 512u>``: 100 * 272,826,368 /
    (2,673,811 * 104) = 98.112 % VALU Utilization; its packed-FP16 FLOPs have no ceiling."""
    doc = run_json(capsys, str(OMNIPERF_MI200))
    k = kernel(doc, "void benchmark_func<__half2, 256, 8u, 512u>")
    assert busiest(k)[:3] == ("VALU", "compute", "VALU Utilization")
    assert busiest(k)[3] == pytest.approx(100 * 272_826_368 / (2_673_811 * 104), rel=1e-9)
    assert not set(rules(doc, k["name"])) & set(MEMORY_SIDE)


@needs_corpus
def test_ncu_gemm_naive_is_sm_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """RTX 5070 gemm_naive.csv, no FLOP counters: sm__throughput.avg.pct_of_peak_sustained_
    elapsed "97.32"; DRAM (54,207,744 + 26,601,216) B / 9,589,248 ns / 672 GB/s = 1.254 %.
    Before the limiter: memory-bound at 1.3 % with a 1.89x Amdahl bound."""
    doc = run_json(capsys, str(RTX5070 / "gemm_naive.csv"), *RTX5070_PEAKS)
    k = kernel(doc, "unnamed>::gemm_naive_kernel")
    assert busiest(k) == ("SM", "compute", "Compute (SM) Throughput", pytest.approx(97.32))
    hbm = next(u for u in k["limiter"]["units"] if u["unit"] == "hbm")
    assert hbm["pct_of_peak"] == pytest.approx(
        100 * (54_207_744 + 26_601_216) / 9.589248e-3 / 672e9
    )
    # an issue measure: busy, not at the hardware's limit (issue 38; tests/test_launch_busy.py)
    (f,) = [f for f in doc["findings"] if f["rule"] == "busy-not-at-roof"]
    assert f["evidence"]["pct_of_peak"] == pytest.approx(97.32)
    assert not set(rules(doc, k["name"])) & set(MEMORY_SIDE)
    # placed by bandwidth alone (its work unknown), it is not called memory-bound beside an SM
    # at 97 %: the table's Bound reads '-', the limiter says the rest
    roof = k["roofline"]
    assert (roof["placed_by"], roof["bound"]) == ("bandwidth", None)
    assert roof["efficiency"] == pytest.approx(hbm["pct_of_peak"] / 100)


def test_saxpy_placed_by_bandwidth_stays_memory_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """saxpy's busiest unit is DRAM (90.35 %): a bandwidth placement keeps its bound."""
    doc = run_json(
        capsys, str(DATA / "ncu/gpu-roofline-profiler-rtx5070/saxpy.csv"), *RTX5070_PEAKS
    )
    roof = kernel(doc, "unnamed>::saxpy_kernel")["roofline"]
    assert (roof["placed_by"], roof["bound"]) == ("bandwidth", "memory")


def test_ncu_saxpy_is_dram_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """RTX 5070 saxpy.csv: (134,221,568 + 43,631,104) B / 292,928 ns / 672 GB/s = 90.350 %
    of DRAM; the SM at 22.30 % (sm__throughput)."""
    doc = run_json(
        capsys, str(DATA / "ncu/gpu-roofline-profiler-rtx5070/saxpy.csv"), *RTX5070_PEAKS
    )
    k = kernel(doc, "unnamed>::saxpy_kernel")
    hbm = 100 * (134_221_568 + 43_631_104) / 292.928e-6 / 672e9
    assert busiest(k) == ("hbm", "memory", "roofline: hbm ceiling", pytest.approx(hbm, rel=1e-9))
    second = k["limiter"]["units"][1]
    assert (second["unit"], second["pct_of_peak"]) == ("SM", pytest.approx(22.30))
    assert "memory-near-roof" in rules(doc, k["name"])


def test_ncu_details_page_without_flops(capsys: pytest.CaptureFixture[str]) -> None:
    """llm-perf-opt RTX 5090 kernel_0001 (cuBLAS BF16 GEMV), ncu.details.csv, GPU Speed Of
    Light Throughput rows: Memory Throughput 19.66 %, DRAM Throughput 19.66 %, L1/TEX Cache
    Throughput 11.55 %, Compute (SM) Throughput 9.15 %: the memory side, far from its peak."""
    path = DATA / "ncu/llm-perf-opt-rtx5090/kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
    doc = run_json(capsys, str(path / "ncu.details.csv"))
    k = doc["kernels"][0]
    assert busiest(k) == ("memory", "memory", "Memory Throughput", pytest.approx(19.66))
    units = {u["evidence"]: u["pct_of_peak"] for u in k["limiter"]["units"]}
    assert units["DRAM Throughput"] == pytest.approx(19.66)
    assert units["L1/TEX Cache Throughput"] == pytest.approx(11.55)
    assert units["Compute (SM) Throughput"] == pytest.approx(9.15)


def test_mi350_vcopy_everything_low(capsys: pytest.CaptureFixture[str]) -> None:
    """rocprof-compute MI350 vcopy (pmc_perf.csv, 3 dispatches; sysinfo cu_per_gpu 128,
    num_xcd 8): SALU Utilization = mean of 100 * SQ_ACTIVE_INST_SCA / (GRBM_GUI_ACTIVE / 8 *
    128) = 100 * 114,688 / (G / 8 * 128) for G = 78,383, 64,716, 62,877 -> 9.1448, 11.0761,
    11.4000 -> 10.540 %. Every unit is under 50 % (latency-bound): the busiest being a
    compute unit decides nothing, and the copy keeps its memory verdict (against the
    MI355X's ceilings, as test_diagnosis reads it)."""
    doc = run_json(capsys, str(DATA / "rocprof-compute-mi350"), "--gpu", "MI355X")
    k = kernel(doc, "vecCopy(")
    per_dispatch = [100 * 114_688 / (g / 8 * 128) for g in (78_383, 64_716, 62_877)]
    assert busiest(k) == (
        "SALU",
        "compute",
        "SALU Utilization",
        pytest.approx(sum(per_dispatch) / 3),
    )
    assert "memory-far-below-roof" in rules(doc, k["name"])


RAW_CWA = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","gpu__time_duration.sum",'
    '"sm__instruction_throughput.avg.pct_of_peak_sustained_active",'
    '"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",'
    '"sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"\n'
    '"","","","","","","","","","","","usecond","%","%","%"\n'
    '"0","4242","python3","127.0.0.1","gemm_bf16_tc","1","7","(128, 1, 1)","(170, 1, 1)","0",'
    '"12.0","111.81","61.40","69.60","12.50"\n'
)


def test_compute_workload_raw_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A raw page with only Compute Workload Analysis metrics (synthetic: no such real page in
    the corpus; the values are the issue's): no FLOPs, no bytes, so no roofline; the tensor
    pipe (69.6 %) and SM Busy (61.4 %) show in the terminal, JSON and HTML, and the limiter
    names the tensor pipe."""
    path = tmp_path / "cwa.csv"
    path.write_text(RAW_CWA)
    doc = run_json(capsys, str(path))
    k = doc["kernels"][0]
    assert busiest(k) == (
        "Tensor (HMMA) pipe (cycles)",
        "compute",
        "Tensor (HMMA) Pipe Cycles Active",
        pytest.approx(69.6),
    )
    assert k["metrics"]["SM Busy"]["value_dispatch_mean"] == pytest.approx(61.4)
    assert main(["analyze", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Tensor (HMMA) Pipe Cycles Active 69.6 %" in text and "SM Busy 61.4 %" in text
    assert "Tensor (HMMA) pipe (cycles) 69.6% (Tensor (HMMA) Pipe Cycles Active)" in text
    html = tmp_path / "r.html"
    assert main(["analyze", str(path), "--html", str(html)]) == 0
    page = plain_html(html.read_text())
    assert '<table id="limiter">' in page and "<td>69.6%</td>" in page
    assert "<th>SM Busy</th>" in page and "61.4 %" in page


def test_percentage_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """saxpy.csv with its sm__throughput "22.30" made "-4.00": no share of a peak; the SM
    leaves the limiter with a warning, and the DRAM (90.350 %) still leads it. (ncu's own
    above 100 is ncu's number: test_own_bookkeeping.py.)"""
    real = DATA / "ncu/gpu-roofline-profiler-rtx5070/saxpy.csv"
    text = real.read_text(encoding="utf-8-sig")
    assert text.count('"%","22.30"') == 1
    path = tmp_path / "saxpy.csv"
    path.write_text(text.replace('"%","22.30"', '"%","-4.00"'))
    doc = run_json(capsys, str(path), *RTX5070_PEAKS)
    k = kernel(doc, "unnamed>::saxpy_kernel")
    assert [u["unit"] for u in k["limiter"]["units"]] == ["hbm"]
    (w,) = [w for w in doc["warnings"] if w["code"] == "percent-out-of-range"]
    assert "Compute (SM) Throughput reads -4 %" in w["message"]


def test_the_summary_example(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's four kernels (kernels.csv TotalTimeNs; --work FLOPs:bytes; 22.6 TFLOP/s,
    1.6 TB/s): vector_add 8e8 B / 3.2 ms / 1.6e12 = 15.625 % of HBM; mat_mul 2.6e10 FLOP /
    1.3 ms / 22.6e12 = 88.496 % of fp32-vector; layer_norm 2.4e8 / 0.5 ms / 1.6e12 = 30 %;
    softmax 6.4e8 / 0.8 ms / 1.6e12 = 50 %. The findings are unchanged: vector_add, then
    layer_norm, both memory-far-below-roof."""
    doc = run_json(capsys, str(SUMMARY), *SUMMARY_WORK, *PEAKS)
    expected = {
        "vector_add": ("hbm", 100 * 8e8 / 3.2e-3 / 1.6e12),
        "mat_mul": ("fp32-vector", 100 * 2.6e10 / 1.3e-3 / 22.6e12),
        "layer_norm": ("hbm", 100 * 2.4e8 / 0.5e-3 / 1.6e12),
        "softmax": ("hbm", 100 * 6.4e8 / 0.8e-3 / 1.6e12),
    }
    for name, (unit, pct) in expected.items():
        got = busiest(kernel(doc, name))
        assert (got[0], got[3]) == (unit, pytest.approx(pct, rel=1e-9)), name
    got = [(f["rule"], f["kernel"]) for f in doc["findings"]]
    assert got == [("memory-far-below-roof", "vector_add"), ("memory-far-below-roof", "layer_norm")]


# -- the whole corpus ------------------------------------------------------------------------


def corpus_profiles() -> list[Path]:
    """Every rocprof-compute workload folder and every other file of the corpus."""
    workloads = sorted({p.parent for p in SHARED_CORPUS.rglob("pmc_perf.csv")})
    files = [
        p
        for p in sorted(SHARED_CORPUS.rglob("*"))
        if p.is_file()
        and p.suffix in (".csv", ".json", ".db", ".log", ".gz", ".sqlite")
        and not any(w in p.parents for w in workloads)
    ]
    return [*workloads, *files]


def busy_findings(path: Path) -> list[tuple[str, str, str]] | None:
    """(kernel, rule, busiest unit) of each finding on a kernel whose busiest compute unit is
    at 60 % of its peak or more; None for a profile without counters or one refused."""
    try:
        profile = load([str(path)])
    except RoofscopeError:
        return None
    if profile.count("counters") == 0:
        return None
    report = analyse(profile)
    out = []
    for f in report.findings:
        lim = report.limiters.get(f.kernel or "")
        if lim is not None and (lim.compute_pct or 0) >= 60:
            out.append((f.kernel or "", f.rule, str(lim.busiest)))
    return out


@needs_corpus
def test_no_memory_prescription_for_busy_compute_units() -> None:
    """On every corpus profile with counters, no kernel whose busiest compute unit is at
    60 % of its peak or more gets a memory-side prescription."""
    paths = corpus_profiles()
    found = on_every_core(busy_findings, paths)
    checked = sum(f is not None for f in found)
    busy = [(path, *b) for path, f in zip(paths, found, strict=True) for b in f or []]
    assert [b for b in busy if b[2] in MEMORY_SIDE] == []
    assert checked >= 20 and len(busy) >= 50
