"""The counter metrics of the hot kernels in the terminal view, a few lines per kernel."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from roofscope.metrics.derived import MetricValue
from roofscope.metrics.nvidia import PIPE_METRICS
from roofscope.report import Report

SHOWN = (
    "VALU Utilization",
    "VALU Active Threads",
    "IPC (Issue)",
    "Wavefront Occupancy",
    "Vector L1D Cache Hit Rate",
    "L2 Cache Hit Rate",
    "L2-Fabric Read Bandwidth",
    "L2-Fabric Write Bandwidth",
    "LDS Bank Conflicts/Access",
    "FETCH_SIZE",
    "WRITE_SIZE",
    "LDSBankConflict",
    "VALUBusy",
    "L2CacheHit",
    "Compute (SM) Throughput",
    "Memory Throughput",
    "DRAM Bandwidth",
    "L1/TEX Hit Rate",
    "Achieved Occupancy",
    "Theoretical Occupancy",
    "SM Busy",
    *PIPE_METRICS,  # those the profile has (Nsight Compute's Compute Workload Analysis)
)
RULES_SHOWN = 3  # the profiler's own rules per kernel, largest estimated speedup first
MAX_KERNELS = 5


def metrics_section(console: Console, report: Report) -> None:
    kernels = [k for k in report.hotspots.kernels if k.name in report.metrics.kernels]
    if not kernels:
        return
    console.print(
        Text(
            "Metrics of the hot kernels (mean over dispatches; time-weighted in [ ] where "
            "the two differ):",
            style="bold",
        )
    )
    for k in kernels[:MAX_KERNELS]:
        m = report.metrics.kernels[k.name]
        console.print(f"  {k.name}")
        values = [
            f"{name} {_value(m.values[name])}"
            for name in SHOWN
            if name in m.values and m.values[name].value_dispatch_mean is not None
        ]
        if values:
            console.print(f"    {' · '.join(values)}")
        occ = m.occupancy
        if occ is not None:
            line = (
                f"    occupancy: {occ.waves_per_simd:g}/{occ.max_waves_per_simd} waves per SIMD "
                f"({occ.fraction:.0%}), limited by {occ.limiter}"
            )
            if m.achieved is not None and m.achieved.ratio is not None:
                line += f"; achieved {m.achieved.ratio:.0%} of that"
            console.print(line)
        for r in report.profiler_rules.get(k.name, ())[:RULES_SHOWN]:
            gain = f", est. speedup {r.speedup_pct:g}%" if r.speedup_pct is not None else ""
            first = r.text.split(". ")[0][:110]
            console.print(f"    ncu {r.section}/{r.rule} ({r.kind}{gain}): {first}")
    if len(kernels) > MAX_KERNELS:
        console.print(f"  … {len(kernels) - MAX_KERNELS} more kernel(s) with metrics (see --json)")


def _value(v: MetricValue) -> str:
    unit = "" if v.unit in ("", "ratio") else f" {v.unit}"
    shown = "-" if v.value_dispatch_mean is None else f"{v.value_dispatch_mean:.3g}{unit}"
    if v.aggregation_differs and v.value_time_weighted is not None:
        shown += f" [{v.value_time_weighted:.3g}]"
    return shown
