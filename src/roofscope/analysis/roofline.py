"""Every kernel on the Roofline of the GPU it ran on.

Per kernel, over all its calls: FLOPs (by data type and unit) and bytes (by memory level);
arithmetic intensity per level = FLOPs / bytes; achieved = FLOPs / time (time-weighted);
the compute ceiling that applies is the data type and unit doing most of the FLOPs;
attainable = min(compute ceiling, bandwidth(level) x intensity(level) over every level with
both bytes and a ceiling); efficiency = achieved / attainable; the kernel is memory-bound
when a bandwidth roof is the lower one (intensity below that level's ridge point), else
compute-bound. Kernels with no floating-point work but integer work (IOPs) are placed the
same way on the roofline of their integer ceiling (IOP/s, IOP/B). A kernel whose work has
no ceiling on this device gets no attainable, efficiency or bound, and names the ceiling it
lacks. Kernels with no work, or whose work the input cannot give, are placed by bandwidth:
their efficiency is achieved bytes/s over the ceiling of the level they use the most of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

import msgspec

from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.work.model import Work
from roofscope.catalogue.ceilings import LEVELS, Ceiling

ABOVE_ROOF_TOLERANCE = 1e-9


class Bound(StrEnum):
    """Which roof limits a kernel; the values are the JSON report's ``bound``."""

    MEMORY = "memory"  # a bandwidth roof is the lower one (intensity below the ridge point)
    COMPUTE = "compute"


class PlacedBy(StrEnum):
    """What puts a kernel on the roofline; the values are the JSON report's ``placed_by``."""

    FLOPS = "flops"  # its floating-point work
    IOPS = "iops"  # its integer work (no floating-point work)
    BANDWIDTH = "bandwidth"  # its bytes alone: no work known
    NONE = "none"  # neither work nor bytes known


class NoBound(StrEnum):
    """Why a kernel placed by its work has no bound; the values are the JSON's ``no_bound``."""

    NO_BYTES = "no-bytes"  # no byte counters: its intensity, so the memory roofs, unknown


class KernelRoofline(msgspec.Struct, frozen=True):
    name: str
    calls: int
    time_s: float | None
    work_source: str
    flops: dict[str, float] | None  # FLOPs (IOPs) by compute ceiling name; None = unknown
    bytes: dict[str, float]  # by level (hbm also split into hbm-read / hbm-write)
    intensity: dict[str, float]  # FLOP/B (IOP/B when placed by IOPs) by level
    achieved_flops_s: float | None  # FLOP/s, or IOP/s when placed by IOPs
    achieved_bytes_s: dict[str, float]  # time-weighted, by level
    dispatch_mean_rates: dict[str, float]  # mean of per-dispatch rates, where known
    ceiling: str | None  # the compute ceiling that applies (the level: placed by bandwidth)
    limiting_level: str | None  # the memory level whose roof is the lowest
    attainable_flops_s: float | None
    efficiency: float | None
    bound: Bound | None  # None without a ceiling for its work
    placed_by: PlacedBy
    above_roof: bool
    missing_ceiling: str | None = None  # the ceiling its work needs and the device lacks
    no_bound: NoBound | None = None  # why a kernel under a compute ceiling has no bound
    # above a measured ceiling but not the datasheet's: the benchmark under-measured the peak
    # (set by report._roofline, where the theoretical ceilings are known; diagnosis/trust.py)
    at_measured_roof: bool = False

    @property
    def beyond_hardware(self) -> bool:
        """Above its roof and not merely at a measured one, nor served from cache: more than
        the GPU can do."""
        return self.above_roof and not self.at_measured_roof and not self.cache_served

    @property
    def cache_served(self) -> bool:
        """Above a memory roof with bytes derived from shapes (each operand counted once from
        memory): part of its operands came from cache, which is no more than the GPU can do."""
        derived = self.work_source.startswith(DERIVED_WORK)
        return self.above_roof and self.bound is Bound.MEMORY and derived


class Roofline(msgspec.Struct, frozen=True):
    ceilings: tuple[Ceiling, ...]
    kernels: tuple[KernelRoofline, ...]
    ridge: dict[str, float]  # FLOP/B by level, for the main compute ceiling
    main_ceiling: str | None
    # the catalogue's theoretical peaks of the GPU, kept where measured or user ones replace
    # them: a kernel above those is above any roof (diagnosis/trust.py)
    theoretical: tuple[Ceiling, ...] = ()
    doubt: str | None = None  # why the catalogue's ceilings may not fit the profiled agent


# work derived, not measured: a PyTorch trace's shapes, a compiler's annotations
DERIVED_WORK = ("shapes", "annotations")


def roofline(hot: Hotspots, work: Mapping[str, Work], ceilings: Sequence[Ceiling]) -> Roofline:
    """The roofline of every kernel that has work; ``work`` is keyed by kernel name."""
    compute = {c.name: c for c in ceilings if c.kind == "compute"}
    memory = {str(c.level): c for c in ceilings if c.kind == "memory"}
    kernels = []
    for k in hot.kernels:
        w = work.get(k.name)
        if w is None:
            continue
        time_ns = k.total_ns if w.rate_time_ns is None else w.rate_time_ns
        time_s = None if time_ns is None else time_ns / 1e9
        kernels.append(_kernel(k.name, k.calls, time_s, w, compute, memory))
    used = [k.ceiling for k in kernels if k.ceiling]
    # the ceiling most kernels meet; of a tie, the one met first (never a set's hash order)
    main = max(dict.fromkeys(used), key=used.count) if used else _default(compute)
    ridge = {}
    if main in compute:
        ridge = {lvl: compute[main].value / c.value for lvl, c in memory.items() if c.value > 0}
    return Roofline(tuple(ceilings), tuple(kernels), ridge, main)


def _default(compute: Mapping[str, Ceiling]) -> str | None:
    return "fp32-vector" if "fp32-vector" in compute else next(iter(compute), None)


def pick_ceiling(name: str | None, compute: Mapping[str, Ceiling]) -> Ceiling | None:
    """The ceiling for ``dtype-unit``. No other unit stands in: packed FP16 vector work
    measured against the FP16 matrix peak would read 8x too low."""
    return compute.get(name) if name is not None else None


def _kernel(
    name: str,
    calls: int,
    time_s: float | None,
    w: Work,
    compute: Mapping[str, Ceiling],
    memory: Mapping[str, Ceiling],
) -> KernelRoofline:
    work, placed_by = _work(w)
    levels = {lvl: b for lvl, b in w.bytes.items() if lvl in LEVELS and b > 0}
    intensity = {lvl: work / b for lvl, b in levels.items()} if work is not None else {}
    timed = time_s is not None and time_s > 0
    achieved = work / time_s if timed and work is not None and time_s else None
    bytes_s = {lvl: b / time_s for lvl, b in w.bytes.items()} if timed and time_s else {}
    wanted = w.main_ceiling
    ceiling = pick_ceiling(wanted, compute)
    limiting, attainable, efficiency, bound = None, None, None, None
    if work and ceiling is not None:  # the roofline proper, in FLOPs or in IOPs
        limiting, attainable, efficiency, bound = _placed(ceiling, intensity, memory, achieved)
    elif not work and levels:  # no work, or unknown: placed by bandwidth
        placed_by = PlacedBy.BANDWIDTH
        use = {lvl: bytes_s[lvl] / memory[lvl].value for lvl in levels if lvl in memory and bytes_s}
        if use:
            limiting = max(use, key=lambda lvl: use[lvl])
            efficiency, bound = use[limiting], Bound.MEMORY
    return KernelRoofline(
        name=name,
        calls=calls,
        time_s=time_s,
        work_source=w.source,
        flops=w.flops,
        bytes=dict(w.bytes),
        intensity=intensity,
        achieved_flops_s=achieved,
        achieved_bytes_s=bytes_s,
        dispatch_mean_rates=dict(w.rates),
        ceiling=_ceiling_name(placed_by, ceiling, limiting if bound else None),
        limiting_level=limiting,
        attainable_flops_s=attainable,
        efficiency=efficiency,
        bound=bound,
        placed_by=placed_by,
        above_roof=efficiency is not None and efficiency > 1 + ABOVE_ROOF_TOLERANCE,
        missing_ceiling=wanted if work and ceiling is None else None,
        no_bound=NoBound.NO_BYTES if work and ceiling is not None and not intensity else None,
    )


def _placed(
    ceiling: Ceiling,
    intensity: Mapping[str, float],
    memory: Mapping[str, Ceiling],
    achieved: float | None,
) -> tuple[str | None, float, float | None, Bound | None]:
    """Limiting level, attainable, efficiency and bound under ``ceiling`` and the memory
    roofs; without a rate (zero-length timestamps) no efficiency or bound (report.py);
    without bytes (no intensity) no bound: under the compute ceiling, not known to meet it."""
    roofs = {lvl: memory[lvl].value * ai for lvl, ai in intensity.items() if lvl in memory}
    lowest = min(roofs, key=lambda lvl: roofs[lvl]) if roofs else None
    if not intensity:
        return None, ceiling.value, None if achieved is None else achieved / ceiling.value, None
    if lowest is not None and roofs[lowest] < ceiling.value:
        limiting, attainable, bound = lowest, roofs[lowest], Bound.MEMORY
    else:
        limiting, attainable, bound = None, ceiling.value, Bound.COMPUTE
    if achieved is None:
        return None, attainable, None, None
    return limiting, attainable, achieved / attainable, bound


def _work(w: Work) -> tuple[float | None, PlacedBy]:
    """The work the roofline measures: FLOPs, else IOPs where the floating-point work is
    known to be none (counters that give IOPs but no FLOP counts cannot tell)."""
    flops, iops = w.total_flops, w.total_iops
    if flops:
        return flops, PlacedBy.FLOPS
    if iops and (flops is not None or not w.source.startswith("counters")):
        return iops, PlacedBy.IOPS
    return None, PlacedBy.NONE


def _ceiling_name(placed_by: PlacedBy, ceiling: Ceiling | None, level: str | None) -> str | None:
    """What the efficiency is measured against: the compute ceiling, or the bandwidth of the
    memory level for a kernel placed by bandwidth."""
    if placed_by is PlacedBy.BANDWIDTH:
        return level
    by_work = placed_by in (PlacedBy.FLOPS, PlacedBy.IOPS)
    return ceiling.name if ceiling is not None and by_work else None
