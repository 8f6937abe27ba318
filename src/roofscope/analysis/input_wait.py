"""GPU idle time spent while the host did one kind of thing: the idle time of each device that
falls inside the ``host_ranges`` of that kind of its process: "data-loader" (a PyTorch trace's
``enumerate(DataLoader)`` steps, the input pipeline), "sync" (blocking runtime calls: device,
stream and event synchronisations, synchronous copies), "compile" (JIT compilation: module
loads, NVRTC/HIPRTC, compiler NVTX ranges), "sync-after-launch" (the synchronisations that
directly follow a launch). The ranges of an API trace count against the kernels of its run
(:func:`same_run`): an nsys or rocprofv3 export writes them to a file of their own.

Per process (source) the ranges are merged into disjoint ranges; per device of that process
each range is clipped to the device's span (first kernel Begin to last kernel End, as in
:mod:`~roofscope.analysis.timeline`), and the union of the kernels of that device and of the
copies of that process (copy time is the copy engine's, not idle) running in it is taken
away. The sum over devices is comparable with the timeline's idle time.
"""

from __future__ import annotations

import msgspec

from roofscope.model.access import (
    Relation,
    activity,
    copies,
    count,
    graph_launches,
    has_graph_launches,
    host_range_kinds,
    host_ranges,
    op_launches,
    query,
)
from roofscope.model.profile import Profile
from roofscope.model.relation import among
from roofscope.model.schema import POSITIVE_DURATION, VALID_DURATION, Role
from roofscope.model.selection import EVERYTHING, Selection, dispatches
from roofscope.readers.io.host_calls import AFTER_LAUNCH_KIND, LAUNCH

Span = tuple[int, int]
Ranges = list[Span]
# the host_ranges kinds that explain idle time ("sync-after-launch" ranges are "sync" ones too)
KINDS = ("data-loader", "sync", "compile")


def loader_idle_ns(profile: Profile, selection: Selection = EVERYTHING) -> int | None:
    """The devices' idle time inside data-loader steps; None when the input has none."""
    return idle_inside(profile, "data-loader", selection)


def idle_inside(profile: Profile, kind: str, selection: Selection = EVERYTHING) -> int | None:
    """The devices' idle time inside host ranges of ``kind``; None when the input has none,
    or no kernel ran in the runs that have them."""
    if kind not in host_range_kinds(profile):
        return None
    ranges = host_ranges(profile, kind)
    sel = dispatches(profile, selection)
    total, seen = 0, False
    for sources, steps in _per_run(profile, ranges).items():
        found = query(profile, sel, _DEVICES, [list(sources)]).fetchall()
        for device, first, last in found:
            seen = True
            inside = [(max(a, first), min(b, last)) for a, b in merged(steps)]
            waited = sum(b - a for a, b in inside if b > a)
            if waited:
                span = (int(first), int(last))
                total += waited - _busy_in(profile, sel, ranges, sources, int(device), span)
    return total if seen else None


# the span of each device's kernels in a run (its sources, $1)
_DEVICES = f"""
SELECT coalesce(device, -1), min(start_ns), max(end_ns) FROM d
WHERE {VALID_DURATION} AND list_contains($1, source) GROUP BY 1
"""


def same_run(profile: Profile, source: int) -> list[int]:
    """The inputs of the run ``source`` belongs to (its group: an nsys or rocprofv3 export's
    API trace beside its kernel trace), itself included; itself alone when it has no group."""
    group = profile.inputs[source].group
    if not group:
        return [source]
    return [i for i, f in enumerate(profile.inputs) if i == source or f.group == group]


def _per_run(profile: Profile, ranges: Relation) -> dict[tuple[int, ...], Ranges]:
    """The ranges of each run (its inputs' sources): an API trace's module load inside an
    NVTX compile range of the same run counts once."""
    steps: dict[tuple[int, ...], Ranges] = {}
    sql = f"SELECT source, start_ns, end_ns FROM d WHERE {POSITIVE_DURATION} ORDER BY 1, 2"
    for source, start, end in query(profile, ranges, sql).fetchall():
        run = tuple(same_run(profile, int(source)))
        steps.setdefault(run, []).append((int(start), int(end)))
    return steps


def merged(ranges: Ranges) -> Ranges:
    """Sorted ranges merged where they overlap (nested steps count once)."""
    out: Ranges = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _busy_in(
    profile: Profile,
    sel: Relation,
    ranges: Relation,
    sources: tuple[int, ...],
    device: int,
    span: Span,
) -> int:
    """The time inside the run's ranges that a kernel of this device (of that run) or a copy
    of its process ran within the device's span (where the ranges were clipped):
    the union over ranges of work and range intersected is the work within the ranges'
    union."""
    params = [list(sources), device]
    more = {"c": copies(profile), "r": ranges}
    pieces = query(profile, sel, _PIECES, params, **more).fetchall()
    clipped = [(max(int(a), span[0]), min(int(b), span[1])) for a, b in pieces]
    return sum(b - a for a, b in merged([(a, b) for a, b in clipped if b > a]))


# the pieces of the kernels of device $2 of the run (sources $1) and of the copies of their
# processes that fall inside the run's ranges
_PIECES = f"""
, kernels AS (
    SELECT pid, start_ns, end_ns FROM d
    WHERE {VALID_DURATION} AND list_contains($1, source) AND coalesce(device, -1) = $2)
, work AS (
    SELECT start_ns AS d_start, end_ns AS d_end FROM kernels
    UNION ALL
    SELECT start_ns, end_ns FROM c WHERE {VALID_DURATION} AND pid IN (SELECT pid FROM kernels))
SELECT greatest(d_start, r.start_ns), least(d_end, r.end_ns) FROM work
JOIN r ON list_contains($1, r.source) AND d_start < r.end_ns AND d_end > r.start_ns
"""


class LaunchSyncs(msgspec.Struct, frozen=True):
    """Kernel launches of the API traces and the device/stream synchronisations that were the
    next call after one on its thread (readers/io/host_calls.py: ``syncs_after_launch``)."""

    launches: int
    synced: int  # launches followed by a synchronisation
    idle_ns: int  # the devices' idle time inside those synchronisations


def launch_syncs(profile: Profile, selection: Selection = EVERYTHING) -> LaunchSyncs | None:
    """None when no synchronisation followed a launch (the launches are then not counted:
    two statements a small trace need not pay), or no API trace was read."""
    synced = count(profile, host_ranges(profile, AFTER_LAUNCH_KIND))
    if not synced:
        return None
    # API traces, and exports whose runtime calls are read with their kernels (nsys SQLite)
    traces = [*profile.sources(Role.HOST_CALLS), *profile.sources(Role.DISPATCHES)]
    api = activity(profile).filter(f"{among('source', traces)} AND kind = 'api'")
    found = api.project("source, name, calls").fetchall()
    launches = sum(int(c) for _, n, c in found if LAUNCH.match(n))
    launches += _op_launches(profile, sorted({int(s) for s, _, _ in found}))
    if not launches:
        return None
    idle = idle_inside(profile, AFTER_LAUNCH_KIND, selection)
    return LaunchSyncs(launches, synced, idle or 0)


def _op_launches(profile: Profile, summarised: list[int]) -> int:
    """The kernel launches a trace holds as events beside its operators (Kineto's runtime
    events, ``op_launches``) in the inputs without an API summary (``summarised``), its graph
    launches left out: what an API summary counts in LAUNCH."""
    graphs = graph_launches(profile) if has_graph_launches(profile) else None
    anti = "ANTI JOIN g USING (source, correlation)" if graphs is not None else ""
    sql = f"SELECT count(*) FROM d {anti} WHERE NOT list_contains($1::INTEGER[], d.source)"
    more = {"g": graphs} if graphs is not None else {}
    ((n,),) = query(profile, op_launches(profile), sql, [summarised], **more).fetchall()
    return int(n)
