"""The parts of the kernel-time chart that state its numbers: the title, the legend (hotspot,
not a hotspot, the cumulative-share line), the time axis beneath the bars and the percent
axis of the cumulative line above its own panel, right of the bars' values (so that the line
crosses no value).

Every tick label is a ``text.tick``; the legend is a ``g.legend`` of ``g.legend-entry``
whose ``data-series`` names the marks it explains (the bars and the line carry the same)."""

from __future__ import annotations

from collections.abc import Collection

import msgspec

from roofscope.render.charts.labels import text_width
from roofscope.render.charts.time_axis import ticks
from roofscope.render.escape import escape_text as _e

HOT, COLD, LINE = "#d62728", "#9aa5b1", "#333"
SERIES = {"hot": "hotspot", "cold": "not a hotspot",
          "cumulative": "cumulative share (right, top axis)"}  # fmt: skip
BAR_H, TOP, PLOT, RIGHT = 22, 76, 270, 104
SHARE_W, MARGIN = 110, 16  # the cumulative line's panel, the room right of it: 760 px in all


class Frame(msgspec.Struct, frozen=True):
    """Where the bars go: ``left`` is the x of a zero bar, ``rows`` the number of bars,
    ``most_ns`` the time of the longest bar (it spans the plot)."""

    left: int
    rows: int
    most_ns: float

    @property
    def width(self) -> int:
        return self.left + PLOT + RIGHT + SHARE_W + MARGIN

    @property
    def bottom(self) -> int:
        return TOP + BAR_H * self.rows

    @property
    def height(self) -> int:
        return self.bottom + 40

    def x_time(self, ns: float) -> float:
        return self.left + (ns / self.most_ns * PLOT if self.most_ns > 0 else 0.0)

    @property
    def share_left(self) -> int:
        """The x of 0 % on the cumulative line's panel, right of the bars' values."""
        return self.left + PLOT + RIGHT

    def x_share(self, share: float) -> float:
        return self.share_left + share * SHARE_W


def title(frame: Frame, shown: int, total: int) -> str:
    """What the chart shows: ``Kernel time by kernel, top 20 of 194``."""
    words = f"Kernel time by kernel, top {shown} of {total}"
    return f'<text class="title" x="8" y="16" font-size="13" font-weight="bold">{_e(words)}</text>'


def legend(frame: Frame, drawn: Collection[str]) -> list[str]:
    """One entry per series ``drawn`` (of ``SERIES``: the bar colours, the dashed line)."""
    out, x, y = ['<g class="legend">'], float(frame.left), 36
    for series, words in SERIES.items():
        if series not in drawn:
            continue
        mark = (
            f'<line x1="{x:.1f}" y1="{y - 4}" x2="{x + 18:.1f}" y2="{y - 4}" stroke="{LINE}" '
            'stroke-dasharray="3,2"/>'
            if series == "cumulative"
            else f'<rect x="{x:.1f}" y="{y - 9}" width="18" height="10" fill="{_fill(series)}"/>'
        )
        out.append(
            f'<g class="legend-entry" data-series="{series}">{mark}'
            f'<text x="{x + 24:.1f}" y="{y}" font-size="11">{_e(words)}</text></g>'
        )
        x += 24 + text_width(words, 11) + 16
    out.append("</g>")
    return out


def _fill(series: str) -> str:
    return HOT if series == "hot" else COLD


def time_axis(frame: Frame) -> list[str]:
    """Ticks of the bars' time beneath them and the axis' name (no grid lines: the line above
    the bars has its own scale)."""
    out = [f'<g class="axis time"><line x1="{frame.left}" y1="{frame.bottom}" '
           f'x2="{frame.left + PLOT}" y2="{frame.bottom}" stroke="#999"/>']  # fmt: skip
    for at, label in ticks(0, frame.most_ns, 7) if frame.most_ns > 0 else ():
        x = frame.x_time(at)
        out.append(
            f'<line x1="{x:.1f}" y1="{frame.bottom}" x2="{x:.1f}" y2="{frame.bottom + 4}" '
            'stroke="#999"/>'
            f'<text class="tick" x="{x:.1f}" y="{frame.bottom + 16}" font-size="10" '
            f'text-anchor="middle">{label}</text>'
        )
    out.append(
        f'<text x="{frame.left + PLOT / 2:.1f}" y="{frame.bottom + 32}" font-size="11" '
        'text-anchor="middle">total time in the kernel (bars)</text></g>'
    )
    return out


def share_axis(frame: Frame) -> list[str]:
    """The cumulative line's axis above its panel: 0 % to 100 % of the kernel time, with
    faint guides down the panel at 0 % and 100 %."""
    y, x0, x1 = TOP - 4, frame.share_left, frame.share_left + SHARE_W
    out = [f'<g class="axis share"><line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#999"/>']
    out += [f'<line x1="{x}" y1="{y}" x2="{x}" y2="{frame.bottom}" stroke="#e3e3e3"/>'
            for x in (x0, x1)]  # fmt: skip
    out.append(f'<text x="{x0 + SHARE_W / 2:.1f}" y="{frame.bottom + 32}" font-size="11" '
               'text-anchor="middle">cumulative share</text>')  # fmt: skip
    for percent in range(0, 101, 50):
        x = frame.x_share(percent / 100)
        out.append(
            f'<line x1="{x:.1f}" y1="{y - 3}" x2="{x:.1f}" y2="{y}" stroke="#999"/>'
            f'<text class="tick" x="{x:.1f}" y="{y - 6}" font-size="10" '
            f'text-anchor="middle">{percent} %</text>'
        )
    out.append("</g>")
    return out
