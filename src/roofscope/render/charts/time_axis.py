"""Tick marks of a time axis: a 1-2-5 step giving about eight ticks, each labelled in the
unit that fits the end of the range (``410 µs``, ``2.5 ms``). The timeline's zoom script
follows the same rule in the browser."""

from __future__ import annotations

import math

UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))


def ticks(lo: float, hi: float, count: int = 8) -> list[tuple[float, str]]:
    """Tick times (ns) in [lo, hi] at a 1-2-5 step giving about ``count`` ticks, each with
    its label in the unit that fits ``hi``."""
    raw = max(hi - lo, 1.0) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    unit, name = next(((u, n) for u, n in UNITS if hi >= u), UNITS[-1])
    decimals = max(0, math.ceil(-math.log10(step / unit) - 1e-9))
    return [
        (i * step, f"{i * step / unit:.{decimals}f} {name}")
        for i in range(math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9) + 1)
    ]
