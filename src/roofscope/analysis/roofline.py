"""Every kernel on the Roofline of the GPU it ran on.

Per kernel, over all its calls: FLOPs (by data type and unit) and bytes (by memory level);
arithmetic intensity per level = FLOPs / bytes; achieved = FLOPs / time (time-weighted);
the compute ceiling that applies is the data type and unit doing most of the FLOPs;
attainable = min(compute ceiling, bandwidth(level) x intensity(level) over every level with
both bytes and a ceiling); efficiency = achieved / attainable; the kernel is memory-bound
when a bandwidth roof is the lower one (intensity below that level's ridge point), else
compute-bound. Kernels with no floating-point work, or whose FLOPs the input cannot give,
are placed by bandwidth: their efficiency is achieved bytes/s over the ceiling of the level
they use the most of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from roofscope.analysis.hotspots import Hotspots
from roofscope.ceilings import LEVELS, Ceiling
from roofscope.work.model import Work

ABOVE_ROOF_TOLERANCE = 1e-9


@dataclass(frozen=True)
class KernelRoofline:
    name: str
    calls: int
    time_s: float | None
    work_source: str
    flops: dict[str, float] | None  # by compute ceiling name; None = unknown
    bytes: dict[str, float]  # by level (hbm also split into hbm-read / hbm-write)
    intensity: dict[str, float]  # FLOP/B by level
    achieved_flops_s: float | None
    achieved_bytes_s: dict[str, float]  # time-weighted, by level
    dispatch_mean_rates: dict[str, float]  # mean of per-dispatch rates, where known
    ceiling: str | None  # the compute ceiling that applies
    limiting_level: str | None  # the memory level whose roof is the lowest
    attainable_flops_s: float | None
    efficiency: float | None
    bound: str | None  # "memory" | "compute"
    placed_by: str  # "flops" | "bandwidth" | "none" (neither FLOPs nor bytes known)
    above_roof: bool


@dataclass(frozen=True)
class Roofline:
    ceilings: tuple[Ceiling, ...]
    kernels: tuple[KernelRoofline, ...]
    ridge: dict[str, float]  # FLOP/B by level, for the main compute ceiling
    main_ceiling: str | None
    # the catalogue's theoretical peaks of the GPU, kept where measured or user ones replace
    # them: a kernel above those is above any roof (diagnosis/trust.py)
    theoretical: tuple[Ceiling, ...] = ()
    doubt: str | None = None  # why the catalogue's ceilings may not fit the profiled agent


def roofline(hot: Hotspots, work: Mapping[str, Work], ceilings: Sequence[Ceiling]) -> Roofline:
    """The roofline of every kernel that has work; ``work`` is keyed by kernel name."""
    compute = {c.name: c for c in ceilings if c.kind == "compute"}
    memory = {str(c.level): c for c in ceilings if c.kind == "memory"}
    kernels = []
    for k in hot.kernels:
        w = work.get(k.name)
        if w is None:
            continue
        time_s = None if k.total_ns is None else k.total_ns / 1e9
        kernels.append(_kernel(k.name, k.calls, time_s, w, compute, memory))
    used = [k.ceiling for k in kernels if k.ceiling]
    main = max(set(used), key=used.count) if used else _default(compute)
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
    flops = w.total_flops
    levels = {lvl: b for lvl, b in w.bytes.items() if lvl in LEVELS and b > 0}
    intensity = {lvl: flops / b for lvl, b in levels.items()} if flops is not None else {}
    timed = time_s is not None and time_s > 0
    achieved = flops / time_s if timed and flops is not None and time_s else None
    bytes_s = {lvl: b / time_s for lvl, b in w.bytes.items()} if timed and time_s else {}
    ceiling = pick_ceiling(w.main_ceiling, compute)
    limiting, attainable, efficiency, bound = None, None, None, None
    placed_by = "flops" if flops else "none"
    if flops:  # floating-point work: the roofline proper
        roofs = {lvl: memory[lvl].value * ai for lvl, ai in intensity.items() if lvl in memory}
        if ceiling is not None or roofs:
            lowest = min(roofs, key=lambda lvl: roofs[lvl]) if roofs else None
            top = ceiling.value if ceiling is not None else float("inf")
            if lowest is not None and roofs[lowest] < top:
                limiting, attainable, bound = lowest, roofs[lowest], "memory"
            elif ceiling is not None:
                attainable, bound = top, "compute"
            if achieved is not None and attainable:
                efficiency = achieved / attainable
    elif levels:  # no FLOPs, or unknown: placed by bandwidth
        placed_by = "bandwidth"
        use = {lvl: bytes_s[lvl] / memory[lvl].value for lvl in levels if lvl in memory and bytes_s}
        if use:
            limiting = max(use, key=lambda lvl: use[lvl])
            efficiency, bound = use[limiting], "memory"
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
        ceiling=ceiling.name if ceiling is not None and placed_by == "flops" else None,
        limiting_level=limiting,
        attainable_flops_s=attainable,
        efficiency=efficiency,
        bound=bound,
        placed_by=placed_by,
        above_roof=efficiency is not None and efficiency > 1 + ABOVE_ROOF_TOLERANCE,
    )
