"""Issue 40's acceptance on the exported SVGs: every chart of six real profiles (rocprof v1,
rocprofv3, rocprof-compute, Nsight Compute, Nsight Systems, Kineto) and of two compares,
read back from its SVG with the chart's own font widths (tests/svg_boxes.py): no two texts
overlap, tick labels on the axes, a legend whose entries are exactly the series drawn (in
the same colours, no two alike), no number with an exponent. Then the numbers the hotspot
bars and the timeline state, against the files' own fields."""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import roofscope
from roofscope.cli.app import main
from roofscope.render.charts.hotspots import distinct, hotspot_bars, percent
from roofscope.render.numbers import duration
from tests import svg_boxes as sb
from tests.conftest import DATA, SUMMARY

KINETO = DATA / "kineto" / "h100_qwen1.5_0.5b_chat.json.gz"
PROFILES = {
    "rocprof-v1": DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv",
    "rocprofv3": DATA / "rocprofv3-json" / "mi300a_ps_file_results.json",
    "rocprof-compute": DATA / "rocprof-compute-mi200",
    "ncu": DATA / "ncu" / "asymgemm-h200" / "mlp_1b_raw.csv",
    "nsys": DATA / "nsys" / "cloverleaf-a100.sqlite",
    "kineto": KINETO,
}
WORK = ["vector_add=1.0e9:8.0e8", "mat_mul=2.6e10:6.0e8", "layer_norm=1.8e9:2.4e8",
        "softmax=4.0e9:6.4e8"]  # fmt: skip


@cache
def charts(name: str) -> dict[str, str]:
    """The charts ``analyze --svg`` (or ``compare --svg``) writes for ``name``, by chart."""
    if name == "compare-mi100-mi200":
        c = roofscope.compare(DATA / "omniperf-v1-mi100", DATA / "rocprof-compute-mi200")
        return {"waterfall": c.waterfall_svg()}
    if name == "compare-summary":
        c = roofscope.compare(SUMMARY, SUMMARY, gpu="mi250x", work=WORK)
        return {"waterfall": c.waterfall_svg(), "movement": c.movement_svg()}
    r = roofscope.analyze(PROFILES[name])
    drawn = {"hotspots": r.hotspots_svg(), "roofline": r.roofline_svg(),
             "timeline": r.timeline_svg()}  # fmt: skip
    return {k: v for k, v in drawn.items() if v}


# the charts each one draws
DRAWN = {
    **{name: ("hotspots", "roofline", "timeline") for name in PROFILES},
    "ncu": ("hotspots", "roofline"),  # a counter export: no timestamps, no timeline
    # no kernel with work (no counters, no shapes): no roofline chart, one line says why
    **{name: ("hotspots", "timeline") for name in ("rocprof-v1", "rocprofv3", "nsys")},
    "compare-mi100-mi200": ("waterfall",),  # the MI100 side has no work: no movement
    "compare-summary": ("movement", "waterfall"),
}


def _cases(known_bad: dict[Any, str]) -> list[Any]:
    """(profile, chart) of every chart drawn, those of ``known_bad`` xfail (keyed by the chart,
    or by (profile, chart))."""
    out = []
    for name, drawn in DRAWN.items():
        for chart in drawn:
            why = known_bad.get((name, chart)) or known_bad.get(chart)
            marks = [pytest.mark.xfail(strict=False, reason=why)] if why else []
            out.append(pytest.param(name, chart, id=f"{name}-{chart}", marks=marks))
    return out


def _svg(name: str, chart: str) -> str:
    svg = charts(name).get(chart, "")
    assert svg, f"{name} draws no {chart} chart"
    return svg


def test_the_charts_drawn() -> None:
    assert {name: tuple(sorted(charts(name))) for name in DRAWN} == DRAWN


@pytest.mark.parametrize(("name", "chart"), _cases({}))
def test_no_two_texts_overlap(name: str, chart: str) -> None:
    assert sb.overlapping(_svg(name, chart)) == []


@pytest.mark.parametrize(("name", "chart"), _cases({}))
def test_no_text_is_crossed_by_a_line(name: str, chart: str) -> None:
    """No line of the chart (a roof, a leader, an arrow, the cumulative share, an axis) runs
    through a text; faint grid lines behind outlined values are read through."""
    assert sb.crossed(_svg(name, chart)) == []


@pytest.mark.parametrize(("name", "chart"), _cases({}))
def test_no_text_is_cut_by_the_charts_edge(name: str, chart: str) -> None:
    assert sb.outside(_svg(name, chart)) == []


def test_wide_library_names_fit_left_of_the_bars() -> None:
    """SGLang's Qwen3-8B decode on an MI300X: hipBLASLt's Tensile kernels (``Cijk_…
    MT64x…x256_…``: wide letters) ran past the chart's left edge at 38 characters. Each
    label now fits its measured width, and the five Tensile kernels still read apart by
    their names alone (no rank appended to tell two alike apart)."""
    trace = DATA / "kineto" / "sglang_qwen3_8b_decode_mi300x.json.gz"
    svg = roofscope.analyze(trace).hotspots_svg()
    assert sb.outside(svg) == []
    labels = re.findall(r'text-anchor="end" font-size="11">([^<]*)</text>', svg)
    tensile = [t for t in labels if t.startswith("Cijk_")]
    assert len(tensile) == 5 and not [t for t in labels if re.search(r" #\d+$", t)]


@pytest.mark.parametrize(("name", "chart"), _cases({}))
def test_tick_labels_and_a_legend(name: str, chart: str) -> None:
    svg = _svg(name, chart)
    assert len(sb.tick_labels(svg)) >= 2
    assert sb.has_legend(svg)


@pytest.mark.parametrize(("name", "chart"), _cases({}))
def test_the_legend_names_exactly_the_series_drawn(name: str, chart: str) -> None:
    """One entry per series the marks draw (``data-series``), none for a series not drawn,
    each with the marks' colour, no two entries in the same words."""
    svg = _svg(name, chart)
    entries, drawn = sb.legend(svg), sb.drawn_series(svg)
    assert entries and sorted(e.series for e in entries) == sorted(drawn)
    assert len({e.words for e in entries}) == len(entries)
    for e in entries:
        assert e.fill is None or drawn[e.series] == {e.fill}, e


@pytest.mark.parametrize(("name", "chart"), _cases({}))
def test_no_exponents(name: str, chart: str) -> None:
    assert sb.exponents(_svg(name, chart)) == []


# -- the numbers the charts state --------------------------------------------------------


@cache
def kineto_kernels() -> tuple[Counter[str], float, float]:
    """The Kineto trace's own fields: each kernel's summed ``dur`` (µs), the total, and the
    span from the first kernel's start to the last one's end (µs)."""
    doc = json.loads(gzip.decompress(KINETO.read_bytes()))
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X"]
    by_name: Counter[str] = Counter()
    for e in kernels:
        by_name[e["name"]] += e["dur"]
    start = min(e["ts"] for e in kernels)
    return by_name, sum(by_name.values()), max(e["ts"] + e["dur"] for e in kernels) - start


def test_the_bars_state_each_kernels_time_and_share() -> None:
    """The Qwen1.5 H100 trace: 26 kernels, the title says top 20 of 26; the first bar ends in
    the top kernel's summed ``dur`` and its share of all kernels' (12.8 ms, 28.2 %), each
    value as the trace gives it, and 'other (6 kernels)' holds the rest."""
    by_name, total, _ = kineto_kernels()
    svg = charts("kineto")["hotspots"]
    values = [t.words for t in sb.texts(svg) if "value" in t.classes]
    ranked = by_name.most_common()
    assert len(ranked) == 26 and "Kernel time by kernel, top 20 of 26" in svg
    expected = [f"{duration(1e3 * us)} · {percent(us / total)}" for _, us in ranked[:20]]
    rest = sum(us for _, us in ranked[20:])
    assert values == [*expected, f"{duration(1e3 * rest)} · {percent(rest / total)}"]
    assert values[0] == "12.8 ms · 28.2 %"
    assert "other (6 kernels)" in svg


def test_the_bars_time_axis_reaches_the_longest_bar() -> None:
    """Its time axis: 0, 2, ... 12 ms, the longest bar (12.8 ms) just past the last tick; the
    cumulative line's axis 0 % to 100 %."""
    svg = charts("kineto")["hotspots"]
    ticks = sb.tick_labels(svg)
    assert ticks[:3] == ["0 %", "50 %", "100 %"]
    assert ticks[3:] == [f"{n} ms" for n in range(0, 13, 2)]


def test_the_timeline_axis_spans_the_trace() -> None:
    """The timeline's ticks, 0 to 40 ms at 10 ms, cover the trace's span of kernels from its
    own timestamps (49.7 ms)."""
    _, _, span_us = kineto_kernels()
    assert 40_000 <= span_us < 50_000
    assert sb.tick_labels(charts("kineto")["timeline"]) == [
        "0 ms",
        "10 ms",
        "20 ms",
        "30 ms",
        "40 ms",
    ]


def test_bars_that_read_alike_get_their_rank() -> None:
    """Three kernels of one name (the HTA trace_filter case): each label ends in its bar's
    rank; a label that is alone keeps its words."""
    assert distinct(["gemm", "copy", "gemm", "gemm"]) == ["gemm #1", "copy", "gemm #3", "gemm #4"]


def test_bars_of_kernels_with_one_short_name_are_told_apart() -> None:
    """Two kernels whose names differ only past 38 characters, in the middle that the short
    name elides: their two bars read differently, and the chart still passes every check."""
    from roofscope.analysis.hotspots import KernelStats

    stem = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl"
    names = [f"{stem}<Functor{n}>(at::TensorIteratorBase&)" for n in (1, 2)]
    ranked = [
        KernelStats(n, (n,), 4, 4e6, 1e6, 1e6, 1e6, 1e6, 0.0, 0.5, 0.5 * (i + 1), i == 0)
        for i, n in enumerate(names)
    ]
    svg = hotspot_bars(ranked)
    labels = [t.words for t in sb.texts(svg) if re.search(r"Functor|elementwise", t.words)]
    assert len(labels) == 2 and labels[0] != labels[1]
    assert sb.overlapping(svg) == [] and sb.exponents(svg) == []


def test_a_small_share_reads_as_less_than_a_hundredth() -> None:
    assert [percent(s) for s in (0.5, 0.00185, 0.00005, 0.0)] == [
        "50 %",
        "0.185 %",
        "< 0.01 %",
        "0 %",
    ]


def test_the_svg_boxes_find_an_overlap() -> None:
    """The check can fail: two texts at one place overlap; one rotated axis name is a tall
    box; a 1.6e+12 is an exponent."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg"><text x="10" y="20" font-size="10">abc</text>'
           '<text x="12" y="22" font-size="10">def</text>'
           '<text x="50" y="100" font-size="10" transform="rotate(-90 50 100)">axis name</text>'
           "<text x='200' y='20'>1.6e+12 FLOP/s</text></svg>")  # fmt: skip
    assert sb.overlapping(svg) == [("abc", "def")]
    axis = next(t for t in sb.texts(svg) if t.words == "axis name")
    assert axis.box.y1 - axis.box.y0 > axis.box.x1 - axis.box.x0
    assert sb.exponents(svg) == ["1.6e+12 FLOP/s"]


def test_the_line_check_finds_a_crossing() -> None:
    """The check can fail: a line through a text is found, one that ends at its edge or a
    grid line is not; a diagonal label's box is turned with it."""
    svg = ('<svg xmlns="http://www.w3.org/2000/svg">'
           '<text x="10" y="20" font-size="10">abc</text>'
           '<line class="roof" x1="0" y1="17" x2="40" y2="17"/>'
           '<line class="leader" x1="0" y1="30" x2="9" y2="17"/>'
           '<line class="grid" x1="15" y1="0" x2="15" y2="40"/>'
           '<text x="100" y="100" font-size="10" transform="rotate(-45 100 100)">diagonal</text>'
           '<polyline class="cumulative" points="100,120 130,120"/></svg>')  # fmt: skip
    assert sb.crossed(svg) == [("abc", "roof")]
    diagonal = next(t for t in sb.texts(svg) if t.words == "diagonal")
    assert diagonal.box.y0 < 80 and diagonal.corners[0] != (diagonal.box.x0, diagonal.box.y0)


def test_a_roof_label_between_close_lines_is_written_on_its_line() -> None:
    """The MI200's vl1d roof (9.23 TB/s) runs one label's height from lds (17.7 TB/s) and l2
    (5.02 TB/s): its label is written on its own line, which is broken around it (two
    pieces), clear of every other line and text."""
    svg = charts("rocprof-compute")["roofline"]
    pieces = [s for s in sb.segments(svg) if s[0] == "ceiling memory"]
    vl1d = re.findall(r"<line [^>]*>(?:<title>vl1d [^<]*</title>)", svg)
    assert len(vl1d) == 2 and len(pieces) == 5  # lds, vl1d (two pieces), l2, hbm
    assert sb.crossed(svg) == [] and sb.overlapping(svg) == []


def test_the_cumulative_line_has_its_own_axis_right_of_the_values() -> None:
    """The Qwen1.5 trace: the cumulative line starts at the top kernel's share (28.2 %) and
    ends at 100 % (every kernel shown or folded), on its panel's 0-100 % axis, right of
    every value label."""
    by_name, total, _ = kineto_kernels()
    svg = charts("kineto")["hotspots"]
    ticks = {t.words: t.box for t in sb.texts(svg) if "tick" in t.classes}
    at = {p: (ticks[f"{p} %"].x0 + ticks[f"{p} %"].x1) / 2 for p in (0, 100)}
    line = re.search(r'class="cumulative"[^>]* points="([^"]+)"', svg)
    assert line is not None
    xs = [float(p.split(",")[0]) for p in line.group(1).split()]
    top = by_name.most_common(1)[0][1] / total
    assert xs[0] == pytest.approx(at[0] + top * (at[100] - at[0]), abs=0.6)
    assert xs[-1] == pytest.approx(at[100], abs=0.6)
    values = [t.box.x1 for t in sb.texts(svg) if "value" in t.classes]
    assert max(values) < at[0]


def test_the_movement_chart_labels_every_arrow() -> None:
    """The summary compared with itself: each of its four kernels with work is an arrow from
    its before to its after point, labelled 1.00x (compare(a, a) = 1x)."""
    svg = charts("compare-summary")["movement"]
    speedups = [t.words for t in sb.texts(svg) if "speedup" in t.classes]
    drawn = sb.drawn_series(svg)
    assert speedups == ["1.00x"] * 4
    assert svg.count('data-series="arrow"') - 1 == 4 and {"before", "after"} <= set(drawn)


def test_charts_written_by_svg_are_the_ones_checked(tmp_path: Path) -> None:
    """``analyze --svg`` writes the charts checked here, byte for byte."""
    from roofscope.cli.app import main

    assert main(["analyze", str(PROFILES["nsys"]), "--svg", str(tmp_path), "--json"]) == 0
    for chart, svg in charts("nsys").items():
        assert (tmp_path / f"{chart}.svg").read_text() == svg


def test_one_bar_has_no_cumulative_line() -> None:
    """The vcopy MI350 case: one kernel is 100 % of the time; a cumulative line of one point
    would draw nothing, so neither the line, its axis nor its legend entry is there."""
    from roofscope.analysis.hotspots import KernelStats

    one = [KernelStats("vecCopy", ("vecCopy",), 1, 55.5e3, 55.5e3, 55.5e3, 55.5e3, 55.5e3,
                       0.0, 1.0, 1.0, True)]  # fmt: skip
    svg = hotspot_bars(one)
    assert "cumulative" not in svg and sb.tick_labels(svg)[0] == "0 µs"
    assert [e.series for e in sb.legend(svg)] == ["hot"]


def test_the_key_counts_the_kernels_left_unlabelled() -> None:
    """``1 more kernel without a label: its name on hover``; ``2 more kernels ...``."""
    from roofscope.render.charts.roofline_labels import Labels, key

    for n, words in ((1, "1 more kernel without a label: its name on hover"),
                     (2, "2 more kernels without a label: their names on hover")):  # fmt: skip
        assert words in "".join(key(Labels([], [], n), 0, 760, 60))


def test_no_flops_anywhere_draws_the_bandwidth_strip_alone() -> None:
    """The summary with every kernel's FLOPs zeroed (bytes alone, as a copy): no empty FLOP/s
    axes, a title that says why, the four kernels in the bandwidth strip, every check kept."""
    bytes_only = [re.sub(r"=[^:]+:", "=0:", w) for w in WORK]
    svg = roofscope.analyze(SUMMARY, gpu="mi250x", work=bytes_only).roofline_svg()
    assert "arithmetic intensity" not in svg and "no kernel has FLOPs counted" in svg
    assert svg.count('<circle class="point bw"') == 4
    assert [e.series for e in sb.legend(svg)] == ["memory-bound"] == list(sb.drawn_series(svg))
    assert sb.overlapping(svg) == [] and sb.crossed(svg) == [] and len(sb.tick_labels(svg)) >= 2


def test_the_movement_chart_draws_the_bandwidth_roof_of_its_kernels_level() -> None:
    """rocprof-compute MI200 against itself: its one kernel (vecCopy) is placed at hbm, so of
    the four bandwidth roofs (lds, vl1d, l2, hbm) only hbm's is drawn, every check kept."""
    mi200 = DATA / "rocprof-compute-mi200"
    svg = roofscope.compare(mi200, mi200).movement_svg()
    memory = re.findall(r'class="ceiling base memory"[^>]*><title>([^<]*)</title>', svg)
    assert memory == ["hbm 1.39 TB/s · measured: " + str(mi200 / "roofline.csv") + " (HBMBw)"]
    assert sb.overlapping(svg) == [] and sb.crossed(svg) == []


def test_kernels_that_span_no_time_draw_no_bars_and_no_timeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rocprof-compute MI300A through rocprofv2 (a spreadsheet rounded its timestamps): every
    Begin equals its End in pmc_perf.csv, so no bar and no timeline has anything to show.
    No chart is written; stderr and the page say why in one line each."""
    mi300a = DATA / "rocprof-compute-mi300a"
    with (mi300a / "pmc_perf.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["Start_Timestamp"] == r["End_Timestamp"] for r in rows)

    html = tmp_path / "page.html"
    assert main(["analyze", str(mi300a), "--svg", str(tmp_path / "svg"), "--html", str(html)]) == 0
    err = capsys.readouterr().err
    assert "no hotspots chart written: no kernel took any time (every duration is 0 ns)" in err
    assert "no timeline chart written: the kernels span no time (every Begin equals its End)" in err
    svgs = sorted(p.name for p in (tmp_path / "svg").glob("*.svg"))
    assert "hotspots.svg" not in svgs and "timeline.svg" not in svgs
    page = html.read_text(encoding="utf-8")
    assert "No timeline chart: the kernels span no time" in page
    assert "No hotspot chart: no kernel took any time" in page
    assert "make 80%" not in page  # no kernel holds any share


def test_two_gpus_roofs_extensions_break_around_each_others_labels() -> None:
    """rocprof-compute MI200 against MI350X (the tests' trimmed workloads): two roofs of nine
    labelled ceilings in 300 px. The candidate's dotted extensions ran through two of the
    baseline's labels; each extension is now broken around every label, and no text is
    crossed, overlapped or cut."""
    mi200, mi350 = DATA / "rocprof-compute-mi200", DATA / "rocprof-compute-mi350"
    svg = roofscope.compare(mi200, mi350).movement_svg()
    assert "fp64/fp32-matrix 41.4-41.5 TFLOP/s" in svg
    assert sb.crossed(svg) == [] and sb.overlapping(svg) == [] and sb.outside(svg) == []
    assert len(re.findall(r'class="ceiling new extension"', svg)) >= 2
