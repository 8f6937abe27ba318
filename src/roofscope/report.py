"""The check-up of one profile: everything the renderers show, computed once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from roofscope.analysis.activity import Activity
from roofscope.analysis.activity import activity as activity_of
from roofscope.analysis.categories import NONE, Categories, categories
from roofscope.analysis.checks import check
from roofscope.analysis.device import (
    DeviceChoice,
    catalogue_ceilings,
    catalogue_doubt,
    choose_device,
    from_profile_attributes,
    gather_ceilings,
)
from roofscope.analysis.hotspots import Hotspots, hotspots
from roofscope.analysis.launch import LaunchShape, launch_shapes
from roofscope.analysis.limiter import Limiter, limiters, ncu_above_peak, out_of_range
from roofscope.analysis.metrics.per_kernel import MetricsSection, kernel_metrics
from roofscope.analysis.metrics.value import MetricValue
from roofscope.analysis.ranges import Ranges, ranges
from roofscope.analysis.ranks import RankView, rank_view
from roofscope.analysis.roofline import PlacedBy, Roofline, roofline
from roofscope.analysis.rounding import timestamp_stamps
from roofscope.analysis.timeline import DEFAULT_GAP_NS, Timeline, timeline
from roofscope.analysis.work.assign import kernel_work
from roofscope.analysis.work.credible import credible, said
from roofscope.analysis.work.model import Work
from roofscope.analysis.work.spec import Rule
from roofscope.catalogue.ceilings import Ceiling
from roofscope.diagnosis.diagnose import Inputs, diagnose
from roofscope.diagnosis.findings import Finding, validity_of
from roofscope.diagnosis.grouping import FindingGroup, grouped
from roofscope.diagnosis.launch import producer_says_small
from roofscope.diagnosis.limits import BUSY_PCT
from roofscope.diagnosis.profiler import ProfilerRule, lead_with_profiler
from roofscope.diagnosis.trust import standing
from roofscope.model import words
from roofscope.model.access import (
    all_dispatches,
    has_op_launches,
    has_producer_rules,
    named,
    producer_rules,
    query,
)
from roofscope.model.profile import InputFile, Profile, RunInfo, Runs, Warning
from roofscope.model.relation import among
from roofscope.model.schema import Role
from roofscope.model.selection import EVERYTHING, Selection
from roofscope.model.words import sig
from roofscope.readers.io.barriers import MEANING

if TYPE_CHECKING:
    from roofscope.analysis.gaps import Gap
    from roofscope.analysis.ops.operators import Operators, OperatorView
    from roofscope.analysis.timeline_lanes import TimelineLanes


class Barriers(msgspec.Struct, frozen=True):
    """Barrier packets listed among the kernels (rocprof v1): never kernel time."""

    records: int
    total_ns: float
    # of kernel time + barrier time (the whole a profiler's own Percentage column is of);
    # None under a --kernel/--device selection, which the barriers are not part of
    share: float | None
    meaning: str = MEANING


def barrier_summary(
    activity: tuple[Activity, ...], kernel_ns: float | None, selection: Selection
) -> Barriers | None:
    """The barrier packets of ``activity`` together; None when there are none."""
    items = [a for a in activity if a.kind == "barrier"]
    if not items:
        return None
    total = sum(a.total_ns for a in items)
    whole = None if kernel_ns is None else kernel_ns + total
    selected = selection.kernel is not None or selection.device is not None
    share = None if selected or not whole else total / whole
    return Barriers(sum(a.calls for a in items), total, share)


class Engine(msgspec.Struct, frozen=True):
    """Where the runs were read (``--scheduler``): the check-up itself is the same anywhere."""

    scheduler: str  # "local", or the Dask scheduler's address (or its file)
    workers: int  # worker processes (local) or Dask workers when the runs were read
    runs: int  # runs (ranks) read apart and merged; 1: one run, read in this process


class RooflineOptions(msgspec.Struct, frozen=True):
    gpu: str | None = None
    rules: tuple[Rule, ...] = ()  # --work, inline first, then files
    ceilings: tuple[Ceiling, ...] = ()  # the user's: --peak-*, --ceilings
    # how an fp32 GEMM of a PyTorch trace is assumed to run: "fp32" (PyTorch's default
    # float32 matmul precision, "highest") or "tf32" (allow_tf32, precision "high")
    fp32_matmul: str = "fp32"


DEFAULTS = RooflineOptions()


class RooflineSection(msgspec.Struct, frozen=True):
    choice: DeviceChoice
    result: Roofline
    whole: Work | None  # the whole profile's counter work (traffic), where counters exist
    problem: str | None  # one line when no roofline can be drawn


class Report(msgspec.Struct, frozen=True):
    inputs: tuple[InputFile, ...]
    run: RunInfo
    hotspots: Hotspots
    timeline: Timeline | None
    activity: tuple[Activity, ...]
    warnings: tuple[Warning, ...]
    selection: Selection
    roofline: RooflineSection
    metrics: MetricsSection
    ranks: RankView | None  # several processes (inputs) only
    findings: tuple[Finding, ...]  # ranked: validity problems first, then by gain
    # the profiler's own rule rows (Nsight Compute) per kernel, distinct, largest speedup first
    profiler_rules: dict[str, tuple[ProfilerRule, ...]] = msgspec.field(default_factory=dict)
    runs: Runs = msgspec.field(default_factory=Runs)  # the runs found, read and left out
    barriers: Barriers | None = None  # barrier packets the producer listed among kernels
    limiters: dict[str, Limiter] = msgspec.field(default_factory=dict)  # per studied kernel
    # largest grid, per studied kernel
    launches: dict[str, LaunchShape] = msgspec.field(default_factory=dict)
    lanes: TimelineLanes | None = None  # the timeline's bins, made for the charts (with_lanes)
    idle_gaps: tuple[Gap, ...] = ()  # the longest idle gaps with what filled them (with_lanes)
    engine: Engine | None = None  # where the runs were read, when --scheduler named it
    read: tuple[str, ...] = ()  # the paths named and every file read: never overwritten
    operators: Operators | None = None  # a PyTorch trace's operator level, where it has one
    categories: Categories = NONE  # kernel time per category (analysis/categories.py)
    ranges: Ranges | None = None  # the ranges the user named (record_function), where any

    def validity(self, kernel: str) -> tuple[str, ...]:
        """The validity findings (rule names) about one kernel (``validity_of``)."""
        return validity_of(self.findings, kernel)

    @property
    def finding_groups(self) -> tuple[FindingGroup, ...]:
        """The findings folded by cause (``grouping.grouped``): how the text and HTML show them."""
        return grouped(self.findings)

    @property
    def ranks_read(self) -> tuple[int, ...]:
        """The ranks of the job whose kernel time was read, as the inputs state them."""
        counted = (f.rank for f in self.inputs if f.role == Role.DISPATCHES)
        return tuple(sorted({r for r in counted if r is not None}))


class Summary(msgspec.Struct, frozen=True):
    """The check-up in a few numbers, in SI units: times in seconds; the timeline's fields
    are None where the input has no dispatch timestamps. The JSON's ``summary`` is this."""

    kernel_time_s: float | None
    dispatches: int
    kernels: int
    kernels_for_80pct: int | None
    wall_s: float | None
    busy_s: float | None
    idle_s: float | None
    idle_share: float | None
    gaps: int | None
    gap_total_s: float | None
    gap_threshold_s: float | None
    communication_s: float | None = None  # in communication kernels (model/libraries.py)
    communication_share: float | None = None  # of the kernel time


def _s(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e9


def summary_of(report: Report) -> Summary:
    """Kernel time and its timeline, in seconds."""
    h, t = report.hotspots, report.timeline
    comm_ns = h.communication_ns
    return Summary(
        kernel_time_s=_s(h.total_ns),
        dispatches=h.dispatches,
        kernels=len(h.kernels),
        kernels_for_80pct=h.kernels_for_80pct,
        wall_s=_s(t.wall_ns) if t else None,
        busy_s=_s(t.busy_ns) if t else None,
        idle_s=_s(t.idle_ns) if t else None,
        idle_share=t.idle_share if t else None,
        gaps=t.gaps if t else None,
        gap_total_s=_s(t.gap_ns) if t else None,
        gap_threshold_s=_s(t.gap_threshold_ns) if t else None,
        communication_s=_s(comm_ns),
        communication_share=comm_ns / h.total_ns if comm_ns is not None and h.total_ns else None,
    )


COLOURED_KERNELS = 10  # the hot kernels the timeline tells apart; the rest are 'other'


def with_lanes(report: Report, profile: Profile, *, gaps: bool = False) -> Report:
    """The report with its timeline's bins, the hot kernels told apart: only the charts
    draw them, so only the commands that draw charts pay for them; ``gaps``: with the
    longest idle gaps and their causes too (the MCP ``timeline`` tool's, one more statement
    over every dispatch that no chart needs)."""
    from roofscope.analysis.timeline_lanes import timeline_lanes  # numpy: for charts only

    hot = [k.name for k in report.hotspots.kernels if k.hot][:COLOURED_KERNELS]
    lanes = timeline_lanes(profile, kernels=hot, selection=report.selection)
    kept = _longest_gaps(report, profile) if gaps else ()
    return replace(report, lanes=lanes, idle_gaps=kept)


KEPT_GAPS = 1000  # the longest idle gaps kept with their causes, for a window's look


def _longest_gaps(report: Report, profile: Profile) -> tuple[Gap, ...]:
    from roofscope.analysis.gaps import gaps

    t = report.timeline
    if t is None or not t.gaps:
        return ()
    whole = (-(1 << 62), 1 << 62)
    return gaps(profile, *whole, t.gap_threshold_ns, report.selection, limit=KEPT_GAPS)


def profiler_rules(profile: Profile, kernels: list[str]) -> dict[str, tuple[ProfilerRule, ...]]:
    """The producer_rules rows of these kernels' dispatches, distinct per kernel."""
    rules = producer_rules(profile)
    if not kernels or not has_producer_rules(profile):
        return {}
    mine = named(profile, all_dispatches(profile)).filter(among("kernel", kernels))
    rows = query(
        profile,
        rules.join(mine.project("row_id, kernel"), "row_id"),
        """SELECT DISTINCT kernel, section, rule, kind, text, speedup_kind, speedup_pct
        FROM d ORDER BY kernel, speedup_pct DESC NULLS LAST, section, rule""",
    ).fetchall()
    out: dict[str, list[ProfilerRule]] = {}
    for kernel, *fields_ in rows:
        section, rule, kind, text, sk, pct = fields_
        out.setdefault(str(kernel), []).append(
            ProfilerRule(
                str(section or ""),
                str(rule or ""),
                str(kind or ""),
                str(text or ""),
                sk or None,
                None if pct is None else float(pct),
            )
        )
    return {k: tuple(v) for k, v in out.items()}


def analyse(
    profile: Profile,
    *,
    selection: Selection = EVERYTHING,
    gap_threshold_ns: int = DEFAULT_GAP_NS,
    roof: RooflineOptions = DEFAULTS,
) -> Report:
    notes = []
    if selection.device is not None and profile.sources(Role.KERNEL_SUMMARY):
        notes.append(
            Warning(
                "device-filter-summary",
                "--device leaves out the stats-file kernels: a "
                "summary does not say which device ran them",
            )
        )
    hot = hotspots(profile, selection=selection)
    stamps = timestamp_stamps(profile)
    rounded = {s.source for s in stamps if s.rounded}
    section, ops, roof_warnings = _roofline(profile, selection, hot, roof, rounded)
    whole = hot if selection == EVERYTHING else None  # the checks look at the whole profile
    warnings = [*check(profile, stamps, whole), *notes, *roof_warnings]
    times = timeline(profile, selection=selection, gap_threshold_ns=gap_threshold_ns)
    activity = activity_of(profile)
    copy_ns = sum(a.total_ns for a in activity if a.kind == "copy")
    on_roof = {k.name for k in section.result.kernels}
    studied = [k.name for k in hot.kernels if k.hot or k.name in on_roof]
    measured = kernel_metrics(profile, section.choice.device, studied)
    ranks = rank_view(profile, selection)
    values = {k: m.values for k, m in measured.kernels.items()}
    roofs = {k.name: k for k in section.result.kernels}
    limits = limiters(studied, values, roofs, section.result.ceilings)
    warnings += _percent_warnings(values)
    rules = profiler_rules(profile, studied)
    texts = {k: [r.text for r in found] for k, found in rules.items()}
    shapes = launch_shapes(profile, _shape_read(studied, measured, texts))
    given = Inputs(
        profile, selection, hot, section.result, times, copy_ns, section.choice.name, measured,
        ranks, limits, shapes, texts,
    )  # fmt: skip
    findings = diagnose(given)
    section = _bound_by_limiter(section, limits)
    findings = lead_with_profiler(findings, rules, {k.name: k.share for k in hot.kernels})
    return Report(
        inputs=tuple(profile.inputs),
        run=profile.run,
        hotspots=hot,
        timeline=times,
        activity=activity,
        warnings=tuple(_merge([*profile.warnings, *warnings])),  # with the deferred reads' own
        selection=selection,
        roofline=section,
        metrics=measured,
        ranks=ranks,
        findings=tuple(findings),
        profiler_rules=rules,
        runs=profile.runs,
        barriers=barrier_summary(activity, hot.total_ns, selection),
        limiters=limits,
        launches=shapes,
        operators=ops.table if ops else None,
        categories=categories(hot, section.result, ops.launched_by if ops else {}),
        ranges=ranges(profile, selection, hot),
    )


def _shape_read(
    studied: list[str], measured: MetricsSection, texts: dict[str, list[str]]
) -> list[str]:
    """The studied kernels whose launch shape a rule reads (diagnosis/launch.py): every one
    where the device's compute units are known, else those the profiler calls too small. A
    rocprof CSV's shapes cost a second scan of the file (2 s of CPU at 2 M dispatches), which
    a trace of an unknown GPU no longer pays for shapes nothing reads."""
    if measured.machine.compute_units:
        return studied
    return [k for k in studied if producer_says_small(texts.get(k, []))]


def _bound_by_limiter(section: RooflineSection, limits: dict[str, Limiter]) -> RooflineSection:
    """A kernel placed by bandwidth alone (its work unknown) is not called memory-bound when a
    compute unit is its busiest at BUSY_PCT % of its peak or more (RTX 5070 gemm_naive: hbm
    1.3 %, SM 97.3 %): its bound is unknown to the roofline, and the limiter says the rest."""
    kernels = []
    for k in section.result.kernels:
        lim = limits.get(k.name)
        top = lim.busiest if lim is not None else None
        if top and top.side == "compute" and top.pct_of_peak >= BUSY_PCT:
            k = replace(k, bound=None) if k.placed_by is PlacedBy.BANDWIDTH else k
        kernels.append(k)
    return replace(section, result=replace(section.result, kernels=tuple(kernels)))


def _roofline(
    profile: Profile,
    selection: Selection,
    hot: Hotspots,
    roof: RooflineOptions,
    rounded: set[int],
) -> tuple[RooflineSection, OperatorView | None, list[Warning]]:
    choice = from_profile_attributes(choose_device(profile.run, roof.gpu), profile.run)
    ceilings = gather_ceilings(choice, profile.ceilings, roof.ceilings)
    ops = _operator_view(profile, selection, hot, fp32_gemm(roof.fp32_matmul, ceilings))
    work, whole, warnings = kernel_work(profile, hot, roof.rules, ops.work if ops else {})
    work, overcounts = credible(work, hot, ceilings, choice.device)
    warnings += [Warning("shape-bytes-overcount", said(o)) for o in overcounts]
    doubt = catalogue_doubt(choice, profile.run)
    theoretical = tuple(catalogue_ceilings(choice))
    result = _measured_roofs(
        replace(roofline(hot, work, ceilings), theoretical=theoretical, doubt=doubt)
    )
    problem = None
    if not ceilings:
        problem = f"no roofline: {choice.problem}" if choice.problem else "no ceilings known"
    elif not work:
        problem = (
            "no roofline: no kernel has known work; profile with counters, or pass "
            "--work NAME=FLOPS:BYTES or --work FILE.toml"
        )
    if doubt is not None:
        warnings.append(Warning("partial-device", doubt))
    warnings += _kernel_warnings(profile, result, rounded)
    return RooflineSection(choice, result, whole, problem), ops, warnings


def _operator_view(
    profile: Profile, selection: Selection, hot: Hotspots, fp32_matmul: str
) -> OperatorView | None:
    """The operator level of a trace that has one; None for a profile without operator
    launches, whose check-up then loads none of its modules (the operators' SQL, the shape
    formulas)."""
    if not has_op_launches(profile):
        return None
    from roofscope.analysis.ops.operators import operator_view

    return operator_view(profile, selection, hot, fp32_matmul)


def fp32_gemm(fp32_matmul: str, ceilings: list[Ceiling]) -> str:
    """How an fp32 GEMM of a PyTorch trace is placed (``shapes.FP32_MATMUL``'s key): under
    tf32-matrix where the user says TF32
    was on; else fp32-matrix where the device has one (AMD's MFMA run fp32 GEMMs, rocBLAS
    and hipBLASLt use them), else fp32-vector (NVIDIA's tensor cores take no fp32)."""
    if fp32_matmul == "tf32":
        return "tf32"
    names = {c.name for c in ceilings if c.kind == "compute"}
    return "fp32-matrix" if "fp32-matrix" in names else "fp32-vector"


def _measured_roofs(result: Roofline) -> Roofline:
    """Each kernel above a measured ceiling but under the datasheet's, marked as at its
    measured roof, so that no renderer calls it above the hardware."""
    kernels = [
        replace(k, at_measured_roof=True)
        if (s := standing(k, result)) and s.at_measured_roof
        else k
        for k in result.kernels
    ]
    return replace(result, kernels=tuple(kernels))


def _percent_warnings(values: dict[str, dict[str, MetricValue]]) -> list[Warning]:
    """The profiler's own percentages of a peak that are outside 0-100 (limiter.out_of_range),
    and ncu's own above 100, kept and said to be ncu's (limiter.ncu_above_peak)."""
    kept = [
        Warning(
            "ncu-percent-above-100",
            f"{kernel[:80]}: {name} reads {sig(value)} %, ncu's own number (it writes it so "
            "on its Speed-of-Light and details pages): kept in its limiter as ncu wrote it, "
            "not taken for a damaged column",
        )
        for kernel, found in values.items()
        for name, value in ncu_above_peak(found)
    ]
    return kept + [
        Warning(
            "percent-out-of-range",
            f"{kernel[:80]}: {name} reads {sig(value)} %, which no share of a peak can be: left "
            "out of its limiter; check the export (a damaged or hand-edited column?)",
        )
        for kernel, found in values.items()
        for name, value in out_of_range(found)
    ]


def _kernel_warnings(profile: Profile, result: Roofline, rounded: set[int]) -> list[Warning]:
    """Kernels above their roof, or with work and no time; ``rounded``: the files whose
    rounded timestamps already explain a kernel's 0 ns (said in their ``rounded-timestamp``)."""
    warnings = []
    timeless = [k.name for k in result.kernels if k.time_s is not None and k.time_s <= 0]
    explained = _only_in(profile, timeless, rounded)
    above = [k for k in result.kernels if k.beyond_hardware]
    if above:  # said once here; each kernel's numbers are in its above-roof finding
        warnings.append(
            Warning(
                "above-roof",
                f"{words.count(len(above), 'kernel')} above the roof (see the above-roof "
                "findings): likely the wrong GPU (--gpu), counters of one XCD or GCD against "
                "whole-device ceilings, or wrong work numbers",
            )
        )
    for k in result.kernels:
        if k.time_s is not None and k.time_s <= 0 and k.name not in explained:
            warnings.append(
                Warning(
                    "no-time-for-rates",
                    f"{k.name[:80]} has work but its dispatches take no time (zero-length "
                    "timestamps): no rate, efficiency or bound is computed for it",
                )
            )
    return warnings


def _only_in(profile: Profile, kernels: list[str], sources: set[int]) -> set[str]:
    """The kernels among these whose every dispatch comes from one of these sources."""
    if not kernels or not sources:
        return set()
    mine = named(profile, all_dispatches(profile)).filter(among("kernel", kernels))
    flagged = mine.project(f"kernel, {among('source', sorted(sources))} AS s")
    rows = query(
        profile, flagged, "SELECT kernel FROM d GROUP BY kernel HAVING bool_and(s)"
    ).fetchall()
    return {str(k) for (k,) in rows}


def _merge(warnings: list[Warning]) -> list[Warning]:
    """One entry per (code, message); repeated identical findings add their counts."""
    merged: dict[tuple[str, str], int] = {}
    for w in warnings:
        merged[(w.code, w.message)] = merged.get((w.code, w.message), 0) + w.count
    return [Warning(code, message, count) for (code, message), count in merged.items()]
