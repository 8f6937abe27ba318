"""Busy and idle time of each device: the union of its kernel intervals within its span.

Per device, the span runs from its first kernel's Begin to its last kernel's End; busy is
the length of the union of [Begin, End) over its dispatches (overlapping kernels on several
queues count once); idle = span - busy. Gaps are the stretches of idle between kernels;
those at least ``gap_threshold_ns`` long are counted. Over all devices, wall is the span of
the whole profile and busy, idle and gaps are summed per device; the idle share is idle
over the summed device spans.
"""

from __future__ import annotations

import msgspec
import msgspec.structs

from roofscope.model.access import query
from roofscope.model.profile import Profile
from roofscope.model.relation import Relation, among
from roofscope.model.schema import VALID_DURATION, Role
from roofscope.model.selection import EVERYTHING, Selection, dispatches

DEFAULT_GAP_NS = 10_000


class DeviceTime(msgspec.Struct, frozen=True):
    device: int | None
    source: int | None  # the process's input, when the profile merges several processes
    span_ns: int
    busy_ns: int
    idle_ns: int
    gaps: int
    gap_ns: int


class Timeline(msgspec.Struct, frozen=True):
    wall_ns: int  # the whole profile's span: first kernel start to last kernel end
    span_ns: int  # the devices' spans summed (= wall on one device): busy + idle
    busy_ns: int
    idle_ns: int
    idle_share: float
    gaps: int
    gap_ns: int
    gap_threshold_ns: int
    devices: tuple[DeviceTime, ...]


# up to this many rows one query sorted by start costs less than a sweep in row order that may
# find them out of order (and sort them in a table of their own, five statements in all)
SORTED_ROWS = 1 << 16
# several devices up to this many rows in all: one sorted query for all of them rather than a
# sweep of every row per device
TOGETHER_ROWS = 1 << 20


def timeline(
    profile: Profile, *, selection: Selection = EVERYTHING, gap_threshold_ns: int = DEFAULT_GAP_NS
) -> Timeline | None:
    """None when the input has no dispatch timestamps."""
    valid, process = timed_dispatches(profile, selection)
    devices = _devices(profile, valid, process)
    if not devices:
        return None
    rows = sum(int(hi) - int(lo) + 1 for _, _, lo, hi, _, _ in devices)
    if rows <= SORTED_ROWS or (len(devices) > 1 and rows <= TOGETHER_ROWS):
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


def _devices(profile: Profile, valid: Relation, process: str) -> list[Bounds]:
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


def timed_dispatches(profile: Profile, selection: Selection) -> tuple[Relation, str]:
    """The dispatches on a real timeline (timed, selected) and the SQL expression of their
    process: the source when the profile merges several, else -1."""
    valid = dispatches(profile, selection).filter(VALID_DURATION)
    untimed = [i for i, f in enumerate(profile.inputs) if not f.on_timeline]
    if untimed:  # durations laid end to end by the reader: no real timeline
        valid = valid.filter(f"NOT {among('source', untimed)}")
    # devices of different processes are different GPUs (one per rank), or shared ones that
    # the inputs cannot tell apart: each process's devices are kept apart
    process = "source" if len(profile.sources(Role.DISPATCHES)) > 1 else "-1"
    return valid, process


def _sweep_one(
    profile: Profile,
    valid: Relation,
    process: str,
    group: tuple[int, int, int, int, int, int],
    threshold: int,
    several: bool,
) -> DeviceTime:
    source, device, lo, hi, _, _ = group
    rows = valid.project(f"row_id, start_ns, end_ns, coalesce(device, -1) AS d, {process} AS p")
    if several:  # within the group's rows: a merged profile's processes follow each other
        rows = rows.filter(
            f"row_id BETWEEN {int(lo)} AND {int(hi)} AND d = {int(device)} AND p = {int(source)}"
        )
    found = _sweep(profile, rows, threshold)
    if found is None:  # not in start order: let DuckDB sort it (out of core if need be)
        sorted_rows = f"timeline_{abs(hash((source, device, lo, hi)))}"
        rows.order("start_ns").project("start_ns, end_ns").to_table(sorted_rows)
        try:
            found = _sweep(
                profile, Relation(profile.con, f"SELECT * FROM {sorted_rows}"), threshold
            )
        finally:
            profile.con.execute(f"DROP TABLE {sorted_rows}")
    assert found is not None, "rows sorted by start_ns sweep in order"
    return _placed(found, int(source), int(device))


def _sweep_together(
    profile: Profile, valid: Relation, process: str, threshold: int
) -> list[DeviceTime]:
    """Every (process, device) group in one query, the sweep of :func:`_sweep` sorted: the
    idle before a dispatch is its start less the furthest End of those that start before it,
    where positive (dispatches that start together leave none between them, whatever their
    order)."""
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


def _placed(found: DeviceTime, source: int, device: int) -> DeviceTime:
    """``found`` on its device and process, -1 standing for unknown."""
    return msgspec.structs.replace(
        found,
        device=None if device == -1 else device,
        source=None if source == -1 else source,
    )


def _sweep(profile: Profile, rows: Relation, threshold: int) -> DeviceTime | None:
    """The union of the [start, end) intervals of ``rows`` swept in their scan order (rowid
    order: the profile's connection sets ``preserve_insertion_order``) without a sort: the
    idle before a dispatch is its start less the furthest End of the rows before it, where
    positive. None when the rows are not in start order.

    Windows with an empty ``OVER`` run as DuckDB's streaming window, in the scan's order on
    one thread, with no sort (0.07 s of CPU at 2 M dispatches, where the numpy sweep took
    0.10 s and numpy's import 0.08 s more, and a window ordered by start 0.33 s). Rows whose
    ends come in order too (kernels one after another) are swept first with ``lag`` alone:
    the furthest End before a row is then the End of the row before it (0.028 s of CPU
    against 0.074 s; where they do not, that statement is 0.028 s spent for nothing)."""
    found = _sweep_rows(profile, rows, threshold, SERIAL_SWEEP)
    if found is None:
        found = _sweep_rows(profile, rows, threshold, REACH_SWEEP)
    return found


# the sweep's aggregates over ``gap`` (the idle before each row) and ``ordered``
SWEEP = """SELECT min(start_ns), max(end_ns), coalesce(sum(gap) FILTER (gap > 0), 0),
    count(*) FILTER (gap >= $1), coalesce(sum(gap) FILTER (gap >= $1), 0),
    coalesce(bool_and(ordered), true)
FROM (SELECT start_ns, end_ns, {gap} AS gap, {ordered} AS ordered FROM {rows})"""
# the rows' starts and ends both in order: the furthest End before a row is the row before's
SERIAL_SWEEP = SWEEP.format(
    gap="start_ns - lag(end_ns) OVER ()",
    ordered="start_ns >= lag(start_ns) OVER () AND end_ns >= lag(end_ns) OVER ()",
    rows="d",
)
# the starts in order: the furthest End before a row is the running max of End
REACH_SWEEP = SWEEP.format(
    gap="start_ns - lag(reach) OVER ()",
    ordered="start_ns >= lag(start_ns) OVER ()",
    rows="(SELECT start_ns, end_ns, max(end_ns) OVER (ROWS UNBOUNDED PRECEDING) AS reach FROM d)",
)


def _sweep_rows(profile: Profile, rows: Relation, threshold: int, sql: str) -> DeviceTime | None:
    """``rows`` swept by ``sql`` (:data:`SERIAL_SWEEP`, :data:`REACH_SWEEP`); None when the
    rows are not in the order it needs."""
    ((first, last, idle, gaps, gap_ns, ordered),) = query(
        profile, rows, sql, [max(1, threshold)]
    ).fetchall()
    if not ordered:
        return None
    span = int(last) - int(first)
    return DeviceTime(None, None, span, span - int(idle), int(idle), int(gaps), int(gap_ns))
