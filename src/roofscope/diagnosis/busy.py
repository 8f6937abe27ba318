"""Busy is not the limit (issue 38, point 3): Nsight Compute's "Compute (SM) Throughput",
"SM Busy" and "Issue Slots Busy" measure how busy the SM is issuing instructions (the busiest
of its sub-unit throughputs), not how near its math is to the hardware's ceiling. On the RTX
5070 gemm_naive corpus profile the SM reads 97.3 % while, with the kernel's FLOPs given
(--work), the FLOP rate is 5.7 % of its fp32 roof: the SM is busy with loads and address
arithmetic. So a compute-near-roof verdict needs the FLOP rate, or a pipe's own utilisation
(``sm__inst_executed_pipe_*``, ``sm__pipe_*_cycles_active``), near its ceiling; an issue
measure alone gets this finding, which names what is busy, what that means and, where the
profile has them, the FLOP rate against its roof and the busiest pipe.
"""

from __future__ import annotations

from collections.abc import Callable

from roofscope.analysis.limiter import Utilisation
from roofscope.diagnosis.evidence import KernelView
from roofscope.diagnosis.findings import Finding, kernel_gain

RULE = "busy-not-at-roof"
# ncu's SM measures of issue activity: busy, but no measure of how near the math is to a peak
ISSUE_MEASURES = ("Compute (SM) Throughput", "SM Busy", "Issue Slots Busy")
PRESCRIPTION = (
    "the SM issues instructions nearly all the time, but few of them are the math: cut the "
    "instructions per FLOP (address and index arithmetic, reloading the same data: tile it "
    "through shared memory and registers), and put the math on the FMA or tensor-core pipes; "
    "Nsight Compute's Compute Workload Analysis (sm__inst_executed_pipe_*) names the busy pipe"
)


def issue_measure(u: Utilisation) -> bool:
    return u.evidence in ISSUE_MEASURES


def busy_not_at_roof(k: KernelView, busy: Utilisation) -> Finding:
    """The finding for a kernel whose busiest compute measure is an issue measure."""
    flop = _best(k, lambda u: u.evidence.startswith("roofline:"))
    pipe = _best(k, lambda u: u.unit.endswith(("pipe", "pipe (cycles)")))
    gain, formula = kernel_gain(k.stats.share, flop.pct_of_peak / 100) if flop else (None, None)
    return Finding(
        RULE,
        k.stats.name,
        "bottleneck",
        "high" if (gain or 0) >= 0.1 else "medium" if (k.stats.share or 0) >= 0.02 else "low",
        _summary(busy, flop, pipe),
        PRESCRIPTION,
        {
            "unit": busy.unit,
            "pct_of_peak": busy.pct_of_peak,
            "evidence": busy.evidence,
            "flop_pct_of_roof": flop.pct_of_peak if flop else None,
            "flop_ceiling": flop.unit if flop else None,
            "busiest_pipe": pipe.unit if pipe else None,
            "busiest_pipe_pct": pipe.pct_of_peak if pipe else None,
            "share": k.stats.share,
        },
        {},
        gain,
        formula,
    )


def _best(k: KernelView, keep: Callable[[Utilisation], bool]) -> Utilisation | None:
    units = k.limiter.units if k.limiter else ()
    return next((u for u in units if u.side == "compute" and keep(u)), None)


def _summary(busy: Utilisation, flop: Utilisation | None, pipe: Utilisation | None) -> str:
    head = (
        f"{busy.unit} busy, not at its limit: {busy.evidence} {busy.pct_of_peak:.1f}% counts "
        "instruction issue, not math"
    )
    if flop is not None:
        head += f"; its FLOP rate is {flop.pct_of_peak:.1f}% of its {flop.unit} roof"
    if pipe is not None:
        head += f"; its busiest pipe, {pipe.unit}, is at {pipe.pct_of_peak:.1f}%"
    if flop is None and pipe is None:
        head += "; no FLOP count or pipe utilisation in the profile says how near its math is"
    return head
