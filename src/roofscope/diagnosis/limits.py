"""What the limiter (analysis.limiter) and the launch shape rule out: a memory-side
prescription for a kernel whose compute units are busy, and a memory-access one for a kernel
whose grid cannot fill the device (diagnosis/launch.py says that instead).

A kernel whose busiest unit is a compute unit at FAR of its peak or more, or whose busiest
compute unit is at BUSY_PCT of its peak or more, spends its time in the compute units, which
better memory access would not relieve. Where a memory level is near its roof too (the
roofline's memory-near-roof), both sides are busy and the data cannot say which to relieve:
no verdict, as between FAR and NEAR of a roof. Below FAR no unit limits the kernel
(latency-bound, as Nsight Compute's speed-of-light reads it): the busiest decides nothing.
"""

from __future__ import annotations

from roofscope.analysis.limiter import Utilisation
from roofscope.analysis.roofline import Bound
from roofscope.diagnosis.evidence import KernelView
from roofscope.diagnosis.launch import fewer_blocks_than_units

FAR = 0.5  # of a roof (rules) or of a unit's peak: below it the kernel loses to how it works
BUSY_PCT = 60.0  # % of a unit's peak: that unit, not latency or another unit, limits the kernel


def compute_limited(k: KernelView) -> Utilisation | None:
    """The compute unit that rules out a memory-side prescription for ``k``: its busiest unit
    when that is a compute unit at FAR of its peak or more, else its busiest compute unit at
    BUSY_PCT or more. Below FAR no unit limits (latency-bound, as Nsight Compute reads it)."""
    if k.limiter is None:
        return None
    top = next((u for u in k.limiter.units if u.side == "compute"), None)
    if top is None:
        return None
    busiest = top is k.limiter.busiest and top.pct_of_peak >= 100 * FAR
    return top if busiest or top.pct_of_peak >= BUSY_PCT else None


def compute_side(k: KernelView) -> bool:
    """Compute-bound on the roofline, or by its limiter: no memory-side prescription."""
    return (k.roof is not None and k.roof.bound is Bound.COMPUTE) or compute_limited(k) is not None


def launch_limited(k: KernelView) -> bool:
    """Fewer blocks than SMs (CUs), or the profiler calls the grid too small: SMs without work
    explain its low bandwidth before any access pattern does."""
    return fewer_blocks_than_units(k) or k.producer_small is not None
