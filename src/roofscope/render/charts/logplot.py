"""The log-log axes of a roofline chart: whole decades, SI tick labels (``1 m``, ``10 T``,
never ``1e13``) and axis titles with units."""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

_PREFIXES = {-15: "f", -12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G",
             12: "T", 15: "P", 18: "E"}  # fmt: skip


def si_tick(decade: int) -> str:
    """The label of the tick at ``10**decade``: ``-3`` -> ``1 m``, ``13`` -> ``10 T``."""
    power = 3 * math.floor(decade / 3)
    power = min(max(power, min(_PREFIXES)), max(_PREFIXES))
    mantissa = 10 ** (decade - power)
    number = f"{mantissa:g}" if mantissa >= 1 else f"{mantissa:.{power - decade}f}"
    prefix = _PREFIXES[power]
    return f"{number} {prefix}" if prefix else number


class LogPlot(msgspec.Struct, frozen=True):
    """Log-log axes: whole decades around the data with half a decade spare, the plot area
    inset by ``pad`` on every side of a ``width`` x ``height`` drawing."""

    x0: float
    x1: float
    y0: float
    y1: float
    width: int
    height: int
    pad: int = 60
    ops: tuple[str, ...] = ("FLOP",)  # what the y axis counts: FLOPs, and IOPs where drawn

    @classmethod
    def around(cls, xs: Sequence[float], ys: Sequence[float], width: int, height: int) -> LogPlot:
        lo, hi = math.log10(min(xs)), math.log10(max(xs))
        bottom, top = math.log10(min(ys)), math.log10(max(ys))
        return cls(
            10 ** math.floor(lo - 0.5),
            10 ** math.ceil(hi + 0.5),
            10 ** math.floor(bottom - 0.5),
            10 ** math.ceil(top + 0.5),
            width,
            height,
        )

    def px(self, x: float) -> float:
        span = math.log10(self.x1) - math.log10(self.x0)
        return self.pad + (math.log10(x) - math.log10(self.x0)) / span * (self.width - 2 * self.pad)

    def py(self, y: float) -> float:
        span = math.log10(self.y1) - math.log10(self.y0)
        inner = self.height - 2 * self.pad
        return self.height - self.pad - (math.log10(y) - math.log10(self.y0)) / span * inner

    def inside(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1

    def clamp(self, x: float, y: float) -> tuple[float, float]:
        """The point moved onto the nearest edge of the axes, when it lies beyond them."""
        return min(max(x, self.x0), self.x1), min(max(y, self.y0), self.y1)

    def area(self) -> tuple[float, float, float, float]:
        """The plot area in pixels: left, top, right, bottom."""
        return self.pad, self.pad, self.width - self.pad, self.height - self.pad

    def frame(self) -> list[str]:
        """The plot area, a label at each decade and the axis titles with units."""
        w, h, pad = self.width, self.height, self.pad
        out = [f'<rect x="{pad}" y="{pad}" width="{w - 2 * pad}" height="{h - 2 * pad}" '
               'fill="none" stroke="#ccc"/>']  # fmt: skip
        for decade in range(round(math.log10(self.x0)), round(math.log10(self.x1)) + 1):
            out.append(f'<text class="tick" x="{self.px(10.0**decade):.1f}" y="{h - pad + 16}" '
                       f'font-size="10" text-anchor="middle">{si_tick(decade)}</text>')  # fmt: skip
        for decade in range(round(math.log10(self.y0)), round(math.log10(self.y1)) + 1):
            out.append(f'<text class="tick" x="{pad - 5}" y="{self.py(10.0**decade) + 3:.1f}" '
                       f'font-size="10" text-anchor="end">{si_tick(decade)}</text>')  # fmt: skip
        per_byte = " or ".join(f"{o}/B" for o in self.ops)
        y_label = "performance [" + " or ".join(f"{o}/s" for o in self.ops) + "]"
        out.append(f'<text x="{w / 2}" y="{h - pad + 30}" font-size="11" text-anchor="middle">'
                   f"arithmetic intensity [{per_byte}]</text>")  # fmt: skip
        out.append(f'<text x="14" y="{h / 2}" font-size="11" text-anchor="middle" '
                   f'transform="rotate(-90 14 {h / 2})">{y_label}</text>')  # fmt: skip
        return out
