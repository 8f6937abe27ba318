"""Busy and idle time in a window of the timeline, at the resolution of the timeline's bins
(``timeline_lanes.TimelineLanes``: the span cut into equal bins): per lane, the busy time of
the bins the window holds and the stretches of bins in which no kernel ran."""

from __future__ import annotations

import msgspec

from roofscope.analysis.timeline_lanes import Lane, TimelineLanes


class Window(msgspec.Struct, frozen=True):
    first: int  # the first bin the window holds
    end: int  # one past the last
    bin_ns: int
    lanes: tuple[LaneWindow, ...]


class LaneWindow(msgspec.Struct, frozen=True):
    source: int | None
    device: int | None
    busy_ns: int  # in the window's bins
    span_ns: int  # the window's bins
    idle_bins: tuple[tuple[int, int], ...]  # [first, end) of each stretch, longest first


def window(lanes: TimelineLanes, start_ns: int, end_ns: int | None) -> Window:
    """The bins from ``start_ns`` to ``end_ns`` (ns after the first kernel began; None: to
    the end), each bin the window touches taken whole."""
    first = min(max(start_ns, 0) // lanes.bin_ns, lanes.bins)
    end = lanes.bins if end_ns is None else min(-(-end_ns // lanes.bin_ns), lanes.bins)
    end = max(end, first)
    found = tuple(_lane(lane, first, end, lanes.bin_ns) for lane in lanes.lanes)
    return Window(first, end, lanes.bin_ns, found)


def _lane(lane: Lane, first: int, end: int, bin_ns: int) -> LaneWindow:
    busy = lane.busy_ns[first:end]
    stretches, open_at = [], None
    for i, ns in enumerate(busy, start=first):
        if ns == 0 and open_at is None:
            open_at = i
        elif ns and open_at is not None:
            stretches.append((open_at, i))
            open_at = None
    if open_at is not None:
        stretches.append((open_at, end))
    stretches.sort(key=lambda s: (s[0] - s[1], s[0]))
    return LaneWindow(lane.source, lane.device, sum(busy), (end - first) * bin_ns,
                      tuple(stretches))  # fmt: skip
