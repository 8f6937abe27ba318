"""The roofline chart of one profile, as SVG: log-log axes with SI ticks, the ceilings labelled
along their lines, kernels as points (area by time share, colour by bound, hollow above the
roof), the kernels with the most time named and the next numbered (roofline_labels.py), a
legend of what is drawn, and the outliers (a warm-up, a kernel with bad counters) drawn at the
edge rather than stretching the axes. Kernels without FLOPs go to the bandwidth strip beneath.
Every element of a kernel carries ``data-k``. No chart (an empty string) when no kernel is
placed."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

import msgspec
from msgspec.structs import replace

from roofscope.analysis.hotspots import KernelStats
from roofscope.analysis.roofline import Bound, KernelRoofline, PlacedBy, Roofline
from roofscope.render.charts.bandwidth_strip import StripMark, bandwidth_strip, strip_height
from roofscope.render.charts.font import SVG_FONT
from roofscope.render.charts.labels import Box, Circle, Placer
from roofscope.render.charts.logplot import LogPlot
from roofscope.render.charts.roof_lines import dotted_lines, draw_roof, line_series, roof_segments
from roofscope.render.charts.roofline_labels import Spot, kernel_labels, key, key_height
from roofscope.render.charts.roofline_legend import ROW as LEGEND_ROW
from roofscope.render.charts.roofline_legend import Clipped, legend, legend_height
from roofscope.render.numbers import number, si, sig
from roofscope.report import Report

BOUND_COLOUR = {Bound.MEMORY: "#1f77b4", Bound.COMPUTE: "#d62728", None: "#7f7f7f"}
WIDTH, HEIGHT, BULK = 760, 460, 0.99


class Point(msgspec.Struct, frozen=True):
    """A kernel placed on the FLOP/s axes."""

    k: KernelRoofline
    index: int  # in the report's kernel list (data-k)
    share: float
    x: float  # intensity at its level
    y: float  # achieved FLOP/s (or IOP/s)
    level: str

    @property
    def radius(self) -> float:
        return 4 + 26 * math.sqrt(self.share)


def roofline_svg(report: Report) -> str:
    """The report's roofline plot (``roofline_plot``)."""
    return roofline_plot(report.roofline.result, report.hotspots.kernels, report.validity)


def roofline_plot(
    section: Roofline,
    ranked: Sequence[KernelStats],
    validity: Callable[[str], tuple[str, ...]] = lambda _: (),
) -> str:
    """The kernels of ``section`` as points under its ceilings, sized by their share of
    ``ranked`` (the hotspots' kernels); ``validity``: a kernel's validity findings, whose
    points the axes may leave out."""
    index = {k.name: i for i, k in enumerate(ranked)}
    shares = {k.name: k.share or 0.0 for k in ranked}
    points = _points(section.kernels, index, shares)
    strip = [
        _strip_mark(k, index.get(k.name, -1), shares.get(k.name, 0.0)) for k in section.kernels
    ]
    marks = [m for m in strip if m is not None]
    if not points and not marks:
        return ""  # nothing to show: the page and the export say why
    if not points:
        return _strip_only(section, marks)
    doubt = {p.k.name: validity(p.k.name) for p in points}
    sound = [p for p in points if not doubt[p.k.name]] or points
    plot = _axes(sound, points, [c.value for c in section.ceilings if c.kind == "compute"])
    clipped = [
        Clipped(p.k.name, p.x, p.y, ", ".join(doubt[p.k.name]))
        for p in points
        if not plot.inside(p.x, p.y)
    ]
    circles = [Circle(*_xy(plot, p), p.radius) for p in points]
    taken: list[Box] = []
    roof, roof_labels, drawn = draw_roof(
        plot, section.ceilings, points=[c.box for c in circles], taken=taken
    )
    roof += dotted_lines([drawn], taken)
    left, top_, right, bottom = plot.area()
    placer = Placer(Box(left + 2, top_ + 2, right - 2, bottom - 2), taken=taken, points=circles,
                    lines=drawn.segments)  # fmt: skip
    spots = [Spot(p.index, p.k.name, p.share, c) for p, c in zip(points, circles, strict=True)]
    named = kernel_labels(spots, placer)
    below = HEIGHT + key_height(named)
    top = below + legend_height(clipped)
    total = top + strip_height(marks)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="roofline" width="{WIDTH}" '
        f'height="{total}" viewBox="0 0 {WIDTH} {total}" role="img" {SVG_FONT}>',
        "<title>Roofline: FLOP/s against arithmetic intensity (FLOP/B), log-log</title>",
        '<text class="title" x="8" y="20" font-size="13" font-weight="bold">'
        "Roofline: each kernel's achieved rate against its arithmetic intensity</text>",
        *plot.frame(),
        f'<clipPath id="roofline-area"><rect x="{plot.pad}" y="{plot.pad}" '
        f'width="{WIDTH - 2 * plot.pad}" height="{HEIGHT - 2 * plot.pad}"/></clipPath>',
    ]
    out += roof
    main = next((c for c in section.ceilings if c.name == section.main_ceiling), None)
    if points and main and "hbm" in section.ridge and plot.inside(section.ridge["hbm"], main.value):
        rx = section.ridge["hbm"]
        cx, cy = plot.px(rx), plot.py(main.value)
        out.append(f'<circle class="ridge" cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="#000">'
                   f"<title>ridge point {sig(rx)} FLOP/B</title></circle>")  # fmt: skip
    out += [_point(plot, p) for p in sorted(points, key=lambda p: -p.share)]
    out += roof_labels + named.svg + key(named, HEIGHT, WIDTH, plot.pad)
    bounds = {p.k.bound for p in points} | ({Bound.MEMORY} if marks else set())
    above = any(p.k.beyond_hardware for p in points)
    lines = {line_series(c) for c, _ in roof_segments(plot, section.ceilings)}
    out += legend(
        below, WIDTH, plot.pad, clipped, above, bounds=bounds, points=bool(points), lines=lines
    )
    out += bandwidth_strip(marks, section.ceilings, top, WIDTH, plot.pad)
    out.append("</svg>")
    return "\n".join(out)


def _strip_only(section: Roofline, marks: Sequence[StripMark]) -> str:
    """No kernel with FLOPs: no empty FLOP/s axes, only the bandwidth strip under a title
    that says why, and the legend of its points."""
    above = any(m.above for m in marks)
    top = 40 + 10 + LEGEND_ROW  # one row of legend: no ceiling lines drawn
    total = top + strip_height(marks)
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="roofline" width="{WIDTH}" '
        f'height="{total}" viewBox="0 0 {WIDTH} {total}" role="img" {SVG_FONT}>',
        "<title>Roofline: the kernels placed by bandwidth (none has FLOPs)</title>",
        '<text class="title" x="8" y="20" font-size="13" font-weight="bold">'
        "Roofline: no kernel has FLOPs counted, so each is placed by bandwidth</text>",
        *legend(40, WIDTH, 60, [], above, bounds={Bound.MEMORY}, points=False, lines=()),
        *bandwidth_strip(marks, section.ceilings, top, WIDTH, 60),
        "</svg>",
    ])  # fmt: skip


def _points(
    kernels: Sequence[KernelRoofline], index: dict[str, int], shares: dict[str, float]
) -> list[Point]:
    out = []
    for k in kernels:
        lvl = _point_level(k)
        if lvl is not None and k.achieved_flops_s:
            share = shares.get(k.name, 0.0)
            out.append(
                Point(k, index.get(k.name, -1), share, k.intensity[lvl], k.achieved_flops_s, lvl)
            )
    return out


def _axes(sound: Sequence[Point], points: Sequence[Point], roofs: Sequence[float]) -> LogPlot:
    """Axes around the bulk: of the ``sound`` kernels (those without a validity finding, when
    there are any), the ones holding 99% of their time (all of them when none has time); the
    compute roofs; and at least 0.01-100 FLOP/B and 1 GFLOP/s."""
    ranked = sorted(sound, key=lambda p: -p.share)
    total = sum(p.share for p in ranked)
    bulk, held = [], 0.0
    for p in ranked:
        if total and held >= BULK * total:
            break
        bulk.append(p)
        held += p.share
    xs = [p.x for p in bulk] + [0.01, 100.0]
    ys = [p.y for p in bulk] + list(roofs) + [1e9]
    plot = LogPlot.around(xs, ys, WIDTH, HEIGHT)
    if any(p.k.placed_by is PlacedBy.IOPS for p in points):
        plot = replace(plot, ops=("FLOP", "IOP"))
    return plot


def _xy(plot: LogPlot, p: Point) -> tuple[float, float]:
    """Where the point is drawn: a point beyond the axes 3 px inside the edge it crosses (its
    centre inside the clipped area, so that the pointer finds it)."""
    x, y = plot.clamp(p.x, p.y)
    left, top, right, bottom = plot.area()
    cx, cy = plot.px(x), plot.py(y)
    return min(max(cx, left + 3), right - 3), min(max(cy, top + 3), bottom - 3)


MEASURED_ROOF = " — at its measured roof (the benchmark under-measured the peak)"
ABOVE_ROOF = " — ABOVE ITS ROOF: check the GPU, counter scope or work"


def _above_words(k: KernelRoofline) -> str:
    """A kernel over its roof in a tooltip: at a measured roof, or above the hardware."""
    return MEASURED_ROOF if k.at_measured_roof else ABOVE_ROOF if k.above_roof else ""


def _point(plot: LogPlot, p: Point) -> str:
    k, (cx, cy) = p.k, _xy(plot, p)
    colour = BOUND_COLOUR.get(k.bound, "#7f7f7f")
    ops = "IOP" if k.placed_by is PlacedBy.IOPS else "FLOP"
    tip = (
        f"{k.name}\nintensity {number(p.x)} {ops}/B ({p.level}), achieved "
        f"{si(p.y, ops + '/s')}, attainable {si(k.attainable_flops_s or 0, ops + '/s')}, "
        f"efficiency {'-' if k.efficiency is None else f'{100 * k.efficiency:.1f}%'}"
        + _above_words(k)
        + (f" — no {k.missing_ceiling} ceiling: no bound" if k.missing_ceiling else "")
    )
    inside, clip = plot.inside(p.x, p.y), ' clip-path="url(#roofline-area)"'
    css = "point" + (" above" if k.beyond_hardware else "") + ("" if inside else " clipped")
    circle = (
        f'<circle class="{css}" data-k="{p.index}" data-series="{point_series(k)}" '
        f'cx="{cx:.1f}" cy="{cy:.1f}" '
        f'r="{p.radius:.1f}" fill="{"none" if k.beyond_hardware else colour}" fill-opacity="0.6" '
        f'stroke="{colour}" stroke-width="2"{"" if inside else clip}>'
        f"<title>{escape(tip)}</title></circle>"
    )
    return circle if inside else circle + _edge_arrow(plot, p, cx, cy, tip)


def point_series(k: KernelRoofline) -> str:
    """The series a kernel's point belongs to, as the legend names it (``data-series``)."""
    if k.beyond_hardware:
        return "above"
    if k.bound is Bound.MEMORY:
        return "memory-bound"
    return "compute-bound" if k.bound is Bound.COMPUTE else "no-bound"


def _edge_arrow(plot: LogPlot, p: Point, cx: float, cy: float, tip: str) -> str:
    """A black triangle just inside the edge, pointing to where the point lies beyond it."""
    dx = -1 if p.x < plot.x0 else 1 if p.x > plot.x1 else 0
    dy = 1 if p.y < plot.y0 else -1 if p.y > plot.y1 else 0
    norm = math.hypot(dx, dy) or 1.0
    ux, uy = dx / norm, dy / norm
    bx, by = cx - ux * 10, cy - uy * 10
    return (
        f'<path class="clip-mark" data-k="{p.index}" d="M{cx - ux:.1f},{cy - uy:.1f} '
        f'L{bx - uy * 5:.1f},{by + ux * 5:.1f} L{bx + uy * 5:.1f},{by - ux * 5:.1f} z" '
        f'fill="#000"><title>{escape(tip)} — beyond the axes</title></path>'
    )


def absence(section: Roofline) -> str:
    """Why a profile has no roofline chart (the chart is an empty string), in one line."""
    if not section.ceilings:
        return "no ceilings for this GPU: name it with --gpu, or give --ceilings"
    n = len(section.kernels)
    if not n:
        return "no kernel with work (FLOPs or bytes) to place on it"
    if n == 1:
        return "the kernel with work has no FLOPs or bytes with a ceiling to place it"
    return f"none of the {n} kernels with work has FLOPs or bytes with a ceiling to place it"


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
    ok = k.placed_by is PlacedBy.BANDWIDTH and lvl is not None and k.achieved_bytes_s.get(lvl)
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
        + _above_words(k)
    )
    radius = 3 + 10 * math.sqrt(share)  # the strip's rows are 30 px high
    bytes_s = k.achieved_bytes_s[lvl]
    return StripMark(
        index, lvl, bytes_s, None, tip, radius, BOUND_COLOUR[Bound.MEMORY], "", k.beyond_hardware
    )


def _level(k: KernelRoofline) -> str | None:
    if k.limiting_level and k.limiting_level in k.intensity:
        return k.limiting_level
    return "hbm" if "hbm" in k.intensity else next(iter(k.intensity), None)
