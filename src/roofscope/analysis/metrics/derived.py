"""Derived counter metrics per architecture, and their two aggregations.

The metrics themselves live in :mod:`roofscope.analysis.metrics.sol` (speed of light) and
:mod:`roofscope.analysis.metrics.rocprof_v1`, built with :mod:`roofscope.analysis.metrics.formula`.

Kinds, and how :func:`metrics` aggregates them over a set of dispatches:

``rate``   (bytes, FLOPs, ... per second; the denominator is the duration in ns)
    ``value_dispatch_mean`` is the mean of the per-dispatch rates (rocprof-compute's ``AVG``:
    1.x-2.x, and the ``Avg`` of 3.3.0's System Speed-of-Light table, checked in
    tests/test_rocprof_compute_agreement.py); ``value_time_weighted`` is the total amount over
    the total time (rocprof-compute 3.x ``SUM/SUM``). Dispatches of zero or unknown duration
    are left out and counted.
``ratio``  (hit rates, utilisations, latencies, per-wave counts)
    mean of the per-dispatch ratios, and the ratio of sums (``sum(hits)/sum(accesses)``:
    weighted by the denominator). Dispatches whose denominator is 0 are left out, as the
    tools' ``if den != 0 else None`` does.
``amount`` (KiB, waves: a quantity per dispatch)
    mean per dispatch and ``total``; there is no ratio of sums.
``level``  (a ratio the profiler wrote as a column, e.g. rocprof v1 ``VALUBusy``)
    mean per dispatch, and the mean weighted by duration where durations are known.

``pct_of_peak`` is of the dispatch mean, as the speed-of-light panels print it. Formulas are
those of docs/formats/amd-counters.md, "Speed of light" and "Derived metrics", checked against
Omniperf 1.0.3's own analysis of the same counters (tests/test_metrics.py).
"""

from __future__ import annotations

from collections.abc import Container, Sequence

from msgspec.structs import replace

from roofscope.analysis.counters import Array, Counters, Missing, dispatch_counters
from roofscope.analysis.metrics.column import Column, Mask, everything, full
from roofscope.analysis.metrics.formula import Kind, Metric, Parts, valid_mask
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.metrics.nvidia import NCU
from roofscope.analysis.metrics.passes import cross_passes
from roofscope.analysis.metrics.rocprof_v1 import ROCPROF_V1
from roofscope.analysis.metrics.sol import COMPUTE, MEMORY
from roofscope.analysis.metrics.value import ALL, MetricValue
from roofscope.model.profile import Profile

CATALOGUE: tuple[Metric, ...] = (*COMPUTE, *MEMORY, *ROCPROF_V1, *NCU)


# --- evaluation and aggregation -------------------------------------------------------------


def evaluate(c: Counters, m: Machine, duration_ns: Array) -> dict[str, tuple[Metric, Parts]]:
    """Each metric name whose variant for ``m.arch`` has all its counters and constants."""
    out: dict[str, tuple[Metric, Parts]] = {}
    for metric in CATALOGUE:
        if metric.name in out or not metric.applies(m.arch):
            continue
        try:
            num, den = metric.parts(c, m, duration_ns)
        except Missing:
            continue
        out[metric.name] = (metric, Parts(_float(num, duration_ns), _float(den, duration_ns)))
    return out


def peak(name: str, m: Machine) -> float | None:
    """The peak of metric ``name`` on ``m`` (whether or not its counters were collected)."""
    found = (x for x in CATALOGUE if x.name == name and x.applies(m.arch) and x.peak)
    metric = next(found, None)
    return None if metric is None else _peak(metric, m)


def metrics(
    profile: Profile, sources: Sequence[int], machine: Machine
) -> dict[int, dict[str, MetricValue]]:
    """Every metric that applies, per ``name_id`` and for all dispatches under :data:`ALL`;
    empty when these sources have no counters."""
    table = dispatch_counters(profile, sources)
    if table is None:
        return {}
    table.counters.read_ahead(lambda c: evaluate(c, machine, c.column(1.0)))
    found = evaluate(table.counters, machine, table.duration_ns)
    passes = {k: v for s in sources for k, v in profile.counter_passes.get(s, {}).items()}
    mixed = cross_passes(found, table.counters, machine, table.duration_ns, passes)
    groups = [*table.by_kernel(), (ALL, everything(table.size))]
    return {
        name_id: {
            name: replace(
                aggregate(metric, Parts(p.num[mask], p.den[mask]), machine, peers=found),
                cross_pass=mixed.get(name),
            )
            for name, (metric, p) in found.items()
        }
        for name_id, mask in groups
    }


def aggregate(
    metric: Metric, parts: Parts, m: Machine, *, peers: Container[str] = ()
) -> MetricValue:
    """The two aggregations of ``metric`` over the dispatches of ``parts``; its note where
    its peer (another tool's way of computing it) is among ``peers``."""
    peer = metric.peer if metric.peer in peers else None
    ok, mean, weighted, whole = _aggregates(metric.kind, *parts)
    if metric.finish is not None:
        mean = None if mean is None else metric.finish(mean, m)
        weighted = None if weighted is None else metric.finish(weighted, m)
    top = _peak(metric, m)
    return MetricValue(
        unit=metric.unit,
        kind=metric.kind,
        value_dispatch_mean=mean,
        value_time_weighted=weighted,
        total=whole,
        peak=top,
        pct_of_peak=100 * mean / top if mean is not None and top else None,
        dispatches=ok.count(),
        left_out=ok.size - ok.count(),
        aggregation_differs=_differ(mean, weighted),
        source=metric.source,
        note=metric.note if peer else None,
        peer=peer,
    )


Maybe = float | None


def _aggregates(kind: Kind, num: Array, den: Array) -> tuple[Mask, Maybe, Maybe, Maybe]:
    """Dispatches used, dispatch mean, ratio of sums (or duration-weighted mean), total."""
    if kind in ("rate", "ratio"):
        ok = valid_mask(kind, num, den)
        pooled = _quotient(num[ok].sum(), den[ok].sum()) if ok.any() else None
        return ok, _mean(num[ok] / den[ok]), pooled, None
    ok = num.finite()
    if kind == "amount":
        return ok, _mean(num[ok]), None, num[ok].sum() if ok.any() else None
    timed = ok & den.finite() & (den > 0)
    weighted = _quotient((num * den)[timed].sum(), den[timed].sum()) if timed.any() else None
    return ok, _mean(num[ok]), weighted, None


def _float(values: Array | float, like: Array) -> Array:
    """``values`` as a column the size of ``like``: a number, or one value, repeated."""
    if isinstance(values, Column) and values.size == like.size:
        return values
    one = values.values[0] if isinstance(values, Column) else values
    return full(float(one), like.size)


def _mean(values: Array) -> float | None:
    return values.mean() if values.size else None


def _quotient(num: float, den: float) -> float | None:
    return num / den if den != 0 else None


def _peak(metric: Metric, m: Machine) -> float | None:
    if metric.peak is None:
        return None
    try:
        return float(metric.peak(m))
    except Missing:
        return None


def _differ(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) > 0.01 * max(abs(a), abs(b))
