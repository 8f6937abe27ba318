"""The ceilings of a roofline chart as lines, each group of nearly equal ceilings labelled once
along its lines: above the top one (or below the bottom one), where no other line strikes the
label, no label overlaps it and the fewest points lie under it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import msgspec

from roofscope.catalogue.ceilings import Ceiling
from roofscope.render.charts.labels import Box, Grid, Segment, crosses, text_width
from roofscope.render.charts.logplot import LogPlot
from roofscope.render.numbers import si, sig

SIZE = 10.0
SAME = 1.1  # ceilings within 10 % of each other share a label, as a range


class RoofStyle(msgspec.Struct, frozen=True):
    """How one side's roof is drawn: the lines' colour, and a word after each label."""

    colour: str = "#555"
    suffix: str = ""
    css: str = "ceiling"


PLAIN_ROOF = RoofStyle()


class Roof(msgspec.Struct):
    """What the drawn ceilings occupy: their lines, and their labels' boxes; the dotted
    extensions out to the labels, drawn last (:func:`dotted_lines`), around every label."""

    segments: list[Segment]
    labels: list[Box]
    dotted: list[Segment]
    style: RoofStyle


def roof_segments(plot: LogPlot, ceilings: Sequence[Ceiling]) -> list[tuple[Ceiling, Segment]]:
    """Each ceiling inside the axes as a segment: memory diagonals up to the highest compute
    roof, compute roofs from the lowest ridge to the right edge."""
    compute = [c for c in ceilings if c.kind == "compute" and plot.y0 < c.value < plot.y1]
    memory = [c for c in ceilings if c.kind == "memory"]
    top = max((c.value for c in compute), default=plot.y1)
    out: list[tuple[Ceiling, Segment]] = []
    for c in memory:
        xa, xb = max(plot.x0, plot.y0 / c.value), min(plot.x1, top / c.value)
        if xb > xa:
            seg = (plot.px(xa), plot.py(c.value * xa), plot.px(xb), plot.py(c.value * xb))
            out.append((c, seg))
    for c in compute:
        ridge = min((c.value / m.value for m in memory), default=plot.x0)
        xa = min(max(plot.x0, ridge), plot.x1)
        out.append((c, (plot.px(xa), plot.py(c.value), plot.px(plot.x1), plot.py(c.value))))
    return out


def groups(
    segs: list[tuple[Ceiling, Segment]], gap: float = 13.0
) -> list[list[tuple[Ceiling, Segment]]]:
    """Ceilings of one kind whose lines lie within a label's height of the group's top line
    and whose values are within ``SAME`` of its value (one label for what reads as one line:
    ``164-170 TOP/s``, never ``34-67``), top first."""
    out: list[list[tuple[Ceiling, Segment]]] = []
    for kind in ("compute", "memory"):
        mine = sorted((s for s in segs if s[0].kind == kind), key=lambda s: -s[0].value)
        for item in mine:
            if out and out[-1][0][0].kind == kind and _alike(out[-1][0], item, gap):
                out[-1].append(item)
            else:
                out.append([item])
    return out


def _alike(top: tuple[Ceiling, Segment], item: tuple[Ceiling, Segment], gap: float) -> bool:
    return _apart(top, item) < gap and top[0].value <= SAME * item[0].value


def _apart(a: tuple[Ceiling, Segment], b: tuple[Ceiling, Segment]) -> float:
    """Vertical distance in pixels between two parallel ceiling lines (at their left ends)."""
    (_, (ax1, ay1, ax2, ay2)), (_, (bx1, by1, _, _)) = a, b
    slope = 0.0 if ax2 == ax1 else (ay2 - ay1) / (ax2 - ax1)
    return abs(by1 - (ay1 + slope * (bx1 - ax1)))


def group_label(cs: Sequence[Ceiling], suffix: str = "") -> str:
    """``fp64-vector 23.9 TFLOP/s``; for a group, the names sharing their last word once
    and the range of values: ``bf16/fp16-matrix, fp32-vector 163-170 TFLOP/s``."""
    by_tail: dict[str, list[str]] = {}  # "matrix": ["bf16", "fp16"]; a name without "-": itself
    for c in cs:
        head, _, tail = c.name.rpartition("-")
        by_tail.setdefault(tail if head else c.name, []).append(head)
    name = ", ".join(
        "/".join(h for h in heads if h) + ("-" + tail if any(heads) else tail)
        for tail, heads in by_tail.items()
    )
    units = {c.unit_of_value for c in cs}
    unit = units.pop() if len(units) == 1 else "OP/s"
    hi, lo = max(c.value for c in cs), min(c.value for c in cs)
    top = si(hi, unit)
    number, rest = top.split(" ", 1)
    low = sig(lo * float(number) / hi)
    value = top if low == number else f"{low}-{number} {rest}"
    return f"{name} {value}{suffix}"


def line_series(c: Ceiling) -> str:
    """The series a ceiling's line belongs to, as the legend names it (``data-series``)."""
    if c.kind == "memory":
        return "bandwidth"
    return "matrix-peak" if c.unit == "matrix" else "vector-peak"


def draw_roof(
    plot: LogPlot,
    ceilings: Sequence[Ceiling],
    *,
    points: Sequence[Box],
    taken: list[Box],
    style: RoofStyle = PLAIN_ROOF,
    others: Sequence[Segment] = (),
) -> tuple[list[str], list[str], Roof]:
    """The ceilings' lines, and their labels (to draw over the points); each label's box
    joins ``taken``."""
    segs = roof_segments(plot, ceilings)
    lines = [s for _, s in segs] + list(others)
    grid = Grid(points)
    boxes: list[Box] = []
    labels: list[str] = []
    extensions: list[Segment] = []
    gaps: dict[Segment, Segment] = {}
    for group in groups(segs):
        text = group_label([c for c, _ in group], style.suffix)
        spot = _spot(plot, group, text, lines, grid, taken)
        if spot is None:
            continue
        taken.append(spot[3])
        boxes.append(spot[3])
        if spot[4] is not None:
            gaps[group[0][1]] = spot[4]
        extension, label = _label(group, text, spot[:4], style)
        extensions += extension
        lines += extension  # no later label on it
        labels.append(label)
    out = [_line(c, piece, style) for c, seg in segs for piece in _around(seg, gaps.get(seg))]
    return out, labels, Roof(lines, boxes, extensions, style)


def dotted_lines(roofs: Sequence[Roof], labels: Sequence[Box]) -> list[str]:
    """Each roof's dotted extensions, broken where they would run through a label (another
    roof's, drawn after them, or a kernel's)."""
    return [
        _dotted(piece, roof.style)
        for roof in roofs
        for seg in roof.dotted
        for piece in _clear_of(seg, labels)
    ]


def _clear_of(seg: Segment, boxes: Sequence[Box], margin: float = 2.0) -> list[Segment]:
    """The pieces of a horizontal segment outside every box it runs through."""
    x1, y, x2, _ = seg
    pieces = [(min(x1, x2), max(x1, x2))]
    for b in boxes:
        if not b.y0 - margin < y < b.y1 + margin:
            continue
        cut = (b.x0 - margin, b.x1 + margin)
        pieces = [p for a, z in pieces for p in ((a, min(z, cut[0])), (max(a, cut[1]), z))
                  if p[1] - p[0] > 1.0]  # fmt: skip
    return [(a, y, z, y) for a, z in pieces]


def _line(c: Ceiling, seg: Segment, style: RoofStyle) -> str:
    x1, y1, x2, y2 = seg
    dash = ' stroke-dasharray="5,3"' if c.unit == "vector" else ""
    return (
        f'<line class="{style.css} {c.kind}" data-series="{line_series(c)}" x1="{x1:.1f}" '
        f'y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{style.colour}"{dash}><title>'
        f"{escape(group_label([c], style.suffix))} · {escape(c.source)}</title></line>"
    )


def _around(seg: Segment, gap: Segment | None) -> list[Segment]:
    """The line, or its two pieces either side of the label written on it (``gap``)."""
    if gap is None:
        return [seg]
    return [(seg[0], seg[1], gap[0], gap[1]), (gap[2], gap[3], seg[2], seg[3])]


def _dotted(seg: Segment, style: RoofStyle) -> str:
    """A roof's dotted extension left of where it begins, out to its label."""
    x1, y1, x2, y2 = seg
    return (f'<line class="{style.css} extension" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" '
            f'y2="{y2:.1f}" stroke="{style.colour}" stroke-dasharray="1,3"/>')  # fmt: skip


def _label(
    group: list[tuple[Ceiling, Segment]],
    text: str,
    spot: tuple[float, float, float, Box],
    style: RoofStyle,
) -> tuple[list[Segment], str]:
    """A group's label as SVG, and the dotted extension of its roof when the label sits
    left of where the roof begins."""
    x, baseline, angle, box = spot
    _, (start, y, _, _) = group[0] if baseline < group[0][1][1] else group[-1]  # its line
    extension: list[Segment] = []
    if angle == 0 and box.x0 < start:
        extension.append((box.x0, y, start, y))
    tip = " · ".join(f"{c.name}: {c.source}" for c, _ in group)
    turn = f' transform="rotate({angle:.2f} {x:.1f} {baseline:.1f})"' if angle else ""
    return extension, (
        f'<text class="{style.css}-label" x="{x:.1f}" y="{baseline:.1f}" font-size="{SIZE:g}" '
        f'fill="{style.colour}" stroke="#fff" stroke-width="3" paint-order="stroke"{turn}>'
        f"<title>{escape(tip)}</title>{escape(text)}</text>"
    )


Spot = tuple[float, float, float, Box, Segment | None]  # x, baseline, angle, box, gap
ON_LINE = 30.0  # the cost of writing a label on its line (the line broken around it)


def _spot(
    plot: LogPlot,
    group: list[tuple[Ceiling, Segment]],
    text: str,
    lines: Sequence[Segment],
    points: Sequence[Box] | Grid,
    taken: Sequence[Box],
) -> Spot | None:
    """Where along its lines a group's label goes, written along them (rotated with a
    diagonal): above the top line, below the bottom one, or (a lone bandwidth line with
    others close by) on its line, which is then broken around it: (x, baseline, angle in
    degrees, box, the line's piece it hides), or None."""
    w = text_width(text, SIZE)
    grid = points if isinstance(points, Grid) else Grid(points)
    left, top, right, bottom = plot.area()
    area = Box(left + 2, top + 2, right - 2, bottom - 2)
    places = ["above", "below"] + (["on"] if len(group) == 1 and group[0][0].kind == "memory"
                                   else [])  # fmt: skip
    best: tuple[float, Spot] | None = None
    steps = 24
    for i in range(steps + 1):
        for place in places:
            found = _candidate(group, place, i / steps, w, area, lines, grid, taken)
            if found is not None and (best is None or found[0] + i * 0.5 < best[0]):
                best = (found[0] + i * 0.5, found[1])
    return None if best is None else best[1]


def _candidate(
    group: list[tuple[Ceiling, Segment]],
    place: str,
    step: float,
    w: float,
    area: Box,
    lines: Sequence[Segment],
    grid: Grid,
    taken: Sequence[Box],
) -> tuple[float, Spot] | None:
    """The label at ``step`` (0 to 1) along its line, ``place``d above, below or on it, and
    its cost: the points under it, a line striking it (a last resort), a dotted extension."""
    c, own = group[0] if place != "below" else group[-1]
    x1, y1, x2, y2 = own
    start = x1
    if c.kind == "compute":  # on the roof, or on its extension left of the ridge
        x1 = area.x0 + 2
    length = math.hypot(x2 - x1, y2 - y1)
    if length < w + (4 if place == "on" else 0):
        return None
    ux, uy = (x2 - x1) / length, (y2 - y1) / length  # along the line
    nx, ny = (uy, -ux) if ux > 0 else (-uy, ux)  # its normal, pointing up
    t = (1 - step) if c.kind == "compute" else step
    ax, ay = x1 + (x2 - x1) * t - ux * w * t, y1 + (y2 - y1) * t - uy * w * t
    lift = {"above": 3 + 0.25 * SIZE, "below": -(3 + 0.8 * SIZE), "on": -0.275 * SIZE}[place]
    bx, by = ax + nx * lift, ay + ny * lift
    quad = _quad(bx, by, ux, uy, nx, ny, w)
    box = Box(*_bounds(quad))
    if not box.within(area) or any(box.overlaps(b, 1.0) for b in taken):
        return None
    struck = sum(1 for seg in lines if (place != "on" or seg != own) and _struck(quad, seg))
    cost = sum(box.overlap_area(p) for p in grid.near(box)) + 1e5 * struck
    gap: Segment | None = None
    if place == "on":
        cost += ON_LINE
        gap = (ax - 2 * ux, ay - 2 * uy, ax + (w + 2) * ux, ay + (w + 2) * uy)
    elif box.x0 < start:  # off the line: a dotted extension, through no label
        ext = (box.x0, y1, start, y1)
        cost += 40 + 1e5 * sum(1 for t in taken if crosses(t, ext))
    return cost, (bx, by, math.degrees(math.atan2(uy, ux)), box, gap)


def _quad(
    bx: float, by: float, ux: float, uy: float, nx: float, ny: float, w: float
) -> list[tuple[float, float]]:
    """The corners of a text of width ``w`` whose baseline starts at (bx, by) along (ux, uy)."""
    up, down = 0.8 * SIZE, 0.25 * SIZE
    return [
        (bx + nx * up, by + ny * up),
        (bx + ux * w + nx * up, by + uy * w + ny * up),
        (bx + ux * w - nx * down, by + uy * w - ny * down),
        (bx - nx * down, by - ny * down),
    ]


def _bounds(quad: Sequence[tuple[float, float]]) -> tuple[float, float, float, float]:
    xs, ys = [p[0] for p in quad], [p[1] for p in quad]
    return min(xs), min(ys), max(xs), max(ys)


def _struck(quad: Sequence[tuple[float, float]], seg: Segment) -> bool:
    """Whether the segment passes through the (convex) quadrilateral."""
    a, b = (seg[0], seg[1]), (seg[2], seg[3])
    edges = zip(quad, [*quad[1:], quad[0]], strict=True)
    return _inside(quad, a) or _inside(quad, b) or any(_cut(a, b, p, q) for p, q in edges)


def _side(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])


def _inside(quad: Sequence[tuple[float, float]], r: tuple[float, float]) -> bool:
    sides = [_side(p, q, r) for p, q in zip(quad, [*quad[1:], quad[0]], strict=True)]
    return all(s > 0 for s in sides) or all(s < 0 for s in sides)


def _cut(
    a: tuple[float, float], b: tuple[float, float], p: tuple[float, float], q: tuple[float, float]
) -> bool:
    return _side(a, b, p) * _side(a, b, q) < 0 and _side(p, q, a) * _side(p, q, b) < 0
