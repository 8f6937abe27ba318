"""The strip beneath a roofline chart for the kernels that have bytes but no counted FLOPs.

Such a kernel (a copy, a fill, integer work) has no arithmetic intensity, so it has no place
on the FLOP/s axes; roofscope places it by bandwidth instead (its efficiency is achieved bytes/s
over the ceiling of the memory level it uses the most of). The strip shows exactly that: one row
per memory level, a log axis of bytes/s shared by the rows, the level's ceiling as a vertical
line labelled with its value, and each kernel as a point at its achieved bytes/s (an arrow
from before to after in a comparison)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

import msgspec

from roofscope.catalogue.ceilings import Ceiling
from roofscope.render.charts.labels import Box, Circle, Placer, leader_svg, text_box
from roofscope.render.charts.logplot import si_tick
from roofscope.render.numbers import si

ROW, LABELLED_ROW = 30, 48


class StripMark(msgspec.Struct, frozen=True):
    """One kernel in the strip: ``before`` is None on a single profile's roofline."""

    k: int  # the kernel's index in the report (data-k)
    level: str
    after: float  # achieved bytes/s (a comparison: the candidate's)
    before: float | None
    tip: str
    radius: float  # at most ROW / 2
    colour: str
    label: str = ""  # beside the arrow's head: the speedup
    above: bool = False  # above its roof: drawn hollow


def row_height(marks: Sequence[StripMark]) -> int:
    """A row's height: room above and below the arrows for their labels where they have any."""
    return LABELLED_ROW if any(m.label for m in marks) else ROW


def strip_height(marks: Sequence[StripMark]) -> int:
    """The height the strip adds beneath its chart (0 when there is nothing to draw)."""
    levels = {m.level for m in marks}
    return 0 if not levels else 60 + row_height(marks) * len(levels)


def bandwidth_strip(
    marks: Sequence[StripMark], ceilings: Sequence[Ceiling], top: float, width: int, pad: int
) -> list[str]:
    """SVG elements of the strip, from ``top`` down: each mark a ``circle.point.bw`` (or an
    arrow in a ``g``) carrying ``data-k``, every text escaped."""
    if not marks:
        return []
    roof = {str(c.level): c for c in ceilings if c.kind == "memory"}
    levels = sorted(
        {m.level for m in marks}, key=lambda lvl: -(roof[lvl].value if lvl in roof else 0)
    )
    values = [v for m in marks for v in (m.after, m.before) if v] + [
        roof[lvl].value for lvl in levels if lvl in roof
    ]
    x0 = 10 ** math.floor(math.log10(min(values)) - 0.3)
    x1 = 10 ** math.ceil(math.log10(max(values)) + 0.3)

    def px(x: float) -> float:
        span = math.log10(x1) - math.log10(x0)
        return pad + (math.log10(x) - math.log10(x0)) / span * (width - 2 * pad)

    row = row_height(marks)
    height = row * len(levels)
    out = [
        f'<g class="bandwidth-strip"><text x="{pad}" y="{top + 14}" font-size="11">'
        "No FLOPs counted: placed by bandwidth (achieved bytes/s against the ceiling of the "
        "level each kernel uses the most of)</text>",
        f'<rect x="{pad}" y="{top + 20}" width="{width - 2 * pad}" height="{height}" '
        'fill="none" stroke="#ccc"/>',
    ]
    for decade in range(int(math.log10(x0)), int(math.log10(x1)) + 1):
        out.append(f'<text class="tick" x="{px(10.0**decade):.1f}" y="{top + 20 + height + 14}" '
                   f'font-size="10" text-anchor="middle">{si_tick(decade)}</text>')  # fmt: skip
    out.append(f'<text x="{width / 2}" y="{top + 20 + height + 30}" font-size="11" '
               'text-anchor="middle">achieved bandwidth [B/s]</text>')  # fmt: skip
    rows = {lvl: top + 20 + row * i + row / 2 for i, lvl in enumerate(levels)}
    placer = Placer(
        Box(pad + 1, top + 21, width - pad - 1, top + 19 + height),
        points=[Circle(px(v), rows[m.level], 4 if m.before else m.radius)
                for m in marks for v in (m.after, m.before) if v],
    )  # fmt: skip
    for lvl, y in rows.items():
        out += _level(lvl, y, roof.get(lvl), px, placer, row)
    for m in marks:
        out += _mark(m, rows[m.level], px, placer)
    out.append("</g>")
    return out


def _level(
    lvl: str, y: float, c: Ceiling | None, px: Callable[[float], float], placer: Placer, row: int
) -> list[str]:
    """A row's name left of the strip, and its ceiling as a labelled vertical line."""
    out = [f'<text x="{placer.area.x0 - 7:.1f}" y="{y + 3:.1f}" font-size="10" '
               f'text-anchor="end">{escape(lvl)}</text>']  # fmt: skip
    if c is None:
        return out
    label, x = f"{c.name} {si(c.value, 'B/s')}", px(c.value)
    placer.reserve(text_box(x + 4, y - 4, label, 10))
    return [*out, (
        f'<g class="ceiling memory"><title>{escape(label)} · {escape(c.source)}</title>'
        f'<line x1="{x:.1f}" y1="{y - row / 2 + 2:.1f}" x2="{x:.1f}" y2="{y + row / 2 - 2:.1f}" '
        f'stroke="#555" stroke-width="2"/><text x="{x + 4:.1f}" y="{y - 4:.1f}" '
        f'font-size="10">{escape(label)}</text></g>'
    )]  # fmt: skip


def _mark(m: StripMark, y: float, px: Callable[[float], float], placer: Placer) -> list[str]:
    """A kernel's point, or its arrow with its label placed clear of the others."""
    tip = escape(m.tip, quote=True)
    if m.before is None:
        return [
            f'<circle class="point bw{" above" if m.above else ""}" data-k="{m.k}" '
            f'data-series="{"above" if m.above else "memory-bound"}" '
            f'cx="{px(m.after):.1f}" cy="{y:.1f}" r="{m.radius:.1f}" '
            f'fill="{"none" if m.above else m.colour}" fill-opacity="0.6" '
            f'stroke="{m.colour}" stroke-width="2"><title>{tip}</title></circle>'
        ]
    spot = placer.place(Circle(px(m.after), y, 6), m.label, 10, rings=4) if m.label else None
    text = "" if spot is None else leader_svg(spot) + (
        f'<text class="speedup" x="{spot.x:.1f}" y="{spot.baseline:.1f}" font-size="10">'
        f"{escape(m.label)}</text>"
    )  # fmt: skip
    return [
        f'<g class="bw" data-k="{m.k}"><title>{tip}</title>'
        f'<line x1="{px(m.before):.1f}" y1="{y:.1f}" x2="{px(m.after):.1f}" y2="{y:.1f}" '
        'stroke="#333" stroke-width="1.5" marker-end="url(#head)"/>'
        f'<circle cx="{px(m.before):.1f}" cy="{y:.1f}" r="4" fill="#9aa5b1"/>{text}</g>'
    ]
