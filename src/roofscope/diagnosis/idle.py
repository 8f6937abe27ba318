"""The idle-time rule: a device idle IDLE_SHARE = 20 % or more of its span.

Idle is over the device time (the devices' spans summed, so that N devices idle half of the
same wall read 50 %, not N x 50 %). Its prescription points at the input pipeline first
when LOADER_SHARE = half of the idle time or more falls inside PyTorch data-loader steps
(``enumerate(DataLoader)``, analysis/input_wait.py). In a counter-collection run (a
rocprof-compute workload, rocprofv3 or rocprof v1 counter passes) the idle time is the
profiler's overhead: a note (``idle-in-counter-run``), never a verdict. On a trace under
1 ms of device time or 10 dispatches the verdict is lowered one step (trust.py).
"""

from __future__ import annotations

from roofscope.diagnosis.evidence import ProgramView
from roofscope.diagnosis.findings import Finding, Value
from roofscope.diagnosis.graphs import feed_advice
from roofscope.diagnosis.rules import severity
from roofscope.diagnosis.trust import IDLE_MIN_DISPATCHES, IDLE_MIN_SPAN_NS, temper_idle
from roofscope.model import words
from roofscope.model.words import sig

IDLE_SHARE = 0.2
LOADER_SHARE = 0.5  # of the idle time inside data-loader steps: the input pipeline first


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
        f"least {sig((p.gap_threshold_ns or 0) / 1000)} µs{_loader_said(p, evidence)}",
        _feed(p),
        evidence,
        {
            "idle_share_min": IDLE_SHARE,
            "loader_share_min": LOADER_SHARE,
            "span_min_ns": IDLE_MIN_SPAN_NS,
            "dispatches_min": IDLE_MIN_DISPATCHES,
        },
        share,
        f"gain <= idle / device time = {sig(p.idle_ns / 1e9, 6)} s / {sig(p.span_ns / 1e9, 6)} s "
        f"= {share:.3f}",
    )
    return temper_idle(found, p.span_ns, p.dispatches)


GRAPH_PHRASE = "capture launch sequences in HIP/CUDA graphs"
FEED = (
    f"keep the GPU fed: fuse small kernels, {GRAPH_PHRASE}, "
    "remove synchronisations (device syncs, blocking copies) between launches, overlap "
    "host work with streams"
)


def _loader_share(p: ProgramView) -> float | None:
    if not p.idle_ns or p.loader_idle_ns is None:
        return None
    return p.loader_idle_ns / p.idle_ns


def _loader_said(p: ProgramView, evidence: dict[str, Value]) -> str:
    """The data-loader share of the idle time, into the evidence and the summary."""
    share = _loader_share(p)
    if share is None or p.loader_idle_ns is None:
        return ""
    evidence["data_loader_idle_s"] = p.loader_idle_ns / 1e9
    return f"; {share:.0%} of the idle time falls inside data-loader steps"


def _feed(p: ProgramView) -> str:
    share = _loader_share(p)
    feed = _graphs_said(p)
    if share is None or share < LOADER_SHARE:
        return feed
    return (
        "feed the GPU from a faster input pipeline first: the gaps sit in the data-loader "
        "steps (DataLoader num_workers > 0, pin_memory=True, prefetch_factor, "
        "persistent_workers; decode and augment off the training loop or on the GPU); "
        "then " + feed.removeprefix("keep the GPU fed: ")
    )


def _graphs_said(p: ProgramView) -> str:
    """FEED, its graph advice replaced where graph launches replayed some dispatches."""
    said = feed_advice(p)
    return FEED if said is None else FEED.replace(GRAPH_PHRASE, said)


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
