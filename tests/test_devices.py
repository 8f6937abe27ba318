"""The GPU catalogue against the research CSV and the docs' formulas.

Expected values are written here by hand from shared/data/gpu_specs_research.csv and the
peak formulas of shared/docs/gpu-specs.md §2 (units converted: TFLOP/s x 1e12, GB/s x 1e9),
never read back from the generated TOML.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from roofscope.catalogue.devices import (
    Device,
    candidates,
    catalogue,
    ceilings_for,
    closest,
    describe,
    find,
    scope_for,
)

ROOT = Path(__file__).parents[1]
CSV = ROOT.parent / "shared" / "data" / "gpu_specs_research.csv"
needs_csv = pytest.mark.skipif(not CSV.is_file(), reason=f"{CSV} not present")

CEILING_COLUMNS = (
    "fp64_vector_TFLOPS",
    "fp64_matrix_TFLOPS",
    "fp32_vector_TFLOPS",
    "fp32_matrix_TFLOPS",
    "tf32_matrix_dense_TFLOPS",
    "fp16_matrix_dense_TFLOPS",
    "bf16_matrix_dense_TFLOPS",
    "fp8_matrix_dense_TFLOPS",
    "int8_matrix_dense_TOPS",
    "memory_bandwidth_GBps",
    "l2_bandwidth_GBps",
    "lds_bandwidth_GBps",
)


def dev(key: str) -> Device:
    return next(d for d in catalogue() if d.key == key)


def peak(d: Device, name: str, scope: str = "device") -> float:
    """The value of the ceiling called ``name`` ("fp32-vector", "hbm")."""
    (value,) = [c.value for c in ceilings_for(d, scope) if c.name == name]
    return value


def csv_rows() -> list[dict[str, str]]:
    with CSV.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


# --- values, by hand --------------------------------------------------------------------------
def test_mi100_values_from_the_csv() -> None:
    mi100 = dev("mi100")
    assert peak(mi100, "fp32-vector") == 23.1e12
    assert peak(mi100, "fp64-vector") == 11.5e12
    assert peak(mi100, "fp16-matrix") == 184.6e12
    assert peak(mi100, "bf16-matrix") == 92.3e12
    assert peak(mi100, "int8-matrix") == 184.6e12
    assert peak(mi100, "hbm") == 1228e9
    assert peak(mi100, "l2") == 6000e9
    assert (mi100.compute_units, mi100.wave_size, mi100.clock_mhz) == (120, 64, 1502)
    assert (mi100.max_waves_per_cu, mi100.lds_kb_per_cu, mi100.l2_mb) == (40, 64, 8.0)
    assert mi100.memory_gb == 32.0
    assert mi100.partitions is None


def test_mi250x_module_and_per_gcd_ceilings() -> None:
    mi250x = dev("mi250x")
    assert peak(mi250x, "hbm") == 3280e9
    assert peak(mi250x, "hbm", "gcd") == 3280e9 / 2
    assert peak(mi250x, "fp64-vector", "gcd") == 47.9e12 / 2
    assert peak(mi250x, "fp16-matrix", "gcd") == 383e12 / 2
    module, gcd = ceilings_for(mi250x, "device"), ceilings_for(mi250x, "gcd")
    assert [c.key for c in module] == [c.key for c in gcd]
    assert all(c.source.startswith("derived: module value / 2 GCDs; ") for c in gcd)
    assert all("gpu_specs_research.csv: [" in c.source for c in gcd)
    assert mi250x.partitions is not None and mi250x.partitions.kind == "gcd"
    assert mi250x.partition_compute_units == 110
    assert peak(dev("mi250"), "hbm", "gcd") == 1600e9


def test_nvidia_values_from_the_csv() -> None:
    h100 = dev("h100-sxm")
    assert peak(h100, "fp16-matrix") == 989e12
    assert peak(h100, "fp8-matrix") == 1979e12
    assert peak(h100, "tf32-matrix") == 494.5e12
    assert peak(h100, "hbm") == 3350e9
    assert peak(dev("b200"), "hbm") == 7700e9  # the 180 GB HGX row, not the launch 8 TB/s
    assert peak(dev("a100-sxm4-40gb"), "l2") == 7050e9


def test_mi300x_values_from_the_csv() -> None:
    mi300x = dev("mi300x")
    assert peak(mi300x, "fp8-matrix") == 2614.9e12
    assert peak(mi300x, "int8-matrix") == 2614.9e12
    assert peak(mi300x, "tf32-matrix") == 653.7e12
    assert peak(mi300x, "hbm") == 5300e9
    assert mi300x.partitions is not None
    assert (mi300x.partitions.kind, mi300x.partitions.count) == ("xcd", 8)
    assert dev("mi300a").partition_compute_units == 38  # 228 CU = 6 XCD x 38


@pytest.mark.parametrize(
    ("key", "name", "units", "flop_per_clk", "clock_ghz"),
    [  # gpu-specs.md §2.2-2.3: peak = units x FLOP/clk/unit x clock
        ("mi300x", "fp16-matrix", 304, 2048, 2.1),
        ("mi300a", "fp16-matrix", 228, 2048, 2.1),
        ("mi250x", "fp64-matrix", 220, 256, 1.7),
        ("mi60", "fp32-vector", 64, 128, 1.8),
        ("a100-sxm4-80gb", "fp16-matrix", 108, 2048, 1.41),
        ("h100-sxm", "fp16-matrix", 132, 4096, 1.83),
    ],
)
def test_peaks_agree_with_the_docs_formula(
    key: str, name: str, units: int, flop_per_clk: int, clock_ghz: float
) -> None:
    # vendors print 3-4 digits: MI60's 14.75 TF is published as 14.7
    assert peak(dev(key), name) == pytest.approx(units * flop_per_clk * clock_ghz * 1e9, rel=5e-3)


def test_every_ceiling_is_positive_sourced_and_from_the_catalogue() -> None:
    for d in catalogue():
        assert d.ceilings, d.key
        for c in d.ceilings:
            assert c.value > 0, (d.key, c.name)
            assert c.origin == "catalogue"
            assert c.source.startswith(("gpu_specs_research.csv: ", "derived: ")), c.source
        for field, source in d.sources:
            assert getattr(d, field) is not None and source.startswith("gpu_specs_research.csv: ")


def test_int8_is_counted_in_operations() -> None:
    (int8,) = [c for c in ceilings_for(dev("mi100"), None) if c.dtype == "int8"]
    assert int8.unit_of_value == "IOP/s"


# --- blank cells stay absent --------------------------------------------------------------------
def test_blank_cells_are_absent() -> None:
    assert [c.unit for c in dev("mi50").ceilings if c.kind == "compute"] == ["vector", "vector"]
    assert "fp64-matrix" not in {c.name for c in dev("mi100").ceilings}  # no FP64 MFMA
    for d in catalogue():
        if d.vendor == "NVIDIA":
            assert "fp32-matrix" not in {c.name for c in d.ceilings}, d.key
    assert dev("w7900").clock_mhz is None
    assert not any(c.level == "lds" for d in catalogue() for c in d.ceilings)


@needs_csv
def test_each_csv_row_is_a_device_with_one_ceiling_per_filled_cell() -> None:
    rows = csv_rows()
    assert len(rows) == 24
    assert [d.model for d in catalogue()] == [r["model"] for r in rows]
    for d, row in zip(catalogue(), rows, strict=True):
        filled = sum(1 for col in CEILING_COLUMNS if row[col].strip())
        assert len(ceilings_for(d, "device")) == filled, d.key
        assert d.arch == row["arch"]
        assert d.compute_units == int(row["compute_units_or_SMs"])


# --- finding a device ---------------------------------------------------------------------------
@needs_csv
def test_an_arch_one_product_has_finds_it() -> None:
    assert [r["model"] for r in csv_rows() if r["arch"] == "gfx908"] == ["Instinct MI100"]
    assert find("gfx908") == dev("mi100")


def test_an_arch_several_products_share_finds_none() -> None:
    assert find("gfx90a") is None
    assert [d.key for d in candidates("gfx90a")] == ["mi210", "mi250", "mi250x"]
    assert [d.key for d in candidates("gfx90a:sramecc+:xnack-")] == ["mi210", "mi250", "mi250x"]
    assert find("sm_90") is None


def test_names_profilers_report() -> None:
    assert find("AMD Instinct MI250X") == dev("mi250x")
    assert find("mi100") == dev("mi100")  # Omniperf 1.x writes lower case
    assert find("  AMD   Instinct MI100 ") == dev("mi100")
    assert find("MI300X_A1") == dev("mi300x")  # rocprof-compute gpu_model
    assert find("NVIDIA H100 80GB HBM3") == dev("h100-sxm")
    assert find("NVIDIA A100-SXM4-80GB") == dev("a100-sxm4-80gb")
    assert find("Tesla V100-SXM2-32GB") == dev("v100-sxm2")
    assert find("h100-sxm") == dev("h100-sxm")
    assert find("Instinct MI250X (OAM, 2 GCDs)") == dev("mi250x")
    assert find("NVIDIA H100 NVL") is None


def test_a_name_several_products_share_finds_none() -> None:
    assert find("AMD Instinct MI250X/MI250") is None  # rocminfo's name for both
    assert [d.key for d in candidates("AMD Instinct MI250X / MI250")] == ["mi250", "mi250x"]
    assert find("MI200") is None  # the series, not a product
    assert [d.key for d in candidates("MI200")] == ["mi210", "mi250", "mi250x"]
    assert [d.key for d in candidates("MI300")] == ["mi300a", "mi300x", "mi325x"]


def test_every_name_finds_its_device_or_is_shared() -> None:
    for d in catalogue():
        assert find(d.key) == d
        for name in d.names:
            assert find(name) == d or (find(name) is None and d in candidates(name)), name


def test_closest_suggests_similar_names() -> None:
    assert any("mi250" in s.lower() for s in closest("MI250"))
    assert any("mi250" in s.lower() for s in closest("MI-250"))
    assert len(closest("MI250", n=2)) == 2
    assert closest("zzzz") == []


# --- scope ---------------------------------------------------------------------------------------
def test_scope_follows_the_reported_compute_units() -> None:
    assert scope_for(dev("mi250x"), 110) == "gcd"
    assert scope_for(dev("mi250x"), 220) == "device"
    assert scope_for(dev("mi250x"), None) == "device"
    assert scope_for(dev("mi250"), 104) == "gcd"
    assert scope_for(dev("mi210"), 104) == "device"
    assert scope_for(dev("mi300x"), 38) == "xcd"
    assert scope_for(dev("h100-sxm"), 132) == "device"


def test_ceilings_for_a_scope() -> None:
    mi250x = dev("mi250x")
    assert ceilings_for(mi250x, None) == ceilings_for(mi250x, "device")
    assert {c.scope for c in ceilings_for(mi250x, "gcd")} == {"gcd"}
    assert ceilings_for(dev("mi300x"), "xcd") == []  # no per-XCD values in the catalogue
    assert ceilings_for(dev("mi100"), "gcd") == []


def test_describe_shows_values_with_sources() -> None:
    text = describe(dev("mi250x"))
    assert text.startswith("mi250x: AMD Instinct MI250X (OAM, 2 GCDs) (gfx90a, CDNA2)\n")
    assert "  partitions = 2 GCDs of 110 CUs\n" in text
    assert "  hbm          gcd          1640 GB/s\n" in text
    assert "derived: module value / 2 GCDs" in text


# --- the generated file ---------------------------------------------------------------------------
@needs_csv
def test_generator_reproduces_the_packaged_catalogue(tmp_path: Path) -> None:
    out = tmp_path / "devices.toml"
    script = ROOT / "tools" / "gen_devices.py"
    cmd = [sys.executable, str(script), "--csv", str(CSV), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    packaged = resources.files("roofscope").joinpath("data/devices.toml").read_bytes()
    assert out.read_bytes() == packaged
