"""Ceilings derived from the profile's own device attributes (issue 23, point 4): a GPU in no
catalogue, or one whose SM count its named part does not have, gets its peaks from what the
profiler recorded; values worked out by hand from the attributes in the files (the H200 ncu
file records 132 SMs, 1,980,000 kHz, 3,201,000 kHz and 6,016 bits) and the per-clock rates
the vendors publish (sm_90: 128 FP32 lanes per SM, CUDA programming guide; gfx90a: 128
FP32 and 256 FP64-matrix FLOP/clk/CU, ROCm docs mi250.md)."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from roofscope.analysis.device import (
    Detection,
    DeviceChoice,
    DeviceSource,
    from_profile_attributes,
)
from roofscope.catalogue import from_attributes
from roofscope.model.profile import RunInfo
from roofscope.readers.load import load
from roofscope.readers.torch import kineto_meta
from tests.conftest import DATA, run_json

H200 = DATA / "ncu" / "roofscope-profile-h200" / "ncu.csv"
STENCILS = DATA / "rocprofv1-mi250x" / "stencils"
KINETO_A100 = DATA / "kineto" / "event_sync_trace.json.gz"
PREFIX = "derived from the profile's device attributes"
FP32_H200 = 132 * 256 * 1.98e9  # 132 SMs x 128 lanes x 2 FLOP x 1980 MHz = 66.9 TFLOP/s
HBM_H200 = 2 * 3.201e9 * 6016 / 8  # 4.81 TB/s (NVIDIA's H200 figure: 4.8 TB/s)


def ceilings(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in doc["device"]["ceilings"]}


def edited(tmp_path: Path, source: Path, old: str, new: str, count: int) -> Path:
    """A copy of ``source`` with ``old`` replaced by ``new``, which occurs ``count`` times."""
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == count
    out = tmp_path / source.name
    out.write_text(text.replace(old, new), encoding="utf-8")
    return out


def test_the_readers_keep_the_device_attributes() -> None:
    """ncu: 132 SMs, max_gpu_frequency_khz 1,980,000, max_mem_frequency_khz 3,201,000,
    global_memory_bus_width 6,016; rocminfo (the GPU agents): 104 CUs, 1700 MHz."""
    run = load([str(H200)]).run
    assert (run.gpu, run.arch, run.compute_units) == ("NVIDIA H200", "sm_90", 132)
    assert (run.clock_mhz, run.memory_clock_mhz, run.bus_width_bits) == (1980, 3201, 6016)
    run = load([str(STENCILS / "results.csv")]).run
    assert (run.arch, run.compute_units, run.clock_mhz) == ("gfx90a", 104, 1700)
    assert (run.memory_clock_mhz, run.bus_width_bits) == (None, None)


def test_the_h200_profile_keeps_its_catalogue_ceilings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    device = run_json(capsys, str(H200))["device"]
    assert (device["key"], device["detected_from"]) == ("h200-sxm", "profile: NVIDIA H200")
    assert not any(c["source"].startswith(PREFIX) for c in device["ceilings"])


def test_a_name_in_no_catalogue_gets_ceilings_from_the_attributes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # every launch of the file records the display name: 10 launches
    path = edited(tmp_path, H200, '"NVIDIA H200"', '"NVIDIA Test Board QS"', 10)
    doc = run_json(capsys, str(path))
    device = doc["device"]
    assert device["key"] is None
    assert (device["name"], device["arch"]) == ("NVIDIA Test Board QS", "sm_90")
    assert device["detected_from"] == f"{PREFIX}: NVIDIA Test Board QS is in no catalogue"
    got = ceilings(doc)
    assert got["fp32-vector"]["value"] == pytest.approx(FP32_H200, rel=1e-12)
    assert got["fp32-vector"]["source"] == (
        f"{PREFIX}: 132 SMs x 256 FLOP/clk/SM (sm_90, CUDA C++ Programming Guide) x 1980 MHz "
        "= 66.9 TFLOP/s"
    )
    assert got["hbm"]["value"] == pytest.approx(HBM_H200, rel=1e-12)
    assert got["hbm"]["source"] == (
        f"{PREFIX}: hbm = 2 x 3201 MHz memory clock x 6016-bit bus / 8 = 4.81 TB/s"
    )
    # FP64 at half the FP32 rate (64 results/clk/SM); bf16 tensor 2048 FMA/clk/SM
    assert got["fp64-vector"]["value"] == pytest.approx(132 * 128 * 1.98e9, rel=1e-12)
    assert got["bf16-matrix"]["value"] == pytest.approx(132 * 4096 * 1.98e9, rel=1e-12)
    assert got["bf16-matrix"]["source"].endswith(" x 1980 MHz = 1.07 PFLOP/s")
    assert doc["run"]["gpu"] == "NVIDIA Test Board QS"


def test_an_sm_count_the_named_part_lacks_gets_them_too_and_says_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = '"device__attribute_multiprocessor_count","","132"'
    path = edited(tmp_path, H200, old, old.replace("132", "100"), 10)
    doc = run_json(capsys, str(path))
    device = doc["device"]
    assert (device["key"], device["name"]) == (None, "NVIDIA H200")
    assert device["detected_from"] == (
        f"{PREFIX}: the profile reports 100 SMs where H200 SXM has 132"
    )
    got = ceilings(doc)
    assert got["fp32-vector"]["value"] == pytest.approx(100 * 256 * 1.98e9, rel=1e-12)
    assert got["hbm"]["value"] == pytest.approx(HBM_H200, rel=1e-12)
    # the catalogue's whole-H200 ceilings are no longer in doubt: no partial-device warning
    assert "partial-device" not in {w["code"] for w in doc["warnings"]}


def test_rocminfo_gives_compute_ceilings_and_says_bandwidth_is_unknown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """rocminfo records the CU count (104) and maximum clock (1700 MHz) but no memory clock
    or bus width: compute ceilings, no hbm."""
    for name in ("results.csv", "results.stats.csv"):
        (tmp_path / name).write_bytes((STENCILS / name).read_bytes())
    # the eight GPU agents of the node
    edited(tmp_path, STENCILS / "results.sysinfo.txt", "AMD Instinct MI250X/MI250", "AMD QS", 8)
    doc = run_json(capsys, str(tmp_path / "results.csv"))
    device = doc["device"]
    assert device["detected_from"] == (
        f"{PREFIX}: AMD QS is in no catalogue; the profile does not record its memory clock "
        "or its memory bus width"
    )
    got = ceilings(doc)
    assert got["fp32-vector"]["value"] == pytest.approx(104 * 128 * 1.7e9, rel=1e-12)
    assert got["fp64-matrix"]["value"] == pytest.approx(104 * 256 * 1.7e9, rel=1e-12)
    assert "hbm" not in got


def _kineto_meta(name: str) -> dict[str, Any]:
    with gzip.open(KINETO_A100, "rt", encoding="utf-8") as f:
        meta: dict[str, Any] = json.load(f)
    for entry in meta["deviceProperties"]:
        entry["name"] = name
    return meta


def test_kineto_records_no_clock_so_no_ceiling_and_the_message_says_so() -> None:
    """deviceProperties of a real A100 trace: name, 108 SMs, 42,297,524,224 bytes, 8.0; no
    clock and no memory bus."""
    run = kineto_meta.run_info(_kineto_meta("NVIDIA Test Board QS"), 0)
    assert (run.arch, run.compute_units, run.memory_bytes) == ("sm_80", 108, 42_297_524_224)
    assert (run.clock_mhz, run.memory_clock_mhz, run.bus_width_bits) == (None, None, None)
    unknown = DeviceChoice(None, "device", None, "the GPU is not in the catalogue: X")
    choice = from_profile_attributes(unknown, run)
    assert choice.attribute_ceilings == ()
    assert choice.problem == (
        "the GPU is not in the catalogue: X; no ceilings from its device attributes either: "
        "the profile does not record its engine clock, its memory clock or its memory bus width"
    )


def test_a_gpu_given_with_gpu_is_kept() -> None:
    run = RunInfo(gpu="NVIDIA Test Board QS", arch="sm_90", compute_units=132, clock_mhz=1980)
    given = DeviceChoice(None, "device", Detection(DeviceSource.GPU_OPTION), None)
    assert from_profile_attributes(given, run) is given


def test_an_arch_without_rates_is_named() -> None:
    run = RunInfo(arch="gfx1036", compute_units=2, clock_mhz=2200)
    got = from_attributes.derive(run)
    assert got.ceilings == ()
    assert from_attributes.shortfall(got) == (
        "roofscope has no rates per clock for gfx1036; the profile does not record its memory "
        "clock or its memory bus width"
    )


def test_every_arch_has_its_identity_and_an_fp32_rate_with_a_source() -> None:
    root = Path(__file__).resolve().parents[1] / "data" / "gpus"
    with (root / "archs.sources.csv").open(newline="", encoding="utf-8") as f:
        ids = {r["id"] for r in csv.DictReader(f)}
    table = from_attributes.archs()
    assert len(table) == 24
    for arch in table.values():
        assert arch.unit == ("SM" if arch.arch.startswith("sm_") else "CU")
        assert "fp32-vector" in arch.rates
    with (root / "archs.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["field"] not in ("vendor", "family", "unit"):
                assert row["source"] in ids and row["where"], row


def test_the_vector_rules_use_the_arch_tables_fp32_rates() -> None:
    from roofscope.catalogue.vector_rates import FP32_PER_CLOCK

    table = from_attributes.archs()
    for arch, per_clock in FP32_PER_CLOCK.items():
        same = table.get(arch) or table["gfx942"]  # gfx940/941: MI300 pre-production targets
        assert same.rates["fp32-vector"].per_clock == per_clock, arch
