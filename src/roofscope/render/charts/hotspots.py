"""The kernel-time (hotspots) chart as SVG, drawn here (not in the browser) so that the HTML
report and ``--svg`` write the same pictures: a bar per kernel (hotspots red), the rest
folded into 'other', each bar's time and share at its end, a time axis beneath, the
cumulative share as a dashed line in its own panel right of the values (its percent axis
above it, so that it crosses no text), a title and a legend
(hotspot_axes.py). Every element of a kernel carries ``data-k`` (its index in the report's
kernel list) for the linked highlighting; every text is escaped."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from roofscope.analysis.hotspots import KernelStats
from roofscope.render.charts import hotspot_axes as axes
from roofscope.render.charts.font import SVG_FONT
from roofscope.render.charts.labels import text_width
from roofscope.render.escape import escape_text as _e
from roofscope.render.names import fit, shortened, showing_full
from roofscope.render.numbers import count, duration, number
from roofscope.report import Report

HOT, COLD = axes.HOT, axes.COLD


class Row(msgspec.Struct, frozen=True):
    """A bar: the kernel's index in the report (-1: the folded rest) and what it shows."""

    index: int
    name: str
    total_ns: float | None
    share: float
    hot: bool
    calls: int
    mean_ns: float | None


NO_TIME = "no kernel took any time (every duration is 0 ns)"  # why no bars are drawn


def hotspot_svg(report: Report, top: int = 20) -> str:
    """The report's kernel-time chart (``hotspot_bars``); empty when no kernel took any time
    (a summary without times, or every duration 0 ns): no bars to draw."""
    if not report.hotspots.total_ns:
        return ""
    return hotspot_bars(report.hotspots.kernels, top)


def hotspot_bars(ranked: Sequence[KernelStats], top: int = 20) -> str:
    """Horizontal bars of the top kernels by time (hotspots red), the rest folded into
    'other', and the cumulative share as a line; ``ranked``: the hotspots' kernels."""
    rows = _rows(ranked, top)
    labels = distinct(_labels(rows, min(top, len(ranked))))
    most = max((r.total_ns or 0.0 for r in rows), default=0.0)
    frame = axes.Frame(_label_room(labels, LABEL_ROOM), len(rows), most)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="hotspots" '
        f'width="{frame.width}" height="{frame.height}" '
        f'viewBox="0 0 {frame.width} {frame.height}" role="img" {SVG_FONT}>',
        "<title>Kernel time by kernel (hotspots in red)</title>",
        axes.title(frame, min(top, len(ranked)), len(ranked)),
        *axes.legend(frame, _series(rows)),
        *(axes.share_axis(frame) if len(rows) > 1 else ()),
        *axes.time_axis(frame),
    ]
    out += [_bar(frame, n, row, labels[n]) for n, row in enumerate(rows)]
    out += _cumulative(frame, rows)
    out.append("</svg>")
    return "\n".join(out)


def _rows(ranked: Sequence[KernelStats], top: int) -> list[Row]:
    kernels = list(ranked)
    shown, rest = kernels[:top], kernels[top:]
    rows = [Row(i, k.name, k.total_ns, k.share or 0.0, k.hot, k.calls, k.mean_ns)
            for i, k in enumerate(shown)]  # fmt: skip
    if rest:
        times = [k.total_ns for k in rest]
        total = None if None in times else sum(t or 0.0 for t in times)
        other = f"other ({count(len(rest), 'kernel')})"
        rows.append(Row(-1, other, total, sum(k.share or 0.0 for k in rest), False,
                        sum(k.calls for k in rest), None))  # fmt: skip
    return rows


def _series(rows: Sequence[Row]) -> set[str]:
    """The series the chart draws: hot and cold bars, the cumulative line (where two bars or
    more: one bar's is a single point at 100 %)."""
    return {"hot" if r.hot else "cold" for r in rows} | ({"cumulative"} if len(rows) > 1 else set())


LABEL_ROOM = 260  # px left of the bars for their labels, at least
MAX_ROOM = 340  # and at most, but for whole names (--full-names)
LABEL_PX = 11


def _labels(rows: Sequence[Row], kernels: int) -> list[str]:
    """Each bar's label: the kernels' short names, told apart (names.py), and 'other'; where
    one is wider than the most room the bars leave (wide letters: Tensile's
    ``MT256x128x64``), the names are shortened together to fewer characters until each one
    fits its measured width, never cut by the chart's edge."""
    names = [r.name for r in rows[:kernels]]
    room = MAX_ROOM - 8 - text_width(" #20", LABEL_PX)  # a repeat's rank may follow
    for chars in range(38, 9, -2):
        short = shortened(names, chars)
        labels = [short.get(r.name) or fit(r.name, chars) for r in rows]
        if showing_full() or all(text_width(t, LABEL_PX) <= room for t in labels):
            break
    return labels


def distinct(labels: Sequence[str]) -> list[str]:
    """The labels, each one that repeats followed by its bar's rank (``#3``), so that no two
    bars read alike (two kernels of one name, or short names that still collide)."""
    seen = Counter(labels)
    return [f"{t} #{n + 1}" if seen[t] > 1 else t for n, t in enumerate(labels)]


def _bar(frame: axes.Frame, n: int, row: Row, label: str) -> str:
    """The bar's label at the left, its rectangle, its time and share at its end."""
    y = axes.TOP + n * axes.BAR_H
    mean = "" if row.mean_ns is None else f", mean {duration(row.mean_ns)}"
    tip = f"{row.name}: {percent(row.share)} of kernel time, {count(row.calls, 'call')}{mean}"
    end = frame.x_time(row.total_ns or 0.0)
    value = (
        "time unknown"
        if row.total_ns is None
        else f"{duration(row.total_ns)} · {percent(row.share)}"
    )
    series = "hot" if row.hot else "cold"
    return (
        f'<g class="bar" data-k="{row.index}"><title>{_e(tip)}</title>'
        f'<text x="{frame.left - 6}" y="{y + 15}" text-anchor="end" font-size="11">'
        f"{_e(label)}</text>"
        f'<rect data-series="{series}" x="{frame.left}" y="{y + 3}" '
        f'width="{max(1.0, end - frame.left):.1f}" height="{axes.BAR_H - 6}" '
        f'fill="{HOT if row.hot else COLD}"/>'
        f'<text class="value" x="{max(end, frame.left + 1.0) + 4:.1f}" y="{y + 15}" '
        f'font-size="10">{_e(value)}</text></g>'
    )


def percent(share: float) -> str:
    """A share as a percentage in figures a reader takes in (``45.6 %``, ``0.0185 %``),
    ``< 0.01 %`` below that, never an SI prefix or an exponent."""
    if 0 < share < 1e-4:
        return "< 0.01 %"
    return number(100 * share, "%")


def _cumulative(frame: axes.Frame, rows: Sequence[Row]) -> list[str]:
    """The running sum of the bars' shares, in its panel right of the bars' values."""
    total, points = 0.0, []
    for n, row in enumerate(rows):
        total += row.share
        y = axes.TOP + n * axes.BAR_H + axes.BAR_H / 2
        points.append(f"{frame.x_share(total):.1f},{y:.1f}")
    if len(points) < 2:
        return []
    return [
        f'<polyline class="cumulative" data-series="cumulative" points="{" ".join(points)}" '
        f'fill="none" stroke="{axes.LINE}" stroke-dasharray="3,2">'
        "<title>cumulative share of kernel time</title></polyline>"
    ]


def _label_room(labels: Sequence[str], least: int) -> int:
    """The room left of the bars: ``least``, or as much as the labels take at 11 px, up to
    ``MAX_ROOM`` but for whole names (``full_names``)."""
    wanted = max([least, *(round(text_width(t, LABEL_PX)) + 8 for t in labels)])
    return wanted if showing_full() else min(wanted, MAX_ROOM)
