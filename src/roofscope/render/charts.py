"""Charts as SVG, drawn here (not in the browser) so that the HTML report and ``--svg``
write the same pictures. Every element of a kernel carries ``data-k`` (its index in the
report's kernel list) for the linked highlighting; every text is escaped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from html import escape
from pathlib import Path

from roofscope.analysis.roofline import KernelRoofline
from roofscope.render.bandwidth_strip import StripMark, bandwidth_strip, strip_height
from roofscope.render.names import fit, shortened
from roofscope.render.numbers import duration
from roofscope.render.roofline_text import si
from roofscope.report import Report

BOUND_COLOUR = {"memory": "#1f77b4", "compute": "#d62728", None: "#7f7f7f"}
HOT, COLD = "#d62728", "#9aa5b1"


def escape_text(text: object) -> str:
    """Untrusted text (kernel names) made safe inside HTML and SVG, attributes included."""
    return escape(str(text), quote=True)


_e = escape_text


def hotspot_svg(report: Report, top: int = 20) -> str:
    """Horizontal bars of the top kernels by time (hotspots red), the rest folded into
    'other', and the cumulative share as a line."""
    kernels = list(report.hotspots.kernels)
    shown, rest = kernels[:top], kernels[top:]
    rows = [(i, k.name, k.share or 0.0, k.hot, k.calls, k.mean_ns) for i, k in enumerate(shown)]
    if rest:
        rows.append((-1, f"other ({len(rest)} kernels)", sum(k.share or 0 for k in rest), False,
                     sum(k.calls for k in rest), None))  # fmt: skip
    width, bar_h, left, right = 760, 22, 260, 60
    height = 40 + bar_h * len(rows)
    scale = (width - left - right) / (max((r[2] for r in rows), default=0.0) or 1.0)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="hotspots" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
        "<title>Kernel time by kernel (hotspots in red)</title>",
    ]
    cumulative, points = 0.0, []
    short = shortened([k.name for k in shown])
    for row, (index, name, share, hot, calls, mean) in enumerate(rows):
        y = 20 + row * bar_h
        mean_text = "" if mean is None else f", mean {duration(mean)}"
        tip = f"{name}: {100 * share:.1f}% of kernel time, {calls:,} call(s){mean_text}"
        label = fit(short.get(name, name), 38)
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


def roofline_svg(report: Report) -> str:
    """Log-log roofline: every ceiling labelled with value and source, the ridge point
    marked, kernels as points (area by time share, colour by bound; above-roof hollow)."""
    section = report.roofline.result
    index = {k.name: i for i, k in enumerate(report.hotspots.kernels)}
    shares = {k.name: k.share or 0.0 for k in report.hotspots.kernels}
    points: list[tuple[KernelRoofline, str]] = []
    for k in section.kernels:
        lvl = _point_level(k)
        if lvl is not None:
            points.append((k, lvl))
    strip = [
        _strip_mark(k, index.get(k.name, -1), shares.get(k.name, 0.0)) for k in section.kernels
    ]
    marks = [m for m in strip if m is not None]
    compute = [c for c in section.ceilings if c.kind == "compute"]
    memory = [c for c in section.ceilings if c.kind == "memory"]
    xs = [k.intensity[lvl] for k, lvl in points] + [0.01, 100.0]
    ys = [k.achieved_flops_s or 1.0 for k, _ in points] + [c.value for c in compute] + [1e9]
    plot = LogPlot.around(xs, ys, 760, 460)
    if any(k.placed_by == "iops" for k, _ in points):
        plot = replace(plot, ops=("FLOP", "IOP"))
    x0, x1, y0, y1, px, py = plot.x0, plot.x1, plot.y0, plot.y1, plot.px, plot.py
    width, height, pad = plot.width, plot.height, plot.pad
    total = height + strip_height(marks)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="roofline" width="{width}" '
        f'height="{total}" viewBox="0 0 {width} {total}" role="img">',
        "<title>Roofline: FLOP/s against arithmetic intensity (FLOP/B), log-log</title>",
        *plot.frame(),
    ]
    top = max((c.value for c in compute), default=y1)
    memory.sort(key=lambda c: -c.value)
    memory_y = spread([py(max(y0, c.value * x0)) - 4 for c in memory])
    for c, ly in zip(memory, memory_y, strict=True):  # diagonal: bandwidth x intensity
        xe = min(x1, top / c.value)  # up to the highest compute roof
        label = f"{c.name} {si(c.value, 'B/s')}"
        out.append(
            f'<g class="ceiling memory"><title>{_e(label)} · {_e(c.source)}</title>'
            f'<line x1="{px(x0):.1f}" y1="{py(max(y0, c.value * x0)):.1f}" x2="{px(xe):.1f}" '
            f'y2="{py(c.value * xe):.1f}" stroke="#555"/>'
            f'<text x="{px(x0) + 4:.1f}" y="{ly:.1f}" font-size="10">'
            f"{_e(label)}</text></g>"
        )
    compute.sort(key=lambda c: -c.value)
    label_y = spread([py(c.value) - 4 for c in compute])
    for c, ly in zip(compute, label_y, strict=True):
        ridge = min((c.value / m.value for m in memory), default=x0)
        label = f"{c.name} {si(c.value, c.unit_of_value)}"
        out.append(
            f'<g class="ceiling compute"><title>{_e(label)} · {_e(c.source)}</title>'
            f'<line x1="{px(max(x0, ridge)):.1f}" y1="{py(c.value):.1f}" x2="{px(x1):.1f}" '
            f'y2="{py(c.value):.1f}" stroke="#555"/>'
            f'<text x="{px(x1) - 4:.1f}" y="{ly:.1f}" font-size="10" '
            f'text-anchor="end">{_e(label)}</text></g>'
        )
    main = next((c for c in compute if c.name == section.main_ceiling), None)
    if main and "hbm" in section.ridge:
        rx = section.ridge["hbm"]
        out.append(f'<circle class="ridge" cx="{px(rx):.1f}" cy="{py(main.value):.1f}" r="4" '
                   f'fill="#000"><title>ridge point {rx:.3g} FLOP/B</title></circle>')  # fmt: skip
    for k, lvl in sorted(points, key=lambda p: -shares.get(p[0].name, 0)):
        r = 4 + 26 * math.sqrt(shares.get(k.name, 0.0))
        colour = BOUND_COLOUR.get(k.bound, "#7f7f7f")
        fill = "none" if k.above_roof else colour
        ops = "IOP" if k.placed_by == "iops" else "FLOP"
        tip = (
            f"{k.name}\nintensity {k.intensity[lvl]:.3g} {ops}/B ({lvl}), achieved "
            f"{si(k.achieved_flops_s or 0, ops + '/s')}, attainable "
            f"{si(k.attainable_flops_s or 0, ops + '/s')}, efficiency "
            f"{'-' if k.efficiency is None else f'{100 * k.efficiency:.1f}%'}"
            + (" — ABOVE ITS ROOF: check the GPU, counter scope or work" if k.above_roof else "")
            + (f" — no {k.missing_ceiling} ceiling: no bound" if k.missing_ceiling else "")
        )
        out.append(
            f'<circle class="point{" above" if k.above_roof else ""}" '
            f'data-k="{index.get(k.name, -1)}" '
            f'cx="{px(k.intensity[lvl]):.1f}" cy="{py(k.achieved_flops_s or y0):.1f}" r="{r:.1f}" '
            f'fill="{fill}" fill-opacity="0.6" stroke="{colour}" stroke-width="2">'
            f"<title>{_e(tip)}</title></circle>"
        )
    out += bandwidth_strip(marks, section.ceilings, height, width, pad)
    out.append("</svg>")
    return "\n".join(out)


def spread(ys: Sequence[float], gap: float = 11.0) -> list[float]:
    """Label baselines in drawing order (top first), each pushed down to at least ``gap``
    below the one before, so that ceilings of equal value keep readable labels."""
    out: list[float] = []
    for y in ys:
        out.append(y if not out else max(y, out[-1] + gap))
    return out


def drawn_on_roofline(k: KernelRoofline) -> bool:
    """Whether the roofline chart shows the kernel, as a point or in the bandwidth strip."""
    return _point_level(k) is not None or _strip_level(k) is not None


def _point_level(k: KernelRoofline) -> str | None:
    """The memory level whose intensity places the kernel on the FLOP/s axes, if it can be."""
    lvl = _level(k)
    return lvl if lvl is not None and k.achieved_flops_s and k.intensity.get(lvl) else None


def _strip_level(k: KernelRoofline) -> str | None:
    """The memory level of a kernel placed by bandwidth, if it has a rate and a ceiling there."""
    lvl = k.limiting_level
    ok = k.placed_by == "bandwidth" and lvl is not None and k.achieved_bytes_s.get(lvl)
    return lvl if ok else None


def _strip_mark(k: KernelRoofline, index: int, share: float) -> StripMark | None:
    """A kernel placed by bandwidth, as a point in the strip beneath the roofline."""
    lvl = _strip_level(k)
    if lvl is None:
        return None
    eff = "-" if k.efficiency is None else f"{100 * k.efficiency:.1f}%"
    tip = (
        f"{k.name}\nno FLOPs counted: placed by bandwidth; {lvl} "
        f"{si(k.achieved_bytes_s[lvl], 'B/s')}, efficiency {eff} of the {lvl} ceiling"
        + (" — ABOVE ITS ROOF: check the GPU, counter scope or work" if k.above_roof else "")
    )
    radius = 3 + 10 * math.sqrt(share)  # the strip's rows are 30 px high
    bytes_s = k.achieved_bytes_s[lvl]
    return StripMark(
        index, lvl, bytes_s, None, tip, radius, BOUND_COLOUR["memory"], "", k.above_roof
    )


def _level(k: KernelRoofline) -> str | None:
    if k.limiting_level and k.limiting_level in k.intensity:
        return k.limiting_level
    return "hbm" if "hbm" in k.intensity else next(iter(k.intensity), None)


def timeline_svg(report: Report) -> str:
    """Busy and idle share of each device's span."""
    t = report.timeline
    if t is None:
        return ""
    width, row = 760, 26
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="timeline" width="{width}" '
        f'height="{20 + row * len(t.devices)}" role="img">',
        "<title>busy and idle per device</title>",
    ]
    left = 90 if all(d.source is None for d in t.devices) else 240  # room for the process
    bar = width - left - 70
    for i, d in enumerate(t.devices):
        busy = d.busy_ns / d.span_ns if d.span_ns else 0.0
        y = 10 + i * row
        process = "" if d.source is None else f"{Path(report.inputs[d.source].path).name[:28]} · "
        out.append(
            f'<text x="0" y="{y + 15}" font-size="11">{_e(process)}device {_e(d.device)}</text>'
            f'<rect x="{left}" y="{y}" width="{busy * bar:.1f}" height="18" fill="#2ca02c">'
            f"<title>busy {100 * busy:.1f}%</title></rect>"
            f'<rect x="{left + busy * bar:.1f}" y="{y}" width="{(1 - busy) * bar:.1f}" '
            f'height="18" fill="#eee"><title>idle {100 * (1 - busy):.1f}%, {d.gaps} gap(s)</title>'
            "</rect>"
        )
    out.append("</svg>")
    return "\n".join(out)


@dataclass(frozen=True)
class LogPlot:
    """The log-log axes of a roofline: whole decades around the data, half a decade spare."""

    x0: float
    x1: float
    y0: float
    y1: float
    width: int
    height: int
    pad: int = 60
    ops: tuple[str, ...] = ("FLOP",)  # what the y axis counts: FLOPs, and IOPs where drawn

    @classmethod
    def around(cls, xs: Sequence[float], ys: Sequence[float], width: int, height: int) -> LogPlot:
        lo, hi = math.log10(min(xs)), math.log10(max(xs))
        bottom, top = math.log10(min(ys)), math.log10(max(ys))
        return cls(
            10 ** math.floor(lo - 0.5),
            10 ** math.ceil(hi + 0.5),
            10 ** math.floor(bottom - 0.5),
            10 ** math.ceil(top + 0.5),
            width,
            height,
        )

    def px(self, x: float) -> float:
        span = math.log10(self.x1) - math.log10(self.x0)
        return self.pad + (math.log10(x) - math.log10(self.x0)) / span * (self.width - 2 * self.pad)

    def py(self, y: float) -> float:
        span = math.log10(self.y1) - math.log10(self.y0)
        inner = self.height - 2 * self.pad
        return self.height - self.pad - (math.log10(y) - math.log10(self.y0)) / span * inner

    def frame(self) -> list[str]:
        """The plot area, a label at each decade and the axis titles."""
        w, h, pad = self.width, self.height, self.pad
        out = [f'<rect x="{pad}" y="{pad}" width="{w - 2 * pad}" height="{h - 2 * pad}" '
               'fill="none" stroke="#ccc"/>']  # fmt: skip
        for decade in range(round(math.log10(self.x0)), round(math.log10(self.x1)) + 1):
            out.append(f'<text x="{self.px(10.0**decade):.1f}" y="{h - pad + 16}" '
                       f'font-size="10" text-anchor="middle">1e{decade}</text>')  # fmt: skip
        for decade in range(round(math.log10(self.y0)), round(math.log10(self.y1)) + 1):
            out.append(f'<text x="{pad - 6}" y="{self.py(10.0**decade) + 3:.1f}" font-size="10" '
                       f'text-anchor="end">1e{decade}</text>')  # fmt: skip
        per_byte = " or ".join(f"{o}/B" for o in self.ops)
        y_label = "performance [" + " or ".join(f"{o}/s" for o in self.ops) + "]"
        out.append(f'<text x="{w / 2}" y="{h - 14}" font-size="11" text-anchor="middle">'
                   f"arithmetic intensity [{per_byte}]</text>")  # fmt: skip
        out.append(f'<text x="14" y="{h / 2}" font-size="11" text-anchor="middle" '
                   f'transform="rotate(-90 14 {h / 2})">{y_label}</text>')  # fmt: skip
        return out
