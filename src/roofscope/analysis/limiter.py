"""The limiter of a kernel: every unit the profile measures, as a share of its peak, and the
one nearest its peak (the idea of Nsight Compute's Speed-of-Light section).

The units come from two places:

- the profiler's own busy and throughput percentages and the speed-of-light rates that have a
  peak (:mod:`roofscope.analysis.metrics`): AMD's VALU/SALU/MFMA utilisation, VALU and MFMA FLOP and
  IOP rates, LDS/vL1D/L2/fabric bandwidth; Nsight Compute's SM and memory throughputs, SM busy
  and its pipes;
- the roofline: the kernel's FLOPs (or OPs) of each data type and unit over its time against
  that ceiling, where the ceiling exists, and its bytes per memory level against that level's
  bandwidth.

Each utilisation is of the mean over dispatches for the profiler's metrics (as their panels
print it) and of the totals over the kernel's time for the roofline's. The busiest is the
largest share; ties keep the order above (the profiler's own metric first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

from roofscope.analysis.metrics.value import NCU_SOURCE, PIPE_LABEL, MetricValue
from roofscope.analysis.roofline import KernelRoofline
from roofscope.catalogue.ceilings import LEVELS, Ceiling

Side = Literal["compute", "memory"]

# metric name -> (unit, side); only metrics that measure how busy a unit is against its peak
# (hit rates, latencies and occupancy are not)
UNITS: dict[str, tuple[str, Side]] = {
    "VALU Utilization": ("VALU", "compute"),
    "MFMA Utilization": ("MFMA", "compute"),
    "SALU Utilization": ("SALU", "compute"),
    "Branch Utilization": ("Branch", "compute"),
    "VALU FLOPs": ("VALU FLOP rate", "compute"),
    "VALU IOPs": ("VALU IOP rate", "compute"),
    "VMEM Utilization": ("VMEM", "memory"),
    "LDS Bandwidth": ("LDS", "memory"),
    "Vector L1D Cache Bandwidth": ("vL1D", "memory"),
    "Scalar L1D Cache Bandwidth": ("sL1D", "memory"),
    "L2 Cache Bandwidth": ("L2", "memory"),
    "L2-Fabric Read Bandwidth": ("fabric read", "memory"),
    "L2-Fabric Write Bandwidth": ("fabric write", "memory"),
    "VALUBusy": ("VALU", "compute"),
    "SALUBusy": ("SALU", "compute"),
    "MemUnitBusy": ("memory unit", "memory"),
    "Compute (SM) Throughput": ("SM", "compute"),
    "SM Busy": ("SM instructions", "compute"),
    "Issue Slots Busy": ("issue slots", "compute"),
    "Memory Throughput": ("memory", "memory"),
    "DRAM Throughput": ("DRAM", "memory"),
    "L1/TEX Cache Throughput": ("L1/TEX", "memory"),
    "L2 Cache Throughput": ("L2", "memory"),
}
_MFMA = ("F8", "BF16", "F16", "F32", "F64", "F6F4")
UNITS |= {f"MFMA FLOPs ({d})": (f"MFMA {d} FLOP rate", "compute") for d in _MFMA}
UNITS["MFMA IOPs (INT8)"] = ("MFMA INT8 IOP rate", "compute")
# the pipes that issue memory instructions count on the memory side
_MEMORY_PIPES = ("LSU", "TEX", "Shared", "ADU")
for _label in PIPE_LABEL.values():
    _side: Side = "memory" if _label in _MEMORY_PIPES else "compute"
    UNITS[f"{_label} Pipe Instructions"] = (f"{_label} pipe", _side)
    UNITS[f"{_label} Pipe Cycles Active"] = (f"{_label} pipe (cycles)", _side)


class Utilisation(msgspec.Struct, frozen=True):
    unit: str  # "VALU", "SM", "Tensor pipe", "fp32-vector", "hbm", ...
    side: Side
    pct_of_peak: float
    evidence: str  # the metric's name, or "roofline: <ceiling> ceiling"
    source: str  # where the metric's formula comes from, or the ceiling's origin and value


class Limiter(msgspec.Struct, frozen=True):
    units: tuple[Utilisation, ...]  # busiest first

    @property
    def busiest(self) -> Utilisation:
        return self.units[0]

    @property
    def compute_pct(self) -> float | None:
        """The busiest compute unit's share of its peak; None when none is measured."""
        return max((u.pct_of_peak for u in self.units if u.side == "compute"), default=None)


def limiter(
    values: Mapping[str, MetricValue],
    roof: KernelRoofline | None,
    ceilings: Sequence[Ceiling],
) -> Limiter | None:
    """Every measured unit of one kernel, busiest first; None when nothing has a peak."""
    found = [*_from_metrics(values), *_from_roofline(roof, ceilings)]
    if not found:
        return None
    order = sorted(range(len(found)), key=lambda i: (-found[i].pct_of_peak, i))
    return Limiter(tuple(found[i] for i in order))


def out_of_range(values: Mapping[str, MetricValue]) -> list[tuple[str, float]]:
    """The percentages the profiler wrote itself (no peak) that are no share of a peak: below
    0, or above 100 where ncu did not write them (a damaged or hand-edited export); the limiter
    leaves them out. ncu's own above 100 are kept: :func:`ncu_above_peak`."""
    return [
        (name, pct)
        for name, pct, v in _written(values)
        if pct < 0 or (pct > 100 and v.source != NCU_SOURCE)
    ]


def ncu_above_peak(values: Mapping[str, MetricValue]) -> list[tuple[str, float]]:
    """ncu's own percentages above 100 (its L1/TEX Cache Throughput reads 147 % where it
    prints 147 % on its Speed-of-Light and details pages alike): ncu's number, kept in the
    limiter as ncu wrote it, with a note that says whose it is."""
    return [
        (name, pct) for name, pct, v in _written(values) if pct > 100 and v.source == NCU_SOURCE
    ]


def _written(values: Mapping[str, MetricValue]) -> list[tuple[str, float, MetricValue]]:
    """The limiter's units given as a percentage the profiler wrote (no peak of ours)."""
    return [
        (name, v.value_dispatch_mean, v)
        for name in UNITS
        if (v := values.get(name)) is not None and not v.peak and v.unit == "%"
        if v.value_dispatch_mean is not None
    ]


def _from_metrics(values: Mapping[str, MetricValue]) -> list[Utilisation]:
    bad = {name for name, _ in out_of_range(values)}
    out = []
    for name, (unit, side) in UNITS.items():
        v = values.get(name)
        if v is None or name in bad:
            continue
        # without a peak: a percentage the profiler wrote as it is (ncu)
        percent = v.value_dispatch_mean if v.unit == "%" else None
        pct = v.pct_of_peak if v.peak else percent
        if pct is not None:
            out.append(Utilisation(unit, side, pct, name, v.source))
    return out


def _from_roofline(roof: KernelRoofline | None, ceilings: Sequence[Ceiling]) -> list[Utilisation]:
    if roof is None or not roof.time_s or roof.time_s <= 0:
        return []
    out = []
    by_name = {c.name: c for c in ceilings}
    for name, flops in sorted((roof.flops or {}).items()):
        c = by_name.get(name)
        if c is not None and c.kind == "compute" and c.value > 0 and flops > 0:
            pct = 100 * flops / roof.time_s / c.value
            out.append(Utilisation(name, "compute", pct, f"roofline: {name} ceiling", _origin(c)))
    for level in LEVELS:
        c, rate = by_name.get(level), roof.achieved_bytes_s.get(level)
        if c is not None and c.kind == "memory" and c.value > 0 and rate:
            pct = 100 * rate / c.value
            out.append(Utilisation(level, "memory", pct, f"roofline: {level} ceiling", _origin(c)))
    return out


def _origin(c: Ceiling) -> str:
    """The ceiling's origin; its value and full source (files, documents) are with the
    roofline's ceilings (analyses do not format numbers)."""
    return f"{c.origin} ceiling (value and source with the roofline's ceilings)"


def limiters(
    kernels: Sequence[str],
    values: Mapping[str, Mapping[str, MetricValue]],
    roofs: Mapping[str, KernelRoofline],
    ceilings: Sequence[Ceiling],
) -> dict[str, Limiter]:
    """The limiter of each of these kernels that has one."""
    out = {}
    for k in kernels:
        if (found := limiter(values.get(k, {}), roofs.get(k), ceilings)) is not None:
            out[k] = found
    return out
