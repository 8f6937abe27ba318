"""Kernels at a measured roof (above a ceiling a benchmark reached, under the datasheet's)
are not called above the hardware by any renderer (issue 38, point 8.3): the chart's tooltip
says 'at its measured roof', the point is filled, and the roofline table's row is not red."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from rich.console import Console

from roofscope.readers.load import load
from roofscope.render.charts.roofline import roofline_svg
from roofscope.render.report.roofline_text import roofline_section
from roofscope.report import analyse
from tests.conftest import DATA, SHARED_CORPUS

AXES1 = SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1/mi200"
MI200 = DATA / "rocprof-compute-omniperf1-mi200"
MEASURED_TOLERANCE = 1.1  # a measured ceiling may be beaten by up to 10 % (diagnosis/trust)


def hbm_measured(folder: Path) -> float:
    """The HBM bandwidth the profile's own benchmark reached (roofline.csv, GB/s), in B/s."""
    with (folder / "roofline.csv").open(newline="") as f:
        return float(next(csv.DictReader(f))["HBMBw"]) * 1e9


def check(folder: Path, expected: int) -> None:
    report = analyse(load([str(folder)]))
    marked = [k for k in report.roofline.result.kernels if k.at_measured_roof]
    findings = {f.kernel for f in report.findings if f.rule == "at-measured-roof"}
    assert len(marked) == expected and {k.name for k in marked} == findings
    ceiling = hbm_measured(folder)
    for k in marked:  # over the measured HBM roof, within its tolerance; no longer 'above'
        assert k.limiting_level == "hbm" and k.above_roof and not k.beyond_hardware
        assert ceiling < k.achieved_bytes_s["hbm"] <= MEASURED_TOLERANCE * ceiling
    svg = roofline_svg(report)
    assert "ABOVE ITS ROOF" not in svg and 'class="point above' not in svg
    assert "hollow: above its roof" not in svg
    plotted = svg.count("at its measured roof (the benchmark under-measured the peak)")
    assert 0 < plotted <= expected
    console = Console(width=240, force_terminal=True, color_system="standard", record=True)
    roofline_section(console, report, top=len(report.roofline.result.kernels))
    table = console.export_text(styles=True)
    assert "\x1b[1;31m" not in table and "\x1b[31m" not in table  # no row in red


def test_trimmed_omniperf_mi200_has_10_kernels_at_their_measured_roof() -> None:
    check(MI200, 10)


@pytest.mark.skipif(not AXES1.is_dir(), reason="needs ../shared/corpus")
def test_omniperf_axes1_has_93_kernels_at_their_measured_roof() -> None:
    check(AXES1, 93)
