"""Data checks run before any interpretation; each finding becomes a warning.

- ``end-before-begin``: dispatches whose End precedes their Begin (left out of all times);
- ``zero-duration``: dispatches with End == Begin (kept; below the timer's resolution), in
  files whose timestamps no spreadsheet rounded;
- ``rounded-timestamp``: a file with more timestamps on whole seconds than its clock gives by
  chance (:mod:`roofscope.analysis.rounding`): a spreadsheet rounded them. One warning per file
  says so with what follows: how far its durations may be off and how many take 0 ns;
- ``duplicate-dispatch-id``: one process reporting the same dispatch id twice in one file
  (for CUDA's correlation ids, which the kernels of one graph launch share: the same id, kernel
  and start);
- ``stats-mismatch``: a stats file whose calls or total time disagree with the trace beside it;
- ``missing-time``: some dispatches of a timed file have no start or end (``None``, a damaged
  field): counted as calls, left out of every time;
- ``summary-missing-total``: kernel summary rows whose total time is missing or not a number;
- ``mixed-producers``: dispatches of different formats read as one profile (they are not
  ranks of one job: no per-rank view is made);
- ``clocks-apart``: several inputs whose timestamps lie more than ``CLOCKS_APART`` times their
  own spans apart (different runs, nodes or clock bases): the wall time across them is no
  run's wall time.
- ``no-kernel-trace``: API calls or copies and no kernel at all (no kernel trace or summary
  among the inputs): the profiler did not record kernels, or their file was not passed. A
  kernel file without rows is an error instead (no kernel ran in the captured range).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.rounding import Stamps, example, timestamp_stamps
from roofscope.model import words
from roofscope.model.access import (
    Relation,
    all_summaries,
    count,
    has_activity,
    has_copies,
    has_dispatches,
    has_summaries,
    named,
    query,
)
from roofscope.model.profile import Profile, Warning
from roofscope.model.schema import DURATION, NOT_BACKWARDS, VALID_DURATION, Role
from roofscope.model.selection import dispatches

BITMAP_LIMIT_BYTES = 64 << 20
CLOCKS_APART = 10  # wall across the inputs over the sum of their own spans
# formats whose dispatch id is CUDA's correlation id: one launch of a CUDA graph gives all its
# kernels the one id, so there a repeat is the same id, kernel and start
CORRELATION_ID_FORMATS = frozenset({"nsys-gpu-trace", "nsys-sqlite", "kineto"})

Traced = tuple[int, int | None]  # a kernel's dispatches and their total ns (None: none timed)


def check(
    profile: Profile, stamps: list[Stamps] | None = None, hot: Hotspots | None = None
) -> list[Warning]:
    """All checks over the whole profile (not the --kernel/--device selection); ``stamps``:
    :func:`~roofscope.analysis.rounding.timestamp_stamps` of it, where already counted;
    ``hot``: its hotspots over the whole profile, where already counted."""
    stamps = timestamp_stamps(profile) if stamps is None else stamps
    return [
        *_durations(profile, stamps),
        *_untimed(profile, stamps),
        *_duplicates(profile),
        *_stats_agree(profile, hot),
        *_summary_totals(profile),
        *_mixed(profile),
        *_clocks_apart(profile),
        *_no_kernel_trace(profile),
    ]


KERNEL_TRACING = {
    "rocprofv3": "rocprofv3 --kernel-trace",
    "rocprof": "rocprof --hsa-trace (or --hip-trace)",
    "nsys": "nsys profile --trace=cuda",
}


def _no_kernel_trace(profile: Profile) -> list[Warning]:
    if has_dispatches(profile) or has_summaries(profile):
        return []
    if not has_activity(profile) and not has_copies(profile):
        return []
    files = ", ".join(f.path for f in profile.inputs)
    tracing = KERNEL_TRACING.get(profile.run.producer or "", "the profiler's kernel tracing")
    return [
        Warning(
            "no-kernel-trace",
            f"{files}: API calls or copies and no kernel: the profiler did not record kernels, "
            f"or their file was not passed; pass it, or re-run with {tracing}",
        )
    ]


def _untimed(profile: Profile, stamps: list[Stamps]) -> list[Warning]:
    """Dispatches without times in files whose other dispatches have them (counted with the
    files' timestamps, :func:`~roofscope.analysis.rounding.timestamp_stamps`)."""
    out = []
    for s in stamps:
        if 0 < s.untimed < s.rows:
            out.append(
                Warning(
                    "missing-time",
                    f"{profile.inputs[s.source].path}: {s.untimed:,} of "
                    f"{words.count(s.rows, 'dispatch')} without a start or end timestamp; "
                    "counted as calls, left out of every time",
                    s.untimed,
                )
            )
    return out


def _summary_totals(profile: Profile) -> list[Warning]:
    if not has_summaries(profile):
        return []
    bad = count(profile, all_summaries(profile).filter("total_ns IS NULL OR isnan(total_ns)"))
    if not bad:
        return []
    return [
        Warning(
            "summary-missing-total",
            f"{words.count(int(bad), 'kernel summary row')} without a total time (empty, None "
            "or nan): the time of those kernels is unknown and the shares cannot be computed",
            int(bad),
        )
    ]


def mixed_formats(profile: Profile) -> list[str]:
    """The distinct formats of the dispatch sources, when there are several."""
    formats = sorted({profile.inputs[s].format for s in profile.sources(Role.DISPATCHES)})
    return formats if len(formats) > 1 else []


def _mixed(profile: Profile) -> list[Warning]:
    formats = mixed_formats(profile)
    if not formats:
        return []
    return [
        Warning(
            "mixed-producers",
            f"dispatches come from {len(formats)} formats ({', '.join(formats)}) read as one "
            "profile: they are not ranks of one job, so no per-rank view is made; analyse "
            "them apart, or compare them",
        )
    ]


def _clocks_apart(profile: Profile) -> list[Warning]:
    timed = [s for s in profile.sources(Role.DISPATCHES) if profile.inputs[s].on_timeline]
    if len(timed) < 2:
        return []
    spans = (
        dispatches(profile, sources=timed)
        .filter(VALID_DURATION)
        .aggregate("min(start_ns), max(end_ns)", "source")
        .fetchall()
    )
    if len(spans) < 2:
        return []
    own = sum(int(end) - int(start) for start, end in spans)
    wall = max(int(end) for _, end in spans) - min(int(start) for start, _ in spans)
    if wall <= CLOCKS_APART * max(own, 1):
        return []
    return [
        Warning(
            "clocks-apart",
            f"the timestamps of {len(spans)} inputs span {words.sig(wall / 1e9)} s, more than "
            f"{CLOCKS_APART} times their own spans ({words.sig(own / 1e9)} s together): they come "
            "from different runs, nodes or clocks, so the wall time across them is no run's wall "
            "time; busy and idle per device still hold",
        )
    ]


def _durations(profile: Profile, stamps: list[Stamps]) -> list[Warning]:
    rounded = [s for s in stamps if s.rounded]
    out = [_rounded(profile, s) for s in rounded]
    negative = sum(s.negative for s in stamps)
    if negative:
        out.append(
            Warning(
                "end-before-begin",
                f"{words.count(negative, 'dispatch')} with End before Begin "
                "(clock-domain mix-up or a damaged file); left out of every time",
                negative,
            )
        )
    zero = sum(s.zero for s in stamps if not s.rounded)  # a rounded file's are said with it
    if zero:
        out.append(
            Warning(
                "zero-duration",
                f"{words.count(zero, 'dispatch')} of 0 ns (End equals Begin); "
                "kept, though a time of 0 ns is below the timer's resolution",
                zero,
            )
        )
    return out


def _rounded(profile: Profile, s: Stamps) -> Warning:
    """One warning per file whose timestamps a spreadsheet rounded, with what follows from it."""
    # at most 1 µs is read from timestamps that are all rounded: "even" a clock that coarse
    resolution = "even a 1 µs" if s.resolution_ns == 1000 else f"a {s.resolution_ns} ns"
    e = example(profile, s.source)
    zeros = (
        f", and {s.zero:,} show 0 ns (Begin equals End): their kernels get no rate, "
        "efficiency or bound"
        if s.zero
        else ""
    )
    return Warning(
        "rounded-timestamp",
        f"{profile.inputs[s.source].path}: {s.whole:,} of {s.stamps:,} timestamps fall on a "
        f'whole second (e.g. "{e.text}" ns in the file), where {resolution} clock puts '
        f"{_plain(s.expected)} "
        f"by chance: a spreadsheet rounded them to {e.digits} "
        f"significant digits, so the durations of its {words.count(s.dispatches, 'dispatch')} "
        "may be off by "
        f"up to {words.sig(e.unit_ns / 1e9)} s{zeros}; use the file as the profiler wrote it",
        s.dispatches,
    )


def _plain(x: float) -> str:
    """Two significant figures without an exponent (a person reads this message)."""
    if x == 0:
        return "0"
    decimals = max(0, 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f}"


def _duplicates(profile: Profile) -> list[Warning]:
    sources = profile.sources(Role.DISPATCHES)
    shared = [s for s in sources if profile.inputs[s].format in CORRELATION_ID_FORMATS]
    dups = _repeated_ids([s for s in sources if s not in shared], profile)
    dups += _repeated_ids(shared, profile, key="(dispatch_id, name_id, start_ns)")
    if not dups:
        return []
    return [
        Warning(
            "duplicate-dispatch-id",
            f"{words.count(dups, 'dispatch')} with a dispatch id already "
            "seen in the same process and file (rows written twice, or files "
            "concatenated); all are counted",
            dups,
        )
    ]


def _repeated_ids(sources: Sequence[int], profile: Profile, key: str = "") -> int:
    """Dispatches repeating an id (or ``key``) already seen in their process and file."""
    if not sources:
        return 0
    rows = dispatches(profile, sources=sources).filter("dispatch_id IS NOT NULL")
    if key:
        ((n,),) = query(
            profile,
            rows,
            f"""SELECT sum(n - d) FROM (SELECT count(*) AS n, count(DISTINCT {key}) AS d
            FROM d GROUP BY source, pid)""",
        ).fetchall()
        return int(n or 0)
    groups = _id_ranges(profile, rows)
    if not groups:
        return 0
    lo = min(g[1] for g in groups)
    hi = max(g[2] for g in groups)
    if len(groups) * (hi - lo + 1) / 8 <= BITMAP_LIMIT_BYTES:
        distinct = f"bit_count(bitstring_agg(dispatch_id, {lo}, {hi}))"
    else:
        distinct = "count(DISTINCT dispatch_id)"
    # one process of one file (most inputs): no grouping, 0.048 -> 0.028 s of CPU at 4 M
    by = "GROUP BY source, pid" if len(groups) > 1 else ""
    ((n,),) = query(
        profile,
        rows,
        f"SELECT sum(n - d) FROM (SELECT count(dispatch_id) AS n, {distinct} AS d FROM d {by})",
    ).fetchall()
    return int(n or 0)


def _id_ranges(profile: Profile, rows: Relation) -> list[tuple[int, int, int]]:
    """(ids, lowest, highest) of each process of each file of ``rows``: first over all of
    them, without grouping (0.004 s of CPU at 4 M dispatches, where grouping took 0.017),
    grouped only where they hold more than one process or file."""
    ((n, lo, hi, one),) = query(
        profile,
        rows,
        """SELECT count(dispatch_id), min(dispatch_id), max(dispatch_id),
        min(source) = max(source) AND (count(pid) = 0
            OR (count(pid) = count(*) AND min(pid) = max(pid))) FROM d""",
    ).fetchall()
    if not n:
        return []
    if one:
        return [(int(n), int(lo), int(hi))]
    groups = query(
        profile,
        rows,
        "SELECT count(dispatch_id), min(dispatch_id), max(dispatch_id) FROM d GROUP BY source, pid",
    ).fetchall()
    return [(int(c), int(a), int(b)) for c, a, b in groups]


def _stats_agree(profile: Profile, hot: Hotspots | None) -> list[Warning]:
    checks = [i for i, f in enumerate(profile.inputs) if f.role == Role.CROSS_CHECK]
    if not checks:
        return []
    traced_by_source = (_traced_from(profile, hot) if hot else None) or _traced(profile)
    summarised: dict[int, list[tuple[str, int, float]]] = {}
    for source, kernel, calls, total in (
        named(profile, all_summaries(profile))
        .aggregate("source, kernel, sum(calls), sum(total_ns)", "source, kernel")
        .fetchall()
    ):
        summarised.setdefault(int(source), []).append((str(kernel), int(calls), total))
    out = []
    for source in checks:
        group = profile.inputs[source].group
        traced: dict[str, tuple[int, int | None]] = {}
        for i, f in enumerate(profile.inputs):
            if f.role == Role.DISPATCHES and f.group == group:
                for kernel, (calls, total) in traced_by_source.get(i, {}).items():
                    was_calls, was_total = traced.get(kernel, (0, 0))
                    both = None if was_total is None or total is None else was_total + total
                    traced[kernel] = (was_calls + calls, both)
        rows = summarised.get(source, [])
        bad = []
        for kernel, calls, total in rows:
            k = traced.get(kernel)
            if k is None or k[0] != calls or k[1] != total:
                bad.append((kernel, k, calls, total))
        missing = set(traced) - {r[0] for r in rows}
        if bad or missing:
            path = profile.inputs[source].path
            detail = _stats_detail(bad[0]) if bad else _missing_detail(len(missing))
            out.append(
                Warning(
                    "stats-mismatch",
                    f"{path} disagrees with the trace beside it for "
                    f"{words.count(len(bad) + len(missing), 'kernel')}; {detail}",
                    len(bad) + len(missing),
                )
            )
    return out


def _stats_detail(first: tuple[str, Traced | None, int, float]) -> str:
    """The first kernel whose calls or time differ, in the stats file and in the trace."""
    kernel, traced, calls, total = first
    there_calls, there_ns = (traced[0], traced[1] or 0) if traced else (0, 0)
    return (
        f"first: {kernel[:60]!r} has {words.count(calls, 'call')} / {total:.0f} ns in the stats "
        f"file, {words.count(there_calls, 'call')} / {there_ns:.0f} ns in the trace"
    )


def _missing_detail(missing: int) -> str:
    """``1 traced kernel is missing from it``, ``2 traced kernels are ...``."""
    verb = words.plural(missing, "is", "are")
    return f"{words.count(missing, 'traced kernel')} {verb} missing from it"


def _traced_from(profile: Profile, hot: Hotspots) -> dict[int, dict[str, Traced]] | None:
    """:func:`_traced` read off the whole profile's hotspots, where they are the same numbers:
    one dispatch file and no kernel summary counted beside it (hotspots leave out the same
    dispatches, End before Begin); None elsewhere."""
    counted = profile.sources(Role.DISPATCHES)
    if len(counted) != 1 or profile.sources(Role.KERNEL_SUMMARY):
        return None
    return {
        counted[0]: {
            k.name: (k.calls, None if k.total_ns is None else int(k.total_ns)) for k in hot.kernels
        }
    }


def _traced(profile: Profile) -> dict[int, dict[str, Traced]]:
    """Per dispatch source and kernel: calls and total ns, as hotspots counts them (dispatches
    whose End precedes their Begin left out; no total when no dispatch has times)."""
    kept = dispatches(profile).filter(NOT_BACKWARDS)
    rows = (
        named(profile, kept)
        .aggregate(f"source, kernel, count(*), sum({DURATION})", "source, kernel")
        .fetchall()
    )
    out: dict[int, dict[str, Traced]] = {}
    for source, kernel, calls, total in rows:
        out.setdefault(int(source), {})[str(kernel)] = (
            int(calls),
            None if total is None else int(total),
        )
    return out
