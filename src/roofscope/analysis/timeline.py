"""Busy and idle time of each device: the union of its kernel intervals within its span.

Per device, the span runs from its first kernel's Begin to its last kernel's End; busy is
the length of the union of [Begin, End) over its dispatches (overlapping kernels on several
queues count once); idle = span - busy. Gaps are the stretches of idle between kernels;
those at least ``gap_threshold_ns`` long are counted. Over all devices, wall is the span of
the whole profile and busy, idle and gaps are summed per device; the idle share is idle
over the summed device spans.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from roofscope.analysis.selection import EVERYTHING, Selection, dispatch_filter
from roofscope.model import Profile

DEFAULT_GAP_NS = 10_000

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class DeviceTime:
    device: int | None
    span_ns: int
    busy_ns: int
    idle_ns: int
    gaps: int
    gap_ns: int


@dataclass(frozen=True)
class Timeline:
    wall_ns: int
    busy_ns: int
    idle_ns: int
    idle_share: float
    gaps: int
    gap_ns: int
    gap_threshold_ns: int
    devices: tuple[DeviceTime, ...]


def timeline(
    profile: Profile, *, selection: Selection = EVERYTHING, gap_threshold_ns: int = DEFAULT_GAP_NS
) -> Timeline | None:
    """None when the input has no dispatch timestamps."""
    where = dispatch_filter(profile, selection)
    cols = profile.con.execute(
        f"SELECT coalesce(device, -1) AS device, start_ns, end_ns FROM dispatches WHERE {where} "
        "AND start_ns IS NOT NULL AND end_ns >= start_ns"
    ).fetchnumpy()
    devices_col = np.asarray(cols["device"], dtype=np.int64)
    if devices_col.size == 0:
        return None
    start = np.asarray(cols["start_ns"], dtype=np.int64)
    end = np.asarray(cols["end_ns"], dtype=np.int64)
    per_device = []
    devices = np.unique(devices_col)
    for device in devices:
        mask = devices_col == device
        s, e = (start, end) if devices.size == 1 else (start[mask], end[mask])
        per_device.append(
            _device_time(None if device == -1 else int(device), s, e, gap_threshold_ns)
        )
    wall = int(end.max() - start.min())
    span = sum(d.span_ns for d in per_device)
    busy = sum(d.busy_ns for d in per_device)
    idle = sum(d.idle_ns for d in per_device)
    return Timeline(
        wall_ns=wall,
        busy_ns=busy,
        idle_ns=idle,
        idle_share=idle / span if span else 0.0,
        gaps=sum(d.gaps for d in per_device),
        gap_ns=sum(d.gap_ns for d in per_device),
        gap_threshold_ns=gap_threshold_ns,
        devices=tuple(per_device),
    )


def _device_time(device: int | None, start: Ints, end: Ints, threshold: int) -> DeviceTime:
    if start.size > 1 and bool(np.any(start[1:] < start[:-1])):
        order = np.argsort(start, kind="stable")
        start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)  # furthest End seen so far
    before = np.concatenate(([start[0]], reach[:-1]))
    busy = int(np.sum(np.maximum(0, end - np.maximum(start, before))))
    gap = start - before
    gaps = gap[gap >= max(1, threshold)]
    span = int(reach[-1] - start[0])
    return DeviceTime(device, span, busy, span - busy, int(gaps.size), int(gaps.sum()))
