"""The GPU catalogue as roofscope loads it: values, names, scopes.

Expected values are written here by hand from the vendors' documents (the datasheet or
whitepaper each row of data/gpus/ cites: TFLOP/s x 1e12, GB/s x 1e9), never read back from
the generated TOML.
"""

from __future__ import annotations

import pytest

from roofscope.catalogue.devices import (
    Device,
    candidates,
    catalogue,
    ceilings_for,
    closest,
    describe,
    find,
    natural_names,
    resolve,
    scope_for,
    shared_ceilings,
)


def dev(key: str) -> Device:
    return next(d for d in catalogue() if d.key == key)


def peak(d: Device, name: str, scope: str = "device") -> float:
    """The value of the ceiling called ``name`` ("fp32-vector", "hbm")."""
    (value,) = [c.value for c in ceilings_for(d, scope) if c.name == name]
    return value


# --- values, by hand ----------------------------------------------------------------------------
def test_mi100_values_from_amds_documents() -> None:
    mi100 = dev("mi100")  # ROCm docs mi100.md; AMD Instinct MI100 data sheet
    assert peak(mi100, "fp32-vector") == 23.1e12
    assert peak(mi100, "fp64-vector") == 11.5e12
    assert peak(mi100, "fp16-matrix") == 184.6e12
    assert peak(mi100, "bf16-matrix") == 92.3e12
    assert peak(mi100, "hbm") == 1228e9
    assert (mi100.compute_units, mi100.wave_size, mi100.clock_mhz) == (120, 64, 1502)
    assert mi100.partitions is None


def test_mi250x_module_and_per_gcd_ceilings() -> None:
    mi250x = dev("mi250x")  # AMD Instinct MI250X data sheet: 3.2 TB/s, 47.9 TF FP64 vector
    assert peak(mi250x, "hbm") == 3200e9
    assert peak(mi250x, "hbm", "gcd") == 3200e9 / 2
    assert peak(mi250x, "fp64-vector", "gcd") == 47.9e12 / 2
    assert peak(mi250x, "fp16-matrix", "gcd") == 383e12 / 2
    module, gcd = ceilings_for(mi250x, "device"), ceilings_for(mi250x, "gcd")
    assert [c.key for c in module] == [c.key for c in gcd]
    assert all(c.source.startswith("derived: module value / 2 GCDs; AMD ") for c in gcd)
    assert mi250x.partitions is not None and mi250x.partitions.kind == "gcd"
    assert mi250x.partition_compute_units == 110
    assert peak(dev("mi250"), "hbm", "gcd") == 1600e9


@pytest.mark.parametrize(
    ("key", "fp32", "hbm"),
    [  # the vendor's datasheet figures, TFLOP/s and GB/s
        ("t4", 8.1, 320),  # NVIDIA T4 datasheet
        ("a100-sxm4-80gb", 19.5, 2039),  # NVIDIA A100 datasheet
        ("h100-sxm", 67, 3350),  # NVIDIA H100 datasheet
        ("l40s", 91.6, 864),  # NVIDIA L40S datasheet
        ("rtx4090", 82.6, 1008),  # Ada whitepaper, RTX 4090 table
        ("rtx5090", 104.8, 1792),  # RTX Blackwell whitepaper, RTX 5090 table
        ("mi300x", 163.4, 5300),  # AMD Instinct MI300X data sheet
        ("rx7900xtx", 61.4, 960),  # AMD RX 7900 XTX page; 20 Gbps x 384 bit / 8
    ],
)
def test_datasheet_values(key: str, fp32: float, hbm: float) -> None:
    assert peak(dev(key), "fp32-vector") == pytest.approx(fp32 * 1e12, rel=1e-9)
    assert peak(dev(key), "hbm") == pytest.approx(hbm * 1e9, rel=1e-9)


def test_rtx5070_values() -> None:
    """48 SMs x 128 FP32 lanes x 2 x 2.51 GHz boost (NVIDIA's RTX 5070 page) = 30.84 TFLOP/s;
    GDDR7 at 28 Gbps on 192 bits = 672 GB/s (the driver's own numbers in the corpus file
    agree: 672.0 GB/s)."""
    rtx5070 = dev("rtx5070")
    assert peak(rtx5070, "fp32-vector") == pytest.approx(48 * 128 * 2 * 2.51e9, rel=1e-3)
    assert peak(rtx5070, "hbm") == 28e9 * 192 / 8
    assert rtx5070.unit_word == "SMs" and rtx5070.compute_units == 48


def test_every_ceiling_is_positive_sourced_and_from_the_catalogue() -> None:
    for d in catalogue():
        for c in d.ceilings:
            assert c.value > 0, (d.key, c.name)
            assert c.origin == "catalogue"
            assert c.source.startswith(("AMD ", "NVIDIA ", "derived: ", "secondary: ")), c.source
        for field, source in d.sources:
            assert getattr(d, field) is not None and source, (d.key, field)


def test_no_fp32_matrix_on_nvidia_and_no_lds_level() -> None:
    for d in catalogue():
        if d.vendor == "NVIDIA":
            assert "fp32-matrix" not in {c.name for c in d.ceilings}, d.key
    assert not any(c.level == "lds" for d in catalogue() for c in d.ceilings)
    assert "fp64-matrix" not in {c.name for c in dev("mi100").ceilings}  # no FP64 MFMA


# --- finding a device: exact names --------------------------------------------------------------
def test_names_profilers_report() -> None:
    assert find("AMD Instinct MI250X") == dev("mi250x")
    assert find("mi100") == dev("mi100")  # Omniperf 1.x writes lower case
    assert find("  AMD   Instinct MI100 ") == dev("mi100")
    assert find("MI300X_A1") == dev("mi300x")  # rocprof-compute gpu_model
    assert find("NVIDIA H100 80GB HBM3") == dev("h100-sxm")
    assert find("NVIDIA A100-SXM4-80GB") == dev("a100-sxm4-80gb")
    assert find("NVIDIA A100-PG509-200") == dev("a100-sxm4-40gb")  # Kineto traces' A100
    assert find("Tesla V100-SXM2-32GB") == dev("v100-sxm2")
    assert find("Tesla T4") == dev("t4")
    assert find("NVIDIA GeForce RTX 5090") == dev("rtx5090")
    assert find("NVIDIA H200") == dev("h200-sxm")  # what nvidia-smi calls the SXM part
    assert find("NVIDIA H100 NVL") == dev("h100-nvl")


def test_an_arch_several_products_share_finds_none() -> None:
    assert find("gfx90a") is None
    assert [d.key for d in candidates("gfx90a")] == ["mi210", "mi250", "mi250x"]
    assert [d.key for d in candidates("gfx90a:sramecc+:xnack-")] == ["mi210", "mi250", "mi250x"]
    assert find("sm_90") is None


def test_a_name_several_products_share_finds_none() -> None:
    assert find("AMD Instinct MI250X/MI250") is None  # rocminfo's name for both
    assert [d.key for d in candidates("AMD Instinct MI250X / MI250")] == ["mi250", "mi250x"]
    assert find("MI200") is None  # the series, not a product
    assert [d.key for d in candidates("MI200")] == ["mi210", "mi250", "mi250x"]


def test_every_name_finds_its_device_or_is_shared() -> None:
    for d in catalogue():
        assert find(d.key) == d
        for name in (*d.names, *natural_names(d)):
            assert d in resolve(name), (d.key, name)


# --- natural names --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("rtx 4090", "rtx4090"),
        ("4090", "rtx4090"),
        ("RTX-4090", "rtx4090"),
        ("t4", "t4"),
        ("mi300x", "mi300x"),
        ("rx 7900 xtx", "rx7900xtx"),
        ("l4", "l4"),
        ("l40s", "l40s"),
        ("rtx 5090", "rtx5090"),
        ("rtx 5070", "rtx5070"),
    ],
)
def test_natural_names_of_one_part(name: str, key: str) -> None:
    assert [d.key for d in resolve(name)] == [key]


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        ("a100", ["a100-pcie-40gb", "a100-sxm4-40gb", "a100-pcie-80gb", "a100-sxm4-80gb"]),
        ("h100", ["h100-pcie", "h100-nvl", "h100-sxm"]),
        ("h200", ["h200-nvl", "h200-sxm"]),
        ("v100", ["v100-pcie", "v100-sxm2"]),
    ],
)
def test_natural_names_of_several_parts(name: str, keys: list[str]) -> None:
    assert [d.key for d in resolve(name)] == keys
    assert find(name) is None


def test_a100_parts_share_their_compute_peaks_not_their_bandwidth() -> None:
    """A100 datasheet: every A100 has 19.5 TF FP32, 312 TF FP16 dense; 1,555 / 1,935 / 2,039
    GB/s differ by memory."""
    shared = {c.name: c.value for c in shared_ceilings(resolve("a100"))}
    assert shared["fp32-vector"] == 19.5e12
    assert shared["fp16-matrix"] == 312e12
    assert "hbm" not in shared
    # H200 SXM and NVL: 4.8 TB/s both, compute differs (67 vs 60 TF FP32)
    assert {c.name: c.value for c in shared_ceilings(resolve("h200"))} == {"hbm": 4800e9}


# --- suggestions ------------------------------------------------------------------------------
def test_suggestions_come_from_the_same_generation() -> None:
    assert closest("MI-250") == ["mi250", "mi250x", "mi210"]
    assert set(closest("rtx 5080 super")) <= {d.key for d in catalogue() if d.family == "Blackwell"}
    assert closest("rtx 5080 super")
    assert all(dev(k).family == "RDNA 4" for k in closest("gfx1250"))
    assert closest("rtx 6090") == []  # a series the catalogue lacks: no other part suggested
    assert closest("zzzz") == []


# --- scope ----------------------------------------------------------------------------------------
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
    assert ceilings_for(dev("mi100"), "gcd") == []


def test_one_xcd_has_an_eighth_of_the_compute_and_no_memory_ceiling() -> None:
    """MI300X data sheet: 163.4 TF FP32 vector, 1,307.4 FP16 dense over 8 XCDs of 38 CUs;
    an XCD's share of the HBM depends on the NPS mode, which no AMD document states."""
    from roofscope.analysis.device import catalogue_ceilings, choose_device
    from roofscope.model.profile import RunInfo

    choice = choose_device(
        RunInfo(gpu="AMD Instinct MI300X", arch="gfx942", compute_units=38), None
    )
    assert choice.scope == "xcd"
    got = {c.name: c.value for c in catalogue_ceilings(choice)}
    assert got["fp32-vector"] == pytest.approx(163.4e12 / 8)
    assert got["fp16-matrix"] == pytest.approx(1307.4e12 / 8)
    assert "hbm" not in got
    assert all(
        c.source.startswith("derived: device value / 8 XCDs") for c in catalogue_ceilings(choice)
    )


def test_describe_shows_values_with_sources() -> None:
    text = describe(dev("mi250x"))
    assert text.startswith("mi250x: AMD Instinct MI250X (gfx90a, CDNA 2)\n")
    assert "  partitions = 2 GCDs of 110 CUs\n" in text
    assert "  hbm          gcd          1600 GB/s\n" in text
    assert "derived: module value / 2 GCDs" in text
    assert "  SMs = 132  [NVIDIA " in describe(dev("h100-sxm"))
