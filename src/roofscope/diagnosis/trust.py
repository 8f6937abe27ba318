"""How far a verdict can be trusted: measured ceilings as lower bounds, and severity that
follows the evidence a verdict rests on.

A measured ceiling (rocprof-compute's ``roofline.csv``, a ``--ceilings`` file such as
``roofscope peaks`` writes) is what a benchmark reached, a lower bound of what the hardware
can do. A kernel above it is ``at-measured-roof``, a caveat naming the ceiling's origin, not
a validity problem (the kernel's other verdicts are still given; its roofline near-roof
verdict, which would say the same, is not: once_at_roof), when it stays within the catalogue's
theoretical peak of the same data type or memory level (same scope), or, where the catalogue
has none, within MEASURED_TOLERANCE (110 %) of the measured ceiling. On an H200 a bf16
product of all-ones matrices (less power, higher clocks) reached 112 % of the 773 TFLOP/s a
random-data benchmark measured, and 88 % of the 989 the datasheet states: the benchmark
under-measured, the hardware was not exceeded. ``above-roof`` (high) is left for a kernel
above the catalogue's theoretical peak, above a ceiling that states the peak itself (the
catalogue's, ``--peak-flops``/``--peak-bw``), or, with no theoretical peak to hold it to,
beyond the tolerance.

Each reason below lowers a verdict's severity one step (high -> medium -> low), and the
finding says why, in its summary and in ``evidence.severity_lowered``:

- a roofline verdict resting on catalogue ceilings the report doubts (``partial-device``:
  the profile reports another compute-unit count than the catalogue's product; see
  analysis/device.py ``catalogue_doubt``). A GPU name that fits several products uses only
  the ceilings its candidates share (within 0.5 %), so no verdict rests on a ceiling they
  disagree on; when no candidate has the reported count, the doubt above applies;
- any verdict about a kernel seen in one dispatch (validity.MIN_DISPATCHES = 2);
- ``idle-gaps`` on a trace too short to judge: device time under IDLE_MIN_SPAN_NS = 1 ms or
  fewer than IDLE_MIN_DISPATCHES = 10 dispatches (launch and first-touch costs dominate
  such a trace's idle time).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec.structs import replace

from roofscope.analysis.roofline import Bound, KernelRoofline, Roofline
from roofscope.catalogue.ceilings import Ceiling
from roofscope.diagnosis.findings import Finding, Severity
from roofscope.model.words import sig

MEASURED_TOLERANCE = 1.10
THEORY_TOLERANCE = 1e-9
IDLE_MIN_SPAN_NS = 1_000_000
IDLE_MIN_DISPATCHES = 10
LOWER: dict[Severity, Severity] = {"high": "medium", "medium": "low", "low": "low"}


class RoofStanding(msgspec.Struct, frozen=True):
    """A kernel above the roof it was placed against, and what that roof is worth."""

    efficiency: float  # against the ceiling that bounds it
    ceiling: Ceiling | None  # that ceiling (None where the roofline names none)
    of_theoretical: float | None  # against the catalogue's peak of the same key and scope
    theoretical: Ceiling | None

    @property
    def at_measured_roof(self) -> bool:
        c, theory = self.ceiling, self.of_theoretical
        if c is None or not c.lower_bound:
            return False
        if theory is not None:
            return theory <= 1 + THEORY_TOLERANCE
        return self.efficiency <= MEASURED_TOLERANCE


def bounding_ceiling(k: KernelRoofline, ceilings: Sequence[Ceiling]) -> Ceiling | None:
    """The ceiling that sets a kernel's attainable rate: its compute ceiling when it is
    compute-bound, else the bandwidth of its limiting level."""
    if k.bound is Bound.COMPUTE:
        return next((c for c in ceilings if c.kind == "compute" and c.name == k.ceiling), None)
    if k.bound is Bound.MEMORY:
        return next((c for c in ceilings if c.level == k.limiting_level), None)
    return None


def standing(k: KernelRoofline, roof: Roofline) -> RoofStanding | None:
    """None unless the kernel is above its roof."""
    if not k.above_roof or k.efficiency is None:
        return None
    c = bounding_ceiling(k, roof.ceilings)
    theory = None
    if c is not None:
        theory = next((t for t in roof.theoretical if t.key == c.key and t.scope == c.scope), None)
    of_theory = k.efficiency * c.value / theory.value if c and theory else None
    return RoofStanding(k.efficiency, c, of_theory, theory)


def roof_finding(
    name: str, s: RoofStanding, device: str | None, *, derived: bool = False
) -> Finding:
    """``at-measured-roof`` (a low caveat) or ``above-roof`` (high) for a kernel above its
    roof; ``derived``: its work comes from shapes (each operand counted once from memory),
    so above a memory roof it read part of them from cache (low)."""
    c = s.ceiling
    evidence = {
        "efficiency": s.efficiency,
        "ceiling": c.name if c else None,
        "ceiling_source": c.source if c else None,
        "ceiling_origin": c.origin if c else None,
        "efficiency_of_theoretical": s.of_theoretical,
    }
    if s.at_measured_roof and c is not None:
        return Finding(
            "at-measured-roof",
            name,
            "validity",
            "low",
            _at_measured(s, c),
            "read its efficiency as 'at the roof': a measured ceiling is a lower bound of "
            "the peak; only less work (fusion, fewer bytes or FLOPs) makes it faster",
            evidence,
            {"measured_tolerance": MEASURED_TOLERANCE},
        )
    if derived and c is not None and c.kind == "memory":
        return Finding(
            "above-roof",
            name,
            "validity",
            "low",
            f"its operands' bytes (from the shapes: each operand once from memory) move at "
            f"{s.efficiency:.0%} of the {c.name} bandwidth: part of them came from cache",
            "read its place on the roofline as an estimate; profile it with counters "
            "(Nsight Compute, rocprof-compute) for the traffic it really moved",
            evidence,
            {"efficiency_max": 1.0},
        )
    return Finding(
        "above-roof",
        name,
        "validity",
        "high",
        f"reaches {s.efficiency:.0%} of its roof{_why(s)}: more than the hardware can do",
        "check the GPU (--gpu; detected: "
        f"{device or 'unknown'}), whether counters cover one XCD or GCD while the "
        "ceilings are whole-chip (or the partition mode), and the work numbers "
        "(per call or per kernel?)",
        evidence,
        {"efficiency_max": 1.0, "measured_tolerance": MEASURED_TOLERANCE},
    )


def _at_measured(s: RoofStanding, c: Ceiling) -> str:
    """The caveat's summary: how far above the measured ceiling, and, beyond the tolerance,
    where the catalogue's peak leaves the kernel."""
    reached = f"the {c.name} ceiling a benchmark reached ({c.source})"
    if s.efficiency <= MEASURED_TOLERANCE or s.theoretical is None:
        return (
            f"at the measured roof: up to {MEASURED_TOLERANCE - 1:.0%} above {reached}, "
            "which the hardware can beat"
        )
    unit = "B/s" if c.kind == "memory" else "FLOP/s"
    return (
        f"above the measured roof: {s.efficiency:.0%} of {reached}, but "
        f"{s.of_theoretical:.0%} of the catalogue's {sig(s.theoretical.value / 1e12)} T{unit} "
        "peak: the benchmark under-measured this roof"
    )


def _why(s: RoofStanding) -> str:
    """The ceiling, and why being above it is a problem where the ceiling is measured."""
    c = s.ceiling
    if c is None:
        return ""
    reasons = [f"{c.name}, {c.source}"]
    if c.lower_bound and s.efficiency > MEASURED_TOLERANCE:
        reasons.append(f"beyond the {MEASURED_TOLERANCE - 1:.0%} a measured ceiling allows")
    if c.origin != "catalogue" and s.of_theoretical is not None and s.of_theoretical > 1:
        reasons.append(f"{s.of_theoretical:.0%} of the catalogue's theoretical peak")
    return f" ({'; '.join(reasons)})"


def once_at_roof(
    problems: Sequence[Finding], verdicts: Sequence[Finding], k: KernelRoofline | None
) -> list[Finding]:
    """The verdicts, less the roofline's near-roof one of a kernel at its measured roof:
    ``at-measured-roof`` says the same (at the roof of that ceiling; only less work makes it
    faster), and one kernel's one standing is said once. A near-roof verdict the limiter gave
    (another unit than the roof's) stays."""
    if k is None or k.bound is None or not any(p.rule == "at-measured-roof" for p in problems):
        return list(verdicts)
    said = f"{k.bound}-near-roof"
    return [
        f for f in verdicts if not (f.rule == said and f.evidence.get("efficiency") == k.efficiency)
    ]


def lowered(f: Finding, reason: str) -> Finding:
    """The finding one severity step lower, saying why."""
    return replace(
        f,
        severity=LOWER[f.severity],
        summary=f"{f.summary} (severity lowered: {reason})",
        evidence={**f.evidence, "severity_lowered": reason},
    )


def temper_kernel(
    found: Sequence[Finding], k: KernelRoofline | None, roof: Roofline, calls: int
) -> list[Finding]:
    """Lower the bottleneck verdicts about one kernel that rest on thin evidence."""
    doubted = (
        roof.doubt is not None
        and k is not None
        and (c := bounding_ceiling(k, roof.ceilings)) is not None
        and c.origin == "catalogue"
    )
    out = []
    for f in found:
        if f.kind == "bottleneck" and calls < 2:
            f = lowered(f, "it rests on a single dispatch")
        if f.kind == "bottleneck" and doubted and "efficiency" in f.evidence:
            f = lowered(f, "it rests on catalogue ceilings the report doubts (partial-device)")
        out.append(f)
    return out


def temper_idle(f: Finding, span_ns: int, dispatches: int) -> Finding:
    """Lower an idle verdict drawn from a trace too short to judge."""
    if span_ns >= IDLE_MIN_SPAN_NS and dispatches >= IDLE_MIN_DISPATCHES:
        return f
    return lowered(
        f,
        f"the trace is short ({_ms(span_ns)} ms of device time, {dispatches:,} "
        f"dispatch{'' if dispatches == 1 else 'es'}; idle time is judged from "
        f"{sig(IDLE_MIN_SPAN_NS / 1e6)} ms and "
        f"{IDLE_MIN_DISPATCHES} dispatches on)",
    )


def _ms(ns: float) -> str:
    """Milliseconds to 3 figures, whole from 100 ms on (never an exponent)."""
    return f"{ns / 1e6:,.0f}" if ns >= 99.95e6 else sig(ns / 1e6)
