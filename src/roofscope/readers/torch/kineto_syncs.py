"""A Kineto trace's device/stream synchronisations that are the next runtime call after a kernel
launch on the same thread (readers/io/host_calls.py says which calls are which): host ranges
of kind "sync-after-launch", as nsys and rocprofv3 API traces give them.

A trace does not keep a thread's runtime events in time order: CUPTI hands them over a buffer
at a time, and Kineto writes the buffers in the order they were handed over (HTA's test traces
hold runs of a thread's calls that start before the run written before them, some
overlapping). So the pairs are found once the trace is read, in DuckDB: the launches are
already staged there with their thread and start (readers/torch/kineto_ops.py); the pass keeps
only the other calls (their thread and start; a synchronisation's end and name too), and an
ASOF join finds, for each synchronisation, the last launch and the last other call that
started before it on its thread. Error queries (``cudaGetLastError``) are skipped, as
``syncs_after_launch`` skips them. A launch-only trace (the 1 M-kernel bench trace) keeps
nothing and asks nothing.
"""

from __future__ import annotations

from array import array
from typing import Any

from roofscope.model.profile import Profile
from roofscope.readers.io.batches import fits
from roofscope.readers.io.host_calls import AFTER_LAUNCH_KIND, DEVICE_SYNC, LAUNCH, is_query
from roofscope.readers.torch import kineto_nest as nest
from roofscope.readers.torch.kineto_events import Event
from roofscope.readers.torch.kineto_meta import whole
from roofscope.readers.torch.kineto_rows import ns

OTHER, LAUNCHED, SYNCED, QUERY = range(4)  # what a runtime call is to a launch-then-sync
Thread = tuple[Any, Any]  # (pid, tid), as kineto_ops keys a thread


def order_role(name: str) -> int:
    """A call's part: a kernel launch (graph launches are other calls: a graph replays
    many), a device/stream synchronisation, an error query, or any other call."""
    if LAUNCH.match(name):
        return LAUNCHED
    if DEVICE_SYNC.match(name):
        return SYNCED
    return QUERY if is_query(name) else OTHER


class Calls:
    """The runtime calls that are no kernel launch and no error query, as read: each one's
    thread (numbered here) and start in 64-bit arrays, 16 bytes a call."""

    def __init__(self) -> None:
        self.numbers: dict[Thread, int] = {}
        self.threads = array("q")
        self.starts = array("q")
        self.syncs: list[tuple[int, int, int, str]] = []  # thread, start, end, name

    def add(self, event: Event, role: int, name: str) -> None:
        start = ns(event.ts)
        if start is None or not fits(start):
            return
        pid, tid = event.pid, event.tid
        key = (pid, tid) if type(pid) is int and type(tid) is int else (whole(pid), whole(tid))
        thread = self.numbers.setdefault(key, len(self.numbers))
        self.threads.append(thread)
        self.starts.append(start)
        if role == SYNCED and (dur := ns(event.dur)) is not None and fits(start + dur):
            self.syncs.append((thread, start, start + dur, name))


def after_launch(
    profile: Profile, calls: Calls, launched: dict[Thread, int]
) -> list[tuple[str, str, int, int]]:
    """The host ranges (kind, name, start, end) of the synchronisations whose last call
    before them on their thread is a staged launch; ``launched``: kineto_ops' numbers of the
    threads (one without a number launched nothing)."""
    if not calls.syncs:
        return []
    mine = {n: launched.get(key, -1) for key, n in calls.numbers.items()}  # -1: no launch
    rows = profile.con.execute(
        _AFTER,
        [[mine[s[0]] for s in calls.syncs], [s[1] for s in calls.syncs],
         [s[2] for s in calls.syncs], [s[3] for s in calls.syncs],
         [mine[t] for t in calls.threads], calls.starts.tolist()],
    ).fetchall()  # fmt: skip
    return [(AFTER_LAUNCH_KIND, str(n), int(a), int(b)) for n, a, b in rows]


# each synchronisation ($1..$4), the last staged launch and the last other call ($5, $6: the
# synchronisations among them) that started before it on its thread
_AFTER = f"""
WITH s AS (SELECT unnest($1::BIGINT[]) AS thread, unnest($2::BIGINT[]) AS start_ns,
        unnest($3::BIGINT[]) AS end_ns, unnest($4::VARCHAR[]) AS name),
    o AS (SELECT unnest($5::BIGINT[]) AS thread, unnest($6::BIGINT[]) AS start_ns),
    l AS (SELECT thread, start_ns FROM {nest.LAUNCHES})
SELECT s.name, s.start_ns, s.end_ns FROM s
ASOF JOIN l ON s.thread = l.thread AND s.start_ns > l.start_ns
ASOF LEFT JOIN o ON s.thread = o.thread AND s.start_ns > o.start_ns
WHERE o.start_ns IS NULL OR l.start_ns > o.start_ns
ORDER BY s.start_ns
"""
