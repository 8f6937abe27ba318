"""Achieved occupancy: how many waves of a kernel the GPU held, from counters
(docs/formats/amd-counters.md, "Speed of light", "Derived metrics", "Occupancy counters").
Waves on the GPU = ``SQ_ACCUM_PREV_HIRES`` integrating ``SQ_LEVEL_WAVES`` /
``GRBM_GUI_ACTIVE_PER_XCD`` (rocprof-compute "Wavefront Occupancy"), per CU = that / CUs
(rocprof ``MeanOccupancyPerCU``), and from ``SQ_WAVE_CYCLES`` (quad-cycles on gfx9) the
rocprof ``OccupancyPercent``; each the mean over a kernel's dispatches of the per-dispatch
value.

The theoretical occupancy it is compared with, and the sources ([R1]), are in
:mod:`~roofscope.analysis.metrics.occupancy`.
"""

from __future__ import annotations

import math

import msgspec

from roofscope.analysis.counters import Array, Counters, dispatch_counters
from roofscope.analysis.metrics.column import Mask, where
from roofscope.analysis.metrics.occupancy import arch_limits, arch_of, theoretical
from roofscope.errors import UsageError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role

ACCUMULATED = "SQ_LEVEL_WAVES_ACCUM"  # the readers' name for SQ_ACCUM_PREV_HIRES of SQ_LEVEL_WAVES


class Achieved(msgspec.Struct, frozen=True):
    """Achieved occupancy of one kernel: means over its dispatches of per-dispatch values."""

    name_id: int
    dispatches: int
    waves_on_gpu: float | None  # SQ_ACCUM_PREV_HIRES / GRBM_GUI_ACTIVE_PER_XCD
    waves_per_cu: float | None  # waves_on_gpu / CUs
    wave_cycles_waves_per_cu: float | None  # from SQ_WAVE_CYCLES
    occupancy_percent: float | None  # that as % of a CU's wave slots (rocprof OccupancyPercent)
    theoretical_waves_per_cu: float | None = None
    ratio: float | None = None  # waves_per_cu (else the SQ_WAVE_CYCLES one) / theoretical
    counters: tuple[str, ...] = ()  # the counters these values come from


def achieved(
    profile: Profile,
    arch: str | None = None,
    *,
    compute_units: int | None = None,
    xcds: int | None = None,
) -> dict[int, Achieved]:
    """Per kernel, occupancy measured by counters; {} when none of them was collected.

    ``compute_units`` and ``xcds`` default to the profile's; per-CU values are None when the
    CU count is unknown, and an agent of several XCDs must say how many.
    """
    target = arch_of(profile, arch)
    a = arch_limits(target)
    data = dispatch_counters(profile, profile.sources(Role.DISPATCHES))
    if data is None or "GRBM_GUI_ACTIVE" not in data.counters:
        return {}
    cus = compute_units or profile.run.compute_units
    parts = xcds or profile.run.xcds or (1 if a.one_xcd else None)
    if parts is None:
        raise UsageError(f"{target} agents span several XCDs; pass xcds (the profile omits it)")
    c = data.counters
    level = _level_accumulator(c)
    # the busy cycles of the run that counted the waves, where the reader kept them
    busy = c.get("GRBM_GUI_ACTIVE@SQ_LEVEL_WAVES", c["GRBM_GUI_ACTIVE"]) / parts
    busy = where(busy > 0, busy, math.nan)  # no busy cycles: no occupancy for that dispatch
    waves = c[level] / busy if level else None
    cycles = a.wave_cycles_per_count if "SQ_WAVE_CYCLES" in c else None
    per_cu = c["SQ_WAVE_CYCLES"] * cycles / busy / cus if cycles and cus else None
    if waves is None and per_cu is None:
        return {}
    slots = a.max_waves_per_simd * a.simds_per_cu
    theory = theoretical(profile, target)
    out = {}
    for name_id, mask in data.by_kernel():
        gpu = _mean(waves, mask)
        cu = gpu / cus if gpu is not None and cus else None
        cycles_cu = _mean(per_cu, mask)
        pct = 100 * cycles_cu / slots if cycles_cu is not None else None
        t = theory.get(name_id)
        measured = cu if cu is not None else cycles_cu
        ratio = measured / t.waves_per_cu if t and measured is not None else None
        used = tuple(n for n in (level, "SQ_WAVE_CYCLES" if per_cu is not None else None) if n)
        out[name_id] = Achieved(
            name_id, mask.count(), gpu, cu, cycles_cu, pct,
            t.waves_per_cu if t else None, ratio, (*used, "GRBM_GUI_ACTIVE"),
        )  # fmt: skip
    return out


def _level_accumulator(c: Counters) -> str | None:
    """The counter that integrates SQ_LEVEL_WAVES, if collected.

    A raw ``SQ_ACCUM_PREV_HIRES`` (a rocprof v1 pass read alone) integrates the counter before
    it; it is taken for SQ_LEVEL_WAVES only when no other level counter shares its pass.
    """
    if ACCUMULATED in c:
        return ACCUMULATED
    others = [n for n in c.names() if "LEVEL" in n and n != "SQ_LEVEL_WAVES"]
    if "SQ_ACCUM_PREV_HIRES" in c and "SQ_LEVEL_WAVES" in c and not others:
        return "SQ_ACCUM_PREV_HIRES"
    return None


def _mean(values: Array | None, mask: Mask) -> float | None:
    """The mean over the dispatches of ``mask`` that have a value (NaN: left out)."""
    if values is None:
        return None
    chosen = values[mask]
    chosen = chosen[chosen.finite()]
    return chosen.mean() if chosen.size else None
