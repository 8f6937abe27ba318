"""Counter sums per kernel: what the roofline of the cluster summary is made of.

:func:`reduce_counters` keeps, per kernel (the normalised name) and per counter of its
dispatches (the model's long ``counters`` table), the sum of the values, the sum of the
per-dispatch rates (value / duration, over the dispatches whose duration is above 0), and the
dispatches, timed dispatches and summed durations that carry the counter; per kernel the same
counts over its dispatches with any counter (``analysis.counters.dispatch_counters`` takes
those). Both aggregations follow: the ratio of sums (sum / time) and the mean of per-dispatch
rates (sum of rates / timed dispatches). Only the counted dispatches (role DISPATCHES) are
reduced: a counter run scaled onto a trace (``analysis.work.assign``) is not.

Exactness: a counter whose values in a run are all integral (below 1e18) is summed as a
Python ``int``, so its sums add exactly in any order; one with fractional values (rocprof's
``FETCH_SIZE`` in KiB) is summed as a float, and so are the rates: those merge within float
rounding (relative error about n x 1e-16 over n partials), not bit for bit in every order.

:func:`merged` adds the sums; the measured ceilings the runs carry (rocprof-compute's
``roofline.csv``) are kept as their sorted union.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roofscope.catalogue.ceilings import Ceiling
from roofscope.model.access import counter_names, counter_values, named, query
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION, POSITIVE_DURATION
from roofscope.model.selection import dispatches

Number = int | float
INTEGRAL_BELOW = 1e18  # integral values summed as HUGEINT (exact) below this magnitude


@dataclass(frozen=True)
class CounterSum:
    """One counter over the dispatches of one kernel that carry it."""

    total: Number  # sum of values: int where every value was integral
    rate_total: float  # sum of value / duration_ns over its timed dispatches
    dispatches: int
    timed: int  # with duration > 0
    time_ns: int  # sum of the durations known

    def added(self, other: CounterSum) -> CounterSum:
        return CounterSum(
            self.total + other.total,
            self.rate_total + other.rate_total,
            self.dispatches + other.dispatches,
            self.timed + other.timed,
            self.time_ns + other.time_ns,
        )


@dataclass(frozen=True)
class KernelCounters:
    dispatches: int  # with any counter
    timed: int  # of them, with duration > 0
    time_ns: int  # their summed known durations
    counters: dict[str, CounterSum]  # by counter name, sorted

    def added(self, other: KernelCounters) -> KernelCounters:
        both = dict(self.counters)
        for name, c in other.counters.items():
            both[name] = both[name].added(c) if name in both else c
        return KernelCounters(
            self.dispatches + other.dispatches,
            self.timed + other.timed,
            self.time_ns + other.time_ns,
            dict(sorted(both.items())),
        )


@dataclass(frozen=True)
class CounterPart:
    kernels: dict[str, KernelCounters] = field(default_factory=dict)  # by kernel, sorted
    ceilings: tuple[Ceiling, ...] = ()  # measured ones the runs carry


_PER_DISPATCH = f"""SELECT kernel, count(*), count(*) FILTER ({POSITIVE_DURATION}),
    coalesce(sum({DURATION}), 0) FROM d WHERE row_id IN (SELECT row_id FROM c)
    GROUP BY kernel"""
_PER_COUNTER = f"""SELECT kernel, counter_id,
    bool_and(value = trunc(value) AND abs(value) < {INTEGRAL_BELOW}),
    sum(CASE WHEN abs(value) < {INTEGRAL_BELOW} THEN value::HUGEINT END), fsum(value),
    coalesce(fsum(value / {DURATION}) FILTER ({POSITIVE_DURATION}), 0),
    count(*), count(*) FILTER ({POSITIVE_DURATION}), coalesce(sum({DURATION}), 0)
    FROM d JOIN c USING (row_id) WHERE value IS NOT NULL GROUP BY kernel, counter_id"""


def reduce_counters(profile: Profile) -> CounterPart:
    """The counter sums of the profile's counted dispatches, per kernel (group-bys)."""
    rel = named(profile, dispatches(profile))
    values = counter_values(profile)
    names = dict(query(profile, counter_names(profile), "SELECT * FROM d").fetchall())
    sums: dict[str, dict[str, CounterSum]] = {}
    for kernel, counter_id, integral, exact, inexact, rates, n, timed, time_ns in query(
        profile, rel, _PER_COUNTER, c=values
    ).fetchall():
        total: Number = int(exact) if integral else float(inexact)
        found = CounterSum(total, float(rates), int(n), int(timed), int(time_ns))
        sums.setdefault(str(kernel), {})[str(names[counter_id])] = found
    kernels = {
        str(k): KernelCounters(int(n), int(t), int(ns), dict(sorted(sums.get(str(k), {}).items())))
        for k, n, t, ns in query(profile, rel, _PER_DISPATCH, c=values).fetchall()
    }
    return CounterPart(dict(sorted(kernels.items())), _ceilings(profile.ceilings))


def merged(a: CounterPart, b: CounterPart) -> CounterPart:
    """``a`` and ``b`` as one: sums added per kernel and counter."""
    kernels = dict(a.kernels)
    for name, k in b.kernels.items():
        kernels[name] = kernels[name].added(k) if name in kernels else k
    return CounterPart(dict(sorted(kernels.items())), _ceilings([*a.ceilings, *b.ceilings]))


def _ceilings(found: list[Ceiling] | tuple[Ceiling, ...]) -> tuple[Ceiling, ...]:
    """Each ceiling once, in an order that does not depend on the merge's (the highest value
    first among those of one name: ``catalogue.ceilings.resolve`` keeps the first)."""
    return tuple(sorted(set(found), key=lambda c: (c.name, -c.value, c.source, c.scope)))


def complete(part: CounterPart) -> set[str]:
    """The counters every dispatch with counters carries, in every kernel: the columns
    ``dispatch_counters`` keeps (a counter some dispatch lacks is left out entirely)."""
    kernels = list(part.kernels.values())
    names = {n for k in kernels for n in k.counters}
    return {
        n
        for n in names
        if all(n in k.counters and k.counters[n].dispatches == k.dispatches for k in kernels)
    }
