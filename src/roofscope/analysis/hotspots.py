"""Hotspots: per-kernel statistics, shares, and the few kernels that make 80% of the time.

Statistics over dispatches are count-weighted per dispatch (mean, median, min, max, sample
standard deviation); shares are time-weighted (a kernel's total over all kernels' total).
Dispatches whose End precedes their Begin have no valid time and are left out entirely.
Aggregated inputs (stats files) are merged through partial aggregates; a median needs the
dispatches themselves, so it is the summary's own where it gives one (nsys ``Med``) and None
where it does not, or where a kernel comes from more than one input.
"""

from __future__ import annotations

import math

import msgspec

from roofscope.model.access import Relation, named, query
from roofscope.model.access import names as all_names
from roofscope.model.libraries import is_communication
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION, NOT_BACKWARDS, Role
from roofscope.model.selection import EVERYTHING, Selection, dispatches, summary

HOT_SHARE = 0.8


class KernelStats(msgspec.Struct, frozen=True):
    name: str
    raw_names: tuple[str, ...]
    calls: int
    total_ns: float | None
    mean_ns: float | None
    median_ns: float | None
    min_ns: float | None
    max_ns: float | None
    std_ns: float | None
    share: float | None
    cumulative_share: float | None
    hot: bool
    first_ns: float | None = None  # the first dispatch's duration (warm-up check)
    communication: bool = False  # a communication kernel (model/libraries.py)


class Hotspots(msgspec.Struct, frozen=True):
    kernels: tuple[KernelStats, ...]
    total_ns: float | None
    dispatches: int
    kernels_for_80pct: int | None

    @property
    def communication_ns(self) -> float | None:
        """The time in communication kernels (model/libraries.py); None where the kernel time
        is unknown."""
        if self.total_ns is None:
            return None
        return sum(k.total_ns or 0 for k in self.kernels if k.communication)


class Aggregate(msgspec.Struct, frozen=True):
    """Mergeable per-kernel aggregate."""

    calls: int
    timed: int
    total: float | None
    minimum: float | None
    maximum: float | None
    sumsq: float | None
    median: float | None
    raw: tuple[str, ...]
    first: float | None = None  # the duration of the first dispatch (by Begin)


def hotspots(profile: Profile, *, selection: Selection = EVERYTHING) -> Hotspots:
    """Per-kernel statistics sorted by total time (calls where times are unknown)."""
    merged: dict[str, list[Aggregate]] = {}
    for kernel, part in [*_from_dispatches(profile, selection), *_from_summary(profile, selection)]:
        merged.setdefault(kernel, []).append(part)
    return ranked([(kernel, _merge(parts)) for kernel, parts in merged.items()])


def ranked(rows: list[tuple[str, Aggregate]]) -> Hotspots:
    """The kernels by total time (calls where times are unknown), with their shares and the
    hot ones: those that make the first ``HOT_SHARE`` of the time."""
    known = [p.total for _, p in rows if p.total is not None]
    grand = sum(known) if known and len(known) == len(rows) else None
    rows.sort(key=lambda r: (-(r[1].total or 0), -r[1].calls, r[0]))
    kernels: list[KernelStats] = []
    cumulative = 0.0
    for kernel, p in rows:
        share = p.total / grand if grand and p.total is not None else None
        hot = share is not None and cumulative < HOT_SHARE
        cumulative = cumulative + share if share is not None else cumulative
        kernels.append(_stats(kernel, p, share, cumulative if share is not None else None, hot))
    hot_count = sum(k.hot for k in kernels) if grand else None
    return Hotspots(tuple(kernels), grand, sum(p.calls for _, p in rows), hot_count)


def _stats(
    kernel: str, p: Aggregate, share: float | None, cum: float | None, hot: bool
) -> KernelStats:
    mean = p.total / p.timed if p.total is not None and p.timed else None
    std = None
    if p.sumsq is not None and mean is not None and p.timed > 1:
        std = _std(p.timed, p.total, p.sumsq, mean)
    return KernelStats(
        kernel,
        p.raw,
        p.calls,
        p.total,
        mean,
        p.median,
        p.minimum,
        p.maximum,
        std,
        share,
        cum,
        hot,
        p.first,
        is_communication(kernel),
    )


def _std(n: int, total: float | None, sumsq: float, mean: float) -> float:
    """The sample standard deviation of ``n`` values from their sum and sum of squares. Of
    integer durations (dispatches: both sums exact integers) it is computed in integers,
    (n·Σx² - (Σx)²) / (n(n-1)), so neither rounding nor the order of a parallel sum moves it
    (Σx² of 1 s kernels is above 2^53, where a float sum drops the variance); of a summary's
    float moments, as before."""
    if isinstance(total, int) and isinstance(sumsq, int):
        return math.sqrt(max(0, n * sumsq - total * total) / (n * (n - 1)))
    return math.sqrt(max(0.0, (sumsq - n * mean * mean) / (n - 1)))


def _from_dispatches(profile: Profile, selection: Selection) -> list[tuple[str, Aggregate]]:
    selected = dispatches(profile, selection)
    rows = query(
        profile,
        selected,
        f"""SELECT k.kid, count(*), count(dur), sum(dur), min(dur), max(dur),
               sum(dur::HUGEINT * dur), median(dur), arg_min(dur, start_ns)
        FROM (SELECT name_id, start_ns, {DURATION} AS dur FROM d WHERE {NOT_BACKWARDS}) x
        JOIN (SELECT name_id, dense_rank() OVER (ORDER BY kernel) AS kid FROM n) k
        USING (name_id) GROUP BY k.kid""",
        n=all_names(profile),
    ).fetchall()
    names: dict[int, tuple[str, list[str]]] = {}
    for kid, kernel, raw in query(
        profile,
        all_names(profile),
        """SELECT dense_rank() OVER (ORDER BY kernel) AS kid, kernel, raw_name FROM d
        ORDER BY kid, raw_name""",
    ).fetchall():
        names.setdefault(int(kid), (str(kernel), []))[1].append(str(raw))
    used = {int(r[0]) for r in rows}
    raw_used = (
        _raw_names_used(profile, selected) if any(len(names[k][1]) > 1 for k in used) else None
    )
    out = []
    for kid, calls, timed, total, lo, hi, sumsq, median, first in rows:
        kernel, raws = names[int(kid)]
        if raw_used is not None:
            raws = [r for r in raws if r in raw_used]
        timed_ok = int(timed) > 0
        out.append(
            (
                kernel,
                Aggregate(
                    int(calls),
                    int(timed),
                    int(total) if timed_ok else None,
                    lo if timed_ok else None,
                    hi if timed_ok else None,
                    int(sumsq) if timed_ok else None,
                    median if timed_ok else None,
                    tuple(raws),
                    first if timed_ok else None,
                ),
            )
        )
    return out


def _raw_names_used(profile: Profile, selected: Relation) -> set[str]:
    used = selected.project("name_id").distinct()
    rows = all_names(profile).join(used, "name_id", how="SEMI").project("raw_name").fetchall()
    return {str(r[0]) for r in rows}


def _from_summary(profile: Profile, selection: Selection) -> list[tuple[str, Aggregate]]:
    if not profile.sources(Role.KERNEL_SUMMARY):  # no summary read as such: none selected
        return []  # (the empty statement cost 7 ms of CPU at its first call)
    rows = (
        named(profile, summary(profile, selection))
        .project("kernel, raw_name, calls, total_ns, min_ns, max_ns, std_ns, median_ns")
        .fetchall()
    )
    out = []
    for kernel, raw, calls, total, lo, hi, std, median in rows:
        calls = int(calls)
        sumsq = None
        if std is not None and calls > 0 and total is not None:
            mean = total / calls
            sumsq = (calls - 1) * std * std + calls * mean * mean
        elif calls == 1 and total is not None:
            sumsq = total * total
        total_v = int(total) if total is not None and float(total).is_integer() else total
        out.append((str(kernel), Aggregate(calls, calls, total_v, lo, hi, sumsq, median, (raw,))))
    return out


def _merge(parts: list[Aggregate]) -> Aggregate:
    if len(parts) == 1:
        return parts[0]
    totals = [p.total for p in parts]
    sumsqs = [p.sumsq for p in parts]
    los = [p.minimum for p in parts if p.minimum is not None]
    his = [p.maximum for p in parts if p.maximum is not None]
    raw = tuple(sorted({r for p in parts for r in p.raw}))
    return Aggregate(
        calls=sum(p.calls for p in parts),
        timed=sum(p.timed for p in parts),
        total=None if None in totals else sum(t for t in totals if t is not None),
        minimum=min(los) if len(los) == len(parts) else None,
        maximum=max(his) if len(his) == len(parts) else None,
        sumsq=None if None in sumsqs else sum(s for s in sumsqs if s is not None),
        median=None,
        raw=raw,
        first=next((p.first for p in parts if p.first is not None), None),
    )
