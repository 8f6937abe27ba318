"""The idle gaps of a window of the timeline, one by one, each with what the host or the copy
engine did in it: the gaps of :mod:`~roofscope.analysis.timeline` (per process and device,
the stretches between the union of its kernels at least the threshold long) that overlap the
window, longest first, and for each the time inside the copies of its process and inside the
host ranges of each kind of its run (:mod:`~roofscope.analysis.input_wait`'s kinds).

Over the whole span the gaps are the timeline's: as many, and as long in sum.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import msgspec

from roofscope.analysis.input_wait import KINDS, Ranges, merged, same_run
from roofscope.analysis.timeline import timed_dispatches
from roofscope.model.access import (
    Relation,
    copies,
    has_copies,
    host_range_kinds,
    host_ranges,
    query,
)
from roofscope.model.profile import Profile
from roofscope.model.schema import VALID_DURATION
from roofscope.model.selection import EVERYTHING, Selection

COPY = "copy"  # a copy of the gap's process ran in it: copy-engine time, not a stall


class Gap(msgspec.Struct, frozen=True):
    source: int | None  # the process's input, when the profile merges several
    device: int | None
    start_ns: int  # the end of the kernels before it
    end_ns: int  # the start of the kernel after it
    inside: tuple[tuple[str, int], ...]  # (copy or host-range kind, ns of the gap in it)

    @property
    def length_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def cause(self) -> str | None:
        """The kind that holds half the gap or more, or None."""
        return next((kind for kind, ns in self.inside if 2 * ns >= self.length_ns), None)


def gaps(
    profile: Profile,
    start_ns: int,
    end_ns: int,
    threshold_ns: int,
    selection: Selection = EVERYTHING,
    limit: int | None = None,
) -> tuple[Gap, ...]:
    """The gaps of at least ``threshold_ns`` that overlap [``start_ns``, ``end_ns``) (the
    profile's own clock), whole, longest first (then earliest), the first ``limit`` of them
    where given; none in an empty window."""
    if end_ns <= start_ns:
        return ()
    valid, process = timed_dispatches(profile, selection)
    rows = query(
        profile,
        valid,
        f"""SELECT p, d, start_ns - gap, start_ns FROM (
            SELECT p, d, start_ns, start_ns - max(end_ns) OVER (
                PARTITION BY p, d ORDER BY start_ns
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gap
            FROM (SELECT {process} AS p, coalesce(device, -1) AS d, start_ns, end_ns FROM d))
        WHERE gap >= $1 AND start_ns - gap < $3 AND start_ns > $2
        ORDER BY gap DESC, start_ns - gap, p, d LIMIT $4""",
        [max(1, threshold_ns), start_ns, end_ns, limit],
    ).fetchall()
    found = [(int(p), int(d), int(a), int(b)) for p, d, a, b in rows]
    busy = _Inside(profile, found)
    return tuple(
        Gap(None if p == -1 else p, None if d == -1 else d, a, b, busy.of(p, (a, b)))
        for p, d, a, b in found
    )


class _Inside:
    """The copies and host ranges that overlap any of the gaps, per source and kind; merged
    per (run, kind) when first asked, so each gap finds its pieces by bisection."""

    def __init__(self, profile: Profile, found: list[tuple[int, int, int, int]]) -> None:
        self.profile = profile
        lo = min((a for _, _, a, _ in found), default=0)
        hi = max((b for _, _, _, b in found), default=0)
        self.kinds: dict[str, dict[int, Ranges]] = {}
        for kind in KINDS:
            if found and kind in host_range_kinds(profile):
                self.kinds[kind] = self._per_source(host_ranges(profile, kind), lo, hi)
        moved = copies(profile)
        if found and has_copies(profile):
            self.kinds[COPY] = self._per_source(moved.filter(VALID_DURATION), lo, hi)
        self.runs: dict[tuple[int, ...], dict[str, tuple[list[int], Ranges]]] = {}

    def _per_source(self, rel: Relation, lo: int, hi: int) -> dict[int, Ranges]:
        out: dict[int, Ranges] = {}
        rows = query(
            self.profile,
            rel,
            "SELECT source, start_ns, end_ns FROM d WHERE start_ns < $2 AND end_ns > $1",
            [lo, hi],
        ).fetchall()
        for source, a, b in rows:
            out.setdefault(int(source), []).append((int(a), int(b)))
        return out

    def _merged(self, runs: tuple[int, ...]) -> dict[str, tuple[list[int], Ranges]]:
        """Per kind, the disjoint ranges of the run's inputs and their starts."""
        if runs not in self.runs:
            per_kind = {}
            for kind, per_source in self.kinds.items():
                spans = merged([s for source in runs for s in per_source.get(source, ())])
                per_kind[kind] = ([a for a, _ in spans], spans)
            self.runs[runs] = per_kind
        return self.runs[runs]

    def of(self, process: int, gap: tuple[int, int]) -> tuple[tuple[str, int], ...]:
        """Each kind's time inside ``gap`` of ``process`` (-1: every input), largest first."""
        every = range(len(self.profile.inputs))
        runs = tuple(every if process == -1 else same_run(self.profile, process))
        out = []
        for kind, (starts, spans) in self._merged(runs).items():
            first = max(0, bisect_right(starts, gap[0]) - 1)  # the last that starts before
            ns = 0
            for a, b in spans[first : bisect_left(starts, gap[1])]:
                ns += max(0, min(b, gap[1]) - max(a, gap[0]))
            if ns:
                out.append((kind, ns))
        return tuple(sorted(out, key=lambda kn: (-kn[1], kn[0])))
