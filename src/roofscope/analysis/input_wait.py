"""GPU idle time spent waiting for the input pipeline: the idle time of each device that falls
inside the data-loader steps of its process (``host_ranges`` of kind "data-loader", from a
PyTorch trace's ``enumerate(DataLoader)`` events).

Per process (source) the data-loader steps are merged into disjoint ranges; per device of
that process each range is clipped to the device's span (first kernel Begin to last kernel
End, as in :mod:`~roofscope.analysis.timeline`), and the union of the kernels running in it
is taken away. The sum over devices is comparable with the timeline's idle time.
"""

from __future__ import annotations

from roofscope.analysis.selection import EVERYTHING, Selection, dispatch_filter
from roofscope.model.profile import Profile

Ranges = list[tuple[int, int]]


def loader_idle_ns(profile: Profile, selection: Selection = EVERYTHING) -> int | None:
    """The devices' idle time inside data-loader steps; None when the input has none."""
    if profile.count("host_ranges") == 0:
        return None
    con = profile.con
    steps: dict[int, Ranges] = {}
    for source, start, end in con.execute(
        """SELECT source, start_ns, end_ns FROM host_ranges WHERE kind = 'data-loader'
        AND end_ns > start_ns ORDER BY source, start_ns"""
    ).fetchall():
        steps.setdefault(int(source), []).append((int(start), int(end)))
    valid = f"{dispatch_filter(profile, selection)} AND start_ns IS NOT NULL AND end_ns >= start_ns"
    total = 0
    for source, ranges in steps.items():
        devices = con.execute(
            f"""SELECT coalesce(device, -1), min(start_ns), max(end_ns) FROM dispatches
            WHERE {valid} AND source = {source} GROUP BY 1"""
        ).fetchall()
        for device, first, last in devices:
            inside = [(max(a, first), min(b, last)) for a, b in _merged(ranges)]
            waited = sum(b - a for a, b in inside if b > a)
            total += waited - _busy_in(profile, valid, source, int(device)) if waited else 0
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


def _busy_in(profile: Profile, valid: str, source: int, device: int) -> int:
    """The time inside the source's data-loader steps that a kernel of this device ran: the
    union over steps of kernel and step intersected is the kernels within the steps' union."""
    pieces = profile.con.execute(
        f"""SELECT greatest(d.start_ns, r.start_ns), least(d.end_ns, r.end_ns)
        FROM (SELECT start_ns, end_ns FROM dispatches WHERE {valid} AND source = {source}
              AND coalesce(device, -1) = {device}) d
        JOIN (SELECT start_ns, end_ns FROM host_ranges WHERE kind = 'data-loader'
              AND source = {source}) r ON d.start_ns < r.end_ns AND d.end_ns > r.start_ns"""
    ).fetchall()
    return sum(b - a for a, b in _merged([(int(a), int(b)) for a, b in pieces]))
