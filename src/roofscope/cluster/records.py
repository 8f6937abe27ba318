"""A run's records beside its kernel statistics, reduced for the cluster summary, and merged.

- **Activity** (:func:`activity_part`): what the check-up lists as activity
  (``analysis.activity``): the producer's API, copy, domain and barrier totals
  (``summary``), the traced copies per direction (``trace``) and the barrier packets among
  the dispatches (``packets``), each per kind and name with its calls and total time. Totals
  are kept as exact fractions (a float is one), so they add in any order to the same sum.
- **Launch shapes** (:func:`shapes_part`): per kernel, each distinct combination of
  :data:`SHAPE_COLUMNS` (``model.access.launches`` without the host thread, queue and
  stream) with its number of dispatches.
- **Busy time per bin** (:func:`busy_part`): per device (the lanes of
  ``analysis.timeline``), the length of the union of its kernels' [Begin, End) inside each
  bin [i·bin_ns, (i+1)·bin_ns) of a grid fixed at time 0 of the producer's clock. A device's
  own width is the least power of two at which its span fits in :data:`BINS` bins; a run's
  (and a merge's) ``bin_ns`` is the largest of its devices' widths, and every device is
  binned at it. Widths are powers of two on one grid, so a finer device's bins fall whole
  into the coarser ones: re-binning adds neighbours, exactly, and a merge of any split
  equals the whole binned at once. A device keeps its bins from its first to its last
  (at most ``BINS + 1`` at its own width, fewer at a coarser one). The check-up's chart
  (``analysis.timeline_lanes``) measures busy time per bin the same way
  (:func:`~roofscope.analysis.timeline_lanes.busy_per_bin`) on its own grid: ``bins``
  equal bins from the profile's first Begin, which ranks read apart cannot share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from roofscope.analysis.activity import barrier_records, copy_records, summaries
from roofscope.analysis.timeline import timed_dispatches
from roofscope.analysis.timeline_lanes import busy_per_bin
from roofscope.analysis.work.spec import LAUNCH_FIELDS
from roofscope.model.access import launches, named, query
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.model.selection import EVERYTHING

Ints = npt.NDArray[np.int64]
BINS = 1024
SHAPE_COLUMNS = LAUNCH_FIELDS  # what --work rules evaluate over (analysis.work.spec)
ORIGINS = ("summary", "trace", "packets")  # the check-up's order of the activity records

Shape = tuple[int | None, ...]  # the values of SHAPE_COLUMNS
ActivityKey = tuple[str, str, str]  # origin, kind, name
Device = tuple[str, int]  # dispatch source path, device (-1: none recorded)


@dataclass(frozen=True)
class ActivityPart:
    calls: int
    total_ns: Fraction


@dataclass(frozen=True, eq=False)
class DeviceBins:
    first: int  # the index of the first bin: it starts at first · bin_ns
    busy_ns: Ints


@dataclass(frozen=True)
class BusyBins:
    bin_ns: int = 1
    devices: dict[Device, DeviceBins] = field(default_factory=dict)


def activity_part(profile: Profile) -> dict[ActivityKey, ActivityPart]:
    found = zip(ORIGINS, (summaries, copy_records, barrier_records), strict=True)
    return {
        (origin, a.kind, a.name): ActivityPart(a.calls, Fraction(a.total_ns))
        for origin, records in found
        for a in records(profile)
    }


def shapes_part(profile: Profile) -> dict[str, dict[Shape, int]]:
    rel = named(profile, launches(profile, profile.sources(Role.DISPATCHES)))
    columns = ", ".join(SHAPE_COLUMNS)
    out: dict[str, dict[Shape, int]] = {}
    for kernel, *shape, n in query(
        profile, rel, f"SELECT kernel, {columns}, sum(dispatches) FROM d GROUP BY ALL"
    ).fetchall():
        out.setdefault(str(kernel), {})[tuple(shape)] = int(n)
    return _sorted_shapes(out)


def bin_width(span_ns: int) -> int:
    """The least power of two w (ns) with ``span_ns`` <= BINS · w."""
    need = -(-span_ns // BINS)
    return 1 if need <= 1 else 1 << (need - 1).bit_length()


def busy_part(profile: Profile) -> BusyBins:
    valid, process = timed_dispatches(profile, EVERYTHING)
    cols = query(
        profile,
        valid,
        f"SELECT {process} AS p, coalesce(device, -1) AS d, start_ns, end_ns FROM d",
    ).fetchnumpy()  # sorted here: half the time of DuckDB's ORDER BY, on rows mostly in order
    p, d = np.asarray(cols["p"], dtype=np.int64), np.asarray(cols["d"], dtype=np.int64)
    start = np.asarray(cols["start_ns"], dtype=np.int64)
    order = np.lexsort((start, d, p))
    p, d, start = p[order], d[order], start[order]
    end = np.asarray(cols["end_ns"], dtype=np.int64)[order]
    cuts = np.flatnonzero((p[1:] != p[:-1]) | (d[1:] != d[:-1])) + 1
    lanes = list(zip([0, *cuts.tolist()], [*cuts.tolist(), len(start)], strict=True))
    lanes = [(a, b) for a, b in lanes if a < b]
    width = max((bin_width(int(end[a:b].max() - start[a])) for a, b in lanes), default=1)
    ids = profile.sources(Role.DISPATCHES)
    devices = {}
    for a, b in lanes:
        source = int(p[a])
        path = profile.inputs[ids[0] if source == -1 else source].path
        devices[(path, int(d[a]))] = _binned(start[a:b], end[a:b], width)
    return BusyBins(width, dict(sorted(devices.items())))


def _binned(start: Ints, end: Ints, width: int) -> DeviceBins:
    """One device's busy time per bin of ``width`` (its intervals sorted by start)."""
    lo, hi = int(start[0]), int(end.max())
    first = lo // width
    bins = max(hi - 1, lo) // width - first + 1
    origin = first * width
    return DeviceBins(first, busy_per_bin(start - origin, end - origin, width, bins))


def rebinned(bins: DeviceBins, width: int, coarser: int) -> DeviceBins:
    """``bins`` of ``width`` ns added up into bins of ``coarser`` ns (a multiple of it)."""
    factor = coarser // width
    if factor == 1:
        return bins
    first = bins.first // factor
    front = bins.first - first * factor
    padded = np.concatenate((np.zeros(front, np.int64), bins.busy_ns))
    padded = np.concatenate((padded, np.zeros(-padded.size % factor, np.int64)))
    return DeviceBins(first, padded.reshape(-1, factor).sum(axis=1))


# -- merging -------------------------------------------------------------------------------


def merged_activity(
    a: Mapping[ActivityKey, ActivityPart], b: Mapping[ActivityKey, ActivityPart]
) -> dict[ActivityKey, ActivityPart]:
    out = dict(a)
    for key, x in b.items():
        old = out.get(key)
        out[key] = (
            x if old is None else ActivityPart(old.calls + x.calls, old.total_ns + x.total_ns)
        )
    return dict(sorted(out.items()))


def merged_shapes(
    a: Mapping[str, dict[Shape, int]], b: Mapping[str, dict[Shape, int]]
) -> dict[str, dict[Shape, int]]:
    out = {k: dict(v) for k, v in a.items()}
    for kernel, shapes in b.items():
        mine = out.setdefault(kernel, {})
        for shape, n in shapes.items():
            mine[shape] = mine.get(shape, 0) + n
    return _sorted_shapes(out)


def merged_busy(a: BusyBins, b: BusyBins) -> BusyBins:
    """Every device of both at the coarser width (devices never repeat: one source, one
    partial)."""
    width = max(a.bin_ns, b.bin_ns)
    devices = {k: rebinned(v, a.bin_ns, width) for k, v in a.devices.items()}
    devices |= {k: rebinned(v, b.bin_ns, width) for k, v in b.devices.items()}
    return BusyBins(width, dict(sorted(devices.items())))


def _sorted_shapes(found: dict[str, dict[Shape, int]]) -> dict[str, dict[Shape, int]]:
    """Kernels by name; shapes by dispatches (most first), then by their values."""
    return {
        kernel: dict(sorted(shapes.items(), key=lambda kv: (-kv[1], shape_order(kv[0]))))
        for kernel, shapes in sorted(found.items())
    }


def shape_order(shape: Shape) -> tuple[tuple[bool, int], ...]:
    """A sort key for shapes with unknown values (None, last)."""
    return tuple((v is None, v or 0) for v in shape)
