"""The timeline's bins, checked against the dispatch intervals read with the csv module and
clipped to each bin by a plain loop."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

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
    its colour is the kernel with the most time in it."""
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
        busy = sum(_clip(b, e, lo, hi) for _, b, e in rows)
        lap = sum(_clip(b, e, lo, hi) for n, b, e in rows if n == "laplacian_kernel")
        assert lane.busy_ns[i] == busy
        assert lane.kernel[i] == (0 if lap >= busy - lap else OTHER)
        assert lane.kernel_ns[i] == max(lap, busy - lap)
    assert sum(lane.busy_ns) == sum(e - b for _, b, e in rows)


def test_overlap_counts_once_and_idle_bins(tmp_path: Path) -> None:
    """A [0, 100), B [50, 150), C [300, 400) in 4 bins of 100 ns: bin 0 busy 100 (A 100 beats
    B 50), bin 1 busy 50 (B), bin 2 idle, bin 3 busy 100 (C, one of the rest)."""
    header = LAPLACIAN.read_text(encoding="utf-8").splitlines()[0]
    t = 2_001_401_019_948_822
    lines = [header]
    for i, (name, begin, end) in enumerate([("A", 0, 100), ("B", 50, 150), ("C", 300, 400)]):
        lines.append(
            f'{i},"{name}",8,0,{i},1,1,256,256,0,0,16,0,32,64,"0x0","0x0",{t + begin - 10},'
            f"{t + begin},{t + end},{t + end + 10},{end - begin}"
        )
    path = tmp_path / "results.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    lanes = timeline_lanes(load([str(path)]), kernels=["A", "B"], bins=4)
    assert lanes is not None and (lanes.start_ns, lanes.bin_ns) == (t, 100)
    (lane,) = lanes.lanes
    assert lane.busy_ns == (100, 50, 0, 100)
    assert lane.kernel == (0, 1, IDLE, OTHER)
    assert lane.kernel_ns == (100, 50, 0, 100)
