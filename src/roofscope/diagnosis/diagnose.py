"""The diagnosis of one profile: validity first, then rules, ranked by what they could save."""

from __future__ import annotations

import math
from collections.abc import Mapping

from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.input_wait import loader_idle_ns
from roofscope.analysis.limiter import Limiter
from roofscope.analysis.ranks import RankView
from roofscope.analysis.roofline import Roofline
from roofscope.analysis.selection import Selection, dispatch_filter, summary_filter
from roofscope.analysis.timeline import Timeline
from roofscope.diagnosis.evidence import KernelView, ProgramView, counter_collected, kernel_facts
from roofscope.diagnosis.findings import Finding, ranked
from roofscope.diagnosis.idle import idle_gaps
from roofscope.diagnosis.rules import (
    KERNEL_RULES,
    SHORT_NS,
    communication_share,
    copies_dominate,
    short_kernels,
    stragglers,
)
from roofscope.diagnosis.trust import standing, temper_kernel
from roofscope.diagnosis.validity import CAVEATS, check_kernel
from roofscope.metrics.per_kernel import KernelMetrics, MetricsSection
from roofscope.model import Profile


def diagnose(
    profile: Profile,
    selection: Selection,
    hot: Hotspots,
    roof: Roofline,
    timeline: Timeline | None,
    copy_ns: float,
    device: str | None,
    measured: MetricsSection,
    ranks: RankView | None = None,
    limiters: Mapping[str, Limiter] | None = None,
) -> list[Finding]:
    roofs = {k.name: k for k in roof.kernels}
    kernels = [k for k in hot.kernels if k.hot or k.name in roofs]  # hot, or on the roofline
    facts = kernel_facts(profile, [k.name for k in kernels])
    has_counters = profile.count("counters") > 0
    findings: list[Finding] = []
    for stats in kernels:
        on_roof = roofs.get(stats.name)
        view = KernelView(
            stats,
            on_roof,
            measured.kernels.get(stats.name, KernelMetrics()),
            measured.machine,
            (limiters or {}).get(stats.name),
            **facts.get(stats.name, {}),  # type: ignore[arg-type]
            standing=standing(on_roof, roof) if on_roof else None,
        )
        problems = check_kernel(view, has_counters=has_counters, device=device)
        findings += problems
        if any(p.rule not in CAVEATS for p in problems):
            continue
        verdicts = [f for rule in KERNEL_RULES if (f := rule(view)) is not None]
        findings += temper_kernel(verdicts, on_roof, roof, stats.calls)
    program = ProgramView(
        kernel_ns=hot.total_ns,
        span_ns=sum(d.span_ns for d in timeline.devices) if timeline else None,
        idle_ns=timeline.idle_ns if timeline else None,
        gaps=timeline.gaps if timeline else None,
        gap_ns=timeline.gap_ns if timeline else None,
        gap_threshold_ns=timeline.gap_threshold_ns if timeline else None,
        dispatches=hot.dispatches,
        copy_ns=copy_ns,
        has_counters=has_counters,
        counter_run=counter_collected(profile) if timeline else None,
        loader_idle_ns=loader_idle_ns(profile, selection) if timeline else None,
        communication_ns=sum(k.total_ns or 0 for k in hot.kernels if k.communication),
    )
    program_rules = (idle_gaps, copies_dominate, communication_share)
    findings += [f for rule in program_rules if (f := rule(program))]
    from_summary = _short_in_summaries(profile, selection)
    short = _short_dispatches(profile, selection) + from_summary
    if (found := short_kernels(program, short, from_summary=from_summary)) is not None:
        findings.append(found)
    findings += stragglers(ranks)
    return ranked(findings)


def _short_dispatches(profile: Profile, selection: Selection) -> int:
    row = profile.con.execute(
        f"""SELECT count(*) FROM dispatches WHERE {dispatch_filter(profile, selection)}
        AND end_ns >= start_ns AND end_ns - start_ns < {SHORT_NS}"""
    ).fetchone()
    return int(row[0]) if row else 0


def _short_in_summaries(profile: Profile, selection: Selection) -> int:
    """The dispatches of summarised kernels that surely ran under SHORT_NS (a lower bound)."""
    rows = profile.con.execute(
        "SELECT calls, mean_ns, median_ns, min_ns, max_ns FROM kernel_summary "
        f"WHERE {summary_filter(profile, selection)}"
    ).fetchall()
    return sum(surely_short(*row) for row in rows)


def surely_short(
    calls: int,
    mean: float | None,
    median: float | None,
    low: float | None,
    high: float | None,
) -> int:
    """How many of a summarised kernel's ``calls`` ran under SHORT_NS at least: all when its
    max is under it, none when its min is not; else half when its median is under it, and
    by Markov's inequality (durations are never negative) no more than calls x mean / SHORT_NS
    ran SHORT_NS or longer. Unknown values give no bound."""
    if high is not None and high < SHORT_NS:
        return calls
    if low is not None and low >= SHORT_NS:
        return 0
    half = math.ceil(calls / 2) if median is not None and median < SHORT_NS else 0
    markov = calls - math.ceil(calls * mean / SHORT_NS) if mean is not None else 0
    return max(half, markov, 0)
