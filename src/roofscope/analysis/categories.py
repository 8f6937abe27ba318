"""Kernel time per category (model/categories.py): how much is GEMM, attention, convolution,
communication, elementwise, reduction/normalisation, memory copy/set and other. Each kernel
is in exactly one category; a category's share is its kernels' time over all kernels' time
(hotspots' own totals), and where the roofline placed some of its kernels with an
efficiency, their time-weighted efficiency: sum(efficiency x time) / sum(time) over them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from roofscope.analysis.hotspots import Hotspots, KernelStats
from roofscope.analysis.roofline import Roofline
from roofscope.model.categories import Category, category_of


class CategoryTime(msgspec.Struct, frozen=True):
    category: Category
    kernels: int
    calls: int
    total_ns: float | None  # None where a kernel's time is unknown (a summary without times)
    share: float | None  # of all kernels' time
    placed_ns: float  # the time of its kernels that the roofline gave an efficiency
    efficiency: float | None  # time-weighted over those kernels; None where none was placed


class Categories(msgspec.Struct, frozen=True):
    rows: tuple[CategoryTime, ...]  # the categories that hold kernels, most time first
    of: dict[str, Category]  # each kernel's category, by name

    def category(self, kernel: str) -> Category:
        return self.of[kernel]


NONE = Categories((), {})  # before a check-up


def categories(
    hot: Hotspots, roof: Roofline, operators: Mapping[str, str] | None = None
) -> Categories:
    """Every kernel of ``hot`` in its category, and each category's time, share and
    efficiency under the roofline of ``roof``; ``operators``: the operator that launched
    each kernel (most of its time), where a PyTorch trace says, which decides where the
    name alone cannot."""
    ops = operators or {}
    of = {k.name: category_of(k.name, ops.get(k.name)) for k in hot.kernels}
    efficiency = {k.name: k.efficiency for k in roof.kernels if k.efficiency is not None}
    groups: dict[Category, list[KernelStats]] = {}
    for k in hot.kernels:
        groups.setdefault(of[k.name], []).append(k)
    rows = [_row(c, ks, hot.total_ns, efficiency) for c, ks in groups.items()]
    order = list(Category)
    rows.sort(key=lambda r: (-(r.total_ns or 0), -r.calls, order.index(r.category)))
    return Categories(tuple(rows), of)


def _row(
    category: Category,
    kernels: list[KernelStats],
    whole_ns: float | None,
    efficiency: dict[str, float],
) -> CategoryTime:
    total = _sum(k.total_ns for k in kernels)
    placed = [(efficiency[k.name], k.total_ns or 0.0) for k in kernels if k.name in efficiency]
    placed_ns = sum((t for _, t in placed), 0.0)
    weighted = sum(e * t for e, t in placed) / placed_ns if placed_ns > 0 else None
    share = total / whole_ns if total is not None and whole_ns else None
    calls = sum(k.calls for k in kernels)
    return CategoryTime(category, len(kernels), calls, total, share, placed_ns, weighted)


def _sum(values: Iterable[float | None]) -> float | None:
    """The sum, or None when any value is unknown."""
    total = 0.0
    for v in values:
        if v is None:
            return None
        total += v
    return total
