"""The kernel-time (hotspots) chart as SVG, drawn here (not in the browser) so that the HTML
report and ``--svg`` write the same pictures. Every element of a kernel carries ``data-k`` (its
index in the report's kernel list) for the linked highlighting; every text is escaped."""

from __future__ import annotations

from collections.abc import Sequence

from roofscope.analysis.hotspots import KernelStats
from roofscope.render.charts.font import SVG_FONT
from roofscope.render.charts.labels import text_width
from roofscope.render.escape import escape_text as _e
from roofscope.render.names import fit, shortened, showing_full
from roofscope.render.numbers import count, duration
from roofscope.report import Report

HOT, COLD = "#d62728", "#9aa5b1"


def hotspot_svg(report: Report, top: int = 20) -> str:
    """The report's kernel-time chart (``hotspot_bars``)."""
    return hotspot_bars(report.hotspots.kernels, top)


def hotspot_bars(ranked: Sequence[KernelStats], top: int = 20) -> str:
    """Horizontal bars of the top kernels by time (hotspots red), the rest folded into
    'other', and the cumulative share as a line; ``ranked``: the hotspots' kernels."""
    kernels = list(ranked)
    shown, rest = kernels[:top], kernels[top:]
    rows = [(i, k.name, k.share or 0.0, k.hot, k.calls, k.mean_ns) for i, k in enumerate(shown)]
    if rest:
        other = f"other ({count(len(rest), 'kernel')})"
        rows.append((-1, other, sum(k.share or 0 for k in rest), False,
                     sum(k.calls for k in rest), None))  # fmt: skip
    short = shortened([k.name for k in shown], 38)
    labels = [short.get(r[1]) or fit(r[1], 38) for r in rows]
    left = _label_room(labels, 260)
    width, bar_h, right = left + 500, 22, 60
    height = 40 + bar_h * len(rows)
    scale = (width - left - right) / (max((r[2] for r in rows), default=0.0) or 1.0)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="hotspots" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" {SVG_FONT}>',
        "<title>Kernel time by kernel (hotspots in red)</title>",
    ]
    cumulative, points = 0.0, []
    for row, (index, name, share, hot, calls, mean) in enumerate(rows):
        y = 20 + row * bar_h
        mean_text = "" if mean is None else f", mean {duration(mean)}"
        tip = f"{name}: {100 * share:.1f}% of kernel time, {count(calls, 'call')}{mean_text}"
        label = labels[row]
        out.append(
            f'<g class="bar" data-k="{index}"><title>{_e(tip)}</title>'
            f'<text x="{left - 6}" y="{y + 15}" text-anchor="end" font-size="11">{_e(label)}</text>'
            f'<rect x="{left}" y="{y + 3}" width="{max(1.0, share * scale):.1f}" '
            f'height="{bar_h - 6}" fill="{HOT if hot else COLD}"/></g>'
        )
        cumulative += share
        points.append(f"{left + cumulative * (width - left - right):.1f},{y + bar_h / 2:.1f}")
    if points:
        out.append(
            f'<polyline class="cumulative" points="{" ".join(points)}" fill="none" '
            'stroke="#333" stroke-dasharray="3,2"><title>cumulative share</title></polyline>'
        )
    out.append("</svg>")
    return "\n".join(out)


def _label_room(labels: Sequence[str], least: int) -> int:
    """The room left of the bars: ``least``, or as much as whole names (``full_names``) take
    at 11 px."""
    if not showing_full():
        return least
    return max([least, *(round(text_width(t, 11)) + 8 for t in labels)])
