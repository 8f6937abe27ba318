"""The timeline's bins, checked against the dispatch intervals read with the csv module and
clipped to each bin by a plain loop."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest

from roofscope.analysis.timeline_lanes import IDLE, OTHER, timeline_lanes
from roofscope.readers.load import load
from tests.conftest import DATA

LAPLACIAN = DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv"


def _intervals(path: Path) -> list[tuple[str, int, int]]:
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    return [(r["KernelName"], int(r["BeginNs"]), int(r["EndNs"])) for r in rows]


def _clip(begin: int, end: int, lo: int, hi: int) -> int:
    return max(0, min(end, hi) - max(begin, lo))


def test_laplacian_bins_by_hand() -> None:
    """1004 dispatches on device 8 in 7 bins: each bin's busy time is the sum of the
    dispatch intervals clipped to it (rocprof v1 ran them one after another: no overlap), and
    its colour is the kernel with the most time in it (laplacian, or one of the rest)."""
    rows = _intervals(LAPLACIAN)
    ordered = sorted(rows, key=lambda r: r[1])
    assert all(a[2] <= b[1] for a, b in itertools.pairwise(ordered))  # serial
    origin, last = min(r[1] for r in rows), max(r[2] for r in rows)
    width = -(-(last - origin) // 7)
    lanes = timeline_lanes(load([str(LAPLACIAN)]), kernels=["laplacian_kernel"], bins=7)
    assert lanes is not None and (lanes.start_ns, lanes.bin_ns) == (origin, width)
    (lane,) = lanes.lanes
    assert (lane.device, lane.dispatches) == (8, 1004)
    for i in range(7):
        lo, hi = origin + i * width, origin + (i + 1) * width
        per_kernel: dict[str, int] = {}
        for n, b, e in rows:
            per_kernel[n] = per_kernel.get(n, 0) + _clip(b, e, lo, hi)
        holder = max(per_kernel, key=lambda n: per_kernel[n])
        assert lane.busy_ns[i] == sum(per_kernel.values())
        assert lane.kernel[i] == (0 if holder == "laplacian_kernel" else OTHER)
        assert lane.kernel_ns[i] == per_kernel[holder]
    assert sum(lane.busy_ns) == sum(e - b for _, b, e in rows)


def _trace(tmp_path: Path, dispatches: list[tuple[str, int, int]]) -> Path:
    """A rocprof v1 results.csv of these (name, begin, end) on one device."""
    header = LAPLACIAN.read_text(encoding="utf-8").splitlines()[0]
    lines = [header]
    for i, (name, begin, end) in enumerate(dispatches):
        b, e = T0 + begin, T0 + end
        lines.append(
            f'{i},"{name}",8,0,{i},1,1,256,256,0,0,16,0,32,64,"0x0","0x0",{b - 10},{b},{e},'
            f"{e + 10},{end - begin}"
        )
    path = tmp_path / "results.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


T0 = 2_001_401_019_948_822


def test_overlap_counts_once_and_idle_bins(tmp_path: Path) -> None:
    """A [0, 100), B [50, 150), C [300, 400) in 4 bins of 100 ns: bin 0 busy 100 (A 100 beats
    B 50), bin 1 busy 50 (B), bin 2 idle, bin 3 busy 100 (C, not named: 'other')."""
    path = _trace(tmp_path, [("A", 0, 100), ("B", 50, 150), ("C", 300, 400)])
    lanes = timeline_lanes(load([str(path)]), kernels=["A", "B"], bins=4)
    assert lanes is not None and (lanes.start_ns, lanes.bin_ns) == (T0, 100)
    (lane,) = lanes.lanes
    assert lane.busy_ns == (100, 50, 0, 100)
    assert lane.kernel == (0, 1, IDLE, OTHER)
    assert lane.kernel_ns == (100, 50, 0, 100)


def test_the_largest_kernel_holds_the_bin(tmp_path: Path) -> None:
    """In one bin of 100 ns, named A 40 ns, B and C (not named) 30 ns each: A holds it, though
    the others together hold more. In the next, D alone 60 ns: 'other'."""
    path = _trace(tmp_path, [("A", 0, 40), ("B", 40, 70), ("C", 70, 100), ("D", 100, 160),
                             ("D", 190, 200)])  # fmt: skip
    lanes = timeline_lanes(load([str(path)]), kernels=["A"], bins=2)
    assert lanes is not None and lanes.bin_ns == 100
    (lane,) = lanes.lanes
    assert lane.busy_ns == (100, 70)
    assert lane.kernel == (0, OTHER) and lane.kernel_ns == (40, 70)


def test_many_kernels_fold_their_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same bins with room for two kernels per bin (CELLS = 4 over 2 bins): A is kept
    (named), B, C and D are taken together, and together they hold bin 0 with 60 ns."""
    import roofscope.analysis.timeline_lanes as tl

    monkeypatch.setattr(tl, "CELLS", 4)
    path = _trace(tmp_path, [("A", 0, 40), ("B", 40, 70), ("C", 70, 100), ("D", 100, 160),
                             ("D", 190, 200)])  # fmt: skip
    lanes = timeline_lanes(load([str(path)]), kernels=["A"], bins=2)
    assert lanes is not None
    assert lanes.lanes[0].kernel == (OTHER, OTHER) and lanes.lanes[0].kernel_ns == (60, 70)
