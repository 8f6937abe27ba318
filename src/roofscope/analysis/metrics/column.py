"""Per-dispatch columns in plain Python: what the counter formulas compute over.

A profile with counters holds one dispatch to a few thousand (the corpus: 1 to 1,004), and
numpy's import (60-75 ms) cost a one-kernel workload more than all its formulas. A
:class:`Column` is a list of floats with the arithmetic of numpy's float64 arrays that the
formulas use, to the last bit: IEEE division (``x/0`` is ±inf, ``0/0`` NaN, never
ZeroDivisionError), comparisons giving a :class:`Mask`, selection by a mask, and numpy's
pairwise summation (:func:`total`), so that sums and means are the ones numpy gave.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import overload


class Mask:
    """Which dispatches: one bool per dispatch."""

    __slots__ = ("flags",)

    def __init__(self, flags: list[bool]) -> None:
        self.flags = flags

    def tolist(self) -> list[bool]:
        return list(self.flags)

    def __and__(self, other: Mask) -> Mask:
        return Mask([a and b for a, b in zip(self.flags, other.flags, strict=True)])

    def any(self) -> bool:
        return any(self.flags)

    def count(self) -> int:
        return sum(self.flags)

    @property
    def size(self) -> int:
        return len(self.flags)


def everything(size: int) -> Mask:
    return Mask([True] * size)


def _divide(a: float, b: float) -> float:
    """``a / b`` as IEEE (numpy) divides: by zero, ±inf or NaN."""
    if b != 0 or math.isnan(b):
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


class Column:
    """One float per dispatch, read-only (the shared counter table's are tuples); arithmetic
    with another column or a number."""

    __slots__ = ("values",)

    def __init__(self, values: Sequence[float]) -> None:
        self.values = values

    def tolist(self) -> list[float]:
        return list(self.values)

    @property
    def size(self) -> int:
        return len(self.values)

    def _zip(self, other: Column | float, op: Callable[[float, float], float]) -> Column:
        if isinstance(other, Column):
            return Column([op(a, b) for a, b in zip(self.values, other.values, strict=True)])
        return Column([op(a, other) for a in self.values])

    def __add__(self, other: Column | float) -> Column:
        if isinstance(other, Column):
            return Column([a + b for a, b in zip(self.values, other.values, strict=True)])
        return Column([a + other for a in self.values])

    def __radd__(self, other: float) -> Column:
        return Column([other + a for a in self.values])

    def __sub__(self, other: Column | float) -> Column:
        if isinstance(other, Column):
            return Column([a - b for a, b in zip(self.values, other.values, strict=True)])
        return Column([a - other for a in self.values])

    def __rsub__(self, other: float) -> Column:
        return Column([other - a for a in self.values])

    def __mul__(self, other: Column | float) -> Column:
        if isinstance(other, Column):
            return Column([a * b for a, b in zip(self.values, other.values, strict=True)])
        return Column([a * other for a in self.values])

    def __rmul__(self, other: float) -> Column:
        return Column([other * a for a in self.values])

    def __truediv__(self, other: Column | float) -> Column:
        return self._zip(other, _divide)

    def __rtruediv__(self, other: float) -> Column:
        return Column([_divide(other, a) for a in self.values])

    def __gt__(self, other: float) -> Mask:
        return Mask([a > other for a in self.values])

    def nonzero(self) -> Mask:
        return Mask([a != 0 for a in self.values])

    def finite(self) -> Mask:
        return Mask([math.isfinite(a) for a in self.values])

    @overload
    def __getitem__(self, which: int) -> float: ...
    @overload
    def __getitem__(self, which: Mask) -> Column: ...
    def __getitem__(self, which: int | Mask) -> float | Column:
        """One dispatch's value, or the dispatches of a mask."""
        if isinstance(which, int):
            return self.values[which]
        return Column([a for a, keep in zip(self.values, which.flags, strict=True) if keep])

    def sum(self) -> float:
        return total(self.values)

    def nansum(self) -> float:
        """numpy's ``nansum``: NaN counted as 0."""
        return total([0.0 if math.isnan(a) else a for a in self.values])

    def mean(self) -> float:
        """numpy's mean: the pairwise sum over the count (NaN when empty)."""
        return _divide(total(self.values), float(len(self.values)))


def full(value: float, size: int) -> Column:
    return Column([float(value)] * size)


def where(mask: Mask, yes: Column, no: float) -> Column:
    return Column([a if keep else no for a, keep in zip(yes.values, mask.flags, strict=True)])


def summed(columns: Iterable[Column]) -> Column | float:
    """``c1 + c2 + ...`` left to right, as numpy's elementwise adds; 0.0 for none."""
    out: Column | float = 0.0
    for column in columns:
        out = out + column
    return out


def stacked_sum(columns: Sequence[Column]) -> Column:
    """numpy's ``vstack(columns).sum(axis=0)``: row after row, but one dispatch's column is
    contiguous, and numpy sums it pairwise (:func:`total`)."""
    if columns[0].size == 1:
        return Column([total([c.values[0] for c in columns])])
    out = columns[0]
    for column in columns[1:]:
        out = out + column
    return out


def greatest(columns: Sequence[Column]) -> Column:
    """Elementwise maximum, NaN where any is NaN (numpy's max over a stack)."""
    rows = zip(*(c.values for c in columns), strict=True)
    return Column([math.nan if any(map(math.isnan, r)) else max(r) for r in rows])


def total(values: Sequence[float]) -> float:
    """numpy's sum of a float64 array, bit for bit: its pairwise summation (8 partial
    sums over blocks of at most 128 values, halves above)."""
    return _pairwise(values, 0, len(values))


def _pairwise(a: Sequence[float], lo: int, n: int) -> float:
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        return _block(a, lo, n)
    half = n // 2
    half -= half % 8
    return _pairwise(a, lo, half) + _pairwise(a, lo + half, n - half)


def _block(a: Sequence[float], lo: int, n: int) -> float:
    r = list(a[lo : lo + 8])
    i, whole = 8, n - n % 8
    while i < whole:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for k in range(lo + i, lo + n):
        res += a[k]
    return res
