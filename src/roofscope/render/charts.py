"""Charts as SVG, drawn here (not in the browser) so that the HTML report and ``--svg``
write the same pictures. Every element of a kernel carries ``data-k`` (its index in the
report's kernel list) for the linked highlighting; every text is escaped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from pathlib import Path

from roofscope.analysis.roofline import KernelRoofline
from roofscope.ceilings import Ceiling
from roofscope.compare.compare import Comparison
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
    for row, (index, name, share, hot, calls, mean) in enumerate(rows):
        y = 20 + row * bar_h
        mean_text = "" if mean is None else f", mean {mean / 1e3:.3g} µs"
        tip = f"{name}: {100 * share:.1f}% of kernel time, {calls} call(s){mean_text}"
        label = name if len(name) <= 38 else name[:37] + "…"
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
        lvl = _level(k)
        if lvl is not None and k.achieved_flops_s and k.intensity.get(lvl):
            points.append((k, lvl))
    compute = [c for c in section.ceilings if c.kind == "compute"]
    memory = [c for c in section.ceilings if c.kind == "memory"]
    xs = [k.intensity[lvl] for k, lvl in points] + [0.01, 100.0]
    ys = [k.achieved_flops_s or 1.0 for k, _ in points] + [c.value for c in compute] + [1e9]
    x0, x1 = 10 ** math.floor(math.log10(min(xs)) - 0.5), 10 ** math.ceil(math.log10(max(xs)) + 0.5)
    y0, y1 = 10 ** math.floor(math.log10(min(ys)) - 0.5), 10 ** math.ceil(math.log10(max(ys)) + 0.5)
    width, height, pad = 760, 460, 60

    def px(x: float) -> float:
        return pad + (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * (
            width - 2 * pad
        )

    def py(y: float) -> float:
        return (
            height
            - pad
            - (math.log10(y) - math.log10(y0))
            / (math.log10(y1) - math.log10(y0))
            * (height - 2 * pad)
        )

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="roofline" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
        "<title>Roofline: FLOP/s against arithmetic intensity (FLOP/B), log-log</title>",
        f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" '
        'fill="none" stroke="#ccc"/>',
    ]
    for decade in range(int(math.log10(x0)), int(math.log10(x1)) + 1):
        out.append(f'<text x="{px(10.0**decade):.1f}" y="{height - pad + 16}" font-size="10" '
                   f'text-anchor="middle">1e{decade}</text>')  # fmt: skip
    for decade in range(int(math.log10(y0)), int(math.log10(y1)) + 1):
        out.append(f'<text x="{pad - 6}" y="{py(10.0**decade) + 3:.1f}" font-size="10" '
                   f'text-anchor="end">1e{decade}</text>')  # fmt: skip
    out.append(f'<text x="{width / 2}" y="{height - 14}" font-size="11" text-anchor="middle">'
               "arithmetic intensity [FLOP/B]</text>")  # fmt: skip
    out.append(f'<text x="14" y="{height / 2}" font-size="11" text-anchor="middle" '
               f'transform="rotate(-90 14 {height / 2})">performance [FLOP/s]</text>')  # fmt: skip
    top = max((c.value for c in compute), default=y1)
    for c in memory:  # diagonal: bandwidth x intensity, up to the highest compute roof
        xe = min(x1, top / c.value)
        label = f"{c.name} {si(c.value, 'B/s')}"
        out.append(
            f'<g class="ceiling memory"><title>{_e(label)} · {_e(c.source)}</title>'
            f'<line x1="{px(x0):.1f}" y1="{py(max(y0, c.value * x0)):.1f}" x2="{px(xe):.1f}" '
            f'y2="{py(c.value * xe):.1f}" stroke="#555"/>'
            f'<text x="{px(x0) + 4:.1f}" y="{py(max(y0, c.value * x0)) - 4:.1f}" font-size="10">'
            f"{_e(label)}</text></g>"
        )
    for c in compute:
        ridge = min((c.value / m.value for m in memory), default=x0)
        label = f"{c.name} {si(c.value, c.unit_of_value)}"
        out.append(
            f'<g class="ceiling compute"><title>{_e(label)} · {_e(c.source)}</title>'
            f'<line x1="{px(max(x0, ridge)):.1f}" y1="{py(c.value):.1f}" x2="{px(x1):.1f}" '
            f'y2="{py(c.value):.1f}" stroke="#555"/>'
            f'<text x="{px(x1) - 4:.1f}" y="{py(c.value) - 4:.1f}" font-size="10" '
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
        tip = (
            f"{k.name}\nintensity {k.intensity[lvl]:.3g} FLOP/B ({lvl}), achieved "
            f"{si(k.achieved_flops_s or 0, 'FLOP/s')}, attainable "
            f"{si(k.attainable_flops_s or 0, 'FLOP/s')}, efficiency "
            f"{'-' if k.efficiency is None else f'{100 * k.efficiency:.1f}%'}"
            + (" — ABOVE ITS ROOF: check the GPU, counter scope or work" if k.above_roof else "")
        )
        out.append(
            f'<circle class="point{" above" if k.above_roof else ""}" '
            f'data-k="{index.get(k.name, -1)}" '
            f'cx="{px(k.intensity[lvl]):.1f}" cy="{py(k.achieved_flops_s or y0):.1f}" r="{r:.1f}" '
            f'fill="{fill}" fill-opacity="0.6" stroke="{colour}" stroke-width="2">'
            f"<title>{_e(tip)}</title></circle>"
        )
    out.append("</svg>")
    return "\n".join(out)


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


def movement_svg(cmp: Comparison, ceilings: Sequence[Ceiling]) -> str:
    """Before -> after arrows on a log-log roofline, each labelled with its speedup; the
    baseline's ceilings drawn for reference. Empty when no kernel has roofline data on
    both sides."""
    moves = []
    for i, k in enumerate(cmp.kernels):
        m = k.movement
        if m is None or None in m.intensity or None in m.achieved_flops_s:
            continue
        if not all(v and v > 0 for v in (*m.intensity, *m.achieved_flops_s)):
            continue
        moves.append((i, k, m))
    if not moves:
        return ""
    xs = [v for _, _, m in moves for v in m.intensity if v]
    ys = [v for _, _, m in moves for v in m.achieved_flops_s if v]
    ys += [c.value for c in ceilings if c.kind == "compute"]
    x0, x1 = 10 ** math.floor(math.log10(min(xs)) - 0.5), 10 ** math.ceil(math.log10(max(xs)) + 0.5)
    y0, y1 = 10 ** math.floor(math.log10(min(ys)) - 0.5), 10 ** math.ceil(math.log10(max(ys)) + 0.5)
    width, height, pad = 760, 420, 60

    def px(x: float) -> float:
        span = math.log10(x1) - math.log10(x0)
        return pad + (math.log10(x) - math.log10(x0)) / span * (width - 2 * pad)

    def py(y: float) -> float:
        span = math.log10(y1) - math.log10(y0)
        return height - pad - (math.log10(y) - math.log10(y0)) / span * (height - 2 * pad)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="movement" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img">',
        "<title>Roofline movement: each kernel before and after</title>",
        '<defs><marker id="head" markerWidth="8" markerHeight="8" refX="6" refY="3" '
        'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#333"/></marker></defs>',
        f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" '
        'fill="none" stroke="#ccc"/>',
    ]
    for c in ceilings:
        label = f"{c.name} {si(c.value, c.unit_of_value)} (baseline)"
        if c.kind == "compute" and y0 < c.value < y1:
            out.append(
                f'<line x1="{pad}" y1="{py(c.value):.1f}" x2="{width - pad}" '
                f'y2="{py(c.value):.1f}" stroke="#bbb"><title>{_e(label)}</title></line>'
            )
        elif c.kind == "memory":
            xa, xb = x0, min(x1, y1 / c.value)
            if xb > xa and c.value * xa < y1:
                out.append(
                    f'<line x1="{px(xa):.1f}" y1="{py(max(y0, c.value * xa)):.1f}" '
                    f'x2="{px(xb):.1f}" y2="{py(c.value * xb):.1f}" stroke="#bbb">'
                    f"<title>{_e(label)}</title></line>"
                )
    for i, k, m in moves:
        (ax, bx), (ay, by) = m.intensity, m.achieved_flops_s
        assert ax and bx and ay and by
        speed = "-" if k.speedup is None else f"{k.speedup:.2f}x"
        tip = f"{k.name}: {speed}; intensity {ax:.3g} -> {bx:.3g} FLOP/B ({m.level})"
        out.append(
            f'<g data-k="{i}"><title>{_e(tip)}</title>'
            f'<line x1="{px(ax):.1f}" y1="{py(ay):.1f}" x2="{px(bx):.1f}" y2="{py(by):.1f}" '
            'stroke="#333" stroke-width="1.5" marker-end="url(#head)"/>'
            f'<circle cx="{px(ax):.1f}" cy="{py(ay):.1f}" r="4" fill="#9aa5b1"/>'
            f'<text x="{px(bx) + 6:.1f}" y="{py(by) - 6:.1f}" font-size="10">{_e(speed)}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out)
