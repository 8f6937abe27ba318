"""The AMD part of the GPU source table (data/gpus/amd.csv), read with the csv module only.

Every value must carry an AMD document; the peaks of six parts are recomputed here by hand from
units x rate x clock and memory speed x bus width, so a typo in the table cannot pass.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

GPUS = Path(__file__).parents[1] / "data" / "gpus"
IDENTITY = ("vendor", "model", "arch", "family", "names", "compute_units")
# the field order of data/gpus/README.md
FIELDS = (
    "vendor", "model", "arch", "family", "names", "partitions", "compute_units", "clock_mhz",
    "memory_gb", "memory_type", "bus_width_bits", "l2_mb", "mall_mb", "wave_size",
    "max_waves_per_cu", "lds_kb_per_cu", "hbm", "l2", "fp64-vector", "fp32-vector",
    "fp64-matrix", "fp32-matrix", "tf32-matrix", "fp16-matrix", "bf16-matrix", "fp8-matrix",
    "int8-matrix",
)  # fmt: skip
VENDOR_KINDS = {"datasheet", "whitepaper", "product-page", "documentation", "vendor-code"}
# Where AMD publishes: its own sites, its GitHub organisation, and libdrm's amdgpu.ids, the
# marketing-name list AMD maintains in freedesktop's libdrm (the README names it vendor-code).
AMD_URL = re.compile(
    r"https://((www|rocm\.docs|rocm\.blogs)\.amd\.com/|gpuopen\.com/|github\.com/ROCm/"
    r"|gitlab\.freedesktop\.org/mesa/drm/-/blob/main/data/amdgpu\.ids$)"
)
# FP32 FLOP per clock per CU that AMD's vector peaks use: 64 lanes x FMA on GCN/CDNA 1-2
# (ROCm MI100/MI250 docs: 128), packed FP32 on CDNA 3-4 (ROCm MI300 doc: 256), 64 lanes x FMA
# on RDNA 2, and dual-issue (VOPD) on RDNA 3, 3.5 and 4 (rocprof-compute gfx115x: 256).
FP32_PER_CU = {
    "GCN 5.1": 128, "CDNA": 128, "CDNA 2": 128, "CDNA 3": 256, "CDNA 4": 256,
    "RDNA 2": 128, "RDNA 3": 256, "RDNA 3.5": 256, "RDNA 4": 256,
}  # fmt: skip


def read(name: str) -> list[dict[str, str]]:
    with (GPUS / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


ROWS = read("amd.csv")
SOURCES = read("amd.sources.csv")


def devices() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for row in ROWS:
        table.setdefault(row["device"], {})[row["field"]] = row["value"]
    return table


def test_columns_are_the_readme_layout() -> None:
    assert list(ROWS[0]) == ["device", "field", "value", "source", "where"]
    assert list(SOURCES[0]) == ["id", "kind", "publisher", "title", "url", "note"]


def test_every_device_has_its_identity() -> None:
    table = devices()
    assert len(table) >= 33
    for key, fields in table.items():
        missing = [f for f in IDENTITY if not fields.get(f)]
        assert not missing, f"{key} lacks {missing}"
        assert fields["vendor"] == "AMD", key
        assert re.fullmatch(r"gfx[0-9a-f]+", fields["arch"]), key
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", key), key


def test_each_device_is_one_block_in_readme_order() -> None:
    seen: list[str] = []
    for row in ROWS:
        if not seen or seen[-1] != row["device"]:
            assert row["device"] not in seen, f"{row['device']} is split"
            seen.append(row["device"])
    for key in seen:
        fields = [r["field"] for r in ROWS if r["device"] == key]
        assert all(f in FIELDS for f in fields), key
        assert fields == sorted(fields, key=FIELDS.index), f"{key}: fields out of order"
        assert len(fields) == len(set(fields)), f"{key}: a field twice"


def test_every_value_says_where() -> None:
    for row in ROWS:
        assert row["value"].strip() and row["where"].strip(), row


def test_every_source_resolves() -> None:
    ids = [s["id"] for s in SOURCES]
    assert len(ids) == len(set(ids))
    archs = GPUS / "archs.sources.csv"
    known = set(ids) | ({s["id"] for s in read(archs.name)} if archs.exists() else set())
    unknown = {r["source"] for r in ROWS} - known
    assert not unknown, f"cited but not listed: {unknown}"


def test_vendor_sources_are_amd_documents() -> None:
    for src in SOURCES:
        if src["kind"] == "secondary":
            assert src["note"].strip(), f"{src['id']}: a secondary source needs its reason"
            continue
        assert src["kind"] in VENDOR_KINDS, src["id"]
        assert src["publisher"] == "AMD", src["id"]
        assert AMD_URL.match(src["url"]), f"{src['id']}: {src['url']} is not AMD's"
        assert not src["note"], f"{src['id']}: a note is for secondary sources only"


def test_fp32_vector_follows_units_rate_and_clock() -> None:
    """Every FP32 vector peak with a clock is CUs x FLOP/clk/CU x boost clock, within 1 %."""
    for key, f in devices().items():
        if "fp32-vector" not in f or "clock_mhz" not in f:
            continue
        derived = int(f["compute_units"]) * FP32_PER_CU[f["family"]] * int(f["clock_mhz"]) / 1e6
        assert float(f["fp32-vector"]) == pytest.approx(derived, rel=0.01), key


# Hand arithmetic, one line per part: CUs x FP32 FLOP/clk/CU x boost GHz / 1000 = TFLOP/s.
FP32_BY_HAND = {
    "mi300x": 304 * 256 * 2.100 / 1000,  # 163.43 -> AMD writes 163.4
    "mi250x": 220 * 128 * 1.700 / 1000,  # 47.87 -> 47.9
    "mi210": 104 * 128 * 1.700 / 1000,  # 22.63 -> 22.6
    "rx7900xtx": 96 * 256 * 2.500 / 1000,  # 61.44 -> 61.4 (dual-issue FP32)
    "rx9070xt": 64 * 256 * 2.970 / 1000,  # 48.66 -> 48.7
    "w7900": 96 * 256 * 2.495 / 1000,  # 61.32 -> 61.3
}
# Memory speed (Gbps per pin) x bus width (bits) / 8 = GB/s.
HBM_BY_HAND = {
    "mi300x": 5.2 * 8192 / 8,  # HBM3 5.2 Gbps: 5324.8 GB/s, AMD: 5.3 TB/s
    "mi250x": 3.2 * 8192 / 8,  # HBM2e 1.6 GHz DDR: 3276.8 GB/s, AMD: 3.2 TB/s
    "mi210": 3.2 * 4096 / 8,  # HBM2e 1.6 GHz DDR: 1638.4 GB/s, AMD: 1.6 TB/s
    "rx7900xtx": 20 * 384 / 8,  # GDDR6 20 Gbps: 960 GB/s
    "rx9070xt": 20 * 256 / 8,  # GDDR6 20 Gbps: 640 GB/s
    "w7900": 18 * 384 / 8,  # GDDR6 18 Gbps: 864 GB/s
}


@pytest.mark.parametrize("key", sorted(FP32_BY_HAND))
def test_fp32_vector_of_six_parts(key: str) -> None:
    assert float(devices()[key]["fp32-vector"]) == round(FP32_BY_HAND[key], 1)


@pytest.mark.parametrize("key", sorted(HBM_BY_HAND))
def test_memory_bandwidth_of_six_parts(key: str) -> None:
    value = float(devices()[key]["hbm"])
    derived = HBM_BY_HAND[key]
    if key.startswith("mi"):
        # AMD states Instinct bandwidth in TB/s to one decimal, rounded down
        assert value == math.floor(derived / 100) * 100
        assert value == pytest.approx(derived, rel=0.025)
    else:
        assert value == derived


def test_partitions_of_the_multi_die_parts() -> None:
    table = devices()
    expected = {"mi250": "gcd:2", "mi250x": "gcd:2", "mi300a": "xcd:6", "mi300x": "xcd:8"}
    expected |= {"mi325x": "xcd:8", "mi350x": "xcd:8", "mi355x": "xcd:8"}
    assert {k: v["partitions"] for k, v in table.items() if "partitions" in v} == expected


def test_a_name_on_several_parts_is_one_the_driver_shares() -> None:
    """amdgpu.ids gives one marketing name to two parts, and old rocprof-compute called every
    gfx90a 'MI200'; any other name must point at one part only."""
    owners: dict[str, set[str]] = {}
    for key, fields in devices().items():
        for name in fields["names"].split(";"):
            owners.setdefault(name, set()).add(key)
    shared = {name: keys for name, keys in owners.items() if len(keys) > 1}
    assert shared == {
        "AMD Instinct MI60 / MI50": {"mi50", "mi60"},
        "AMD Instinct MI250X / MI250": {"mi250", "mi250x"},
        "MI200": {"mi210", "mi250", "mi250x"},
    }
