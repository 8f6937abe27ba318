"""Per-dispatch counter arrays: the input of every formula over hardware counters.

The model keeps counters long (``row_id``, ``counter``, ``value``); formulas want one array
per counter, aligned on dispatches. :func:`dispatch_counters` builds that for the
dispatches of some sources, with each dispatch's kernel (``name_id``) and duration: once per
profile and sources, as one (counter x dispatch) array that every analysis shares. A
counter that some of these dispatches lack is left out entirely, so a formula that needs
it raises :class:`Missing` instead of computing over holes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import msgspec
import numpy as np
import numpy.typing as npt

from roofscope.model.access import Relation, counter_names, counter_values, query
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION
from roofscope.model.selection import dispatches

Array = npt.NDArray[np.float64]


class Missing(KeyError):
    """A counter the formula needs was not collected."""


class Counters:
    """Per-dispatch counter arrays by name; a missing name raises :class:`Missing`."""

    def __init__(self, columns: Mapping[str, Array]) -> None:
        self._columns = columns

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


Formula = Callable[[Counters], Array]


class DispatchCounters(msgspec.Struct, frozen=True):
    """Counters of some dispatches, with who each dispatch ran and for how long."""

    counters: Counters
    name_ids: npt.NDArray[np.int64]
    duration_ns: Array  # NaN where the dispatch has no timestamps

    @property
    def size(self) -> int:
        return int(self.name_ids.size)

    def by_kernel(self) -> list[tuple[int, npt.NDArray[np.bool_]]]:
        """(name_id, mask over dispatches) for each kernel."""
        # not np.unique, which loads numpy.ma (6 ms) for its NaN handling
        return [(n, self.name_ids == n) for n in sorted(set(self.name_ids.tolist()))]


def evaluate(formulas: Mapping[str, Formula], counters: Counters) -> dict[str, Array]:
    """The formulas whose counters were all collected, as per-dispatch arrays."""
    out = {}
    for name, formula in formulas.items():
        try:
            out[name] = np.asarray(formula(counters), dtype=np.float64)
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
    ).fetchnumpy()
    row_ids = np.asarray(rows["row_id"], dtype=np.int64)
    if row_ids.size == 0:
        return None
    names, table = _table(profile, mine, row_ids)
    table.flags.writeable = False
    whole = np.flatnonzero(~np.isnan(table).any(axis=1))  # counters every dispatch has
    counters = Counters({names[i]: table[i] for i in map(int, whole)})
    # NaN where untimed, from DuckDB: a NULL there would make it a masked array, whose
    # module numpy loads on first use (6 ms)
    duration = np.asarray(rows["dur"], dtype=np.float64)
    name_ids = np.asarray(rows["name_id"], dtype=np.int64)
    for array in (duration, name_ids):
        array.flags.writeable = False
    return DispatchCounters(counters, name_ids, duration)


# values fetched at once: the dispatches are taken in slices of about this many values, so
# that what DuckDB materialises and numpy holds beside the table stays small
_BATCH_VALUES = 1 << 16
_VALUES = """(SELECT counter_id, row_id, value FROM d
    WHERE value IS NOT NULL AND row_id IN (SELECT row_id FROM m))"""


def _table(
    profile: Profile, mine: Relation, row_ids: npt.NDArray[np.int64]
) -> tuple[list[str], Array]:
    """The counter names of these dispatches and their values, one row per counter and one
    column per dispatch of ``row_ids`` (sorted); NaN where a dispatch lacks the counter. The
    readers keep one value per dispatch and counter."""
    values_of = counter_values(profile)
    found = query(
        profile,
        values_of,
        f"""SELECT counter_id, counter FROM n
        WHERE counter_id IN (SELECT counter_id FROM {_VALUES}) ORDER BY counter""",
        n=counter_names(profile),
        m=mine,
    ).fetchnumpy()
    names = [str(n) for n in found["counter"]]
    ids = np.asarray(found["counter_id"], dtype=np.int64)
    index = np.zeros(int(ids.max()) + 1 if ids.size else 1, dtype=np.int64)
    index[ids] = np.arange(ids.size)  # a counter id's row in the table
    table = np.full((len(names), row_ids.size), np.nan)
    step = max(1, _BATCH_VALUES // max(len(names), 1))
    for start in range(0, row_ids.size, step):
        part = row_ids[start : start + step]
        cells = query(
            profile,
            values_of,
            f"SELECT counter_id, row_id, value FROM {_VALUES} WHERE row_id BETWEEN $1 AND $2",
            [int(part[0]), int(part[-1])],
            m=mine,
        ).fetchnumpy()
        column = start + np.searchsorted(part, np.asarray(cells["row_id"], dtype=np.int64))
        table[index[np.asarray(cells["counter_id"], dtype=np.int64)], column] = cells["value"]
    return names, table
