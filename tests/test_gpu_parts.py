"""A part the profile names is that part (issue 36): the export-restricted and cut-down parts
LLM users bring (H800, H20, A800, MI308X) by the names their drivers report, a name the
catalogue lacks never read as another part of its arch, ROCm's generic "AMD Radeon Graphics"
read by its arch and CU count, and an ncu details page named by its "# SMs" and "DRAM
Frequency".

The names are those of NVIDIA/open-gpu-kernel-modules README.md @df1c9a3 ("Compatible GPUs")
and of ROCm/k8s-device-plugin labeller.Dockerfile @79410fe; the peaks are the sources' figures
in data/gpus/ (H800: FP64 1 TFLOP/s; H20: FP64 1, FP32 44, TF32 74, FP16 148 dense, INT8
296 TOPS, 4.0 TB/s). superbench's cublaslt_ncu.log (CC 10.0) is a real details page: its
"# SMs" row reads 152 and its "DRAM Frequency" row 3,995,313,115.40 Hz.
"""

from __future__ import annotations

import csv
import gzip
import json

import pytest

from roofscope.analysis.device import catalogue_ceilings, choose_device
from roofscope.catalogue import devices
from roofscope.model.profile import RunInfo
from roofscope.readers.load import load
from roofscope.render.device_choice import detected_from
from tests.conftest import DATA, run_json

SUPERBENCH = DATA / "ncu" / "superbench-cublaslt-ncu" / "cublaslt_ncu.log"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA H800", "h800-sxm"),
        ("NVIDIA H800 PCIe", "h800-pcie"),
        ("NVIDIA H20", "h20"),
        ("NVIDIA A800-SXM4-80GB", "a800-sxm4-80gb"),
        ("NVIDIA A800 80GB PCIe", "a800-pcie-80gb"),
        ("AMD Instinct MI308X", "mi308x"),
        ("AMD Instinct MI308X HF VF", "mi308x"),
    ],
)
def test_the_name_a_driver_reports_is_its_part(name: str, key: str) -> None:
    assert [d.key for d in devices.resolve(name)] == [key]


def peak(key: str, name: str) -> float:
    d = devices.find(key)
    assert d is not None
    return next(c.value for c in devices.ceilings_for(d, "device") if c.name == name)


def test_h800_fp64_is_its_own_not_the_h100s() -> None:
    assert peak("h800-sxm", "fp64-vector") == 1e12
    assert peak("h800-sxm", "fp64-matrix") == 1e12
    assert peak("h100-sxm", "fp64-vector") == 34e12  # the part it was mistaken for
    assert peak("h800-sxm", "hbm") == 3350e9


def test_h800_tensor_cores_are_the_h100s() -> None:
    """The datasheet's sparse figures (1979 BF16/FP16, 3958 FP8/INT8) halved: a bf16 GEMM
    on an H800 meets the H100 SXM's matrix roof, not the FP64 cap."""
    for name, dense_tflops in (
        ("bf16-matrix", 989.5),
        ("fp16-matrix", 989.5),
        ("fp8-matrix", 1979),
    ):
        assert peak("h800-sxm", name) == dense_tflops * 1e12 == peak("h100-sxm", name)
    assert peak("h800-sxm", "tf32-matrix") == 494.5e12
    assert peak("h800-sxm", "fp32-vector") == 67e12


def test_h20_peaks() -> None:
    assert [peak("h20", n) / 1e12 for n in ("fp64-vector", "fp32-vector", "tf32-matrix")] == [
        1,
        44,
        74,
    ]
    assert peak("h20", "fp16-matrix") == 148e12
    assert peak("h20", "int8-matrix") == 296e12
    assert peak("h20", "hbm") == 4000e9


def test_a_kineto_h800_run_is_an_h800() -> None:
    """What a PyTorch trace's deviceProperties give: name, CC 9.0, 132 SMs, no clocks."""
    choice = choose_device(RunInfo(gpu="NVIDIA H800", arch="sm_90", compute_units=132), None)
    assert choice.device is not None and choice.device.key == "h800-sxm"
    assert choice.alternatives == ()
    fp64 = [c.value for c in catalogue_ceilings(choice) if c.name == "fp64-vector"]
    assert fp64 == [1e12]


def test_a_named_part_the_catalogue_lacks_is_no_other_part() -> None:
    """'NVIDIA H100' (PCI 2339) is a name no catalogue row has: not an H100 SXM or H200."""
    run = RunInfo(gpu="NVIDIA H100", arch="sm_90", compute_units=132)
    choice = choose_device(run, None)
    assert choice.device is None
    assert choice.problem is not None and "the GPU is not in the catalogue" in choice.problem


def test_amd_radeon_graphics_on_gfx950_is_read_by_arch_and_cus() -> None:
    run = RunInfo(gpu="AMD Radeon Graphics", arch="gfx950", compute_units=256)
    choice = choose_device(run, None)
    assert choice.device is not None
    keys = [d.key for d in (choice.device, *choice.alternatives)]
    assert keys == ["mi350x", "mi355x"]  # both have 256 CUs, their FLOP peaks differ
    assert [c.name for c in catalogue_ceilings(choice)] == ["hbm"]  # 8 TB/s, both


@pytest.mark.parametrize(
    ("memory_mhz", "keys"),
    [(3201.0, ["h200-sxm"]), (2619.0, ["h100-sxm", "h800-sxm"])],
)
def test_a_details_page_is_named_by_sms_and_dram_clock(memory_mhz: float, keys: list[str]) -> None:
    """132 SMs at CC 9.0: a 3.2 GHz DRAM clock is an H200 (4.8 TB/s over 6016 bits), 2.6 GHz
    an H100 SXM (3.35 TB/s over 5120 bits: 2617 MHz) or an H800, which nothing in the page
    tells apart: then only the ceilings both have, and no FP64 one (1 against 34 TFLOP/s)."""
    run = RunInfo(arch="sm_90", compute_units=132, memory_clock_mhz=memory_mhz)
    choice = choose_device(run, None)
    assert choice.device is not None
    assert [d.key for d in (choice.device, *choice.alternatives)] == keys
    fp64 = [c.value for c in catalogue_ceilings(choice) if c.name == "fp64-vector"]
    assert fp64 == ([34e12] if keys == ["h200-sxm"] else [])


def superbench_rows(label: str) -> list[str]:
    with SUPERBENCH.open(newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    return [r["Metric Value"] for r in csv.DictReader(lines) if r["Metric Name"] == label]


def test_a_real_details_page_records_its_sms_and_dram_clock() -> None:
    run = load([str(SUPERBENCH)]).run
    assert superbench_rows("# SMs") == ["152"]
    assert run.compute_units == 152
    assert run.memory_clock_mhz == float(superbench_rows("DRAM Frequency")[0]) / 1e6


def _device_entry(trace: str) -> dict[str, object]:
    """The first deviceProperties entry of a real Kineto trace, read with json alone."""
    with gzip.open(DATA / "kineto" / trace, "rt", encoding="utf-8") as f:
        entry: dict[str, object] = json.load(f)["deviceProperties"][0]
    return entry


def test_memory_tells_an_mi300x_from_an_mi325x() -> None:
    """vLLM's unnamed MI300X entries (CC 9.4, 304 CUs) fit both gfx942 parts of 304 CUs; the
    206,141,652,992 B they report is 191.98 GiB (an MI300X), not an MI325X's 256 GiB."""
    entry = _device_entry("vllm_mi300x_unnamed_graph_execution.json.gz")
    assert entry["totalGlobalMem"] == 206141652992 and entry["numSms"] == 304
    run = RunInfo(arch="gfx942", compute_units=304, memory_bytes=206141652992)
    choice = choose_device(run, None)
    assert choice.device is not None and choice.device.key == "mi300x"
    assert choice.alternatives == ()
    assert detected_from(choice) == "profile: gfx942 with 304 CUs and 192 GiB"
    both = choose_device(RunInfo(arch="gfx942", compute_units=304), None)
    assert {d.key for d in (both.device, *both.alternatives) if d} == {"mi300x", "mi325x"}


def test_memory_no_part_has_leaves_the_candidates() -> None:
    """A slice (an SR-IOV VF or MIG instance) reports less memory than any part: the count
    and arch still choose, the memory is not taken as evidence against them all."""
    run = RunInfo(arch="gfx942", compute_units=304, memory_bytes=24 * 2**30)
    choice = choose_device(run, None)
    assert {d.key for d in (choice.device, *choice.alternatives) if d} == {"mi300x", "mi325x"}


def test_an_unnamed_amd_gpu_of_cc_9_0_is_told_by_its_units_and_memory() -> None:
    """HTA's MI250 trace: "AMD Radeon Graphics", CC 9.0 (gfx900-gfx90a), 104 CUs and 64 GiB.
    Of AMD's parts only the MI210 (104 CUs, 64 GB) and one MI250 GCD (208 / 2 CUs, 128 / 2
    GB) fit; both are gfx90a, and they share their peaks (FP64 22.6 TFLOP/s, 1.6 TB/s)."""
    entry = _device_entry("mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    assert (entry["name"], entry["numSms"], entry["computeMajor"]) == (
        "AMD Radeon Graphics",
        104,
        9,
    )
    assert entry["totalGlobalMem"] == 68702699520  # 63.98 GiB
    profile = load([str(DATA / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz")])
    choice = choose_device(profile.run, None)
    assert choice.arch == "gfx90a"
    assert {d.key for d in (choice.device, *choice.alternatives) if d} == {"mi210", "mi250"}
    peaks = {c.name: c.value for c in catalogue_ceilings(choice)}
    assert peaks["fp64-vector"] == 22.6e12 and peaks["hbm"] == 1.6e12


# -- issue 38, point 9: a profiled GCD is judged against one GCD's ceilings -------------------

# AMD Instinct MI250X datasheet: FP64 vector 47.9 TFLOP/s and 3.2 TB/s of HBM2e for the
# module of two GCDs; ROCm shows each GCD as its own device, so one agent has half of each
MI250X_FP64, MI250X_HBM, GCDS = 47.9e12, 3.2e12, 2


@pytest.mark.parametrize("folder", ["laplacian", "stencils"])
def test_gpu_mi250x_judges_one_gcd(capsys: pytest.CaptureFixture[str], folder: str) -> None:
    """`--gpu mi250x` on a rocprof v1 trace of one agent: it halved every efficiency (the
    module's ceilings); now one GCD's. stencils' sysinfo reports 104 CUs (an MI250 GCD's),
    not an MI250X GCD's 110: said, with the part whose GCD has 104."""
    doc = run_json(capsys, str(DATA / "rocprofv1-mi250x" / folder), "--gpu", "mi250x")
    device = doc["device"]
    peaks = {c["name"]: c["value"] for c in device["ceilings"]}
    assert device["scope"] == "gcd"
    assert peaks["fp64-vector"] == pytest.approx(MI250X_FP64 / GCDS, rel=1e-3)
    assert peaks["hbm"] == pytest.approx(MI250X_HBM / GCDS)
    doubts = [w["message"] for w in doc["warnings"] if w["code"] == "partial-device"]
    if folder == "laplacian":  # no CU count in the trace: nothing to doubt
        assert doubts == []
        return
    assert doubts == [
        "the profile reports 104 CUs where one GCD of the catalogue's Instinct MI250X has 110 "
        "(one GCD of Instinct MI250 has 104): judged against one GCD's ceilings, which may not "
        "fit what was profiled; name the GPU it ran on with --gpu, or pass --ceilings measured "
        "on it"
    ]
