"""GPUs as users name them (``--gpu``) and as profiles name them, end to end.

Expected ceilings are the vendors' datasheet and whitepaper figures, written here by hand
(TFLOP/s x 1e12, GB/s x 1e9), never read back from the catalogue.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, SHARED_CORPUS

SUMMARY = DATA / "summary" / "kernels.csv"  # a profile that names no GPU
NSYS_5090 = SHARED_CORPUS / "nvidia" / "zisk-zorch-nsys-rtx5090" / "host_cuda_gpu_trace.csv"
NCU_5070 = SHARED_CORPUS / "nvidia" / "gpu-roofline-profiler-rtx5070"
needs_corpus = pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="needs ../shared/corpus")


def device_of(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["analyze", *args, "--json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc["device"]


def ceilings(device: dict[str, Any]) -> dict[str, float]:
    return {c["name"]: c["value"] for c in device["ceilings"] if c["origin"] == "catalogue"}


@pytest.mark.parametrize(
    ("name", "key", "fp32", "hbm"),
    [  # one part each: its datasheet's FP32 vector TFLOP/s and memory GB/s
        ("rtx 4090", "rtx4090", 82.6, 1008),  # Ada whitepaper
        ("4090", "rtx4090", 82.6, 1008),
        ("t4", "t4", 8.1, 320),  # NVIDIA T4 datasheet
        ("mi300x", "mi300x", 163.4, 5300),  # AMD Instinct MI300X data sheet
        ("rx 7900 xtx", "rx7900xtx", 61.4, 960),  # AMD product page; 20 Gbps x 384 / 8
        ("l4", "l4", 30.3, 300),  # NVIDIA L4 datasheet
        ("l40s", "l40s", 91.6, 864),  # NVIDIA L40S datasheet
        ("rtx 5090", "rtx5090", 104.8, 1792),  # RTX Blackwell whitepaper
    ],
)
def test_a_natural_name_of_one_part(
    capsys: pytest.CaptureFixture[str], name: str, key: str, fp32: float, hbm: float
) -> None:
    device = device_of(capsys, str(SUMMARY), "--gpu", name)
    assert (device["key"], device["alternatives"], device["detected_from"]) == (key, [], "--gpu")
    got = ceilings(device)
    assert got["fp32-vector"] == pytest.approx(fp32 * 1e12, rel=1e-9)
    assert got["hbm"] == pytest.approx(hbm * 1e9, rel=1e-9)


def test_a100_gives_the_ceilings_all_four_parts_share(capsys: pytest.CaptureFixture[str]) -> None:
    """NVIDIA A100 datasheet: 9.7 TF FP64, 19.5 FP32 and FP64 Tensor, 156 TF32, 312 FP16/BF16
    dense, 624 INT8 on every A100; memory 1,555 (40 GB), 1,935 (80 GB PCIe), 2,039 GB/s (80 GB
    SXM) differ, so no memory ceiling."""
    device = device_of(capsys, str(SUMMARY), "--gpu", "a100")
    assert device["key"] == "a100-pcie-40gb"
    assert device["alternatives"] == ["a100-sxm4-40gb", "a100-pcie-80gb", "a100-sxm4-80gb"]
    assert device["detected_from"] == (
        "--gpu a100: the ceilings A100 PCIe 40GB, A100 SXM4 40GB, A100 PCIe 80GB, A100 SXM4 80GB "
        "share"
    )
    assert ceilings(device) == {
        "fp64-vector": 9.7e12,
        "fp64-matrix": 19.5e12,
        "fp32-vector": 19.5e12,
        "tf32-matrix": 156e12,
        "fp16-matrix": 312e12,
        "bf16-matrix": 312e12,
        "int8-matrix": 624e12,
    }


def test_h200_and_v100_share_their_bandwidth_only(capsys: pytest.CaptureFixture[str]) -> None:
    """H200 SXM and NVL: 4.8 TB/s both, 67 vs 60 TF FP32 (H200 datasheet). V100 PCIe and SXM2:
    900 GB/s both, 14 vs 15.7 TF FP32 (V100 datasheet)."""
    h200 = device_of(capsys, str(SUMMARY), "--gpu", "h200")
    assert (h200["key"], h200["alternatives"]) == ("h200-nvl", ["h200-sxm"])
    assert ceilings(h200) == {"hbm": 4800e9}
    v100 = device_of(capsys, str(SUMMARY), "--gpu", "v100")
    assert (v100["key"], v100["alternatives"]) == ("v100-pcie", ["v100-sxm2"])
    assert ceilings(v100) == {"hbm": 900e9}


def test_h100_parts_share_no_ceiling_and_the_report_says_which_to_pass(
    capsys: pytest.CaptureFixture[str],
) -> None:
    device = device_of(capsys, str(SUMMARY), "--gpu", "h100")
    assert device["key"] is None and device["ceilings"] == []
    assert device["problem"] == (
        "no roofline: --gpu h100 fits H100 PCIe, H100 NVL, H100 SXM, whose peaks differ: they "
        "share no ceiling; pass the one profiled: h100-pcie, h100-nvl, h100-sxm"
    )


def test_devices_lists_the_parts_of_a_shared_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices", "h200"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "'h200' fits 2 parts; `roofscope devices KEY` shows one:"
    assert out.splitlines()[-1] == "ceilings they share (used for --gpu h200): hbm"


def test_an_unknown_name_gets_parts_of_its_generation_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["analyze", str(SUMMARY), "--gpu", "rtx 5080 super"]) == 2
    err = capsys.readouterr().err
    assert "other parts of its generation: rtx5080" in err and "4090" not in err


# --- profiles that name their GPU ---------------------------------------------------------------
@needs_corpus
def test_rtx5090_nsys_export_gets_its_catalogue_ceilings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    device = device_of(capsys, str(NSYS_5090))
    assert (device["key"], device["detected_from"]) == (
        "rtx5090",
        "profile: NVIDIA GeForce RTX 5090",
    )
    got = ceilings(device)  # RTX Blackwell whitepaper, RTX 5090: 104.8 TF, 28 Gbps x 512 / 8
    assert got["fp32-vector"] == 104.8e12
    assert got["hbm"] == 28e9 * 512 / 8


@needs_corpus
def test_a_t4_nsys_export_gets_its_catalogue_ceilings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The RTX 5090 export with its Device column as a T4 machine writes it."""
    text = NSYS_5090.read_text(encoding="utf-8")
    assert text.count("NVIDIA GeForce RTX 5090 (0)") == 8
    t4 = tmp_path / "host_cuda_gpu_trace.csv"
    t4.write_text(text.replace("NVIDIA GeForce RTX 5090 (0)", "Tesla T4 (0)"), encoding="utf-8")
    device = device_of(capsys, str(t4))
    assert (device["key"], device["detected_from"]) == ("t4", "profile: Tesla T4")
    got = ceilings(device)  # T4 datasheet: 8.1 TF FP32, 320 GB/s; Turing whitepaper: 40 SMs
    assert got["fp32-vector"] == 8.1e12
    assert got["hbm"] == 320e9
    assert got["fp32-vector"] == pytest.approx(40 * 64 * 2 * 1.59e9, rel=0.01)


@needs_corpus
def test_rtx5070_ncu_profile_with_its_natural_name(capsys: pytest.CaptureFixture[str]) -> None:
    """The ncu CSVs carry compute capability 12.0 but no device name: seven catalogue parts are
    sm_120, so the profile alone gets no ceilings and names the candidates; --gpu 'rtx 5070'
    gives NVIDIA's: 48 SMs x 256 FLOP/clk x 2.51 GHz, 28 Gbps x 192 bits / 8."""
    alone = device_of(capsys, str(NCU_5070))
    assert alone["key"] is None
    assert "the profile names only its arch, sm_120, which 7 parts share" in alone["problem"]
    named = device_of(capsys, str(NCU_5070), "--gpu", "rtx 5070")
    assert named["key"] == "rtx5070"
    got = ceilings(named)
    assert got["fp32-vector"] == pytest.approx(48 * 256 * 2.51e9, rel=1e-3)
    assert got["hbm"] == 28e9 * 192 / 8
