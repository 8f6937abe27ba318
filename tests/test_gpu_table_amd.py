"""The AMD part of the GPU source table (data/gpus/amd.csv), read with the csv module only.

The peaks of six parts are recomputed here by hand from units x rate x clock and memory speed x
bus width, so a typo in the table cannot pass (the checks every group shares, sources among
them, are in test_gpu_table.py).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

GPUS = Path(__file__).parents[1] / "data" / "gpus"


def read(name: str) -> list[dict[str, str]]:
    with (GPUS / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


ROWS = read("amd.csv")


def devices() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for row in ROWS:
        table.setdefault(row["device"], {})[row["field"]] = row["value"]
    return table


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
