"""A kernel's durations as a mergeable distribution: exact while small, a DDSketch beyond.

While a kernel has at most :data:`EXACT_LIMIT` (1,000) timed dispatches its durations are kept
exactly (sorted), so its median is the exact one (the mean of the two middle values for an
even count, as DuckDB's ``median``). Beyond that they are a DDSketch (Masson, Rim and Lee,
VLDB 2019; the ``ddsketch`` library) of relative accuracy :data:`RELATIVE_ACCURACY`: every
quantile it gives is within 1 % of a duration at that rank. A sketch is a count per
logarithmic bin; the bins are computed by one SQL expression (:func:`bin_sql`) for rows read
by DuckDB and for exact values turned into a sketch, so a sketch holds the same counts however
the durations were split and merged, and merging is associative and commutative.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from ddsketch import DDSketch, LogarithmicMapping

EXACT_LIMIT = 1_000
RELATIVE_ACCURACY = 0.01
_MAPPING = LogarithmicMapping(RELATIVE_ACCURACY)
# the library's key: ceil(log2(value) * multiplier), multiplier = ln 2 / ln(gamma)
_MULTIPLIER = math.log(2) / math.log1p(2 * RELATIVE_ACCURACY / (1 - RELATIVE_ACCURACY))

Ints = npt.NDArray[np.int64]


def bin_sql(column: str) -> str:
    """The SQL expression of a duration's sketch bin (NULL for zero: the sketch's zero count)."""
    return f"CASE WHEN {column} > 0 THEN ceil(log2({column}) * {_MULTIPLIER!r})::BIGINT END"


@dataclass(frozen=True)
class Durations:
    """The timed durations of one kernel: ``exact`` (sorted) or ``sketch``, never both."""

    count: int
    exact: Ints | None
    sketch: DDSketch | None

    def quantile(self, q: float) -> float | None:
        """The q-quantile: exact (interpolated) or the sketch's, None when empty."""
        if self.count == 0:
            return None
        if self.exact is not None:
            return float(np.quantile(self.exact, q))
        assert self.sketch is not None
        value = self.sketch.get_quantile_value(q)
        return None if value is None else float(value)


EMPTY = Durations(0, np.zeros(0, dtype=np.int64), None)


def exact(values: Iterable[int]) -> Durations:
    """Durations from their values (turned into a sketch beyond the limit)."""
    return _from_array(np.fromiter(values, dtype=np.int64))


def _from_array(values: Ints) -> Durations:
    array = np.sort(values)
    if array.size <= EXACT_LIMIT:
        return Durations(int(array.size), array, None)
    return from_bins(_bins_of(array))


def from_bins(bins: Iterable[tuple[int | None, int]]) -> Durations:
    """A sketch from (bin, count) pairs, bin None for zero durations."""
    sketch = DDSketch(RELATIVE_ACCURACY)
    for key, n in sorted(bins, key=lambda b: (b[0] is not None, b[0] or 0)):
        sketch.add(0.0 if key is None else _MAPPING.value(key), float(n))
    return Durations(int(sketch.count), None, sketch)


def _bins_of(values: Ints) -> list[tuple[int | None, int]]:
    """The values' (bin, count) pairs, by :func:`bin_sql`'s formula in Python's ``math``
    (the C library's log2, as DuckDB's): at most 2 x EXACT_LIMIT values come here, when two
    exact lists merge past the limit, so a loop costs about a millisecond where a DuckDB
    connection per kernel cost 70 ms (4-7 s per partial of 300 kernels, measured)."""
    counts = Counter(
        math.ceil(math.log2(v) * _MULTIPLIER) if v > 0 else None for v in values.tolist()
    )
    return list(counts.items())


def merged(a: Durations, b: Durations) -> Durations:
    """Both distributions as one; neither is changed."""
    if a.exact is not None and b.exact is not None:
        return _from_array(np.concatenate([a.exact, b.exact]))
    sketch = DDSketch(RELATIVE_ACCURACY)
    for part in (a, b):  # DDSketch.merge copies the other's bins and leaves it as it was
        sketch.merge(part.sketch if part.sketch is not None else _as_sketch(part))
    return Durations(a.count + b.count, None, sketch)


def _as_sketch(d: Durations) -> DDSketch:
    assert d.exact is not None
    built = from_bins(_bins_of(d.exact)).sketch if d.exact.size else DDSketch(RELATIVE_ACCURACY)
    assert built is not None
    return built
