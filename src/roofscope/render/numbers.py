"""Numbers as a person writes them, in every output a person reads (text, HTML, charts).

Three significant figures, an SI prefix before the unit (``22.6 TFLOP/s``), a duration in the
unit that fits (``410 µs``, ``2.61 s``, ``32.2 min``), never scientific notation. Machine
output (JSON) keeps raw numbers in base units and does not come through here.
"""

from __future__ import annotations

from collections.abc import Iterable

from roofscope.model.words import count, si, sig

__all__ = ["count", "duration", "number", "pct", "quantity", "ratio", "si", "sig"]

# (ns per unit, name): the duration units, smallest first
TIME_UNITS = [(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s"), (60e9, "min"), (3600e9, "h")]


def number(value: float | None, unit: str = "", *, missing: str = "-") -> str:
    """A count or ratio: plain below a million (``3,430 waves``, ``0.185 %``), then an SI
    prefix (``12.3 M``); never an exponent."""
    if value is None:
        return missing
    if abs(value) >= 999_500 or (0 < abs(value) < 1e-4):
        return si(value, unit, missing=missing)
    return f"{sig(value)} {unit}".rstrip()


def duration(ns: float | None, *, missing: str = "n/a") -> str:
    """A time in nanoseconds in the unit that fits: ``410 µs``, ``2.61 s``, ``32.2 min``."""
    if ns is None:
        return missing
    scale, name = time_unit([ns])
    return f"{sig(ns / scale)} {name}"


def time_unit(values: Iterable[float | None]) -> tuple[float, str]:
    """The largest unit in which the biggest value is at least 1 (minutes from 100 s on)."""
    biggest = max((abs(v) for v in values if v is not None), default=0.0)
    chosen = TIME_UNITS[0]
    for scale, name in TIME_UNITS:
        limit = 100e9 if name == "min" else scale  # 75 s reads better than 1.25 min
        if biggest * 1.0005 >= limit:
            chosen = (scale, name)
    return chosen


def column_unit(values: Iterable[float | None]) -> tuple[float, str]:
    """One time unit for a column: the smallest in which the biggest value has at most four
    digits before the point, so that small values keep figures (no ``0.000``)."""
    biggest = max((abs(v) for v in values if v is not None), default=0.0)
    for scale, name in TIME_UNITS[:4]:
        if biggest / scale < 9999.5:
            return scale, name
    return TIME_UNITS[3]


def cell(ns: float | None, scale: float) -> str:
    """A value of a time column in its unit: 3 significant figures, whole numbers above 100
    (``2,500``, ``33.6``, ``1.07``, ``0.0123``); ``-`` where there is none."""
    if ns is None:
        return "-"
    v = ns / scale
    return f"{v:,.0f}" if abs(v) >= 99.95 else sig(v)


def pct(share: float | None, *, missing: str = "-") -> str:
    """A share as a percentage with one decimal: ``7.8%``."""
    return missing if share is None else f"{100 * share:.1f}%"


def ratio(x: float) -> str:
    """``1.99x``, ``11.8x``, ``2.00x``: a ratio to 3 significant figures."""
    return f"{sig(x, trim=False)}x"


def ratio_range(low: float, high: float) -> str:
    """An interval of a ratio as its two ends (never ``±``: it is not symmetric):
    ``[1.97, 2.01]``."""
    return f"[{sig(low, trim=False)}, {sig(high, trim=False)}]"


_PREFIXED = {"T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3, "K": 1e3}
_BASE_UNITS = ("B/s", "B", "FLOP/s", "IOP/s", "Hz", "FLOP", "IOP", "inst/s", "instr/s")


def quantity(value: float | None, unit: str, *, missing: str = "-") -> str:
    """A value with a unit as a profiler gives it: a prefixed SI unit re-prefixed to fit
    (``4300, "GB/s"`` -> ``4.3 TB/s``), any other unit kept (``3432, "waves"`` -> ``3,430
    waves``)."""
    if value is None:
        return missing
    prefix, base = unit[:1], unit[1:]
    if prefix in _PREFIXED and base in _BASE_UNITS:
        return si(value * _PREFIXED[prefix], base)
    if unit in _BASE_UNITS:
        return si(value, unit)
    return number(value, unit)


def seconds(ns: float | None) -> float | None:
    """Nanoseconds to the JSON's SI seconds; None stays None."""
    return None if ns is None else ns / 1e9
