"""Per-dispatch counter arrays: the input of every formula over hardware counters.

The model keeps counters long (``row_id``, ``counter``, ``value``); formulas want one array
per counter, aligned on dispatches. :func:`dispatch_counters` builds that for the
dispatches of some sources, with each dispatch's kernel (``name_id``) and duration. A
counter that some of these dispatches lack is left out entirely, so a formula that needs
it raises :class:`Missing` instead of computing over holes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from roofscope.model.access import counters as counter_values
from roofscope.model.access import query
from roofscope.model.profile import Profile
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


@dataclass(frozen=True)
class DispatchCounters:
    """Counters of some dispatches, with who each dispatch ran and for how long."""

    counters: Counters
    name_ids: npt.NDArray[np.int64]
    duration_ns: Array  # NaN where the dispatch has no timestamps

    @property
    def size(self) -> int:
        return int(self.name_ids.size)

    def by_kernel(self) -> list[tuple[int, npt.NDArray[np.bool_]]]:
        """(name_id, mask over dispatches) for each kernel."""
        return [(int(n), self.name_ids == n) for n in np.unique(self.name_ids)]


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
    """The counters of these sources' dispatches; None when they have none."""
    if not sources:
        return None
    mine = dispatches(profile, sources=sources)
    values_of = counter_values(profile)
    rows = query(
        profile,
        mine,
        """SELECT row_id, name_id, end_ns - start_ns AS dur FROM d
        WHERE row_id IN (SELECT row_id FROM c) ORDER BY row_id""",
        c=values_of,
    ).fetchnumpy()
    row_ids = np.asarray(rows["row_id"], dtype=np.int64)
    if row_ids.size == 0:
        return None
    index = {int(r): i for i, r in enumerate(row_ids)}
    columns: dict[str, Array] = {}
    values = query(
        profile,
        values_of,
        """SELECT counter, row_id, value FROM d
        WHERE value IS NOT NULL AND row_id IN (SELECT row_id FROM m)""",
        m=mine,
    ).fetchall()
    for counter, row_id, value in values:
        column = columns.setdefault(str(counter), np.full(row_ids.size, np.nan))
        column[index[int(row_id)]] = float(value)
    counters = Counters({k: v for k, v in columns.items() if not np.isnan(v).any()})
    duration = np.ma.filled(np.ma.asarray(rows["dur"]).astype(np.float64), np.nan)
    return DispatchCounters(counters, np.asarray(rows["name_id"], dtype=np.int64), duration)
