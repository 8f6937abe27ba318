"""One run reduced to what the cluster summary needs, and partials merged.

:func:`reduce_run` reads one run (one rank) and keeps, per kernel (the normalised name the
hotspots table uses), the calls, timed calls, total, sum of squares, min and max of the
durations and their distribution (``sketch.py``: exact up to 1,000 dispatches, a DDSketch of
1 % relative accuracy beyond); per device its busy time, span and gaps (``analysis.timeline``)
with its first start, last end and dispatch count; per dispatch source (a rank) its kernel
time per kernel, pid, recorded rank and span (what ``analysis.ranks`` and ``readers.runs``
decide the rank view from); copies per direction; the run's facts and warnings; its
activity records, launch shapes and busy time per bin (``records.py``). Rows never leave
:func:`reduce_run`: every reduction is a DuckDB group-by, but the busy bins, a sweep of each
device's sorted intervals in the worker (as the check-up's chart).

:func:`merge` is associative and commutative: counts and sums add (integers, exact), minima
and maxima compare, sketches add their bins, and every collection is kept sorted by key.
Merging two partials that hold the same dispatch source (a run read twice) is an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import reduce

from roofscope.analysis.input_wait import loader_idle_ns
from roofscope.analysis.timeline import timed_dispatches, timeline
from roofscope.cluster import records, sketch
from roofscope.cluster.counters import CounterPart, merged, reduce_counters
from roofscope.cluster.summary import summary
from roofscope.diagnosis.diagnose import short_dispatches
from roofscope.diagnosis.evidence import KernelFacts, counter_collected, kernel_facts
from roofscope.errors import InputError
from roofscope.model import words
from roofscope.model.access import Relation, copies, has_counters, named, query
from roofscope.model.profile import Profile, RunInfo, Warning
from roofscope.model.schema import DURATION, NOT_BACKWARDS, VALID_DURATION, Role
from roofscope.model.selection import EVERYTHING, dispatches
from roofscope.readers.load import load

__all__ = ["Partial", "merge", "reduce_run", "summary"]


@dataclass(frozen=True)
class KernelPart:
    calls: int  # every dispatch, timed or not
    timed: int  # those with a duration
    total_ns: int
    sumsq_ns2: int  # sum of squared durations, exact
    min_ns: int | None
    max_ns: int | None
    raw_names: tuple[str, ...]
    durations: sketch.Durations
    # the first timed dispatch by Begin: (Begin, duration), as analysis.hotspots' first_ns
    first: tuple[int, int] | None = None


@dataclass(frozen=True)
class DevicePart:
    busy_ns: int
    span_ns: int
    first_ns: int
    last_ns: int
    dispatches: int
    gaps: int
    gap_ns: int


@dataclass(frozen=True)
class SourcePart:
    """One dispatch source (one process's output: a rank)."""

    path: str
    format: str
    rank: int | None  # recorded by the producer
    pid: int | None  # least pid of its dispatches (readers/runs.py)
    timed_pid: int | None  # least pid of its timed dispatches (analysis/ranks.py)
    span: tuple[int, int] | None  # first start, last end; None off the timeline
    kernel_ns: dict[str, int]  # kernel time per kernel


@dataclass(frozen=True)
class CopyPart:
    count: int
    ns: int  # of the copies with valid times


@dataclass(frozen=True)
class RunPart:
    paths: tuple[str, ...]  # as given to reduce_run
    info: RunInfo
    sources: tuple[str, ...]  # its dispatch sources' paths


@dataclass(frozen=True)
class Partial:
    kernels: dict[str, KernelPart] = field(default_factory=dict)
    devices: dict[tuple[str, int], DevicePart] = field(default_factory=dict)  # (source, device)
    sources: tuple[SourcePart, ...] = ()  # by path
    copies: dict[str, CopyPart] = field(default_factory=dict)  # by direction
    runs: tuple[RunPart, ...] = ()  # by paths
    warnings: dict[str, tuple[int, str]] = field(default_factory=dict)  # code: count, message
    counters: CounterPart = field(default_factory=CounterPart)  # counter sums per kernel
    # records.py: activity (origin, kind, name), launch shapes per kernel, busy ns per bin
    activity: dict[records.ActivityKey, records.ActivityPart] = field(default_factory=dict)
    shapes: dict[str, dict[records.Shape, int]] = field(default_factory=dict)
    busy: records.BusyBins = field(default_factory=records.BusyBins)
    # what the diagnosis reads beyond these (diagnosis.evidence.ProgramView)
    short: int = 0  # dispatches under diagnosis.rules.SHORT_NS
    loader_idle_ns: int | None = None  # idle inside data-loader steps; None: no such steps
    counter_formats: tuple[str, ...] = ()  # of the timeline's files whose dispatches carry counters
    has_counters: bool = False  # counters anywhere, counter runs too (model.access.has_counters)
    facts: dict[str, KernelFacts] = field(default_factory=dict)  # counter coverage, by kernel


def reduce_run(paths: list[str], fmt: str | None = None) -> Partial:
    """Read one run (in this process) and reduce it; the profile is closed before return."""
    profile = load(paths, fmt=fmt, jobs=1)
    try:
        return _reduce(profile, tuple(paths))
    finally:
        profile.con.close()


def _reduce(profile: Profile, paths: tuple[str, ...]) -> Partial:
    summaries = profile.sources(Role.KERNEL_SUMMARY)
    if summaries:  # no dispatches: no distribution, no device time, no rank view to merge
        raise InputError(
            profile.inputs[summaries[0]].path,
            "holds kernel summaries only (no dispatches), and the cluster summary merges "
            "statistics of dispatches",
            "analyze it without --scheduler, or profile with a kernel trace "
            "(rocprofv3 --kernel-trace, rocprof --hip-trace)",
        )
    srcs = _sources(profile)
    timed = any(s.span is not None for s in srcs)  # the check-up's timeline exists
    warnings: dict[str, tuple[int, str]] = {}
    for w in [*profile.warnings, *_left_out(profile)]:
        count, message = warnings.get(w.code, (0, w.message))
        warnings[w.code] = (count + w.count, min(message, w.message))
    kernels = _kernels(profile)
    return Partial(
        kernels=kernels,
        devices=_devices(profile),
        sources=tuple(sorted(srcs, key=lambda s: s.path)),
        copies=_copies(profile),
        runs=(RunPart(paths, profile.run, tuple(sorted(s.path for s in srcs))),),
        warnings=dict(sorted(warnings.items())),
        counters=reduce_counters(profile),
        activity=records.activity_part(profile),
        shapes=records.shapes_part(profile),
        busy=records.busy_part(profile),
        short=short_dispatches(profile, EVERYTHING),
        loader_idle_ns=loader_idle_ns(profile),
        counter_formats=_counter_formats(profile) if timed else (),
        has_counters=has_counters(profile),
        facts=_facts(profile, list(kernels)),
    )


def _facts(profile: Profile, kernels: list[str]) -> dict[str, KernelFacts]:
    """The counter coverage of each kernel that has some (``evidence.kernel_facts``); the
    summary figures are left out, as a run of summaries is refused."""
    if not has_counters(profile):
        return {}
    found = kernel_facts(profile, kernels)
    return {k: f for k, f in sorted(found.items()) if f != KernelFacts()}


def _counter_formats(profile: Profile) -> tuple[str, ...]:
    found = counter_collected(profile)
    return tuple(found.split(", ")) if found else ()


COUNTER_RUN_LEFT_OUT = (
    "counter runs beside a trace (a rocprof --pmc pass) are not reduced: analyze scales "
    "their counters onto the trace's calls for the roofline, the cluster summary leaves "
    "those kernels off it; analyze a run without --scheduler for its roofline"
)


def _left_out(profile: Profile) -> list[Warning]:
    """What the partial does not hold that ``analyze`` would use: counter runs (counted)."""
    runs = len(profile.sources(Role.COUNTER_RUN))
    return [Warning("counter-run-left-out", COUNTER_RUN_LEFT_OUT, runs)] if runs else []


_DURATIONS = f"""SELECT kernel, raw_name, start_ns, {DURATION} AS dur FROM d
    WHERE {NOT_BACKWARDS}"""  # as analysis.hotspots
_TIMED = f"SELECT kernel, dur FROM ({_DURATIONS}) x WHERE dur IS NOT NULL"
_SMALL = f"SELECT kernel FROM ({_TIMED}) y GROUP BY kernel HAVING count(*) <= {sketch.EXACT_LIMIT}"


def _kernels(profile: Profile) -> dict[str, KernelPart]:
    rel = named(profile, dispatches(profile))
    rows = query(
        profile,
        rel,
        f"""SELECT kernel, count(*), count(dur), coalesce(sum(dur), 0),
        coalesce(sum(dur::HUGEINT * dur), 0), min(dur), max(dur),
        list(DISTINCT raw_name ORDER BY raw_name), min(start_ns) FILTER (dur IS NOT NULL),
        arg_min(dur, (start_ns, dur)) FILTER (dur IS NOT NULL)
        FROM ({_DURATIONS}) x GROUP BY kernel""",
    ).fetchall()
    durations = _durations(profile, rel)
    out = {}
    for kernel, calls, timed, total, sumsq, lo, hi, raws, start, first in rows:
        name = str(kernel)
        out[name] = KernelPart(
            int(calls),
            int(timed),
            int(total),
            int(sumsq),
            None if lo is None else int(lo),
            None if hi is None else int(hi),
            tuple(str(r) for r in raws),
            durations.get(name, sketch.EMPTY),
            None if start is None or first is None else (int(start), int(first)),
        )
    return dict(sorted(out.items()))


def _durations(profile: Profile, rel: Relation) -> dict[str, sketch.Durations]:
    """Per kernel: its sorted durations while few, else its sketch's bins (group-bys)."""
    out = {
        str(k): sketch.exact(v)
        for k, v in query(
            profile,
            rel,
            f"SELECT kernel, list(dur ORDER BY dur) FROM ({_TIMED}) t "
            f"WHERE kernel IN ({_SMALL}) GROUP BY kernel",
        ).fetchall()
    }
    bins: dict[str, list[tuple[int | None, int]]] = {}
    for k, b, n in query(
        profile,
        rel,
        f"SELECT kernel, {sketch.bin_sql('dur')} AS b, count(*) FROM ({_TIMED}) t "
        f"WHERE kernel NOT IN ({_SMALL}) GROUP BY kernel, b",
    ).fetchall():
        bins.setdefault(str(k), []).append((None if b is None else int(b), int(n)))
    return out | {k: sketch.from_bins(b) for k, b in bins.items()}


def _sources(profile: Profile) -> list[SourcePart]:
    ids = profile.sources(Role.DISPATCHES)
    facts = {
        int(s): (pid, tpid, start, end)
        for s, pid, tpid, start, end in query(
            profile,
            dispatches(profile),
            f"""SELECT source, min(pid), min(pid) FILTER ({VALID_DURATION}),
            min(start_ns) FILTER ({VALID_DURATION}), max(end_ns) FILTER ({VALID_DURATION})
            FROM d GROUP BY source""",
        ).fetchall()
    }
    per_kernel: dict[int, dict[str, int]] = {}
    for s, kernel, total in query(
        profile,
        named(profile, dispatches(profile).filter(VALID_DURATION)),
        f"SELECT source, kernel, sum({DURATION}) FROM d GROUP BY ALL ORDER BY ALL",
    ).fetchall():
        per_kernel.setdefault(int(s), {})[str(kernel)] = int(total)
    out = []
    for s in ids:
        f = profile.inputs[s]
        pid, tpid, start, end = facts.get(s, (None, None, None, None))
        span = (int(start), int(end)) if f.on_timeline and start is not None else None
        out.append(
            SourcePart(
                f.path,
                f.format,
                f.rank,
                None if pid is None else int(pid),
                None if tpid is None else int(tpid),
                span,
                per_kernel.get(s, {}),
            )
        )
    return out


def _devices(profile: Profile) -> dict[tuple[str, int], DevicePart]:
    found = timeline(profile)
    if found is None:
        return {}
    valid, process = timed_dispatches(profile, EVERYTHING)
    facts = {
        (int(p), int(d)): (int(a), int(b), int(n))
        for p, d, a, b, n in query(
            profile,
            valid,
            f"""SELECT {process} AS p, coalesce(device, -1) AS dv, min(start_ns), max(end_ns),
            count(*) FROM d GROUP BY p, dv""",
        ).fetchall()
    }
    ids = profile.sources(Role.DISPATCHES)
    out = {}
    for t in found.devices:
        source = -1 if t.source is None else t.source
        device = -1 if t.device is None else t.device
        first, last, n = facts[(source, device)]
        path = profile.inputs[ids[0] if source == -1 else source].path
        out[(path, device)] = DevicePart(t.busy_ns, t.span_ns, first, last, n, t.gaps, t.gap_ns)
    return dict(sorted(out.items()))


def _copies(profile: Profile) -> dict[str, CopyPart]:
    rows = query(
        profile,
        copies(profile),
        f"""SELECT coalesce(direction, ''), count(*),
        coalesce(sum({DURATION}) FILTER ({VALID_DURATION}), 0) FROM d GROUP BY 1""",
    ).fetchall()
    return {str(k): CopyPart(int(n), int(ns)) for k, n, ns in sorted(rows)}


def merge(parts: Iterable[Partial]) -> Partial:
    """The partials as one (of none: an empty partial)."""
    return reduce(_merge_two, parts, Partial())


def _merge_two(a: Partial, b: Partial) -> Partial:
    shared = {s.path for s in a.sources} & {s.path for s in b.sources}
    if shared:
        raise ValueError(
            f"dispatch {words.plural(len(shared), 'source')} in two partials: "
            f"{', '.join(sorted(shared))}"
        )
    kernels = dict(a.kernels)
    for name, k in b.kernels.items():
        kernels[name] = _kernel_merged(kernels[name], k) if name in kernels else k
    copied = dict(a.copies)
    for kind, c in b.copies.items():
        old = copied.get(kind, CopyPart(0, 0))
        copied[kind] = CopyPart(old.count + c.count, old.ns + c.ns)
    warnings = dict(a.warnings)
    for code, (n, message) in b.warnings.items():
        m0, msg0 = warnings.get(code, (0, message))
        warnings[code] = (m0 + n, min(msg0, message))
    return Partial(
        kernels=dict(sorted(kernels.items())),
        devices=dict(sorted({**a.devices, **b.devices}.items())),
        sources=tuple(sorted([*a.sources, *b.sources], key=lambda s: s.path)),
        copies=dict(sorted(copied.items())),
        runs=tuple(sorted([*a.runs, *b.runs], key=lambda r: r.paths)),
        warnings=dict(sorted(warnings.items())),
        counters=merged(a.counters, b.counters),
        activity=records.merged_activity(a.activity, b.activity),
        shapes=records.merged_shapes(a.shapes, b.shapes),
        busy=records.merged_busy(a.busy, b.busy),
        short=a.short + b.short,
        loader_idle_ns=_sum_known(a.loader_idle_ns, b.loader_idle_ns),
        counter_formats=tuple(sorted({*a.counter_formats, *b.counter_formats})),
        has_counters=a.has_counters or b.has_counters,
        facts=_facts_merged(a.facts, b.facts),
    )


def _facts_merged(a: dict[str, KernelFacts], b: dict[str, KernelFacts]) -> dict[str, KernelFacts]:
    out = dict(a)
    for kernel, f in b.items():
        g = out.get(kernel, KernelFacts())
        out[kernel] = KernelFacts(
            g.counter_rows + f.counter_rows,
            g.activity_counters + f.activity_counters,
            g.nonzero_activity + f.nonzero_activity,
            _sum_known(g.counter_run_calls, f.counter_run_calls),
        )
    return dict(sorted(out.items()))


def _sum_known(a: int | None, b: int | None) -> int | None:
    return a if b is None else b if a is None else a + b


def _kernel_merged(a: KernelPart, b: KernelPart) -> KernelPart:
    los = [x for x in (a.min_ns, b.min_ns) if x is not None]
    his = [x for x in (a.max_ns, b.max_ns) if x is not None]
    return KernelPart(
        a.calls + b.calls,
        a.timed + b.timed,
        a.total_ns + b.total_ns,
        a.sumsq_ns2 + b.sumsq_ns2,
        min(los) if los else None,
        max(his) if his else None,
        tuple(sorted({*a.raw_names, *b.raw_names})),
        sketch.merged(a.durations, b.durations),
        min((f for f in (a.first, b.first) if f is not None), default=None),
    )
