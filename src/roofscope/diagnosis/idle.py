"""The idle-time rule: a device idle IDLE_SHARE = 20 % or more of its span.

Idle is over the device time (the devices' spans summed, so that N devices idle half of the
same wall read 50 %, not N x 50 %). Its summary gives the share of the idle time inside each
kind of host range (PyTorch data-loader steps, blocking runtime calls), and its prescription
names the cause first when one explains half of it or more (idle_cause.py). In a
counter-collection run (a rocprof-compute workload, rocprofv3 or rocprof v1 counter passes)
the idle time is the profiler's overhead: a note (``idle-in-counter-run``), never a
verdict. On a trace under 1 ms of device time or 10 dispatches the verdict is lowered one
step (trust.py).
"""

from __future__ import annotations

from roofscope.diagnosis.evidence import ProgramView
from roofscope.diagnosis.findings import Finding, Value
from roofscope.diagnosis.graphs import feed_advice
from roofscope.diagnosis.idle_cause import CAUSE_SHARE, causes, main_cause
from roofscope.diagnosis.rules import severity
from roofscope.diagnosis.trust import IDLE_MIN_DISPATCHES, IDLE_MIN_SPAN_NS, temper_idle
from roofscope.model import words
from roofscope.model.words import sig

IDLE_SHARE = 0.2


def idle_gaps(p: ProgramView) -> Finding | None:
    """Idle over the device time: the devices' spans summed, so that N devices idle half of
    the same wall read 50%, not N x 50%. In a counter-collection run the idle time is the
    profiler's: a note, not a verdict. A short trace's verdict is lowered (trust.py)."""
    if not p.span_ns or p.idle_ns is None or p.idle_ns < IDLE_SHARE * p.span_ns:
        return None
    share = p.idle_ns / p.span_ns
    evidence: dict[str, Value] = {
        "idle_s": p.idle_ns / 1e9,
        "device_span_s": p.span_ns / 1e9,
        "gaps": p.gaps,
    }
    if p.counter_run is not None:
        return _counter_run_note(p.counter_run, share, evidence)
    found = Finding(
        "idle-gaps",
        None,
        "program",
        severity(share),
        f"the GPU sat idle {share:.0%} of the time, in {words.count(p.gaps or 0, 'gap')} of at "
        f"least {sig((p.gap_threshold_ns or 0) / 1000)} µs{_causes_said(p, evidence)}",
        _feed(p),
        evidence,
        {
            "idle_share_min": IDLE_SHARE,
            "loader_share_min": CAUSE_SHARE,
            "span_min_ns": IDLE_MIN_SPAN_NS,
            "dispatches_min": IDLE_MIN_DISPATCHES,
        },
        share,
        f"gain <= idle / device time = {sig(p.idle_ns / 1e9, 6)} s / {sig(p.span_ns / 1e9, 6)} s "
        f"= {share:.3f}",
    )
    return temper_idle(found, p.span_ns, p.dispatches)


def _causes_said(p: ProgramView, evidence: dict[str, Value]) -> str:
    """Each host cause's share of the idle time, into the evidence and the summary."""
    said = ""
    for cause in causes(p):
        evidence[cause.evidence] = cause.idle_ns / 1e9
        if round(cause.share, 2) >= 0.01:  # under 1 %: evidence only, no words
            said += f"; {cause.share:.0%} of the idle time falls inside {cause.said}"
    return said


def _feed(p: ProgramView) -> str:
    cause = main_cause(p)
    feed = feed_advice(p)
    if cause is None:
        return feed
    return cause.prescription + "; then " + feed.removeprefix("keep the GPU fed: ")


def _counter_run_note(counter_run: str, share: float, evidence: dict[str, Value]) -> Finding:
    """Idle time between the dispatches of a counter-collection run: the profiler's own."""
    return Finding(
        "idle-in-counter-run",
        None,
        "program",
        "low",
        f"idle {share:.0%} of the time, but between the dispatches of a counter-collection "
        f"run ({counter_run}): the profiler's own overhead (it serialises dispatches and "
        "reads counters between them), not the program's; no idle verdict is given",
        "take timing and idle time from a trace run (rocprofv3 --kernel-trace, rocprof "
        "--hip-trace, nsys, torch.profiler) and read it with this one",
        {**evidence, "counter_run": counter_run},
        {"idle_share_min": IDLE_SHARE},
    )
