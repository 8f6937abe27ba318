"""The text of ncu values as numbers: metric units to SI factors, locale-aware numbers,
launch shapes such as ``"(256, 1, 1)"`` and integer fields. Pure functions, no I/O."""

from __future__ import annotations

import math
import re

from roofscope.readers.io.batches import fits

_PREFIXES = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_TIMES = {"second": 1.0, "s": 1.0, "msecond": 1e-3, "ms": 1e-3, "usecond": 1e-6, "us": 1e-6}
_TIMES |= {"nsecond": 1e-9, "ns": 1e-9}
_COUNTS = {"byte", "cycle", "inst", "sector", "request", "warp", "thread", "block", "register"}
_COUNTS |= {"SM", "cluster", "wavefront", "hz", "Hz", "op", "flop", "pass"}
_LOCALE = re.compile(r"^-?\d{1,3}(\.\d{3})+,\d+$")  # 1.234.567,89 (European Windows)


def unit_factor(unit: str) -> float | None:
    """The factor that turns a value in ``unit`` into SI base units (seconds, bytes, hz,
    byte/second, counts); None for a unit it does not know. ``%`` and ``""`` give 1."""
    unit = unit.strip()
    if unit in ("", "%"):
        return 1.0
    top, _, bottom = unit.partition("/")
    num = _term(top)
    if num is None or not bottom:
        return num
    den = _term(bottom)
    return None if den is None or den == 0 else num / den


def _term(term: str) -> float | None:
    """One side of a unit: an SI-prefixed count (``Mbyte``, ``Ghz``) or a time (``us``)."""
    if term in _TIMES:
        return _TIMES[term]
    if term == "1":  # a plain count: ncu writes rates of ops as 1/s, 1/ns, 1/cycle
        return 1.0
    for prefix, factor in _PREFIXES.items():
        if term.startswith(prefix) and term[len(prefix) :] in _COUNTS:
            return factor
    return None


def parse_number(text: str) -> float | None:
    """A metric value as a float: thousands separators dropped (a ``1.234,5`` value is read as
    locale-swapped); None for what is no finite number (``n/a``, ``PolicySpread``)."""
    token = text.strip()
    if _LOCALE.match(token):
        token = token.replace(".", "").replace(",", ".")
    else:
        token = token.replace(",", "")
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def to_si(text: str, unit: str) -> tuple[float | None, bool]:
    """(value in SI base units or None when not a number, whether the unit was known)."""
    value = parse_number(text)
    factor = unit_factor(unit)
    if value is None or factor is None:
        return value, factor is not None
    return value * factor, True


def product(shape: str) -> int | None:
    """``"(256, 1, 1)"`` -> 256; None for an empty or malformed shape, or one past 64 bits."""
    parts = shape.strip().strip("()").split(",")
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        return None
    total = math.prod(dims)
    return total if dims and fits(total) else None


def integer(text: str | None) -> int | None:
    """A whole number within 64 bits; None for anything else."""
    try:
        number = int((text or "").strip())
    except ValueError:
        return None
    return number if fits(number) else None
