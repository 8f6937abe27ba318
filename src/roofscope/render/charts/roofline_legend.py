"""The legend beneath a roofline chart: what the colours, the hollow points, the sizes and the
lines mean, and which kernels lie beyond the axes (drawn at the edge)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from html import escape

import msgspec

from roofscope.analysis.roofline import Bound
from roofscope.render.charts.labels import text_width
from roofscope.render.numbers import si

SIZE = 10.0
ROW = 24
_BOUNDS = (  # (bound, colour, words, series: the points' data-series)
    (Bound.MEMORY, "#1f77b4", "memory-bound", "memory-bound"),
    (Bound.COMPUTE, "#d62728", "compute-bound", "compute-bound"),
    (None, "#7f7f7f", "no bound (a ceiling missing)", "no-bound"),
)
ALL_LINES = frozenset({"matrix-peak", "vector-peak", "bandwidth"})


class Clipped(msgspec.Struct, frozen=True):
    """A kernel beyond the axes: its name and where it really is."""

    name: str
    x: float  # FLOP/B
    y: float  # FLOP/s
    doubt: str = ""  # its validity findings, if any


def legend_height(clipped: Sequence[Clipped]) -> int:
    return 10 + ROW * (3 if clipped else 2)


def legend(
    top: float,
    width: int,
    pad: int,
    clipped: Sequence[Clipped],
    above: bool = True,
    *,
    bounds: Collection[Bound | None] = (Bound.MEMORY, Bound.COMPUTE),
    points: bool = True,
    lines: Collection[str] = ALL_LINES,
) -> list[str]:
    """The legend's rows, from ``top`` down, in a ``g.legend``: an entry for each kind of
    point drawn (``bounds``; hollow ones where some are ``above`` their roof), and the sizes
    where there are ``points`` on the FLOP/s axes, and the kinds of ceiling line drawn
    (``lines``). Each entry of a series drawn is a ``g.legend-entry`` with that
    ``data-series``, as the points and lines carry it."""
    y = top + 14
    marks: list[tuple[str, str, str | None]] = [
        (dot(0, y, 5, colour, colour), words, series)
        for bound, colour, words, series in _BOUNDS
        if bound in bounds
    ]
    if above:
        marks.append((dot(0, y, 5, "none", "#555"), "hollow: above its roof", "above"))
    sizes = dot(0, y, 6.6, "#999", "#999") + dot(16, y, 12.2, "#999", "#999")
    if points:
        marks.append((sizes, "size: time share (1 %, 10 %)", None))
    out = ['<g class="legend">', *row(marks, pad, y)]
    y += ROW
    kinds = [
        (line_glyph(0, y, 20, y, ""), "matrix peak", "matrix-peak"),
        (line_glyph(0, y, 20, y, ' stroke-dasharray="5,3"'), "vector peak (labels: data type)",
         "vector-peak"),
        (line_glyph(0, y + 6, 20, y - 6, ""), "bandwidth of a memory level (hbm, l2, …)",
         "bandwidth"),
    ]  # fmt: skip
    out += row([k for k in kinds if k[2] in lines], pad, y)
    if clipped:
        y += ROW
        out.append(f'<path d="M{pad},{y - 8} L{pad + 9},{y - 3} L{pad},{y + 2} z" fill="#000"/>')
        words = _clipped_text(clipped, width - 2 * pad - 16)
        out.append(f'<text x="{pad + 16}" y="{y}" font-size="{SIZE:g}">{escape(words)}</text>')
    out.append("</g>")
    return out


def _clipped_text(clipped: Sequence[Clipped], room: float) -> str:
    """``beyond the axes: warmup (100 nFLOP/B, 100 MFLOP/s)``, cut to fit."""
    text = "beyond the axes: "
    for n, c in enumerate(clipped):
        why = f", {c.doubt}" if c.doubt else ""
        item = f"{c.name[:24]} ({si(c.x, 'FLOP/B')}, {si(c.y, 'FLOP/s')}{why})"
        more = f" and {len(clipped) - n} more"
        candidate = text + ("" if n == 0 else "; ") + item
        if n and text_width(candidate + more, SIZE) > room:
            return text + more
        text = candidate
    return text


def row(marks: Sequence[tuple[str, str, str | None]], x: float, y: float) -> list[str]:
    """The entries of one legend row; an entry with a series is a ``g.legend-entry``."""
    out = []
    for glyph, words, series in marks:
        icon = 38 if "size" in words else 24
        entry = [
            f'<g transform="translate({x:.1f},0)">{glyph}</g>',
            f'<text x="{x + icon:.1f}" y="{y + 4:.1f}" font-size="{SIZE:g}">{escape(words)}</text>',
        ]
        if series is not None:
            entry = [f'<g class="legend-entry" data-series="{series}">', *entry, "</g>"]
        out += entry
        x += icon + text_width(words, SIZE) + 12
    return out


def dot(cx: float, cy: float, r: float, fill: str, stroke: str) -> str:
    return (
        f'<circle cx="{cx + 6:.1f}" cy="{cy:.1f}" r="{r:g}" fill="{fill}" fill-opacity="0.6" '
        f'stroke="{stroke}" stroke-width="2"/>'
    )


def line_glyph(x1: float, y1: float, x2: float, y2: float, dash: str) -> str:
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#555"{dash}/>'
