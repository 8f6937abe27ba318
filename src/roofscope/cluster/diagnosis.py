"""The diagnosis of the cluster summary: the check-up's own checks and rules
(``diagnosis.registry``, ``diagnosis.diagnose.judged``) on views made from merged partials.

The kernel views have the partials' statistics (the first dispatch for the warm-up check;
the median within the sketch's error), their counter coverage (``evidence.kernel_facts``,
summed over the runs) and the cluster roofline; the program view their device time, copies,
short dispatches, data-loader wait and rank view. What the partials do not hold is empty:
counter metrics, occupancy and the limiter (so the rules that read them say nothing:
occupancy, L2 hit rate, LDS bank conflicts, active threads, a compute unit near its peak),
and the profiler's own rule rows (Nsight Compute). On profiles without counter metrics the
findings are ``analyze``'s own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.metrics.per_kernel import KernelMetrics
from roofscope.analysis.timeline import DEFAULT_GAP_NS
from roofscope.cluster.ranks import rank_view_of
from roofscope.diagnosis.diagnose import judged, studied_kernels
from roofscope.diagnosis.evidence import KernelFacts, KernelView, ProgramView
from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.trust import standing

if TYPE_CHECKING:
    from roofscope.cluster.partial import Partial
    from roofscope.cluster.roof import ClusterRoofline


def cluster_findings(p: Partial, hot: Hotspots, found: ClusterRoofline) -> list[Finding]:
    """The findings of the runs merged in ``p``: ``hot``, its kernels ranked
    (``cluster.hot``); ``found``, their roofline (``cluster.roof``)."""
    roof = found.result
    roofs = {k.name: k for k in roof.kernels}
    device = found.choice.name if found.choice is not None else None
    views = [
        KernelView(
            k,
            roofs.get(k.name),
            KernelMetrics(),
            Machine(),
            facts=p.facts.get(k.name, KernelFacts()),
            standing=standing(roofs[k.name], roof) if k.name in roofs else None,
            has_counters=p.has_counters,
            device=device,
        )
        for k in studied_kernels(hot, roof)
    ]
    return judged(views, program_view(p, hot), roof)


def program_view(p: Partial, hot: Hotspots) -> ProgramView:
    """What the program rules read, as ``diagnose`` gathers it from a profile."""
    devices = list(p.devices.values())
    timed = bool(devices)
    span = sum(d.span_ns for d in devices)
    return ProgramView(
        kernel_ns=hot.total_ns,
        span_ns=span if timed else None,
        idle_ns=span - sum(d.busy_ns for d in devices) if timed else None,
        gaps=sum(d.gaps for d in devices) if timed else None,
        gap_ns=sum(d.gap_ns for d in devices) if timed else None,
        gap_threshold_ns=DEFAULT_GAP_NS if timed else None,
        dispatches=hot.dispatches,
        copy_ns=float(sum(a.total_ns for (_, kind, _), a in p.activity.items() if kind == "copy")),
        has_counters=p.has_counters,
        counter_run=", ".join(p.counter_formats) or None if timed else None,
        loader_idle_ns=p.loader_idle_ns if timed else None,
        communication_ns=sum(k.total_ns or 0 for k in hot.kernels if k.communication),
        short_dispatches=p.short,
        ranks=rank_view_of(p),
    )
