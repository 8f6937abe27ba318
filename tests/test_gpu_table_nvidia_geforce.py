"""The GeForce source table (data/gpus/nvidia-geforce.csv): right, part by part (the checks
every group shares are in test_gpu_table.py).

Read with the csv module only, so the table is checked apart from the code that loads it.
The FP32 and bandwidth checks compute each value here from the part's configuration as
NVIDIA publishes it (SMs, FP32 lanes per SM, boost clock; memory data rate and bus width).
"""

import csv
from collections import defaultdict
from pathlib import Path

import pytest

GPUS = Path(__file__).resolve().parent.parent / "data" / "gpus"


def _rows(name: str) -> list[dict[str, str]]:
    with (GPUS / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _devices() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = defaultdict(dict)
    for row in _rows("nvidia-geforce.csv"):
        assert row["field"] not in table[row["device"]], f"{row['device']} {row['field']} twice"
        table[row["device"]][row["field"]] = row["value"]
    return dict(table)


# FP32 TFLOP/s = SMs x FP32 lanes per SM x 2 (FMA) x boost clock in GHz / 1000.
# Turing SMs have 64 FP32 lanes; Ampere, Ada and Blackwell GeForce SMs have 128.
# GB/s = memory data rate in Gbit/s per pin x bus width in bits / 8.
HAND = [
    # RTX 2080 Ti FE: 68 x 64 x 2 x 1.635 = 14.23 (whitepaper prints 14.2); 14 x 352 / 8 = 616
    ("rtx2080ti", 68 * 64 * 2 * 1.635 / 1000, 1, 14 * 352 / 8),
    # RTX 3090: 82 x 128 x 2 x 1.695 = 35.58 (printed 35.6); 19.5 x 384 / 8 = 936
    ("rtx3090", 82 * 128 * 2 * 1.695 / 1000, 1, 19.5 * 384 / 8),
    # RTX 4090: 128 x 128 x 2 x 2.52 = 82.58 (printed 82.6); 21 x 384 / 8 = 1008
    ("rtx4090", 128 * 128 * 2 * 2.52 / 1000, 1, 21 * 384 / 8),
    # RTX 5060 Ti: 36 x 128 x 2 x 2.57 = 23.69 (derived, 4 digits); 28 x 128 / 8 = 448
    ("rtx5060ti-16gb", 36 * 128 * 2 * 2.57 / 1000, 2, 28 * 128 / 8),
    # RTX 5070: 48 x 128 x 2 x 2.51 = 30.84 (derived, 4 digits); 28 x 192 / 8 = 672
    ("rtx5070", 48 * 128 * 2 * 2.51 / 1000, 2, 28 * 192 / 8),
    # RTX 5090: 170 x 128 x 2 x 2.407 = 104.76 (printed 104.8); 28 x 512 / 8 = 1792
    ("rtx5090", 170 * 128 * 2 * 2.407 / 1000, 1, 28 * 512 / 8),
]


@pytest.mark.parametrize(("key", "fp32_tflops", "digits", "gbps"), HAND)
def test_fp32_and_bandwidth_by_hand(key: str, fp32_tflops: float, digits: int, gbps: float) -> None:
    fields = _devices()[key]
    assert float(fields["fp32-vector"]) == round(fp32_tflops, digits)
    assert float(fields["hbm"]) == gbps


def test_corpus_rtx5070_tool_differs_by_its_clock_only() -> None:
    """The corpus RTX 5070 tool (gpu-roofline-profiler, saxpy.csv) prints 48 SMs, 2.625 GHz,
    32.26 TFLOP/s and 672.0 GB/s: it takes the driver's maximum clock, where NVIDIA's peak uses
    the 2.51 GHz boost clock. Scaled to 2.625 GHz, the table's FP32 peak is the tool's."""
    fields = _devices()["rtx5070"]
    assert fields["compute_units"] == "48"
    assert float(fields["hbm"]) == 672.0
    at_tool_clock = float(fields["fp32-vector"]) * 2625 / int(fields["clock_mhz"])
    assert abs(at_tool_clock - 32.26) < 0.01
