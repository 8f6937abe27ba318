"""The NVIDIA data-centre and workstation rows of the GPU source table (data/gpus/), read with
the csv module only: six devices' FP32 and memory bandwidth checked against values worked out
here by hand from SMs, clocks, bus widths and data rates, and sparse datasheet figures halved
(the checks every group shares are in test_gpu_table.py)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

TABLE = Path(__file__).resolve().parents[1] / "data" / "gpus"
VALUES = TABLE / "nvidia-datacenter.csv"


def read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def devices() -> dict[str, dict[str, dict[str, str]]]:
    table: dict[str, dict[str, dict[str, str]]] = {}
    for row in read(VALUES):
        fields = table.setdefault(row["device"], {})
        assert row["field"] not in fields, f"{row['device']}: {row['field']} twice"
        fields[row["field"]] = row
    return table


def value(device: str, field: str) -> float:
    return float(devices()[device][field]["value"])


# FP32 peak = SMs x FP32 FLOP/clk/SM (2 x FP32 lanes) x boost clock, in TFLOP/s; memory
# bandwidth = data rate per pin x bus width / 8, in GB/s. Written out, not read from the table.
HAND = {
    # T4 (Turing whitepaper, T4 table): 40 SMs x 64 lanes x 2 x 1.590 GHz = 8.141 TF;
    # GDDR6 at 10 Gbps on a 256-bit bus: 10 x 256 / 8 = 320 GB/s.
    "t4": (40 * 64 * 2 * 1.590e9 / 1e12, 10 * 256 / 8),
    # A100 SXM4 80GB: 108 SMs x 64 lanes x 2 x 1.410 GHz = 19.49 TF; HBM2e memory clock
    # 1593 MHz, double data rate, 5120-bit bus: 1.593 x 2 x 5120 / 8 = 2039 GB/s.
    "a100-sxm4-80gb": (108 * 64 * 2 * 1.410e9 / 1e12, 1.593 * 2 * 5120 / 8),
    # L4 (AD104): 58 SMs (7,424 CUDA cores / 128) x 128 lanes x 2 x 2.040 GHz = 30.29 TF;
    # GDDR6 at 12.5 Gbps on a 192-bit bus: 12.5 x 192 / 8 = 300 GB/s.
    "l4": (58 * 128 * 2 * 2.040e9 / 1e12, 12.5 * 192 / 8),
    # L40S (AD102): 142 SMs x 128 lanes x 2 x 2.520 GHz = 91.60 TF;
    # GDDR6 at 18 Gbps on a 384-bit bus: 18 x 384 / 8 = 864 GB/s.
    "l40s": (142 * 128 * 2 * 2.520e9 / 1e12, 18 * 384 / 8),
    # H100 SXM: 132 SMs x 128 lanes x 2 x 1.980 GHz = 66.90 TF (the tensor peaks use
    # 1.83 GHz); HBM3 memory clock 2619 MHz, double data rate, 5120-bit: 3352 GB/s.
    "h100-sxm": (132 * 128 * 2 * 1.980e9 / 1e12, 2.619 * 2 * 5120 / 8),
    # B200: 148 SMs x 128 lanes x 2 x 1.965 GHz = 74.45 TF; HBM3e memory clock 3996 MHz,
    # double data rate, 7680-bit bus: 3.996 x 2 x 7680 / 8 = 7672 GB/s.
    "b200": (148 * 128 * 2 * 1.965e9 / 1e12, 3.996 * 2 * 7680 / 8),
}


@pytest.mark.parametrize("key", sorted(HAND))
def test_fp32_and_bandwidth_by_hand(key: str) -> None:
    fp32, hbm = HAND[key]
    assert value(key, "fp32-vector") == pytest.approx(fp32, rel=0.01)
    assert value(key, "hbm") == pytest.approx(hbm, rel=0.01)


def test_hand_values_themselves() -> None:
    """The arithmetic above, to the digits the comments quote."""
    assert round(HAND["t4"][0], 3) == 8.141
    assert HAND["t4"][1] == 320
    assert round(HAND["a100-sxm4-80gb"][1]) == 2039
    assert round(HAND["l4"][0], 2) == 30.29
    assert HAND["l40s"][1] == 864
    assert round(HAND["h100-sxm"][1]) == 3352
    assert round(HAND["b200"][1]) == 7672


def test_sparsity_halved() -> None:
    """Spot checks against the datasheet's printed (sparse) figures, halved here."""
    assert value("h100-sxm", "fp16-matrix") == 1979 / 2
    assert value("h100-sxm", "fp8-matrix") == 3958 / 2
    assert value("l4", "fp8-matrix") == 485 / 2
    assert value("b200", "bf16-matrix") == 36_000 / 8 / 2
    assert value("gb200", "fp16-matrix") == 10_000 / 2 / 2
    assert value("a100-sxm4-80gb", "tf32-matrix") == 312 / 2
