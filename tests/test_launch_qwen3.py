"""Issue 38, point 2 on more real small grids: bytedance-iaas/AsymGEMM's Nsight Compute raw
pages of Qwen3-14B's dense GEMMs (14 launches: 80 or 272 blocks) and Qwen3-30B-A3B's expert
GEMMs (12 or 32 blocks) on an H200 of 132 SMs (tests/data/PROVENANCE.md). Which kernels are
small, their shares and gains are worked out here from the file's own columns."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, run_json

QWEN3 = DATA / "ncu/asymgemm-qwen3-h200"
FILES = [QWEN3 / "qwen3_14b_raw.csv", QWEN3 / "qwen3_30b_a3b_raw.csv"]
MEMORY_ACCESS = {"memory-far-below-roof", "low-l2-hit-rate"}
WAVES = "launch__waves_per_multiprocessor"
Cap = pytest.CaptureFixture[str]


def launches(path: Path) -> list[dict[str, str]]:
    """One dict per launch row: ncu's ``==PROF==`` lines and the units row left out."""
    text = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith('"ID"'))
    return list(csv.DictReader(text[start:]))[1:]


def number(row: dict[str, str], metric: str) -> float:
    return float(row[metric].replace(",", ""))


def by_kernel(path: Path) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in launches(path):
        out[row["Kernel Name"]].append(row)
    return out


def launch_findings(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["kernel"]: f for f in doc["findings"] if f["rule"] == "launch-too-small"}


def test_the_files_hold_small_and_full_grids() -> None:
    """The 14B page: 14 launches, 11 of 80 blocks and 3 of 272, on 132 SMs; the trimmed
    30B-A3B page: 3 launches of 12, 12 and 32 blocks."""
    grids = [[int(number(r, "launch__grid_size")) for r in launches(p)] for p in FILES]
    assert sorted(grids[0]) == [80] * 11 + [272] * 3 and grids[1] == [12, 12, 32]
    sms = {r["device__attribute_multiprocessor_count"] for p in FILES for r in launches(p)}
    assert sms == {"132"}
    assert [len(by_kernel(p)) for p in FILES] == [6, 2]  # kernel names
    small = {r["Kernel Name"] for r in launches(FILES[0]) if number(r, "launch__grid_size") < 132}
    assert len(small) == 4  # the 14B's other two names launch 272 blocks


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_grid_under_the_sms_gets_the_launch_finding(capsys: Cap, path: Path) -> None:
    """A kernel whose launches hold fewer blocks than SMs gets launch-too-small with its
    blocks, SMs, ncu's waves and share x (1 - blocks / SMs); the others get none."""
    kernels = by_kernel(path)
    total = sum(number(r, "gpu__time_duration.sum") for rows in kernels.values() for r in rows)
    small = {
        k: rows
        for k, rows in kernels.items()
        if max(number(r, "launch__grid_size") for r in rows)
        < number(rows[0], "device__attribute_multiprocessor_count")
    }
    told = launch_findings(run_json(capsys, str(path)))
    assert set(told) == set(small)
    for kernel, rows in small.items():
        blocks, sms = int(number(rows[0], "launch__grid_size")), 132
        share = sum(number(r, "gpu__time_duration.sum") for r in rows) / total
        e = told[kernel]["evidence"]
        assert (e["blocks"], e["block_size"], e["compute_units"]) == (blocks, 256, sms)
        assert e["ncu_full_waves"] == max(number(r, WAVES) for r in rows)
        assert e["share"] == pytest.approx(share)
        assert told[kernel]["gain_share"] == pytest.approx(share * (1 - blocks / sms))
        assert f"{sms - blocks} SMs had no work" in told[kernel]["summary"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_small_grids_get_no_memory_access_advice(capsys: Cap, path: Path) -> None:
    """None of the small launches is told to coalesce or to fix its access pattern."""
    doc = run_json(capsys, str(path))
    small = set(launch_findings(doc))
    for f in doc["findings"]:
        if f.get("kernel") in small:
            assert f["rule"] not in MEMORY_ACCESS
            assert "coalesce" not in f["prescription"]
