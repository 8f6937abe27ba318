"""The legend beneath the movement chart: the before and after points, the arrow between them
and its speedup label, and the kinds of ceiling line drawn. Each entry is a
``g.legend-entry`` whose ``data-series`` is that of the marks it explains."""

from __future__ import annotations

from collections.abc import Collection

from roofscope.render.charts.roofline_legend import ROW, dot, line_glyph, row

BEFORE, AFTER = "#8c8c8c", "#333"
HEIGHT = 10 + 2 * ROW


def movement_legend(top: float, pad: int, lines: Collection[str]) -> list[str]:
    """The legend's two rows from ``top`` down: the points and the arrow, then the ceilings'
    lines drawn (``lines``: their series)."""
    y = top + 14
    arrow = (f'<line x1="0" y1="{y}" x2="18" y2="{y}" stroke="{AFTER}" stroke-width="1.5" '
             'marker-end="url(#head)"/>')  # fmt: skip
    marks: list[tuple[str, str, str | None]] = [
        (dot(-2, y, 4, BEFORE, BEFORE), "before (baseline)", "before"),
        (dot(-2, y, 3, AFTER, AFTER), "after (candidate)", "after"),
        (arrow, "the move, labelled with the speedup (1.25x: 1.25 times faster)", "arrow"),
    ]
    out = ['<g class="legend">', *row(marks, pad, y)]
    y += ROW
    kinds = [
        (line_glyph(0, y, 20, y, ""), "matrix peak", "matrix-peak"),
        (line_glyph(0, y, 20, y, ' stroke-dasharray="5,3"'), "vector peak", "vector-peak"),
        (line_glyph(0, y + 6, 20, y - 6, ""), "bandwidth of a memory level", "bandwidth"),
    ]
    return [*out, *row([k for k in kinds if k[2] in lines], pad, y), "</g>"]
