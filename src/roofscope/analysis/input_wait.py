"""GPU idle time spent waiting for the input pipeline: the idle time of each device that falls
inside the data-loader steps of its process (``host_ranges`` of kind "data-loader", from a
PyTorch trace's ``enumerate(DataLoader)`` events).

Per process (source) the data-loader steps are merged into disjoint ranges; per device of
that process each range is clipped to the device's span (first kernel Begin to last kernel
End, as in :mod:`~roofscope.analysis.timeline`), and the union of the kernels running in it
is taken away. The sum over devices is comparable with the timeline's idle time.
"""

from __future__ import annotations

from duckdb import CoalesceOperator, ColumnExpression, ConstantExpression

from roofscope.model.access import Relation, host_ranges, is_empty
from roofscope.model.profile import Profile
from roofscope.model.schema import POSITIVE_DURATION, VALID_DURATION
from roofscope.model.selection import EVERYTHING, Selection, dispatches

Ranges = list[tuple[int, int]]


def loader_idle_ns(profile: Profile, selection: Selection = EVERYTHING) -> int | None:
    """The devices' idle time inside data-loader steps; None when the input has none."""
    loader = host_ranges(profile, "data-loader")
    if is_empty(profile, loader):
        return None
    steps: dict[int, Ranges] = {}
    for source, start, end in (
        loader.filter(POSITIVE_DURATION)
        .project("source, start_ns, end_ns")
        .order("source, start_ns")
    ).fetchall():
        steps.setdefault(int(source), []).append((int(start), int(end)))
    valid = dispatches(profile, selection).filter(VALID_DURATION)
    total = 0
    for source, ranges in steps.items():
        devices = valid.filter(ColumnExpression("source") == source).aggregate(
            "coalesce(device, -1) AS device, min(start_ns), max(end_ns)", "coalesce(device, -1)"
        )
        for device, first, last in devices.fetchall():
            inside = [(max(a, first), min(b, last)) for a, b in _merged(ranges)]
            waited = sum(b - a for a, b in inside if b > a)
            total += waited - _busy_in(valid, loader, source, int(device)) if waited else 0
    return total


def _merged(ranges: Ranges) -> Ranges:
    """Sorted ranges merged where they overlap (nested steps count once)."""
    out: Ranges = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _busy_in(valid: Relation, loader: Relation, source: int, device: int) -> int:
    """The time inside the source's data-loader steps that a kernel of this device ran: the
    union over steps of kernel and step intersected is the kernels within the steps' union."""
    mine = (ColumnExpression("source") == source) & (
        CoalesceOperator(ColumnExpression("device"), ConstantExpression(-1)) == device
    )
    kernels = valid.filter(mine).project("start_ns AS d_start, end_ns AS d_end")
    steps = loader.filter(ColumnExpression("source") == source).project(
        "start_ns AS r_start, end_ns AS r_end"
    )
    pieces = (
        kernels.join(steps, "d_start < r_end AND d_end > r_start")
        .project("greatest(d_start, r_start), least(d_end, r_end)")
        .fetchall()
    )
    return sum(b - a for a, b in _merged([(int(a), int(b)) for a, b in pieces]))
