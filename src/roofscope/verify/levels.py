"""Before and after above the kernels: per kernel category (GEMM, attention, ...) and per
PyTorch operator signature (name, input dims, input types).

Times are each side's mean over its runs; speedup = base time / new time, as for kernels.
A category's 95 % interval follows compare's conventions (``verify/spread.py``): several runs
a side, the bootstrap over the runs' category totals; one run a side, the draws of its
kernels summed (``end_to_end_interval``), unknown where a sizeable part of it has no spread
(a kernel only one side has, or a pair whose two kernels fall in different categories). An
operator's interval: the bootstrap over runs where both sides have several, else none.

Operators are matched by their whole signature; a signature on one side only is listed
apart. Each side's operator table holds its 50 signatures of most GPU time
(``analysis/ops/operators.py`` TOP): those are the ones compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec

from roofscope.analysis.ops.operators import OperatorRow
from roofscope.model.categories import Category
from roofscope.report import Report
from roofscope.verify.byop import Signature, signature
from roofscope.verify.spread import Interval, Spread, end_to_end_interval, generator, of_runs


class _Change(Protocol):
    @property
    def base(self) -> str | None: ...
    @property
    def new(self) -> str | None: ...


class CategoryChange(msgspec.Struct, frozen=True):
    category: Category
    calls: tuple[float, float]
    total_ns: tuple[float, float]
    speedup: float | None  # None where one side has none of it
    interval: Interval | None


class OperatorChange(msgspec.Struct, frozen=True):
    name: str
    dims: str | None  # the recorded Input Dims (JSON text)
    types: str | None
    calls: tuple[float, float]
    total_ns: tuple[float, float]
    speedup: float | None  # None: on one side only
    interval: Interval | None
    kernels: tuple[tuple[str, ...], tuple[str, ...]]


class OperatorChanges(msgspec.Struct, frozen=True):
    matched: tuple[OperatorChange, ...]  # most base time first
    removed: tuple[OperatorChange, ...]  # signatures of the baseline only
    added: tuple[OperatorChange, ...]  # of the candidate only


def category_changes(
    base: Sequence[Report], new: Sequence[Report], kernels: Sequence[tuple[_Change, Spread]]
) -> tuple[CategoryChange, ...]:
    """Each category either side has, most base time first (then most new time)."""
    found = {r.category for side in (base, new) for rep in side for r in rep.categories.rows}
    changes = [_category(c, base, new, kernels) for c in Category if c in found]
    changes.sort(key=lambda c: (-c.total_ns[0], -c.total_ns[1]))
    return tuple(changes)


def _category(
    c: Category,
    base: Sequence[Report],
    new: Sequence[Report],
    kernels: Sequence[tuple[_Change, Spread]],
) -> CategoryChange:
    bt, bc = _category_runs(base, c)
    nt, nc = _category_runs(new, c)
    totals = (_mean(bt), _mean(nt))
    speedup = totals[0] / totals[1] if totals[0] > 0 and totals[1] > 0 else None
    interval = None
    if speedup is not None and len(base) > 1 and len(new) > 1:
        interval = of_runs(bt, nt, generator("category", c.value))
    elif speedup is not None:
        spreads = [_part(change, s, c, base[0], new[0]) for change, s in kernels]
        interval = end_to_end_interval([s for s in spreads if s is not None], totals)
    return CategoryChange(c, (_mean(bc), _mean(nc)), totals, speedup, interval)


def _category_runs(side: Sequence[Report], c: Category) -> tuple[list[float], list[float]]:
    """Per run: the category's time (0 where it has none) and its calls."""
    rows = [next((r for r in rep.categories.rows if r.category == c), None) for rep in side]
    return [(r.total_ns or 0.0) if r else 0.0 for r in rows], [r.calls if r else 0 for r in rows]


def _part(change: _Change, s: Spread, c: Category, base: Report, new: Report) -> Spread | None:
    """What a kernel change brings to a category's interval: its spread where both its
    kernels are of the category; a side's time without spread where only one is."""
    in_base = change.base is not None and base.categories.of.get(change.base) == c
    in_new = change.new is not None and new.categories.of.get(change.new) == c
    if in_base and in_new:
        return s
    if in_base or in_new:
        return Spread((s.totals[0] if in_base else 0.0, s.totals[1] if in_new else 0.0), None, None)
    return None


def operator_changes(base: Sequence[Report], new: Sequence[Report]) -> OperatorChanges | None:
    """None unless both sides have an operator table (PyTorch traces)."""
    if any(r.operators is None for r in (*base, *new)):
        return None
    sigs = (_signatures(base), _signatures(new))
    changes = [_operator(s, base, new) for s in dict.fromkeys([*sigs[0], *sigs[1]])]
    changes.sort(key=lambda o: (-o.total_ns[0], -o.total_ns[1], o.name))
    return OperatorChanges(
        tuple(o for o in changes if o.calls[0] and o.calls[1]),
        tuple(o for o in changes if not o.calls[1]),
        tuple(o for o in changes if not o.calls[0]),
    )


def _signatures(side: Sequence[Report]) -> list[Signature]:
    return [signature(r) for rep in side for r in _rows(rep)]


def _rows(report: Report) -> tuple[OperatorRow, ...]:
    return report.operators.rows if report.operators is not None else ()


def _operator(sig: Signature, base: Sequence[Report], new: Sequence[Report]) -> OperatorChange:
    b, n = _operator_runs(base, sig), _operator_runs(new, sig)
    totals = (
        _mean([r.time_ns if r else 0.0 for r in b]),
        _mean([r.time_ns if r else 0.0 for r in n]),
    )
    calls = (_mean([r.calls if r else 0 for r in b]), _mean([r.calls if r else 0 for r in n]))
    speedup = totals[0] / totals[1] if calls[0] and calls[1] and totals[1] > 0 else None
    interval = None
    if speedup is not None and len(base) > 1 and len(new) > 1:
        bt, nt = [r.time_ns if r else 0.0 for r in b], [r.time_ns if r else 0.0 for r in n]
        interval = of_runs(bt, nt, generator("operator", *map(str, sig)))
    kernels = (_kernels(b), _kernels(n))
    return OperatorChange(*sig, calls, totals, speedup, interval, kernels)


def _operator_runs(side: Sequence[Report], sig: Signature) -> list[OperatorRow | None]:
    return [next((r for r in _rows(rep) if signature(r) == sig), None) for rep in side]


def _kernels(rows: list[OperatorRow | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(k for r in rows if r for k in r.kernels))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
