"""The diagnosis of one profile: validity first, then rules, ranked by what they could save."""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from roofscope.analysis.hotspots import Hotspots, KernelStats
from roofscope.analysis.input_wait import idle_inside, launch_syncs, loader_idle_ns
from roofscope.analysis.launch import LaunchShape
from roofscope.analysis.limiter import Limiter
from roofscope.analysis.metrics.per_kernel import KernelMetrics, MetricsSection
from roofscope.analysis.ranks import RankView
from roofscope.analysis.roofline import KernelRoofline, Roofline
from roofscope.analysis.timeline import Timeline
from roofscope.diagnosis import registry
from roofscope.diagnosis.evidence import (
    KernelFacts,
    KernelView,
    ProgramView,
    counter_collected,
    graph_facts,
    kernel_facts,
)
from roofscope.diagnosis.findings import Finding, ranked
from roofscope.diagnosis.launch import producer_says_small
from roofscope.diagnosis.libraries import advised
from roofscope.diagnosis.registry import run
from roofscope.diagnosis.rules import SHORT_NS
from roofscope.diagnosis.trust import once_at_roof, standing, temper_kernel
from roofscope.diagnosis.validity import CAVEATS
from roofscope.model.access import Relation, count
from roofscope.model.access import has_counters as has_counters_in
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION, VALID_DURATION
from roofscope.model.selection import Selection, dispatches, summary


class Inputs(msgspec.Struct, frozen=True):
    """What the diagnosis reads: the profile, the selection and the analyses' results."""

    profile: Profile
    selection: Selection
    hot: Hotspots
    roof: Roofline
    timeline: Timeline | None
    copy_ns: float
    device: str | None  # the GPU the ceilings are of, as the report names it
    measured: MetricsSection
    ranks: RankView | None = None
    limiters: dict[str, Limiter] = msgspec.field(default_factory=dict)
    # each kernel's largest grid
    launches: dict[str, LaunchShape] = msgspec.field(default_factory=dict)
    # the profiler's, per kernel
    rule_texts: dict[str, list[str]] = msgspec.field(default_factory=dict)


def diagnose(given: Inputs) -> list[Finding]:
    """Validity checks, then kernel rules, per studied kernel; then the program rules
    (diagnosis/registry.py), ranked by what fixing them could save."""
    roofs = {k.name: k for k in given.roof.kernels}
    studied = studied_kernels(given.hot, given.roof)
    facts = kernel_facts(given.profile, [k.name for k in studied])
    has_counters = has_counters_in(given.profile)
    views = [
        _kernel_view(given, k, roofs.get(k.name), facts.get(k.name, KernelFacts()), has_counters)
        for k in studied
    ]
    return judged(views, _program_view(given, has_counters), given.roof)


def studied_kernels(hot: Hotspots, roof: Roofline) -> list[KernelStats]:
    """The kernels the diagnosis looks at: the hot ones, and those on the roofline."""
    on_roof = {k.name for k in roof.kernels}
    return [k for k in hot.kernels if k.hot or k.name in on_roof]


def judged(views: Sequence[KernelView], program: ProgramView, roof: Roofline) -> list[Finding]:
    """The registry's checks and rules on each kernel's view, then on the program's, ranked
    by what fixing them could save. A kernel's verdicts are left out when a validity
    finding that is no caveat says its numbers are wrong."""
    rules = registry.RULES  # read at each call: code outside roofscope may add rules
    findings: list[Finding] = []
    for view in views:
        problems = run(rules.validity, view)
        findings += problems
        if any(p.rule not in CAVEATS for p in problems):
            continue
        verdicts = once_at_roof(problems, run(rules.kernel, view), view.roof)
        findings += advised(view, temper_kernel(verdicts, view.roof, roof, view.stats.calls))
    findings += run(rules.program, program)
    return ranked(findings)


def _kernel_view(
    given: Inputs,
    stats: KernelStats,
    on_roof: KernelRoofline | None,
    facts: KernelFacts,
    has_counters: bool,
) -> KernelView:
    return KernelView(
        stats,
        on_roof,
        given.measured.kernels.get(stats.name, KernelMetrics()),
        given.measured.machine,
        limiter=given.limiters.get(stats.name),
        facts=facts,
        standing=standing(on_roof, given.roof) if on_roof else None,
        has_counters=has_counters,
        device=given.device,
        launch=given.launches.get(stats.name),
        producer_small=producer_says_small(given.rule_texts.get(stats.name, [])),
    )


def _program_view(given: Inputs, has_counters: bool) -> ProgramView:
    profile, selection, t, hot = given.profile, given.selection, given.timeline, given.hot
    from_summary = _short_in_summaries(profile, selection)
    return ProgramView(
        kernel_ns=hot.total_ns,
        span_ns=sum(d.span_ns for d in t.devices) if t else None,
        idle_ns=t.idle_ns if t else None,
        gaps=t.gaps if t else None,
        gap_ns=t.gap_ns if t else None,
        gap_threshold_ns=t.gap_threshold_ns if t else None,
        dispatches=hot.dispatches,
        copy_ns=given.copy_ns,
        has_counters=has_counters,
        counter_run=counter_collected(profile) if t else None,
        loader_idle_ns=loader_idle_ns(profile, selection) if t else None,
        sync_idle_ns=idle_inside(profile, "sync", selection) if t else None,
        compile_idle_ns=idle_inside(profile, "compile", selection) if t else None,
        launch_syncs=launch_syncs(profile, selection) if t else None,
        communication_ns=hot.communication_ns or 0.0,
        short_dispatches=short_dispatches(profile, selection) + from_summary,
        short_from_summary=from_summary,
        ranks=given.ranks,
        graphs=graph_facts(profile, dispatches(profile, selection), _short(profile, selection)),
    )


def short_dispatches(profile: Profile, selection: Selection) -> int:
    return count(profile, _short(profile, selection))


def _short(profile: Profile, selection: Selection) -> Relation:
    """The selected dispatches that ran under SHORT_NS."""
    return dispatches(profile, selection).filter(f"{VALID_DURATION} AND {DURATION} < {SHORT_NS}")


def _short_in_summaries(profile: Profile, selection: Selection) -> int:
    """The dispatches of summarised kernels that surely ran under SHORT_NS (a lower bound)."""
    rows = summary(profile, selection).project("calls, mean_ns, median_ns, min_ns, max_ns")
    return sum(surely_short(*row) for row in rows.fetchall())


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
