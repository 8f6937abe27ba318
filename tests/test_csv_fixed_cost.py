"""Issue 41, point 2: a rocprof v1 CSV is scanned once where nothing reads its launch shapes,
and a trace without graph launches is not searched for them; where a rule reads the shapes
(the device's compute units known), they are read, whole. Expected values from the file's own
columns, with the csv module."""

from __future__ import annotations

import csv
from pathlib import Path

from roofscope.diagnosis.evidence import graph_facts
from roofscope.model.access import has_graph_launches
from roofscope.model.selection import EVERYTHING, dispatches
from roofscope.readers.load import load
from roofscope.report import RooflineOptions, analyse
from tests.conftest import DATA
from tests.test_graphs import PIECEWISE, expected

LAPLACIAN = DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv"


def largest_grid(path: Path) -> dict[str, tuple[int, int, int]]:
    """Per kernel: the blocks and block size of its largest grid, and its dispatches."""
    out: dict[str, tuple[int, int, int]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            grid, size = int(row["grd"]), int(row["wgr"])
            blocks = -(-grid // size)
            top, top_size, calls = out.get(row["KernelName"], (0, 0, 0))
            if blocks > top:
                top, top_size = blocks, size
            out[row["KernelName"]] = (top, top_size, calls + 1)
    return out


def test_unknown_gpu_reads_the_csv_once() -> None:
    """No GPU named, so no compute units: no rule reads a shape, and the second scan of the
    file, which reads them, stays deferred."""
    profile = load([str(LAPLACIAN)])
    report = analyse(profile)
    assert report.launches == {}
    assert len(profile.deferred) == 1, "the launch-shape scan did not run"
    assert report.metrics.machine.compute_units is None


def test_known_gpu_reads_every_shape() -> None:
    """An MI210 named (--gpu), so its compute units are known: the launch-too-small rule
    reads each studied kernel's largest grid, counted over every dispatch of the file."""
    profile = load([str(LAPLACIAN)])
    report = analyse(profile, roof=RooflineOptions(gpu="mi210"))
    assert report.metrics.machine.compute_units
    assert profile.deferred == []
    expected = largest_grid(LAPLACIAN)
    got = {k: (s.blocks, s.block_size, s.dispatches) for k, s in report.launches.items()}
    assert got == {k: expected[k] for k in got}  # the hot kernels'
    assert got["laplacian_kernel"] == (134217728 // 256, 256, 1001)


def test_no_graph_launches_asks_nothing_of_the_dispatches() -> None:
    profile = load([str(LAPLACIAN)])
    assert not has_graph_launches(profile)
    every = dispatches(profile, EVERYTHING)
    assert graph_facts(profile, every, every) is None


def test_graph_launches_are_still_found() -> None:
    """vLLM's piecewise CUDA graphs on MI300X: its graph launches and the kernels they
    replayed, counted from the trace's events (tests/test_graphs.py)."""
    launches, empty, replayed, _ = expected(PIECEWISE)
    profile = load([PIECEWISE])
    assert has_graph_launches(profile)
    every = dispatches(profile, EVERYTHING)
    facts = graph_facts(profile, every, every)
    assert facts is not None
    assert (facts.launches, facts.empty, facts.dispatches) == (launches, empty, replayed)
