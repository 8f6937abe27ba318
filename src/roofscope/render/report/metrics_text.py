"""The counter metrics of the hot kernels in the terminal view, a few lines per kernel."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.text import Text

from roofscope.analysis.metrics.nvidia import PIPE_METRICS
from roofscope.analysis.metrics.value import MetricValue
from roofscope.diagnosis.profiler import FINDING_KINDS, ProfilerRule
from roofscope.render.columns import wrapped
from roofscope.render.names import short_names
from roofscope.render.numbers import count, quantity, sig
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
    shown = kernels[:MAX_KERNELS]
    said: set[str] = set()  # the peer notes explained already: later kernels get the value
    labels = short_names([k.name for k in shown], console.width - 2)
    for k, label in zip(shown, labels, strict=True):
        m = report.metrics.kernels[k.name]
        wrapped(console, label, "  ", "    ")
        values = [
            f"{name} {value_text(m.values[name])}"
            for name in SHOWN
            if name in m.values and m.values[name].value_dispatch_mean is not None
        ]
        if values:
            wrapped(console, " · ".join(values), "    ", "      ")
        for name in SHOWN:
            for note in (peer_once(name, m.values, said), pass_note(name, m.values)):
                if note:
                    wrapped(console, f"{name}: {note}", "    ", "      ")
        occ = m.occupancy
        if occ is not None:
            line = (
                f"    occupancy: {sig(occ.waves_per_simd)}/{occ.max_waves_per_simd} waves per SIMD "
                f"({occ.fraction:.0%}), limited by {occ.limiter}"
            )
            if m.achieved is not None and m.achieved.ratio is not None:
                line += f"; achieved {m.achieved.ratio:.0%} of that"
            wrapped(console, line.strip(), "    ", "      ")
        _rules(console, report.profiler_rules.get(k.name, ()))
    if len(kernels) > MAX_KERNELS:
        console.print(
            f"  … {count(len(kernels) - MAX_KERNELS, 'more kernel')} with metrics (see --json)"
        )


def _rules(console: Console, rules: tuple[ProfilerRule, ...]) -> None:
    """Nsight Compute's rules: those that are findings by name, the others whole."""
    shown: set[tuple[str, str]] = set()
    for r in rules:
        if r.kind in FINDING_KINDS:
            if (r.section, r.rule) not in shown:
                wrapped(console, f"ncu {r.label}: see Findings", "    ", "      ")
            shown.add((r.section, r.rule))
        else:
            wrapped(console, f"ncu {r.label}: {r.text}", "    ", "      ")


def peer_note(name: str, values: Mapping[str, MetricValue]) -> str | None:
    """Why ``name``'s value departs from another tool's, with that tool's value; None where
    it does not."""
    v = values.get(name)
    other = None if v is None or v.peer is None else values.get(v.peer)
    if v is None or not v.note or other is None or other.value_dispatch_mean is None:
        return None
    if value_text(other) == value_text(v):  # the two ways agree here: the note says nothing
        return None
    return f"{v.note}, which gives {value_text(other)}"


def peer_once(name: str, values: Mapping[str, MetricValue], said: set[str]) -> str | None:
    """``peer_note`` the first time; after it, only the other tool's value."""
    note = peer_note(name, values)
    if note is None:
        return None
    if name not in said:
        said.add(name)
        return note
    v = values[name]
    return f"{v.peer} {value_text(values[v.peer or ''])} (why it differs: above)"


def pass_note(name: str, values: Mapping[str, MetricValue]) -> str | None:
    """Which passes a cross-pass ratio's counters were counted in; None for any other."""
    v = values.get(name)
    if v is None or v.cross_pass is None:
        return None
    counted = ", ".join(f"{c} in {f}" for c, f in v.cross_pass.counters)
    return (
        f"cross-pass ratio: {counted}, separate replays of the dispatch, so it can pass "
        "100 % or any bound where the replays ran differently"
    )


def value_text(v: MetricValue) -> str:
    """The value (and the time-weighted one where it differs), marked when cross-pass."""
    unit = "" if v.unit == "ratio" else v.unit
    shown = quantity(v.value_dispatch_mean, unit)
    if v.aggregation_differs and v.value_time_weighted is not None:
        shown += f" [{quantity(v.value_time_weighted, unit)}]"
    return shown + (" (cross-pass)" if v.cross_pass else "")
