"""GPU idle time spent while the host did one kind of thing: the idle time of each device that
falls inside the ``host_ranges`` of that kind of its process: "data-loader" (a PyTorch trace's
``enumerate(DataLoader)`` steps, the input pipeline), "sync" (blocking runtime calls: device,
stream and event synchronisations, synchronous copies).

Per process (source) the ranges are merged into disjoint ranges; per device of that process
each range is clipped to the device's span (first kernel Begin to last kernel End, as in
:mod:`~roofscope.analysis.timeline`), and the union of the kernels of that device and of the
copies of that process (copy time is the copy engine's, not idle) running in it is taken
away. The sum over devices is comparable with the timeline's idle time.
"""

from __future__ import annotations

from duckdb import CoalesceOperator, ColumnExpression, ConstantExpression

from roofscope.model.access import Relation, copies, host_ranges, is_empty
from roofscope.model.profile import Profile
from roofscope.model.schema import POSITIVE_DURATION, VALID_DURATION
from roofscope.model.selection import EVERYTHING, Selection, dispatches

Span = tuple[int, int]
Ranges = list[Span]
KINDS = ("data-loader", "sync")  # the host_ranges kinds that explain idle time


def loader_idle_ns(profile: Profile, selection: Selection = EVERYTHING) -> int | None:
    """The devices' idle time inside data-loader steps; None when the input has none."""
    return idle_inside(profile, "data-loader", selection)


def idle_inside(profile: Profile, kind: str, selection: Selection = EVERYTHING) -> int | None:
    """The devices' idle time inside host ranges of ``kind``; None when the input has none."""
    ranges = host_ranges(profile, kind)
    if is_empty(profile, ranges):
        return None
    valid = dispatches(profile, selection).filter(VALID_DURATION)
    total = 0
    for source, steps in _per_source(ranges).items():
        devices = valid.filter(ColumnExpression("source") == source).aggregate(
            "coalesce(device, -1) AS device, min(start_ns), max(end_ns)", "coalesce(device, -1)"
        )
        for device, first, last in devices.fetchall():
            inside = [(max(a, first), min(b, last)) for a, b in _merged(steps)]
            waited = sum(b - a for a, b in inside if b > a)
            if waited:
                span = (int(first), int(last))
                total += waited - _busy_in(profile, valid, ranges, source, int(device), span)
    return total


def _per_source(ranges: Relation) -> dict[int, Ranges]:
    steps: dict[int, Ranges] = {}
    for source, start, end in (
        ranges.filter(POSITIVE_DURATION)
        .project("source, start_ns, end_ns")
        .order("source, start_ns")
    ).fetchall():
        steps.setdefault(int(source), []).append((int(start), int(end)))
    return steps


def _merged(ranges: Ranges) -> Ranges:
    """Sorted ranges merged where they overlap (nested steps count once)."""
    out: Ranges = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _busy_in(
    profile: Profile, valid: Relation, ranges: Relation, source: int, device: int, span: Span
) -> int:
    """The time inside the source's ranges that a kernel of this device or a copy of its
    process ran within the device's span (where the ranges were clipped): the union over
    ranges of work and range intersected is the work within the ranges' union."""
    mine = (ColumnExpression("source") == source) & (
        CoalesceOperator(ColumnExpression("device"), ConstantExpression(-1)) == device
    )
    kernels = valid.filter(mine)
    pids = kernels.project("pid").distinct()
    moved = copies(profile).filter(VALID_DURATION).join(pids, "pid", how="semi")
    work = kernels.project("start_ns AS d_start, end_ns AS d_end").union(
        moved.project("start_ns AS d_start, end_ns AS d_end")
    )
    steps = ranges.filter(ColumnExpression("source") == source).project(
        "start_ns AS r_start, end_ns AS r_end"
    )
    pieces = (
        work.join(steps, "d_start < r_end AND d_end > r_start")
        .project("greatest(d_start, r_start), least(d_end, r_end)")
        .fetchall()
    )
    clipped = [(max(int(a), span[0]), min(int(b), span[1])) for a, b in pieces]
    return sum(b - a for a, b in _merged([(a, b) for a, b in clipped if b > a]))
