"""Each device's kernels over time, in a fixed number of equal bins: what a timeline chart
draws, whatever the number of dispatches.

One lane per (process, device), as in :mod:`roofscope.analysis.timeline` (the dispatch table
has no stream per dispatch, so lanes do not split by stream). All lanes share one time
axis: from the first Begin of any lane to the last End, cut into ``bins`` bins of
``bin_ns`` = ceil(span / bins) ns, bin i covering [start_ns + i·bin_ns, start_ns + (i+1)·bin_ns).

Per bin:

- ``busy_ns``: the length of the union of the lane's [Begin, End) intervals clipped to the
  bin (overlapping kernels count once, as in the timeline's busy time);
- ``kernel``: the kernel holding most of the bin's kernel time (the sum of its dispatches'
  intervals clipped to the bin) as its index in the named ``kernels``; -1 (OTHER) when that
  kernel is not named, -2 (IDLE) when the bin is idle; ``kernel_ns`` is the holder's time in
  the bin. Beyond CELLS / bins kernels, the smallest (by total time, never a named one) are
  taken together as one.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np
import numpy.typing as npt

from roofscope.analysis.timeline import timed_dispatches
from roofscope.model.access import names, query
from roofscope.model.profile import Profile
from roofscope.model.selection import EVERYTHING, Selection

DEFAULT_BINS = 1200  # about one per pixel column of a wide chart
CELLS = 4_000_000  # bins x kernels told apart at most (32 MB of int64)
OTHER, IDLE = -1, -2

Ints = npt.NDArray[np.int64]


class Lane(msgspec.Struct, frozen=True):
    source: int | None  # the process's input, when the profile merges several processes
    device: int | None
    dispatches: int
    busy_ns: tuple[int, ...]
    kernel: tuple[int, ...]  # index into TimelineLanes.kernels, OTHER or IDLE
    kernel_ns: tuple[int, ...]


class TimelineLanes(msgspec.Struct, frozen=True):
    start_ns: int
    bin_ns: int
    kernels: tuple[str, ...]  # the kernels told apart (the rest are 'other')
    lanes: tuple[Lane, ...]

    @property
    def bins(self) -> int:
        return len(self.lanes[0].busy_ns) if self.lanes else 0


def timeline_lanes(
    profile: Profile,
    *,
    kernels: Sequence[str] = (),
    selection: Selection = EVERYTHING,
    bins: int = DEFAULT_BINS,
) -> TimelineLanes | None:
    """None when the input has no dispatch timestamps, or its kernels span no time (every
    Begin equals its End: a spreadsheet's rounding)."""
    valid, process = timed_dispatches(profile, selection)
    cols = query(
        profile,
        valid,
        f"""SELECT {process} AS p, coalesce(device, -1) AS d, start_ns, end_ns,
        coalesce(name_id, -1) AS name_id FROM d ORDER BY p, d, start_ns""",
    ).fetchnumpy()
    start = np.asarray(cols["start_ns"], dtype=np.int64)
    if start.size == 0:
        return None
    end = np.asarray(cols["end_ns"], dtype=np.int64)
    if int(end.max()) <= int(start.min()):
        return None
    p, d = np.asarray(cols["p"], dtype=np.int64), np.asarray(cols["d"], dtype=np.int64)
    codes, kinds = _codes(profile, np.asarray(cols["name_id"], dtype=np.int64), kernels)
    codes, kinds = _tail_folded(codes, kinds, end - start, len(kernels), CELLS // bins)
    origin = int(start.min())
    width = max(1, -(-(int(end.max()) - origin) // bins))  # ceil: the bins cover the span
    cuts = np.flatnonzero((p[1:] != p[:-1]) | (d[1:] != d[:-1])) + 1
    lanes = []
    for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), len(start)], strict=True):
        axis = (origin, width, bins)
        lane = _lane(start[a:b] - origin, end[a:b] - origin, codes[a:b], axis, kinds, len(kernels))
        source, device = int(p[a]), int(d[a])
        lanes.append(
            Lane(None if source == -1 else source, None if device == -1 else device, b - a, *lane)
        )
    return TimelineLanes(origin, width, tuple(kernels), tuple(lanes))


def _codes(profile: Profile, name_ids: Ints, kernels: Sequence[str]) -> tuple[Ints, int]:
    """Each dispatch's kernel as a number, the named ``kernels`` first (0, 1, ...), every
    other kernel after them; and how many numbers there are."""
    rows = query(profile, names(profile), "SELECT name_id, kernel FROM d").fetchall()
    index = {k: i for i, k in enumerate(kernels)}
    for _, kernel in sorted(rows, key=lambda r: str(r[1])):
        index.setdefault(str(kernel), len(index))
    unknown = len(index)  # an id not yet given (raw_overflow): a kernel of its own
    lookup = np.full(max((int(r[0]) for r in rows), default=0) + 1, unknown, np.int64)
    for name_id, kernel in rows:
        lookup[int(name_id)] = index[str(kernel)]
    known = name_ids >= 0
    return np.where(known, lookup[np.where(known, name_ids, 0)], unknown), unknown + 1


def _tail_folded(codes: Ints, kinds: int, length: Ints, named: int, most: int) -> tuple[Ints, int]:
    """With more kernels than ``most``, those beyond the named and the largest by total time
    share one number, so that the bins-by-kernels table stays within CELLS."""
    if kinds <= most:
        return codes, kinds
    total = np.bincount(codes, length, kinds)
    total[:named] = np.inf  # the named kernels are always kept
    keep = np.argsort(-total, kind="stable")[: max(most - 1, named)]
    renumber = np.full(kinds, len(keep), np.int64)
    renumber[np.sort(keep)] = np.arange(len(keep))
    return renumber[codes], len(keep) + 1


def _lane(
    start: Ints, end: Ints, codes: Ints, axis: tuple[int, int, int], kinds: int, named: int
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """busy_ns, kernel and kernel_ns per bin of one lane (times relative to the origin,
    sorted by start)."""
    _, width, bins = axis
    per_kernel = clipped(start, end, codes, width, bins, kinds)
    busy = busy_per_bin(start, end, width, bins)
    holder = per_kernel.argmax(axis=1)
    held = per_kernel[np.arange(bins), holder]
    kernel = np.where(holder < named, holder, OTHER)
    kernel = np.where(busy > 0, kernel, IDLE)
    return tuple(busy.tolist()), tuple(kernel.tolist()), tuple(held.tolist())


def busy_per_bin(start: Ints, end: Ints, width: int, bins: int) -> Ints:
    """The length of the union of [start, end) (sorted by start) inside each bin [i·width,
    (i+1)·width), i < ``bins``: overlapping intervals count once."""
    return clipped(*_union(start, end), np.zeros(1, dtype=np.int64), width, bins, 1)[:, 0]


def _union(start: Ints, end: Ints) -> tuple[Ints, Ints]:
    """The union of [start, end) intervals sorted by start, as disjoint intervals."""
    if start.size == 0:
        return start, end
    reach = np.maximum.accumulate(end)
    new = np.concatenate(([True], start[1:] > reach[:-1]))
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:] - 1, [start.size - 1]))
    return start[first], reach[last]


def clipped(start: Ints, end: Ints, codes: Ints, width: int, bins: int, kinds: int) -> Ints:
    """Sum over intervals [start, end) of each one's length inside each bin [i·width,
    (i+1)·width), per kind (``codes``, broadcast when of size 1): a (bins, kinds) table."""
    keep = end > start
    start, end = start[keep], end[keep]
    codes = np.broadcast_to(codes, keep.shape)[keep]
    first, last = start // width, (end - 1) // width
    cells = bins * kinds
    one = first == last
    table = np.zeros(cells, dtype=np.float64)  # exact: sums of ns stay below 2**53
    table += np.bincount(first[one] * kinds + codes[one], (end - start)[one], cells)
    many = ~one
    f, la, c = first[many], last[many], codes[many]
    table += np.bincount(f * kinds + c, ((f + 1) * width - start[many]), cells)
    table += np.bincount(la * kinds + c, (end[many] - la * width), cells)
    inner = np.zeros((bins + 1) * kinds, dtype=np.int64)  # full bins between first and last
    np.add.at(inner, (f + 1) * kinds + c, 1)
    np.add.at(inner, la * kinds + c, -1)
    full = np.cumsum(inner.reshape(bins + 1, kinds)[:bins], axis=0) * width
    return np.rint(table).astype(np.int64).reshape(bins, kinds) + full
