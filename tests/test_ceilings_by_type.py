"""Ceilings for every data type the counters count (issue 20, point 2).

Expected values are worked here by hand from the raw counters of Omniperf's MI200 workload
(tests/data/rocprof-compute-omniperf1-mi200, the first 12 dispatches of the shared corpus's
omniperf-v1-2022/Axes1/mi200) read with the csv module, from its roofline.csv, from the
research CSV's peaks and from the per-clock rates of shared/docs/gpu-specs.md section 2.2.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from roofscope.analysis.device import Detection, DeviceChoice, DeviceSource, gather_ceilings
from roofscope.analysis.roofline import _kernel
from roofscope.analysis.work.model import Work
from roofscope.catalogue.ceilings import Ceiling
from roofscope.catalogue.devices import catalogue, describe
from roofscope.catalogue.vector_rates import derived
from tests.conftest import DATA, SHARED_CORPUS, analyze_doc, on_every_core, run_json

OMNIPERF_MI200 = DATA / "rocprof-compute-omniperf1-mi200"
INT_KERNEL = "void benchmark_func<int, 256, 8u, 1u>(int, int*)"
HALF2_KERNEL = "void benchmark_func<__half2, 256, 8u, 1u>(__half2, __half2*)"


def raw_row(kernel: str) -> dict[str, str]:
    with (OMNIPERF_MI200 / "pmc_perf.csv").open(newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if r["KernelName"].startswith(kernel)]
    return row


def measured_fp32_vector() -> float:
    """FP32Flops of roofline.csv, GFLOP/s -> FLOP/s."""
    with (OMNIPERF_MI200 / "roofline.csv").open(newline="") as f:
        return float(next(csv.DictReader(f))["FP32Flops"]) * 1e9


def hbm_bytes(r: dict[str, str]) -> float:
    """The gfx90a HBM formula (docs/formats/amd-counters.md, "Bytes per memory level") on the
    raw TCC_EA counters."""
    n = {k: float(r[k]) for k in r if k.startswith("TCC_EA_")}
    read = 32 * n["TCC_EA_RDREQ_32B_sum"] + 64 * (n["TCC_EA_RDREQ_sum"] - n["TCC_EA_RDREQ_32B_sum"])
    written = 64 * n["TCC_EA_WRREQ_64B_sum"] + 32 * (
        n["TCC_EA_WRREQ_sum"] - n["TCC_EA_WRREQ_64B_sum"]
    )
    return read + written


def roofline_of(doc: dict[str, Any], kernel: str) -> dict[str, Any]:
    found: dict[str, Any] = next(k for k in doc["kernels"] if k["name"] == kernel)["roofline"]
    return found


def test_an_integer_kernel_sits_on_the_int32_vector_roofline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = raw_row(INT_KERNEL)
    assert (r["SQ_INSTS_VALU_INT32"], r["SQ_INSTS_VALU_INT64"]) == ("3014656", "458752")
    iops = 64 * (3014656 + 458752)  # one op per lane per instruction, as rocprof-compute
    assert iops == 222_298_112
    seconds = (int(r["EndNs"]) - int(r["BeginNs"])) / 1e9  # 93439 ns
    ceiling = measured_fp32_vector() * 64 / 128  # 64 IOP/clk/CU against 128 FLOP/clk/CU
    with (OMNIPERF_MI200 / "roofline.csv").open(newline="") as f:
        hbm_bw = float(next(csv.DictReader(f))["HBMBw"]) * 1e9
    ai = iops / hbm_bytes(r)
    roof = roofline_of(run_json(capsys, str(OMNIPERF_MI200)), INT_KERNEL)
    assert (roof["placed_by"], roof["ceiling"], roof["missing_ceiling"]) == (
        "iops",
        "int32-vector",
        None,
    )
    assert roof["iops"] == iops and roof["flops"] == 0
    assert roof["ai"]["hbm"] == pytest.approx(ai, rel=1e-12)
    assert roof["achieved_flops_s"] == pytest.approx(iops / seconds, rel=1e-12)
    # 1.66 IOP/B is below the HBM ridge (10.5e12 / 1.40e12 = 7.5 IOP/B): memory-bound
    assert hbm_bw * ai < ceiling
    assert (roof["bound"], roof["limiting_level"]) == ("memory", "hbm")
    assert roof["attainable_flops_s"] == pytest.approx(hbm_bw * ai, rel=1e-12)
    assert roof["efficiency"] == pytest.approx(iops / seconds / (hbm_bw * ai), rel=1e-12)


def test_a_half2_kernel_sits_on_the_fp16_vector_roofline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    r = raw_row(HALF2_KERNEL)
    assert r["SQ_INSTS_VALU_FMA_F16"] == "786432"  # v_pk_fma_f16, each counted once
    flops = 64 * 2 * 786432
    # the packing rule as the counters count it: 128 counted FLOP/clk/CU over the FP32
    # vector's 128 FLOP/clk/CU on gfx90a, so the measured FP32 peak itself
    ceiling = measured_fp32_vector() * 128 / 128
    assert ceiling == 21_049.045e9
    doc = run_json(capsys, str(OMNIPERF_MI200))
    fp16 = next(c for c in doc["device"]["ceilings"] if c["name"] == "fp16-vector")
    assert (fp16["value"], fp16["unit"], fp16["origin"]) == (ceiling, "FLOP/s", "measured")
    assert fp16["source"].startswith("derived: fp32-vector x 128/128: packed FP16")
    assert "roofline.csv" in fp16["source"]
    roof = roofline_of(doc, HALF2_KERNEL)
    assert (roof["placed_by"], roof["ceiling"], roof["bound"]) == ("flops", "fp16-vector", "memory")
    assert roof["flops"] == flops
    seconds = (int(r["EndNs"]) - int(r["BeginNs"])) / 1e9
    assert roof["achieved_flops_s"] == pytest.approx(flops / seconds, rel=1e-12)


def choice(key: str) -> DeviceChoice:
    device = next(d for d in catalogue() if d.key == key)
    return DeviceChoice(device, "device", Detection(DeviceSource.GPU_OPTION), None)


@pytest.mark.parametrize(
    ("key", "cus", "ghz", "fp32_vector"),
    [
        ("mi100", 120, 1.502, 23.1e12),  # gfx908: FP32 vector 128 FLOP/clk/CU
        ("mi210", 104, 1.7, 22.6e12),  # gfx90a: 128
        ("mi300x", 304, 2.1, 163.4e12),  # gfx942: 256 (counts packed FP32)
    ],
)
def test_derived_vector_ceilings_from_the_catalogue(
    key: str, cus: int, ghz: float, fp32_vector: float
) -> None:
    got = {c.name: c for c in gather_ceilings(choice(key), [], [])}
    assert got["fp32-vector"].value == fp32_vector
    per_clock = fp32_vector / (cus * ghz * 1e9)  # 128 or 256, as the docs' table says
    assert per_clock == pytest.approx(256 if key == "mi300x" else 128, rel=5e-3)
    for name, ops_per_clock in (("int32-vector", 64), ("int64-vector", 64), ("fp16-vector", 128)):
        c = got[name]
        assert c.value == pytest.approx(cus * ops_per_clock * ghz * 1e9, rel=5e-3), name
        assert c.origin == "catalogue" and c.source.startswith("derived: fp32-vector x ")
        assert c.unit_of_value == ("FLOP/s" if name == "fp16-vector" else "IOP/s")


def test_no_derived_ceilings_where_the_rates_are_not_known() -> None:
    for key in ("h100-sxm", "w7900"):  # NVIDIA; RDNA3
        names = {c.name for c in gather_ceilings(choice(key), [], [])}
        assert not names & {"int32-vector", "int64-vector", "fp16-vector"}, key


def test_roofscope_devices_shows_the_derived_ceilings_with_their_rule() -> None:
    text = describe(next(d for d in catalogue() if d.key == "mi210"))
    assert "  int32-vector device       11.3 TIOP/s\n    [derived: fp32-vector x 64/128:" in text
    assert "  fp16-vector  device       22.6 TFLOP/s\n    [derived: fp32-vector x 128/128:" in text


# -- no bound without a ceiling, on every corpus profile with counters ---------------------

AMD = SHARED_CORPUS / "amd"
NVIDIA = SHARED_CORPUS / "nvidia"


def corpus_inputs() -> list[tuple[str, ...]]:
    """Every profile of the shared corpus with counters, as CLI arguments."""
    if not SHARED_CORPUS.is_dir():
        return []
    workloads = sorted({p.parent for p in AMD.rglob("pmc_perf.csv")})
    workloads += sorted(AMD.glob("rocprof-compute-rdna35/*/"))
    rocprof = sorted(AMD.glob("hpctraining-rocprofv1-mi250x/**/results.csv"))
    rocprof += sorted(AMD.glob("rocprofiler-sdk-docs-*/counter_collection.csv"))
    ncu = sorted(NVIDIA.glob("leleucas-opanalysis-a100/*.csv"))
    ncu += sorted(NVIDIA.glob("gpu-roofline-profiler-rtx5070/*.csv"))
    ncu += sorted(NVIDIA.glob("llm-perf-opt-rtx5090/ncu-v2/*/ncu.details.csv"))
    ncu += [NVIDIA / "superbench-cublaslt-ncu" / "cublaslt_ncu.log"]
    peaks = ("--peak-flops", "30.9e12", "--peak-bw", "672e9")  # the RTX 5070's, issue 20
    return [(str(p),) for p in [*workloads, *rocprof, *ncu]] + [(str(p), *peaks) for p in ncu]


@pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="needs ../shared/corpus")
def test_no_kernel_anywhere_has_a_bound_without_a_ceiling() -> None:
    inputs = corpus_inputs()
    assert len(inputs) > 30
    placed = 0
    for args, doc in zip(inputs, on_every_core(analyze_doc, inputs), strict=True):
        for k in doc["kernels"]:
            roof = k["roofline"]
            if roof is None:
                continue
            placed += 1
            where = (args[0], k["name"])
            if roof["bound"] is not None:
                assert roof["ceiling"] is not None, where
            if roof["missing_ceiling"] is not None:
                assert (roof["bound"], roof["efficiency"]) == (None, None), where
    assert placed > 200


def test_corpus_inputs_are_those_with_counters() -> None:
    if not SHARED_CORPUS.is_dir():
        pytest.skip("needs ../shared/corpus")
    names = {Path(a[0]).name for a in corpus_inputs()}
    assert {
        "mi200",
        "MI350",
        "RDNA35_KRACKAN2",
        "counter_collection.csv",
        "gemm_naive.csv",
    } <= names


FULL_MI200 = AMD / "omniperf-v1-2022" / "Axes1" / "mi200"


@pytest.mark.skipif(not FULL_MI200.is_dir(), reason="needs ../shared/corpus")
@pytest.mark.parametrize(
    ("kernel", "ceiling", "counters", "factor", "efficiency"),
    [
        # VALU 99 % busy (SQ_ACTIVE_INST_VALU): 97.7 % of the int32 ceiling
        ("void benchmark_func<int, 256, 8u, 512u>", "int32-vector", ("INT32", "INT64"), 0.5, 0.977),
        # VALU 98 % busy: 97.6 % of the fp16-vector ceiling (a 2x one would say 49 %)
        ("void benchmark_func<__half2, 256, 8u, 512u>", "fp16-vector", ("F16",), 1.0, 0.976),
    ],
)
def test_valu_bound_integer_and_half2_kernels_reach_their_roof(
    capsys: pytest.CaptureFixture[str],
    kernel: str,
    ceiling: str,
    counters: tuple[str, ...],
    factor: float,
    efficiency: float,
) -> None:
    with (FULL_MI200 / "pmc_perf.csv").open(newline="") as f:
        (r,) = [row for row in csv.DictReader(f) if row["KernelName"].startswith(kernel)]
    with (FULL_MI200 / "roofline.csv").open(newline="") as f:
        fp32 = float(next(csv.DictReader(f))["FP32Flops"]) * 1e9
    n = {k: float(v) for k, v in r.items() if k.startswith("SQ_INSTS_VALU_")}
    if counters == ("F16",):  # 64 x (ADD + MUL + 2 FMA + TRANS), a packed FMA counted once
        work = 64 * sum(n[f"SQ_INSTS_VALU_{op}_F16"] * w for op, w in OPS)
    else:
        work = 64 * (n["SQ_INSTS_VALU_INT32"] + n["SQ_INSTS_VALU_INT64"])
    seconds = (int(r["EndNs"]) - int(r["BeginNs"])) / 1e9
    name = r["KernelName"].removesuffix(" [clone .kd]")  # the name without its clone suffix
    roof = roofline_of(run_json(capsys, str(FULL_MI200)), name)
    assert (roof["ceiling"], roof["bound"]) == (ceiling, "compute")
    assert roof["efficiency"] == pytest.approx(work / seconds / (fp32 * factor), rel=1e-9)
    assert round(roof["efficiency"], 3) == efficiency


OPS = (("ADD", 1), ("MUL", 1), ("FMA", 2), ("TRANS", 1))


def test_a_kernel_without_its_ceiling_says_so_in_text_and_html(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from roofscope.cli.app import main

    html = tmp_path / "r.html"
    from tests.test_diagnosis import unnamed_gfx950

    assert main(["analyze", str(unnamed_gfx950(tmp_path)), "--html", str(html)]) == 0
    text = capsys.readouterr().out
    # the roofline table's row: the short name, vecCopy(double*, ...) without its parameters
    (row,) = [line for line in text.splitlines() if line.startswith("vecCopy ")]
    assert row.split()[-5:] == ["-", "-", "no", "int32-vector", "ceiling"]  # eff., bound
    assert "<td>- (no int32-vector ceiling)</td>" in html.read_text(encoding="utf-8")


# -- which work places a kernel -------------------------------------------------------------

FP32 = Ceiling("compute", 22.6e12, "t", "user", dtype="fp32", unit="vector")
INT32 = Ceiling("compute", 11.3e12, "t", "user", dtype="int32", unit="vector")
HBM = {"hbm": Ceiling("memory", 1.6e12, "t", "user", level="hbm")}


def test_floating_point_work_comes_before_integer_work() -> None:
    """1e9 FLOPs beside 4e9 IOPs of address arithmetic: the FP32 roofline, 1e9 / 1e9 B."""
    w = Work({"fp32-vector": 1e9, "int32-vector": 4e9}, {"hbm": 1e9}, "counters")
    k = _kernel("k", 1, 1e-3, w, {"fp32-vector": FP32, "int32-vector": INT32}, HBM)
    assert (k.placed_by, k.ceiling, k.intensity["hbm"], k.achieved_flops_s) == (
        "flops",
        "fp32-vector",
        1.0,
        1e12,
    )
    only_ints = Work({"fp32-vector": 0.0, "int32-vector": 4e9}, {"hbm": 1e9}, "counters")
    k = _kernel("k", 1, 1e-3, only_ints, {"fp32-vector": FP32, "int32-vector": INT32}, HBM)
    assert (k.placed_by, k.ceiling, k.bound) == ("iops", "int32-vector", "memory")
    assert k.efficiency == 4e12 / (1.6e12 * 4.0)  # 4 IOP/B < ridge 11.3 / 1.6 = 7.06


def test_iops_without_known_flops_do_not_place_a_kernel() -> None:
    """Counters that give integer ops but no FP counts: its FP work may be the most."""
    w = Work({"int32-vector": 4e9}, {"hbm": 1e9}, "counters")
    k = _kernel("k", 1, 1e-3, w, {"fp32-vector": FP32, "int32-vector": INT32}, HBM)
    assert (k.placed_by, k.ceiling, k.bound, k.efficiency) == ("bandwidth", "hbm", "memory", 0.625)


def test_work_without_its_ceiling_has_no_bound() -> None:
    w = Work({"fp16-vector": 1e9}, {"hbm": 1e9}, "counters")
    k = _kernel("k", 1, 1e-3, w, {"fp32-vector": FP32}, HBM)
    assert (k.placed_by, k.missing_ceiling, k.ceiling) == ("flops", "fp16-vector", None)
    assert (k.bound, k.attainable_flops_s, k.efficiency, k.limiting_level) == (None,) * 4
    assert k.achieved_flops_s == 1e12 and k.intensity == {"hbm": 1.0}


def test_every_derived_ceiling_names_its_rule_and_its_fp32_source() -> None:
    """`roofscope devices`: each derived ceiling carries the rule and the FP32 value's own
    source (the catalogue's, or the per-GCD or per-XCD share of it)."""
    derived_any = 0
    for d in catalogue():
        text = describe(d)
        for scope in {c.scope for c in d.ceilings}:
            fp32 = [c for c in d.ceilings if c.scope == scope and c.name == "fp32-vector"]
            for c in derived(d.ceilings, d.arch):
                if c.scope != scope:
                    continue
                derived_any += 1
                assert c.source.startswith("derived: fp32-vector x "), c.source
                assert c.source.endswith(f"fp32-vector from {fp32[0].source}"), c.source
                assert c.source in text
    # int32, int64 and fp16 for the 11 gfx9 rows, MI250 and MI250X per GCD too, and the 5
    # MI300/MI350 parts per XCD too
    assert derived_any == 3 * (11 + 2 + 5)
