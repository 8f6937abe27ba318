"""Counts and numbers as every message and every output words them: ``1 dispatch``,
``2,258 dispatches`` (never ``dispatch(es)``), ``0.0123``, ``3,430`` (never an exponent).

Here, below every stage, so that the readers' warnings and the findings' formulas word them
as the renderers do (``render/numbers.py`` builds its units and prefixes on these)."""

from __future__ import annotations

import math
from decimal import Decimal

_PREFIXES = [
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
]


def plural(n: float, noun: str, many: str | None = None) -> str:
    """``noun`` for one, else ``many`` (by default ``noun`` + ``es`` after s, sh, ch, x;
    ``noun`` + ``s`` otherwise)."""
    if n == 1:
        return noun
    return many or (noun + "es" if noun.endswith(("s", "sh", "ch", "x")) else noun + "s")


def count(n: float, noun: str, many: str | None = None) -> str:
    """``1 dispatch``, ``2,258 dispatches``, ``2.5 calls`` (a mean over runs): a count with
    its noun, thousands separated, singular only for one."""
    shown = f"{n:,.0f}" if n == int(n) else sig(n)
    return f"{shown} {plural(n, noun, many)}"


def sig(x: float, digits: int = 3, *, trim: bool = True) -> str:
    """``x`` to ``digits`` significant figures in plain decimals: 0.0123, 1.5, 12.3, 3,430
    (``trim=False`` keeps the zeros that are significant: 1.50)."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    exponent = math.floor(math.log10(abs(x)))
    decimals = digits - 1 - exponent
    rounded = round(x, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > exponent:  # 9.996 -> 10.0
        decimals -= 1
    if decimals <= 0:  # through Decimal: 1e39 is 1,000,...,000, not the float's 999,...,112
        return format(Decimal(repr(round(x, decimals))).to_integral_value(), ",f")
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if trim else text


def sized(x: float, unit: str = "", digits: int = 6) -> str:
    """A value that may be absurd (a damaged file's ``1e308``): as :func:`sig` up to 21 digits
    (``10,000,000,000,000,000,000``), past that its size in words (``a 309-digit number``,
    ``a 40-digit number of ns``), never an exponent nor a screenful of zeros."""
    if not math.isfinite(x) or abs(x) < 1e21:
        return f"{sig(x, digits)} {unit}".rstrip()
    sign = "negative " if x < 0 else ""
    of = f" of {unit}" if unit else ""
    return f"a {math.floor(math.log10(abs(x))) + 1}-digit {sign}number{of}"


def plain(x: float) -> str:
    """A value as a file gives it, in plain decimals, never an exponent: ``80.34``,
    ``0.00001`` (where ``:g`` wrote ``1e-05``), ``100``."""
    if not math.isfinite(x):
        return str(x)
    text = format(Decimal(repr(float(x))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def si(value: float | None, unit: str = "", *, missing: str = "-") -> str:
    """``2.26e13, "FLOP/s"`` -> ``22.6 TFLOP/s``; ``4.3e12, "B/s"`` -> ``4.3 TB/s``."""
    if value is None:
        return missing
    if value == 0 or not math.isfinite(value):
        return f"{sig(value)} {unit}".rstrip()
    scale, prefix = next(((s, p) for s, p in _PREFIXES if abs(value) >= s * 0.9995), _PREFIXES[-1])
    return f"{sig(value / scale)} {prefix}{unit}".rstrip()
