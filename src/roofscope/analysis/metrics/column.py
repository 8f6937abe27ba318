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
import operator
from collections.abc import Callable, Iterable, Sequence
from functools import reduce
from itertools import compress, repeat
from typing import overload


class Mask:
    """Which dispatches: one bool per dispatch."""

    __slots__ = ("flags",)

    def __init__(self, flags: list[bool]) -> None:
        self.flags = flags

    def tolist(self) -> list[bool]:
        return list(self.flags)

    def __and__(self, other: Mask) -> Mask:
        if len(other.flags) != len(self.flags):
            raise ValueError(f"masks of {len(self.flags)} and {len(other.flags)} dispatches")
        return Mask(list(map(operator.and_, self.flags, other.flags)))

    def any(self) -> bool:
        return any(self.flags)

    def every(self) -> bool:
        return all(self.flags)

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

    def _with(self, other: Column | float, op: Callable[[float, float], float]) -> Column:
        """``op`` of each value and ``other``'s (a column of the same size, or a number)."""
        if isinstance(other, Column):
            if len(other.values) != len(self.values):
                raise ValueError(f"columns of {len(self.values)} and {len(other.values)} values")
            return Column(list(map(op, self.values, other.values)))
        return Column(list(map(op, self.values, repeat(other, len(self.values)))))

    def __add__(self, other: Column | float) -> Column:
        return self._with(other, operator.add)

    def __radd__(self, other: float) -> Column:
        return Column(list(map(operator.add, repeat(other, len(self.values)), self.values)))

    def __sub__(self, other: Column | float) -> Column:
        return self._with(other, operator.sub)

    def __rsub__(self, other: float) -> Column:
        return Column(list(map(operator.sub, repeat(other, len(self.values)), self.values)))

    def __mul__(self, other: Column | float) -> Column:
        return self._with(other, operator.mul)

    def __rmul__(self, other: float) -> Column:
        return Column(list(map(operator.mul, repeat(other, len(self.values)), self.values)))

    def __truediv__(self, other: Column | float) -> Column:
        return self._with(other, _divide)

    def __rtruediv__(self, other: float) -> Column:
        return Column(list(map(_divide, repeat(other, len(self.values)), self.values)))

    def __gt__(self, other: float) -> Mask:
        return Mask([a > other for a in self.values])

    def nonzero(self) -> Mask:
        return Mask([a != 0 for a in self.values])

    def finite(self) -> Mask:
        return Mask(list(map(math.isfinite, self.values)))

    @overload
    def __getitem__(self, which: int) -> float: ...
    @overload
    def __getitem__(self, which: Mask) -> Column: ...
    def __getitem__(self, which: int | Mask) -> float | Column:
        """One dispatch's value, or the dispatches of a mask."""
        if isinstance(which, int):
            return self.values[which]
        if len(which.flags) != len(self.values):
            raise ValueError(f"a mask of {len(which.flags)} over {len(self.values)} values")
        return self if which.every() else Column(list(compress(self.values, which.flags)))

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
        return reduce(operator.add, a[lo : lo + n], 0.0)
    if n <= 128:
        return _block(a, lo, n)
    half = n // 2
    half -= half % 8
    return _pairwise(a, lo, half) + _pairwise(a, lo + half, n - half)


def _block(a: Sequence[float], lo: int, n: int) -> float:
    """Eight running sums, each of every eighth value, then paired; the rest added after.
    ``reduce(add)`` adds in order (``sum`` of floats compensates from Python 3.12 on)."""
    whole = lo + n - n % 8
    r = [reduce(operator.add, a[lo + j + 8 : whole : 8], a[lo + j]) for j in range(8)]
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    return reduce(operator.add, a[whole : lo + n], res)
