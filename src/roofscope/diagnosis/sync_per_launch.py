"""A synchronisation after every launch: the host launches a kernel, then waits for the device
(or the stream) before it launches the next, so the device idles for each launch's latency and
for whatever the host does between. Read from an API trace (nsys cuda_api_trace, rocprofv3
hip_api_trace): the device/stream synchronisations that are the next call after a kernel launch
on the same thread (readers/io/host_calls.py), against the launches.

At LAUNCH_SHARE = half of the launches or more: "N of M launches are followed by a
synchronisation", with the device idle time inside those synchronisations. Not for fewer than
MIN_SYNCED synchronised launches (one launch, then the synchronisation that ends a program or
a step, is no loop), nor where the device sat idle for none of that time (nothing to gain).
"""

from __future__ import annotations

from roofscope.diagnosis.evidence import ProgramView
from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.rules import severity
from roofscope.model import words
from roofscope.model.words import sig

LAUNCH_SHARE = 0.5  # of the launches followed by a synchronisation
MIN_SYNCED = 2  # synchronised launches: a pattern, not one launch and the program's end

FIX = (
    "remove the synchronisation after each launch: kernels on one stream already run in "
    "order, so let the stream order the work and synchronise once per step (or where the "
    "host reads a result); check errors with cudaGetLastError/hipGetLastError without "
    "synchronising, and in debug builds only"
)


def sync_per_launch(p: ProgramView) -> Finding | None:
    s = p.launch_syncs
    if s is None or s.synced < max(MIN_SYNCED, LAUNCH_SHARE * s.launches) or s.idle_ns <= 0:
        return None
    gain = s.idle_ns / p.span_ns if p.span_ns else None
    return Finding(
        "sync-per-launch",
        None,
        "program",
        severity(gain),
        f"{s.synced:,} of {words.count(s.launches, 'launch')} "
        f"{'is' if s.launches == 1 else 'are'} followed by a synchronisation; the GPU sat idle "
        f"{sig(s.idle_ns / 1e6)} ms inside them",
        FIX,
        {"launches": s.launches, "synced_launches": s.synced, "synced_idle_s": s.idle_ns / 1e9},
        {"launch_share_min": LAUNCH_SHARE, "synced_launches_min": MIN_SYNCED},
        gain,
        None
        if gain is None
        else f"gain <= idle in those syncs / device time = {sig(s.idle_ns / 1e9, 6)} s / "
        f"{sig((p.span_ns or 0) / 1e9, 6)} s = {gain:.3f}",
    )
