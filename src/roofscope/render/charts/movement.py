"""The roofline chart of a comparison, as SVG: each kernel's movement on the roofline, from
its before point to its after point, labelled with its speedup through the shared placer;
the axes' ticks and units, a legend of what is drawn (movement_legend.py), and the
bandwidth strip beneath for the kernels without FLOPs. The waterfall is in waterfall.py."""

from __future__ import annotations

import math
from collections.abc import Sequence

from roofscope.catalogue.ceilings import Ceiling
from roofscope.render.charts.bandwidth_strip import StripMark, bandwidth_strip, strip_height
from roofscope.render.charts.font import SVG_FONT
from roofscope.render.charts.labels import Box, Circle, Placer, Segment, leader_svg, text_width
from roofscope.render.charts.logplot import LogPlot
from roofscope.render.charts.movement_legend import AFTER, BEFORE, movement_legend
from roofscope.render.charts.movement_legend import HEIGHT as LEGEND_HEIGHT
from roofscope.render.charts.roof_lines import (
    RoofStyle,
    dotted_lines,
    draw_roof,
    line_series,
    roof_segments,
)
from roofscope.render.escape import escape_text as _e
from roofscope.render.numbers import number, si
from roofscope.verify.compare import Comparison

BASE_ROOF = RoofStyle("#8c8c8c", "", "ceiling base")
NEW_ROOF = RoofStyle("#c05a00", "", "ceiling new")


def movement_svg(
    cmp: Comparison,
    ceilings: Sequence[Ceiling],
    new_ceilings: Sequence[Ceiling] = (),
    gpus: tuple[str, str] = ("baseline", "candidate"),
) -> str:
    """Before -> after arrows on a log-log roofline, each labelled with its speedup, and in
    the bandwidth strip beneath it for the kernels without FLOPs on one side or both. The
    baseline's ceilings are drawn; when the candidate ran on other ceilings (another GPU),
    its roof too, in another colour, so that each arrow's end reads against its own roof.
    Only the memory levels the kernels are placed at have their bandwidth roofs drawn (two
    GPUs' lds, vl1d and l2 roofs would bury the arrows). Empty when no kernel has roofline
    data on both sides."""
    moves, strip = _moves(cmp)
    if not moves and not strip:
        return ""
    levels = {move[5] for move in moves} | {m.level for m in strip}
    ceilings, new_ceilings = _at(ceilings, levels), _at(new_ceilings, levels)
    two = bool(new_ceilings) and _differ(ceilings, new_ceilings)
    height = (420 + (24 if two else 0) + LEGEND_HEIGHT) if moves else 0
    total = height + strip_height(strip)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="movement" width="760" '
        f'height="{total}" viewBox="0 0 760 {total}" role="img" {SVG_FONT}>',
        "<title>Roofline movement: each kernel before and after</title>",
        '<text class="title" x="8" y="20" font-size="13" font-weight="bold">'
        "Roofline movement: each kernel from baseline to candidate</text>",
        '<defs><marker id="head" markerWidth="8" markerHeight="8" refX="6" refY="3" '
        'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#333"/></marker></defs>',
    ]
    if moves:
        roofs = [*ceilings, *(new_ceilings if two else ())]
        out += _arrows(moves, roofs, ceilings, new_ceilings if two else (), gpus, 420)
        out += movement_legend(420 + (24 if two else 0), 60, _lines(moves, roofs))
    out += bandwidth_strip(strip, ceilings, height, 760, 60)
    out.append("</svg>")
    return "\n".join(out)


Move = tuple[int, str, str, tuple[float, float], tuple[float, float], str]


def _moves(cmp: Comparison) -> tuple[list[Move], list[StripMark]]:
    """The kernels with FLOPs on both sides (arrows), and those placed by bandwidth."""
    moves: list[Move] = []
    strip: list[StripMark] = []
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
    return moves, strip


def _at(ceilings: Sequence[Ceiling], levels: set[str]) -> list[Ceiling]:
    """The compute roofs, and the bandwidth roofs of the memory ``levels``."""
    return [c for c in ceilings if c.kind != "memory" or c.level in levels]


def _lines(moves: Sequence[Move], roofs: Sequence[Ceiling]) -> set[str]:
    """The series of the ceilings' lines drawn inside the axes."""
    return {line_series(c) for c, _ in roof_segments(_plot(moves, roofs, 420), roofs)}


def _plot(moves: Sequence[Move], roofs: Sequence[Ceiling], height: int) -> LogPlot:
    """The axes around every move's ends, the compute roofs and 0.01-100 FLOP/B."""
    xs = [v for move in moves for v in move[3]] + [0.01, 100.0]  # room for the ridges
    ys = [v for move in moves for v in move[4]] + [c.value for c in roofs if c.kind == "compute"]
    return LogPlot.around(xs, ys, 760, height)


def _differ(a: Sequence[Ceiling], b: Sequence[Ceiling]) -> bool:
    return {(c.name, c.value) for c in a} != {(c.name, c.value) for c in b}


def _arrows(
    moves: Sequence[Move],
    roofs: Sequence[Ceiling],
    base: Sequence[Ceiling],
    new: Sequence[Ceiling],
    gpus: tuple[str, str],
    height: int,
) -> list[str]:
    """The axes, each side's roof (labels placed apart), and one arrow per kernel."""
    plot = _plot(moves, roofs, height)
    ends = [
        Circle(plot.px(x), plot.py(y), 6) for mv in moves for x, y in zip(mv[3], mv[4], strict=True)
    ]
    taken: list[Box] = []
    out = plot.frame()
    theirs = [seg for _, seg in roof_segments(plot, new)]
    boxes = [c.box for c in ends]
    lines, labels, roof = draw_roof(
        plot, base, points=boxes, taken=taken, style=BASE_ROOF, others=theirs
    )
    out += lines
    drawn = [roof]
    if new:
        mine = [seg for _, seg in roof_segments(plot, base)]
        more, new_labels, new_roof = draw_roof(plot, new, points=boxes, taken=taken,
                                               style=NEW_ROOF, others=mine)  # fmt: skip
        out += more
        labels += new_labels
        drawn.append(new_roof)
        out += _roof_key(gpus, plot.pad, height + 14)
    out += dotted_lines(drawn, taken)
    area = Box(plot.pad + 2, plot.pad + 2, 758 - plot.pad, height - plot.pad - 2)
    segs = [seg for _, seg in roof_segments(plot, [*base, *new])]
    arrows = [_segment(plot, move) for move in moves]
    placer = Placer(area, taken=taken, points=ends, lines=[*segs, *arrows])
    out += [_arrow(plot, move, placer) for move in moves]
    return out + labels


def _segment(plot: LogPlot, move: Move) -> Segment:
    (ax, bx), (ay, by) = move[3], move[4]
    return plot.px(ax), plot.py(ay), plot.px(bx), plot.py(by)


def _arrow(plot: LogPlot, move: Move, placer: Placer) -> str:
    """One kernel's arrow from before to after, its speedup placed clear of other labels,
    points, arrows and the roofs' lines (a dotted leader where it had to move away)."""
    i, name, speed, (ax, bx), _, level = move
    x0, y0, x1, y1 = _segment(plot, move)
    tip = f"{name}: {speed}; intensity {number(ax)} -> {number(bx)} FLOP/B ({level})"
    spot = placer.place(Circle(x1, y1, 6), speed, 10, rings=4)
    text = ""
    if spot is not None:
        text = (f'<text class="speedup" x="{spot.x:.1f}" y="{spot.baseline:.1f}" '
                f'font-size="10">{_e(speed)}</text>')  # fmt: skip
        text = leader_svg(spot) + text
    head = ' marker-end="url(#head)"' if math.hypot(x1 - x0, y1 - y0) > 6 else ""  # it moved
    return (
        f'<g data-k="{i}"><title>{_e(tip)}</title>'
        f'<line data-series="arrow" x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" '
        f'stroke="{AFTER}" stroke-width="1.5"{head}/>'
        f'<circle data-series="before" cx="{x0:.1f}" cy="{y0:.1f}" r="4" fill="{BEFORE}"/>'
        f'<circle data-series="after" cx="{x1:.1f}" cy="{y1:.1f}" r="3" fill="{AFTER}"/>{text}</g>'
    )


def _roof_key(gpus: tuple[str, str], x: float, y: float) -> list[str]:
    """Which roof is whose, beneath the axes: the baseline's grey, the candidate's orange."""
    out = []
    for style, words in ((BASE_ROOF, f"baseline roof: {gpus[0]}"),
                         (NEW_ROOF, f"candidate roof: {gpus[1]}")):  # fmt: skip
        out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 20}" y2="{y - 4}" '
                   f'stroke="{style.colour}" stroke-width="2"/>'
                   f'<text x="{x + 26}" y="{y}" font-size="10">{_e(words)}</text>')  # fmt: skip
        x += 46 + text_width(words, 10)
    return out
