"""Counts and numbers as every message and every output words them: ``1 dispatch``,
``2,258 dispatches`` (never ``dispatch(es)``), ``0.0123``, ``3,430`` (never an exponent).

Here, below every stage, so that the readers' warnings and the findings' formulas word them
as the renderers do (``render/numbers.py`` builds its units and prefixes on these)."""

from __future__ import annotations

import math
from decimal import Decimal


def plural(n: float, noun: str, many: str | None = None) -> str:
    """``noun`` for one, else ``many`` (by default ``noun`` + ``es`` after s, sh, ch, x;
    ``noun`` + ``s`` otherwise)."""
    if n == 1:
        return noun
    return many or (noun + "es" if noun.endswith(("s", "sh", "ch", "x")) else noun + "s")


def count(n: int, noun: str, many: str | None = None) -> str:
    """``1 dispatch``, ``2,258 dispatches``: a whole count, thousands separated."""
    return f"{n:,} {plural(n, noun, many)}"


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
    if decimals <= 0:
        return f"{round(x, decimals):,.0f}"
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if trim else text


def plain(x: float) -> str:
    """A value as a file gives it, in plain decimals, never an exponent: ``80.34``,
    ``0.00001`` (where ``:g`` wrote ``1e-05``), ``100``."""
    if not math.isfinite(x):
        return str(x)
    text = format(Decimal(repr(float(x))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
