"""Busy and idle time of each device: the union of its kernel intervals within its span.

Per device, the span runs from its first kernel's Begin to its last kernel's End; busy is
the length of the union of [Begin, End) over its dispatches (overlapping kernels on several
queues count once); idle = span - busy. Gaps are the stretches of idle between kernels;
those at least ``gap_threshold_ns`` long are counted. Over all devices, wall is the span of
the whole profile and busy, idle and gaps are summed per device; the idle share is idle
over the summed device spans.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import duckdb
from duckdb import ColumnExpression

from roofscope.model.access import count, query
from roofscope.model.profile import Profile
from roofscope.model.schema import VALID_DURATION, Role
from roofscope.model.selection import EVERYTHING, Selection, among, dispatches

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]

DEFAULT_GAP_NS = 10_000


@dataclass(frozen=True)
class DeviceTime:
    device: int | None
    source: int | None  # the process's input, when the profile merges several processes
    span_ns: int
    busy_ns: int
    idle_ns: int
    gaps: int
    gap_ns: int


@dataclass(frozen=True)
class Timeline:
    wall_ns: int  # the whole profile's span: first kernel start to last kernel end
    span_ns: int  # the devices' spans summed (= wall on one device): busy + idle
    busy_ns: int
    idle_ns: int
    idle_share: float
    gaps: int
    gap_ns: int
    gap_threshold_ns: int
    devices: tuple[DeviceTime, ...]


CHUNK_ROWS = 1 << 20  # rows fetched at a time: memory stays bounded at any trace size
# up to this many rows one fetch sorted by start costs less than a fetch in row order that may
# find them out of order (and sort them in a table of their own, five statements in all)
SORTED_ROWS = 1 << 16


def timeline(
    profile: Profile, *, selection: Selection = EVERYTHING, gap_threshold_ns: int = DEFAULT_GAP_NS
) -> Timeline | None:
    """None when the input has no dispatch timestamps."""
    valid, process = timed_dispatches(profile, selection)
    devices = _devices(profile, valid, process)
    if not devices:
        return None
    rows = sum(int(hi) - int(lo) + 1 for _, _, lo, hi, _, _ in devices)
    if rows <= SORTED_ROWS or (len(devices) > 1 and rows <= CHUNK_ROWS):
        per_device = _sweep_together(profile, valid, process, gap_threshold_ns)
    else:
        per_device = [
            _sweep_one(profile, valid, process, group, gap_threshold_ns, len(devices) > 1)
            for group in devices
        ]
    wall = int(max(d[5] for d in devices) - min(d[4] for d in devices))
    span = sum(d.span_ns for d in per_device)
    busy = sum(d.busy_ns for d in per_device)
    idle = sum(d.idle_ns for d in per_device)
    return Timeline(
        wall_ns=wall,
        span_ns=span,
        busy_ns=busy,
        idle_ns=idle,
        idle_share=idle / span if span else 0.0,
        gaps=sum(d.gaps for d in per_device),
        gap_ns=sum(d.gap_ns for d in per_device),
        gap_threshold_ns=gap_threshold_ns,
        devices=tuple(per_device),
    )


Bounds = tuple[int, int, int, int, int, int]  # process, device, first and last row, start, end


def _devices(profile: Profile, valid: duckdb.DuckDBPyRelation, process: str) -> list[Bounds]:
    """Per (process, device) of the timed dispatches: first and last row_id, first start
    and last end. Asked first over all of them, without grouping, with whether they are one
    device (0.012 against 0.027 s of CPU at 4 M dispatches); grouped only otherwise."""
    bounds = "min(row_id), max(row_id), min(start_ns), max(end_ns)"
    if process == "-1":  # one process
        device = "coalesce(device, -1)"
        ((proc, device_id, lo, hi, start, end, one),) = query(
            profile,
            valid,
            f"SELECT -1, min({device}), {bounds}, max({device}) = min({device}) FROM d",
        ).fetchall()
        if lo is None:
            return []
        if one:
            return [(proc, device_id, lo, hi, start, end)]
    return query(
        profile,
        valid,
        f"SELECT {process}, coalesce(device, -1), {bounds} FROM d GROUP BY 1, 2 ORDER BY 1, 2",
    ).fetchall()


def timed_dispatches(profile: Profile, selection: Selection) -> tuple[duckdb.DuckDBPyRelation, str]:
    """The dispatches on a real timeline (timed, selected) and the SQL expression of their
    process: the source when the profile merges several, else -1."""
    valid = dispatches(profile, selection).filter(VALID_DURATION)
    untimed = [i for i, f in enumerate(profile.inputs) if not f.on_timeline]
    if untimed:  # durations laid end to end by the reader: no real timeline
        valid = valid.filter(~among("source", untimed))
    # devices of different processes are different GPUs (one per rank), or shared ones that
    # the inputs cannot tell apart: each process's devices are kept apart
    process = "source" if len(profile.sources(Role.DISPATCHES)) > 1 else "-1"
    return valid, process


def _sweep_one(
    profile: Profile,
    valid: duckdb.DuckDBPyRelation,
    process: str,
    group: tuple[int, int, int, int, int, int],
    threshold: int,
    several: bool,
) -> DeviceTime:
    source, device, lo, hi, _, _ = group
    rows = valid.project(f"row_id, start_ns, end_ns, coalesce(device, -1) AS d, {process} AS p")
    if several:
        rows = rows.filter((ColumnExpression("d") == device) & (ColumnExpression("p") == source))
    sweep = _sweep(rows, int(lo), int(hi), threshold)
    if sweep is None:  # not in start order: let DuckDB sort it (out of core if need be)
        sorted_rows = f"timeline_{abs(hash((source, device, lo, hi)))}"
        rows.order("start_ns").project("start_ns, end_ns").to_table(sorted_rows)
        try:
            ordered = profile.con.table(sorted_rows).project("rowid AS row_id, start_ns, end_ns")
            sweep = _sweep(ordered, 0, count(profile, ordered) - 1, threshold)
        finally:
            profile.con.execute(f"DROP TABLE {sorted_rows}")
    assert sweep is not None, "rows sorted by start_ns sweep in order"
    return _result(sweep, source, device)


def _sweep_together(
    profile: Profile, valid: duckdb.DuckDBPyRelation, process: str, threshold: int
) -> list[DeviceTime]:
    """Every (process, device) group in one query, the sweep of :class:`_Sweep` in SQL: the
    idle before a dispatch is its start less the furthest End of those that start before it,
    where positive (dispatches that start together leave none between them, whatever their
    order). Nothing here needs numpy, which a small trace's check-up then never loads."""
    groups = query(
        profile,
        valid,
        f"""SELECT p, d, min(start_ns), max(end_ns), coalesce(sum(gap) FILTER (gap > 0), 0),
            count(*) FILTER (gap >= $1), coalesce(sum(gap) FILTER (gap >= $1), 0)
        FROM (SELECT p, d, start_ns, end_ns, start_ns - max(end_ns) OVER (
                PARTITION BY p, d ORDER BY start_ns
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gap
            FROM (SELECT {process} AS p, coalesce(device, -1) AS d, start_ns, end_ns FROM d))
        GROUP BY p, d ORDER BY p, d""",
        [max(1, threshold)],
    ).fetchall()
    out = []
    for source, device, first, last, idle, gaps, gap_ns in groups:
        span = int(last) - int(first)
        found = DeviceTime(None, None, span, span - int(idle), int(idle), gaps, int(gap_ns))
        out.append(_placed(found, int(source), int(device)))
    return out


def _result(sweep: _Sweep, source: int, device: int) -> DeviceTime:
    return _placed(sweep.result(None), int(source), int(device))


def _placed(found: DeviceTime, source: int, device: int) -> DeviceTime:
    """``found`` on its device and process, -1 standing for unknown."""
    return replace(
        found,
        device=None if device == -1 else device,
        source=None if source == -1 else source,
    )


@dataclass
class _Sweep:
    """The union of [start, end) intervals fed in start order, a chunk at a time."""

    threshold: int
    first: int | None = None
    last_start: int = 0
    reach: int = 0  # the furthest End seen so far
    idle: int = 0  # the span not covered by any interval: busy = span - idle
    gaps: int = 0
    gap_ns: int = 0

    def feed(self, start: Ints, end: Ints) -> bool:
        """Add one chunk; False (and nothing added) when it is not in start order."""
        import numpy as np  # a long trace's sweep only (_sweep_together needs none)

        if start.size == 0:
            return True
        if (self.first is not None and int(start[0]) < self.last_start) or bool(
            np.any(start[1:] < start[:-1])
        ):
            return False
        if self.first is None:
            self.first = self.reach = int(start[0])
        # reach[i]: the furthest End before dispatch i (reach[-1]: after the chunk); in
        # place, a third fewer passes over the chunk than building it from the Ends
        reach = np.empty(end.size + 1, dtype=np.int64)
        reach[0], reach[1:] = self.reach, end
        np.maximum.accumulate(reach, out=reach)
        gap = np.subtract(start, reach[:-1])  # idle before each start, where positive
        np.maximum(gap, 0, out=gap)
        big = gap >= max(1, self.threshold)
        self.idle += int(gap.sum())
        self.gaps += int(np.count_nonzero(big))
        self.gap_ns += int(gap.sum(where=big))
        self.reach, self.last_start = int(reach[-1]), int(start[-1])
        return True

    def result(self, device: int | None) -> DeviceTime:
        span = self.reach - (self.first or 0)
        return DeviceTime(device, None, span, span - self.idle, self.idle, self.gaps, self.gap_ns)


def _sweep(rows: duckdb.DuckDBPyRelation, lo: int, hi: int, threshold: int) -> _Sweep | None:
    """Sweep ``rows`` in row_id order; None when they are not in start order.

    A scan returns rows in rowid order without an ORDER BY (which would cost a sort per
    chunk) because the profile's connection sets ``preserve_insertion_order``.
    """
    import numpy as np

    sweep = _Sweep(threshold)
    for first in range(lo, hi + 1, CHUNK_ROWS):
        row_id = ColumnExpression("row_id")
        chunk = rows.filter((row_id >= first) & (row_id < first + CHUNK_ROWS))
        cols = chunk.project("start_ns, end_ns").fetchnumpy()
        start = np.asarray(cols["start_ns"], dtype=np.int64)
        end = np.asarray(cols["end_ns"], dtype=np.int64)
        if not sweep.feed(start, end):
            return None
    return sweep
