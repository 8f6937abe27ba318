"""Per-dispatch counter arrays: the input of every formula over hardware counters.

The model keeps counters long (``row_id``, ``counter``, ``value``); formulas want one array
per counter, aligned on dispatches. :func:`dispatch_counters` builds that for the
dispatches of some sources, with each dispatch's kernel (``name_id``) and duration: once per
profile and sources, as one plain-Python column per counter that every analysis shares
(:mod:`roofscope.analysis.metrics.column`: a profile with counters has few dispatches, and
numpy's import cost more than its formulas). A
counter that some of these dispatches lack is left out entirely, so a formula that needs
it raises :class:`Missing` instead of computing over holes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import msgspec

from roofscope.analysis.metrics.column import Column, Mask, full
from roofscope.model.access import Relation, counter_names, counter_values, query
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION
from roofscope.model.selection import dispatches

Array = Column


class Missing(KeyError):
    """A counter the formula needs was not collected."""


class Counters:
    """Per-dispatch counter arrays by name; a missing name raises :class:`Missing`."""

    def __init__(self, columns: Mapping[str, Array], size: int | None = None) -> None:
        self._columns = columns
        first = next(iter(columns.values()), None)
        self.size = size if size is not None or first is None else first.size

    def __getitem__(self, name: str) -> Array:
        column = self._lookup(name)
        if column is None:
            raise Missing(name)
        return column

    def __contains__(self, name: str) -> bool:
        return self._lookup(name) is not None

    def get(self, name: str, default: Array) -> Array:
        found = self._lookup(name)
        return default if found is None else found

    def _lookup(self, name: str) -> Array | None:
        """``X_sum`` (rocprof v1 and rocprof-compute: the sum over instances) is what
        rocprofv3's counter_collection.csv reports as ``X`` once its instances are summed."""
        found = self._columns.get(name)
        if found is None and name.endswith("_sum"):
            found = self._columns.get(name.removesuffix("_sum"))
        return found

    def names(self) -> list[str]:
        return sorted(self._columns)

    def column(self, value: Array | float) -> Array:
        """``value`` as a column of these dispatches: a number (a formula of no counter)
        repeated."""
        if isinstance(value, Column):
            return value
        return full(value, self.size or 0)


Formula = Callable[[Counters], Array | float]


class DispatchCounters(msgspec.Struct, frozen=True):
    """Counters of some dispatches, with who each dispatch ran and for how long."""

    counters: Counters
    name_ids: list[int]
    duration_ns: Array  # NaN where the dispatch has no timestamps

    @property
    def size(self) -> int:
        return len(self.name_ids)

    def by_kernel(self) -> list[tuple[int, Mask]]:
        """(name_id, mask over dispatches) for each kernel."""
        return [(n, Mask([i == n for i in self.name_ids])) for n in sorted(set(self.name_ids))]


def evaluate(formulas: Mapping[str, Formula], counters: Counters) -> dict[str, Array]:
    """The formulas whose counters were all collected, as per-dispatch arrays."""
    out = {}
    for name, formula in formulas.items():
        try:
            out[name] = counters.column(formula(counters))
        except Missing:
            continue
    return out


def dispatch_counters(profile: Profile, sources: Sequence[int]) -> DispatchCounters | None:
    """The counters of these sources' dispatches; None when they have none. Built once per
    profile and sources, and shared: the roofline's work, the metrics and the occupancy all
    read the same arrays, which are read-only."""
    if not sources:
        return None
    key = ("dispatch_counters", tuple(sources))
    return profile.derived(key, lambda: _dispatch_counters(profile, sources))


def _dispatch_counters(profile: Profile, sources: Sequence[int]) -> DispatchCounters | None:
    mine = dispatches(profile, sources=sources)
    rows = query(
        profile,
        mine,
        f"""SELECT row_id, name_id, coalesce({DURATION}::DOUBLE, 'NaN') AS dur
        FROM d WHERE row_id IN (SELECT row_id FROM c) ORDER BY row_id""",
        c=counter_values(profile),
    ).fetchall()
    if not rows:
        return None
    columns = {name: Column(tuple(values)) for name, values in _whole(profile, mine, len(rows))}
    # NaN where untimed, from DuckDB
    duration = Column(tuple(float(r[2]) for r in rows))
    return DispatchCounters(Counters(columns), [int(r[1]) for r in rows], duration)


def _whole(profile: Profile, mine: Relation, size: int) -> list[tuple[str, list[float]]]:
    """Each counter that all ``size`` dispatches of ``mine`` have, with its values in the
    dispatches' order: one list per counter, built by DuckDB. The readers keep one value per
    dispatch and counter, so a counter some dispatch lacks (or holds NULL or NaN) has fewer."""
    return query(
        profile,
        counter_values(profile),
        """SELECT n.counter, list(v.value::DOUBLE ORDER BY v.row_id)
        FROM d AS v JOIN n USING (counter_id)
        WHERE NOT isnan(v.value) AND v.row_id IN (SELECT row_id FROM m)
        GROUP BY n.counter HAVING count(*) = $1""",
        [size],
        n=counter_names(profile),
        m=mine,
    ).fetchall()
