"""The strip beneath a roofline chart for the kernels that have bytes but no counted FLOPs.

Such a kernel (a copy, a fill, integer work) has no arithmetic intensity, so it has no place
on the FLOP/s axes; roofscope places it by bandwidth instead (its efficiency is achieved bytes/s
over the ceiling of the memory level it uses the most of). The strip shows exactly that: one row
per memory level, a log axis of bytes/s shared by the rows, the level's ceiling as a vertical
line labelled with its value, and each kernel as a point at its achieved bytes/s (an arrow
from before to after in a comparison)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from roofscope.catalogue.ceilings import Ceiling
from roofscope.render.charts.logplot import si_tick
from roofscope.render.numbers import si

ROW = 30


@dataclass(frozen=True)
class StripMark:
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


def strip_height(marks: Sequence[StripMark]) -> int:
    """The height the strip adds beneath its chart (0 when there is nothing to draw)."""
    levels = {m.level for m in marks}
    return 0 if not levels else 60 + ROW * len(levels)


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

    height = ROW * len(levels)
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
    rows = {lvl: top + 20 + ROW * i + ROW / 2 for i, lvl in enumerate(levels)}
    for lvl, y in rows.items():
        out.append(f'<text x="{pad - 6}" y="{y + 3:.1f}" font-size="10" text-anchor="end">'
                   f"{escape(lvl)}</text>")  # fmt: skip
        c = roof.get(lvl)
        if c is not None:
            label = f"{c.name} {si(c.value, 'B/s')}"
            out.append(
                f'<g class="ceiling memory"><title>{escape(label)} · {escape(c.source)}</title>'
                f'<line x1="{px(c.value):.1f}" y1="{y - ROW / 2 + 2:.1f}" x2="{px(c.value):.1f}" '
                f'y2="{y + ROW / 2 - 2:.1f}" stroke="#555" stroke-width="2"/>'
                f'<text x="{px(c.value) + 4:.1f}" y="{y - 4:.1f}" font-size="10">'
                f"{escape(label)}</text></g>"
            )
    for m in marks:
        y = rows[m.level]
        tip = escape(m.tip, quote=True)
        if m.before is None:
            out.append(
                f'<circle class="point bw{" above" if m.above else ""}" data-k="{m.k}" '
                f'cx="{px(m.after):.1f}" cy="{y:.1f}" r="{m.radius:.1f}" '
                f'fill="{"none" if m.above else m.colour}" fill-opacity="0.6" '
                f'stroke="{m.colour}" stroke-width="2"><title>{tip}</title></circle>'
            )
        else:
            out.append(
                f'<g class="bw" data-k="{m.k}"><title>{tip}</title>'
                f'<line x1="{px(m.before):.1f}" y1="{y:.1f}" x2="{px(m.after):.1f}" y2="{y:.1f}" '
                'stroke="#333" stroke-width="1.5" marker-end="url(#head)"/>'
                f'<circle cx="{px(m.before):.1f}" cy="{y:.1f}" r="4" fill="#9aa5b1"/>'
                f'<text x="{px(m.after) + 6:.1f}" y="{y - 6:.1f}" font-size="10">'
                f"{escape(m.label)}</text></g>"
            )
    out.append("</g>")
    return out
