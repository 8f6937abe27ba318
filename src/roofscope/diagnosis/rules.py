"""The rules: each a small function of what is known about a kernel (or the program) that
returns a finding, with the evidence it read, its thresholds and a prescription.

Roofline thresholds: below FAR = 50 % of its roof a kernel loses more to how it works than
to how much work it does (the access pattern, the instruction mix); from NEAR = 90 % on
(within 10 % of the roof), the code is at the hardware and only doing less work helps (the
usual roofline practice, e.g. NERSC's and NVIDIA's roofline guides). Between the two no
verdict is given: the data cannot say which of the two a kernel needs.
Program thresholds: idle time in idle.py; SHORT_NS = 10 µs (the order
of a kernel launch's own overhead on AMD and NVIDIA GPUs) for half of at least 100
dispatches; COPY_SHARE = copies taking half as long as all kernels.
Limiter: busy compute units rule out memory-side prescriptions (diagnosis.limits); a
compute unit from NEAR of its peak on gives compute-near-roof, whatever the roofline says.
"""

from __future__ import annotations

from roofscope.analysis.limiter import Utilisation
from roofscope.analysis.ranks import STRAGGLER_EXCESS
from roofscope.analysis.roofline import Bound
from roofscope.diagnosis.busy import busy_not_at_roof, issue_measure
from roofscope.diagnosis.evidence import KernelView, ProgramView
from roofscope.diagnosis.findings import Finding, Severity, Value, kernel_gain
from roofscope.diagnosis.graphs import short_advice, short_cost
from roofscope.diagnosis.limits import (
    BUSY_PCT,
    FAR,
    compute_limited,
    compute_side,
    launch_limited,
)
from roofscope.model.words import sig

NEAR = 0.9
SHORT_NS = 10_000
SHORT_SHARE = 0.5
SHORT_MIN_DISPATCHES = 100
COPY_SHARE = 0.5
COMMUNICATION_SHARE = 0.2  # of kernel time in communication kernels: worth overlapping

PRESCRIPTIONS = {
    "memory-far-below-roof": (
        "fix the access pattern: coalesce (consecutive work-items on consecutive addresses), "
        "use vectorised 64/128-bit loads and stores, avoid strided or scattered accesses, "
        "and keep reused data in cache (check the L2 hit rate)"
    ),
    "memory-near-roof": (
        "move fewer bytes: fuse with the kernels before or after it, reuse data through "
        "LDS or registers (tiling), use a lower precision (fp16/bf16) or compressed formats"
    ),
    "compute-far-below-roof": (
        "improve the instruction mix: put the dominant math on the matrix cores (MFMA / "
        "tensor cores), use FMA and cheaper instructions, cut integer and address "
        "arithmetic and divergence"
    ),
    "compute-near-roof": (
        "the code is at the hardware's limit: only the algorithm (fewer FLOPs) or a "
        "faster unit (matrix cores, lower precision) can make it faster"
    ),
}


# a kernel whose FLOPs already run on the matrix units (its ceiling is a "-matrix" one) is
# not told to move its math there (issue 38: an H200 bf16 HGMMA GEMM, 100 % of its FLOPs on
# the tensor cores, was)
ON_MATRIX = {
    "compute-far-below-roof": (
        "its math already runs on the matrix cores: keep them fed, with more work per block "
        "(larger tiles, more blocks in flight), loads overlapped with the math (asynchronous "
        "copies: TMA/cp.async or buffer loads to LDS, a multi-stage or warp-specialised "
        "pipeline) and fewer synchronisations between the stages"
    ),
    "compute-near-roof": (
        "the code is at the matrix cores' limit: only the algorithm (fewer FLOPs) or a lower "
        "precision (fp8, where accuracy allows) can make it faster"
    ),
}


def prescription(rule: str, ceiling: str | None) -> str:
    """The rule's prescription, for the unit the kernel's FLOPs run on."""
    on_matrix = ceiling is not None and ceiling.endswith("-matrix")
    return ON_MATRIX[rule] if on_matrix and rule in ON_MATRIX else PRESCRIPTIONS[rule]


def severity(gain: float | None) -> Severity:
    if gain is None:
        return "low"
    return "high" if gain >= 0.1 else "medium" if gain >= 0.02 else "low"


def roofline_rule(k: KernelView) -> Finding | None:
    r = k.roof
    busy = compute_limited(k)
    busiest = busy is not None and k.limiter is not None and busy is k.limiter.busiest
    unjudged = r is None or r.bound is None or (busiest and r.bound is not Bound.COMPUTE)
    if busy is not None and unjudged:
        return _busy_unit(k, busy)  # no roofline verdict, or the busiest unit computes
    if r is None or r.efficiency is None or r.bound is None:
        return None
    if FAR <= r.efficiency < NEAR:
        return None
    where = "far-below-roof" if r.efficiency < FAR else "near-roof"
    bound = r.bound
    if bound is Bound.MEMORY and busy is not None:
        return None  # a compute unit busy too: fewer or better-placed bytes would not relieve it
    if bound is Bound.MEMORY and where == "far-below-roof" and launch_limited(k):
        return None  # SMs without work, not the access pattern (diagnosis/launch.py)
    rule = f"{bound}-{where}"
    gain, formula = kernel_gain(k.stats.share, r.efficiency)
    level = r.limiting_level or "hbm"
    roof = f"{level} bandwidth" if bound is Bound.MEMORY else f"{r.ceiling} compute"
    at_roof = _at_roof_ns(k) if bound is Bound.MEMORY and where == "far-below-roof" else None
    small = at_roof is not None and at_roof < SMALL_WORK_NS and (k.stats.mean_ns or 0) < SHORT_NS
    return Finding(
        rule,
        k.stats.name,
        "bottleneck",
        severity(gain),
        f"{bound}-bound at {r.efficiency:.1%} of its {roof} roof"
        + (_small_said(at_roof or 0.0, k.stats.mean_ns or 0.0) if small else ""),
        SMALL_WORK if small else prescription(rule, r.ceiling),
        {
            "dispatch_at_roof_ns": at_roof,
            "efficiency": r.efficiency,
            "bound": r.bound,
            "limiting_level": r.limiting_level,
            "ceiling": r.ceiling,
            "intensity_flop_per_byte": r.intensity.get(level),
            "achieved_flops_s": r.achieved_flops_s,
            "achieved_bytes_s": r.achieved_bytes_s.get(level),
            "attainable_flops_s": r.attainable_flops_s,
            "share": k.stats.share,
        },
        {"far_below": FAR, "near": NEAR},
        gain,
        formula,
    )


# a short dispatch (under SHORT_NS) that would take under this at its roof is mostly fixed
# cost: any launch's start-up, first memory latency and tail take a few µs (the shortest
# kernels in the corpus's vLLM and SGLang MI300X traces, one-block fills, take 1.96-2.2 µs);
# a longer one is slow for another reason (its access pattern), whatever its bytes
SMALL_WORK_NS = 2_000
SMALL_WORK = (
    "give each launch more work: more tokens or rows per step (larger batches), or fuse it "
    "with the kernels before and after it (one launch instead of several); its access "
    "pattern is not what holds it: a dispatch this small is mostly the launch's fixed cost"
)


def _at_roof_ns(k: KernelView) -> float | None:
    """How long a mean dispatch's bytes would take at the roof: efficiency x mean time."""
    r = k.roof
    if r is None or r.efficiency is None or not k.stats.mean_ns:
        return None
    return r.efficiency * k.stats.mean_ns


def _small_said(at_roof: float, mean: float) -> str:
    return (
        f": each dispatch's bytes would take {sig(at_roof / 1000)} µs at the roof against its "
        f"{sig(mean / 1000)} µs, too little work per launch to approach it"
    )


def _busy_unit(k: KernelView, busy: Utilisation) -> Finding | None:
    """compute-near-roof from the limiter: a compute unit at NEAR or more of its peak; an
    issue measure (ncu's SM throughput) at NEAR is busy, not at a limit (diagnosis/busy.py)."""
    if busy.pct_of_peak < 100 * NEAR:
        return None
    if issue_measure(busy):
        return busy_not_at_roof(k, busy)
    gain, formula = kernel_gain(k.stats.share, busy.pct_of_peak / 100)
    return Finding(
        "compute-near-roof",
        k.stats.name,
        "bottleneck",
        severity(gain),
        f"compute-bound: {busy.unit} at {busy.pct_of_peak:.1f}% of its peak ({busy.evidence})",
        PRESCRIPTIONS["compute-near-roof"],
        {
            "unit": busy.unit,
            "pct_of_peak": busy.pct_of_peak,
            "evidence": busy.evidence,
            "source": busy.source,
            "share": k.stats.share,
        },
        {"near": NEAR, "busy_pct": BUSY_PCT},
        gain,
        formula,
    )


def copies_dominate(p: ProgramView) -> Finding | None:
    if not p.kernel_ns or p.copy_ns < COPY_SHARE * p.kernel_ns:
        return None
    ratio = p.copy_ns / p.kernel_ns
    return Finding(
        "copies-dominate",
        None,
        "program",
        "high" if ratio >= 1 else "medium",
        f"memory copies take {ratio:.1f}x the time of all kernels",
        "keep data on the GPU between kernels, copy once; use pinned host memory and "
        "asynchronous copies that overlap compute",
        {"copy_s": p.copy_ns / 1e9, "kernel_s": p.kernel_ns / 1e9},
        {"copy_over_kernel_min": COPY_SHARE},
    )


def communication_share(p: ProgramView) -> Finding | None:
    """Communication kernels (model/libraries.py: NCCL/RCCL, DeepEP, custom all-reduce) holding
    COMMUNICATION_SHARE or more of the kernel time."""
    if not p.kernel_ns or p.communication_ns < COMMUNICATION_SHARE * p.kernel_ns:
        return None
    share = p.communication_ns / p.kernel_ns
    return Finding(
        "communication-share",
        None,
        "program",
        "high" if share >= 0.5 else "medium",
        f"communication kernels (collectives, all-to-all, all-reduce) take {share:.1%} of the "
        "kernel time",
        "overlap communication with compute (bucketed all-reduce, async collectives), "
        "communicate less often or in larger messages, and check the interconnect and "
        "that every rank reaches the collective at the same time (see the rank view)",
        {
            "communication_s": p.communication_ns / 1e9,
            "kernel_s": p.kernel_ns / 1e9,
            "communication_share": share,
        },
        {"communication_share_min": COMMUNICATION_SHARE},
    )


def short_kernels(p: ProgramView) -> Finding | None:
    """Those of the short dispatches counted in summaries (``p.short_from_summary``) are a
    lower bound worked out from each kernel's max, median and mean (diagnose.surely_short)."""
    short_dispatches, from_summary = p.short_dispatches, p.short_from_summary
    if p.dispatches < SHORT_MIN_DISPATCHES or short_dispatches < SHORT_SHARE * p.dispatches:
        return None
    share = short_dispatches / p.dispatches
    evidence: dict[str, Value] = {"short_dispatches": short_dispatches, "dispatches": p.dispatches}
    if from_summary:
        evidence["short_dispatches_from_summary"] = from_summary
    if p.graphs and p.graphs.short_dispatches:
        evidence["short_dispatches_in_graphs"] = p.graphs.short_dispatches
    return Finding(
        "short-kernels",
        None,
        "program",
        "medium",
        f"{'at least ' if from_summary else ''}{share:.0%} of {p.dispatches:,} dispatches run "
        f"under {sig(SHORT_NS / 1000)} µs: {short_cost(p, short_dispatches)}",
        short_advice(p, short_dispatches),
        evidence,
        {"short_ns": SHORT_NS, "share_min": SHORT_SHARE, "min_dispatches": SHORT_MIN_DISPATCHES},
    )


# -- rules over counter metrics and occupancy ----------------------------------------------

OCCUPANCY_LOW = 0.5  # of the wave slots: too few waves to hide memory latency
L2_HIT_LOW = 50.0  # % of L2 requests that hit
BANK_CONFLICTS_HIGH = 0.1  # LDS bank-conflict cycles per LDS access (gfx9)
BANK_CONFLICT_PCT_HIGH = 10.0  # rocprof v1 LDSBankConflict: % of GPU cycles
ACTIVE_THREADS_LOW = 0.75  # of the wave's lanes doing VALU work
LIFT = {
    "registers": "use at most {v} VGPRs (launch bounds, fewer live values, less unrolling)",
    "lds": "use at most {v} bytes of LDS per workgroup (smaller tiles, reuse buffers)",
    "workgroup-slots": "use workgroups of {v} work-items or more, so fewer slots hold more waves",
}


def occupancy_limited(k: KernelView) -> Finding | None:
    occ = k.measured.occupancy
    if occ is None or occ.fraction >= OCCUPANCY_LOW or occ.limiter == "waves-per-simd":
        return None
    if compute_side(k):
        return None  # compute-bound kernels need no latency hiding from extra waves
    lift = LIFT.get(occ.limiter, "{v}").format(v=occ.lift_value) if occ.lift_value else occ.lift
    return Finding(
        "occupancy-limited",
        k.stats.name,
        "bottleneck",
        severity(k.stats.share),
        f"{sig(occ.waves_per_simd)} of {occ.max_waves_per_simd} waves per SIMD fit "
        f"({occ.fraction:.0%}), limited by {occ.limiter}",
        f"{lift}; more resident waves hide memory latency",
        {
            "limiter": occ.limiter,
            "waves_per_simd": occ.waves_per_simd,
            "max_waves_per_simd": occ.max_waves_per_simd,
            "vgprs": occ.vgprs,
            "lds_bytes": occ.shape.lds_bytes,
            "workgroup_size": occ.shape.workgroup_size,
            "lift_value": occ.lift_value,
            "achieved_ratio": k.measured.achieved.ratio if k.measured.achieved else None,
        },
        {"occupancy_min": OCCUPANCY_LOW},
    )


# Nsight Compute's speed-of-light throughputs (% of peak): a kernel that keeps a unit BUSY_PCT
# busy is limited by that unit, not by the latency that more resident warps would hide
THROUGHPUTS = ("Compute (SM) Throughput", "Memory Throughput")


def low_achieved_occupancy(k: KernelView) -> Finding | None:
    """Nsight Compute's achieved occupancy (% of the warp slots) where no theoretical
    occupancy was worked out from the launch (NVIDIA); theoretical beside it tells whether
    the launch resources or the way the work ran (tail, imbalance) held it down."""
    found = _metric(k, "Achieved Occupancy")
    if k.measured.occupancy is not None or found is None or found[1] >= 100 * OCCUPANCY_LOW:
        return None
    if compute_side(k):
        return None
    busiest = [v for _, v in filter(None, (_metric(k, n) for n in THROUGHPUTS))]
    if busiest and max(busiest) >= BUSY_PCT:
        return None  # a unit already runs near its peak: more warps would not help
    achieved = found[1]
    theory = _metric(k, "Theoretical Occupancy")
    if theory is not None and theory[1] < 100 * OCCUPANCY_LOW:
        why = f"the launch allows only {theory[1]:.0f}% (theoretical occupancy)"
        fix = (
            "use fewer registers per thread (launch bounds, less unrolling) or less shared "
            "memory per block, or larger blocks, so that more warps fit per SM"
        )
    else:
        allowed = f"{theory[1]:.0f}%" if theory else "unknown"
        why = f"the launch allows {allowed}, so warps end unevenly or too few blocks run"
        fix = (
            "launch enough blocks to fill every SM several times, and balance the work "
            "per block so that SMs do not idle at the tail"
        )
    return Finding(
        "occupancy-limited",
        k.stats.name,
        "bottleneck",
        severity(k.stats.share),
        f"{achieved:.1f}% of the warp slots were occupied (achieved occupancy); {why}",
        f"{fix}; more resident warps hide memory latency",
        {"achieved_pct": achieved, "theoretical_pct": theory[1] if theory else None},
        {"occupancy_min_pct": 100 * OCCUPANCY_LOW},
    )


def _metric(k: KernelView, *names: str) -> tuple[str, float] | None:
    for name in names:
        value = k.measured.values.get(name)
        if value is not None and value.value_dispatch_mean is not None:
            return name, value.value_dispatch_mean
    return None


def low_l2_hit_rate(k: KernelView) -> Finding | None:
    found = _metric(k, "L2 Cache Hit Rate", "L2CacheHit (recomputed)", "L2CacheHit")
    if found is None or found[1] >= L2_HIT_LOW:
        return None
    if compute_side(k) or launch_limited(k):
        return None
    name, hit = found
    return Finding(
        "low-l2-hit-rate",
        k.stats.name,
        "bottleneck",
        "medium" if (k.stats.share or 0) >= 0.1 else "low",
        f"{hit:.1f}% of its L2 requests hit ({name})",
        "reuse data while it is in cache: tile or block the loops, reorder work so that "
        "neighbouring workgroups share data; a kernel that reads each byte once (a copy) "
        "cannot do better",
        {name: hit},
        {"l2_hit_min_pct": L2_HIT_LOW},
    )


def lds_bank_conflicts(k: KernelView) -> Finding | None:
    per_access = _metric(k, "LDS Bank Conflicts/Access")
    pct = _metric(k, "LDSBankConflict (recomputed)", "LDSBankConflict")
    if per_access is not None and per_access[1] > BANK_CONFLICTS_HIGH:
        name, value, limit = per_access[0], per_access[1], BANK_CONFLICTS_HIGH
    elif per_access is None and pct is not None and pct[1] > BANK_CONFLICT_PCT_HIGH:
        name, value, limit = pct[0], pct[1], BANK_CONFLICT_PCT_HIGH
    else:
        return None
    return Finding(
        "lds-bank-conflicts",
        k.stats.name,
        "bottleneck",
        "medium",
        f"LDS bank conflicts: {name} = {sig(value)}",
        "pad shared arrays (e.g. [N][N+1]), or change the access stride so that the lanes "
        "of a wave hit different banks",
        {name: value},
        {name: limit},
    )


def low_active_threads(k: KernelView) -> Finding | None:
    found = _metric(k, "VALU Active Threads")
    wave = k.machine.wave_size or 64
    if found is None or found[1] >= ACTIVE_THREADS_LOW * wave:
        return None
    return Finding(
        "low-active-threads",
        k.stats.name,
        "bottleneck",
        "medium",
        f"{found[1]:.1f} of {wave} lanes active per VALU instruction: branch divergence or "
        "partial waves",
        "make neighbouring work-items take the same branch (sort or bin the work), and size "
        "workgroups in multiples of the wave size",
        {"active_threads": found[1], "wave_size": wave},
        {"active_share_min": ACTIVE_THREADS_LOW},
    )


def stragglers(p: ProgramView) -> list[Finding]:
    """One finding per rank whose kernel time exceeds the median rank's (analysis.ranks)."""
    view = p.ranks
    if view is None:
        return []
    out = []
    for s in view.stragglers:
        excess = s.total_ns / s.median_ns - 1
        out.append(
            Finding(
                "straggler",
                None,
                "program",
                "high" if excess >= 0.25 else "medium",
                f"rank {s.rank} ({s.label}) spends {excess:.0%} more time in kernels than the "
                f"median rank; slower kernels: {', '.join(s.kernels) or 'none alone'}",
                "look at that rank's GPU (clocks, thermals, a shared or partitioned device) and "
                "its share of the work (load balance); the others wait for it at every "
                "collective",
                {
                    "rank": s.rank,
                    "kernel_s": s.total_ns / 1e9,
                    "median_s": s.median_ns / 1e9,
                    "kernels": ", ".join(s.kernels),
                },
                {"excess_max": STRAGGLER_EXCESS},
                excess / (1 + excess),
                f"gain <= (rank - median) / rank = {excess / (1 + excess):.3f}",
            )
        )
    return out
