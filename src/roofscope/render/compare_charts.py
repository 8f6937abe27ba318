"""The charts of a comparison, as SVG: the waterfall of per-kernel contributions to the
end-to-end change, and each kernel's movement on the roofline (the bandwidth strip beneath it
for the kernels without FLOPs)."""

from __future__ import annotations

from collections.abc import Sequence

from roofscope.catalogue.ceilings import Ceiling
from roofscope.compare.compare import Comparison
from roofscope.render.bandwidth_strip import StripMark, bandwidth_strip, strip_height
from roofscope.render.charts import LogPlot
from roofscope.render.charts import escape_text as _e
from roofscope.render.names import fit, shortened
from roofscope.render.roofline_text import si
from roofscope.render.text import human_time


def movement_svg(cmp: Comparison, ceilings: Sequence[Ceiling]) -> str:
    """Before -> after arrows on a log-log roofline, each labelled with its speedup, and in
    the bandwidth strip beneath it for the kernels without FLOPs on one side or both; the baseline's
    ceilings drawn for reference. Empty when no kernel has roofline data on both sides."""
    moves, strip = [], []
    for i, k in enumerate(cmp.kernels):
        m = k.movement
        if m is None:
            continue
        speed = "-" if k.speedup is None else f"{k.speedup:.2f}x"
        (ax, bx), (ay, by), (sa, sb) = m.intensity, m.achieved_flops_s, m.achieved_bytes_s
        if ax and bx and ay and by and min(ax, bx, ay, by) > 0:
            moves.append((i, k.name, speed, (ax, bx), (ay, by), m.level))
        elif sa and sb and min(sa, sb) > 0:
            tip = (
                f"{k.name}: {speed}; without FLOPs on one side or both: {m.level} "
                f"{si(sa, 'B/s')} -> {si(sb, 'B/s')}"
            )
            strip.append(StripMark(i, m.level, sb, sa, tip, 4, "#333", speed))
    if not moves and not strip:
        return ""
    height = 420 if moves else 0
    total = height + strip_height(strip)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="movement" width="760" '
        f'height="{total}" viewBox="0 0 760 {total}" role="img">',
        "<title>Roofline movement: each kernel before and after</title>",
        '<defs><marker id="head" markerWidth="8" markerHeight="8" refX="6" refY="3" '
        'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#333"/></marker></defs>',
    ]
    if moves:
        xs = [v for move in moves for v in move[3]]
        ys = [v for move in moves for v in move[4]]
        ys += [c.value for c in ceilings if c.kind == "compute"]
        plot = LogPlot.around(xs, ys, 760, height)
        out += plot.frame() + _baseline_ceilings(plot, ceilings)
        for i, name, speed, (ax, bx), (ay, by), level in moves:
            tip = f"{name}: {speed}; intensity {ax:.3g} -> {bx:.3g} FLOP/B ({level})"
            out.append(
                f'<g data-k="{i}"><title>{_e(tip)}</title>'
                f'<line x1="{plot.px(ax):.1f}" y1="{plot.py(ay):.1f}" x2="{plot.px(bx):.1f}" '
                f'y2="{plot.py(by):.1f}" stroke="#333" stroke-width="1.5" marker-end="url(#head)"/>'
                f'<circle cx="{plot.px(ax):.1f}" cy="{plot.py(ay):.1f}" r="4" fill="#9aa5b1"/>'
                f'<text x="{plot.px(bx) + 6:.1f}" y="{plot.py(by) - 6:.1f}" font-size="10">'
                f"{_e(speed)}</text></g>"
            )
    out += bandwidth_strip(strip, ceilings, height, 760, 60)
    out.append("</svg>")
    return "\n".join(out)


def _baseline_ceilings(plot: LogPlot, ceilings: Sequence[Ceiling]) -> list[str]:
    """The baseline's ceilings, light, behind the arrows of a comparison."""
    x0, x1, y0, y1, px, py = plot.x0, plot.x1, plot.y0, plot.y1, plot.px, plot.py
    out = []
    for c in ceilings:
        label = f"{c.name} {si(c.value, c.unit_of_value)} (baseline)"
        if c.kind == "compute" and y0 < c.value < y1:
            out.append(
                f'<line x1="{plot.pad}" y1="{py(c.value):.1f}" x2="{plot.width - plot.pad}" '
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
    return out


def waterfall_svg(cmp: Comparison, top: int = 20) -> str:
    """Each kernel's change in time, from the baseline total to the candidate's: the
    ``top`` kernels in the comparison's order, the rest folded into one 'other' step, so that
    the steps end at the candidate's total."""
    items = [(i, k.name, k.delta_ns) for i, k in enumerate(cmp.kernels)]
    if len(items) > top:
        rest = sum(d for _, _, d in items[top:])
        items = [*items[:top], (-1, f"other ({len(items) - top} kernels)", rest)]
    if not items:
        return ""
    width, row, left = 760, 22, 260
    base, new = cmp.end_to_end.kernel_ns
    span = max(base, new, 1.0)
    scale = (width - left - 20) / span
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="waterfall" '
           f'width="{width}" height="{30 + row * (len(items) + 2)}" role="img">']  # fmt: skip
    level, short = base, shortened([k.name for k in cmp.kernels])
    out.append(f'<rect x="{left}" y="4" width="{base * scale:.1f}" height="16" fill="#9aa5b1">'
               f"<title>baseline {human_time(base)}</title></rect>")  # fmt: skip
    for n, (i, name, delta) in enumerate(items, start=1):
        y = 4 + n * row
        start, end = level, level + delta
        x0, x1 = sorted((start * scale, end * scale))
        colour = "#d62728" if delta > 0 else "#2ca02c"
        label = fit(short.get(name, name), 38)
        tip = f"{name}: {delta / 1e6:+.3f} ms"
        out.append(
            f'<g data-k="{i}"><title>{_e(tip)}</title>'
            f'<text x="{left - 6}" y="{y + 13}" text-anchor="end" font-size="11">{_e(label)}</text>'
            f'<rect x="{left + x0:.1f}" y="{y}" width="{max(1.0, x1 - x0):.1f}" height="16" '
            f'fill="{colour}"/></g>'
        )
        level = end
    y = 4 + (len(items) + 1) * row
    out.append(f'<rect x="{left}" y="{y}" width="{new * scale:.1f}" height="16" fill="#555">'
               f"<title>candidate {human_time(new)}</title></rect></svg>")  # fmt: skip
    return "\n".join(out)
