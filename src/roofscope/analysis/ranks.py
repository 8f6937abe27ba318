"""Per-rank view of a profile read from many processes (one input file each).

A rank is one dispatch source (one process's output). Its number is the rank the producer
recorded (the MPI rank in a rocpd database's process environment) when every source has a
distinct one; otherwise ranks are numbered from 0 in the order of the sources' process ids
(then paths), which is stable across runs of the same job layout. The pid is kept beside it.
Per kernel: its total time on each rank, and their min,
median, max and coefficient of variation (sample standard deviation over the mean); the
slowest rank. A rank is a straggler when its kernel time exceeds the median rank's by more
than STRAGGLER_EXCESS (10 %: beyond the run-to-run noise of a GPU kernel, and large enough
to hold the others at the next collective); the kernels responsible are those whose time on
that rank exceeds their own median by the same margin.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import msgspec

from roofscope.analysis.checks import mixed_formats
from roofscope.model.access import named, query
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION, VALID_DURATION, Role
from roofscope.model.selection import EVERYTHING, Selection, dispatches

STRAGGLER_EXCESS = 0.10


class KernelSpread(msgspec.Struct, frozen=True):
    kernel: str
    totals_ns: tuple[float, ...]  # per rank, 0 where the rank did not run it
    min_ns: float
    median_ns: float
    max_ns: float
    cv: float  # coefficient of variation over ranks
    slowest: int  # rank number


class Straggler(msgspec.Struct, frozen=True):
    rank: int  # rank number
    label: str
    total_ns: float
    median_ns: float
    kernels: tuple[str, ...]  # those above their own median by the margin


class RankView(msgspec.Struct, frozen=True):
    ranks: tuple[int, ...]  # the rank numbers, in order; the per-rank tuples follow it
    labels: tuple[str, ...]  # per rank: the input path and pid
    totals_ns: tuple[float, ...]  # kernel time per rank
    median_ns: float  # of the ranks' kernel times
    kernels: tuple[KernelSpread, ...]  # by total time, largest first
    stragglers: tuple[Straggler, ...]


def rank_view(profile: Profile, selection: Selection = EVERYTHING) -> RankView | None:
    """None unless the profile holds dispatches from two or more inputs."""
    sources = profile.sources(Role.DISPATCHES)
    if selection.sources is not None:
        sources = [s for s in sources if s in selection.sources]
    if len(sources) < 2 or mixed_formats(profile) or profile.runs.separate:
        return None  # one process, or runs that are not ranks of one job (readers/runs.py)
    timed = dispatches(profile, selection).filter(VALID_DURATION)
    rows = query(
        profile,
        named(profile, timed),
        f"SELECT source, kernel, sum({DURATION}), min(pid) FROM d GROUP BY ALL",
    ).fetchall()
    pid_of: dict[int, int] = {}
    for source, _, _, pid in rows:
        if pid is not None:
            pid_of[int(source)] = min(int(pid), pid_of.get(int(source), int(pid)))
    ordered, numbers = _numbered(profile, sources, pid_of)
    position = {s: i for i, s in enumerate(ordered)}
    per_kernel: dict[str, list[float]] = {}
    for source, kernel, total, _ in rows:
        r = position[int(source)]
        per_kernel.setdefault(str(kernel), [0.0] * len(ordered))[r] = float(total or 0)
    labels = tuple(f"{profile.inputs[s].path} (pid {pid_of.get(s, '-')})" for s in ordered)
    return spread_view(per_kernel, numbers, labels)


def spread_view(
    per_kernel: dict[str, list[float]], numbers: tuple[int, ...], labels: tuple[str, ...]
) -> RankView:
    """The view from each kernel's time per rank (in rank order, 0 where it did not run):
    the spreads, the ranks' kernel times and the stragglers."""
    spreads = []
    for kernel, totals in per_kernel.items():
        mean = statistics.fmean(totals)
        cv = statistics.stdev(totals) / mean if mean and len(totals) > 1 else 0.0
        spreads.append(
            KernelSpread(
                kernel,
                tuple(totals),
                min(totals),
                statistics.median(totals),
                max(totals),
                cv,
                numbers[max(range(len(totals)), key=lambda i: (totals[i], -i))],
            )
        )
    spreads.sort(key=lambda k: (-sum(k.totals_ns), k.kernel))
    rank_totals = tuple(sum(k.totals_ns[r] for k in spreads) for r in range(len(numbers)))
    median = statistics.median(rank_totals)
    stragglers = []
    for r, total in enumerate(rank_totals):
        if median and total > median * (1 + STRAGGLER_EXCESS):
            slow = tuple(
                k.kernel
                for k in spreads
                if k.median_ns and k.totals_ns[r] > k.median_ns * (1 + STRAGGLER_EXCESS)
            )
            stragglers.append(Straggler(numbers[r], labels[r], total, median, slow))
    return RankView(numbers, labels, rank_totals, median, tuple(spreads), tuple(stragglers))


def _numbered(
    profile: Profile, sources: Sequence[int], pid_of: dict[int, int]
) -> tuple[list[int], tuple[int, ...]]:
    """The sources in rank order and their rank numbers."""
    order, numbers = rank_order(
        [profile.inputs[s].rank for s in sources],
        [pid_of.get(s) for s in sources],
        [profile.inputs[s].path for s in sources],
    )
    return [sources[i] for i in order], numbers


def rank_order(
    recorded: Sequence[int | None], pids: Sequence[int | None], paths: Sequence[str]
) -> tuple[list[int], tuple[int, ...]]:
    """The positions of the sources in rank order and their rank numbers: the recorded
    ranks when every source has a distinct one, else 0, 1, ... by pid, then path."""
    if None not in recorded and len(set(recorded)) == len(recorded):
        ordered = sorted(zip(recorded, range(len(recorded)), strict=True))
        return [i for _, i in ordered], tuple(int(r) for r, _ in ordered if r is not None)
    by_pid = sorted(
        range(len(paths)), key=lambda i: (-1 if pids[i] is None else pids[i], paths[i], i)
    )
    return by_pid, tuple(range(len(by_pid)))
