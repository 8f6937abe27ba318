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

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

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
        if size is None:  # the size of a column (a table of none has none)
            size = next((c.size for c in columns.values()), 0)
        self.size = size

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

    def read_ahead(self, run: Callable[[Counters], object]) -> None:
        """Fetch in one statement every column that ``run`` reads: it is run first over
        stand-ins of one value, which note each name it asks. Which counters a formula reads
        depends on which were collected, never on their values."""
        if not isinstance(self._columns, _Columns):
            return
        probe = Reads(Counters(dict.fromkeys(self._columns, _ONE), 1))
        with contextlib.suppress(Missing):
            run(probe)
        self._columns.fetch(probe.read)

    def column(self, value: Array | float) -> Array:
        """``value`` as a column of these dispatches: a number (a formula of no counter)
        repeated."""
        if isinstance(value, Column):
            return value
        return full(value, self.size)


_ONE = Column((1.0,))


class Reads(Counters):
    """The counters, noting the name of each one a formula reads."""

    def __init__(self, inner: Counters) -> None:
        super().__init__(inner._columns, inner.size)
        self.read: set[str] = set()

    def _lookup(self, name: str) -> Array | None:
        found = super()._lookup(name)
        if found is not None:  # X_sum may be read as X (Counters._lookup)
            self.read.add(name if name in self._columns else name.removesuffix("_sum"))
        return found


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
    ((name_ids, durations),) = query(
        profile,
        mine,
        f"""SELECT list(name_id ORDER BY row_id), list(dur ORDER BY row_id) FROM
        (SELECT row_id, name_id, coalesce({DURATION}::DOUBLE, 'NaN') AS dur
         FROM d WHERE row_id IN (SELECT row_id FROM c))""",
        c=counter_values(profile),
    ).fetchall()
    if not name_ids:
        return None
    columns = _Columns(profile, mine, len(name_ids))
    # NaN where untimed, from DuckDB; lists, which DuckDB hands over faster than rows
    return DispatchCounters(Counters(columns, len(name_ids)), name_ids, Column(tuple(durations)))


# the values of the counters every dispatch of ``m`` has (no NULL, no NaN: the readers keep
# one value per dispatch and counter, so a counter some dispatch lacks has fewer)
_WHOLE = """FROM d AS v JOIN n USING (counter_id)
    WHERE NOT isnan(v.value) AND v.row_id IN (SELECT row_id FROM m) {}
    GROUP BY n.counter HAVING count(*) = $1"""


class _Columns(Mapping[str, Column]):
    """The counters every dispatch has; each one's values fetched from DuckDB when first
    read, or several in one statement (:meth:`fetch`). A wide workload counts 2,000
    counters, of which its formulas read a tenth: 600,000 values made Python floats for
    nothing cost the 301-dispatch GEMM workload 0.1 s."""

    def __init__(self, profile: Profile, mine: Relation, size: int) -> None:
        self._profile, self._mine, self._size = profile, mine, size
        found = self._query("SELECT n.counter " + _WHOLE.format(""), [size])
        self._names = sorted(str(r[0]) for r in found)
        self._known = frozenset(self._names)
        self._loaded: dict[str, Column] = {}

    def fetch(self, names: Iterable[str]) -> None:
        wanted = sorted({n for n in names if n in self._known and n not in self._loaded})
        if not wanted:
            return
        sql = "SELECT n.counter, list(v.value ORDER BY v.row_id) " + _WHOLE.format(
            "AND list_contains($2, n.counter)"
        )
        for name, values in self._query(sql, [self._size, wanted]):
            self._loaded[str(name)] = Column(tuple(values))

    def _query(self, sql: str, params: list[object]) -> list[tuple[Any, ...]]:
        return query(
            self._profile, counter_values(self._profile), sql, params,
            n=counter_names(self._profile), m=self._mine,
        ).fetchall()  # fmt: skip

    def __getitem__(self, name: str) -> Column:
        if name not in self._loaded:
            if name not in self._known:
                raise KeyError(name)
            self.fetch([name])
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)
