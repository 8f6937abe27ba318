"""Occupancy: how many waves of a kernel a SIMD can hold (theoretical) and held (achieved).

Theoretical occupancy of one launch shape follows LLVM's AMDGPU backend, which is the model
the compiler and AMD's tools use:

* waves per SIMD ("EU") allowed by the architecture, by VGPRs and by SGPRs
  (``getMaxWavesPerEU``, ``getNumWavesPerEUWithNumVGPRs``, ``getOccupancyWithNumSGPRs``);
* workgroups per CU allowed by those waves, by LDS and by workgroup slots / barriers
  (``getOccupancyWithWorkGroupSizes``, ``getMaxWorkGroupsPerCU``): a workgroup of W
  work-items is ceil(W / wave size) waves and is resident whole or not at all, so the
  register limit is ``floor(waves_per_simd x SIMDs / waves_per_workgroup)`` workgroups;
* the occupancy is the fewest workgroups any of those allow, times waves per workgroup,
  spread over the SIMDs that share the workgroups.

"CU" is LLVM's "per CU": the block whose SIMDs share a workgroup's LDS and barrier. On
GCN/CDNA that is the CU (4 SIMDs); on RDNA in WGP mode (HIP's default) it is the workgroup
processor (2 CUs, 4 SIMDs, LDS doubled). Waves per CU are reported per physical CU.

Register counts are those the profiler reports, already rounded to the encoding granule
(rocprofiler ``arch_vgpr_count``/``accum_vgpr_count``/``sgpr_count``,
ROCm/rocm-systems projects/rocprofiler-sdk tool ``populate_kernel_properties_data``): on
gfx90a/gfx94x ``arch_vgpr`` is the AccVGPR offset ((ACCUM_OFFSET+1) x 4) and ``arch + accum``
the whole unified allocation; on gfx908 ``accum_vgpr`` repeats ``arch_vgpr``.

Achieved occupancy, from counters, is in :mod:`~roofscope.analysis.metrics.achieved`.

Sources of the per-arch constants (``ARCHS``):

[L1] ROCm/llvm-project @08b7dcac llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp:
     getMaxWavesPerEU (8 if GFX90AInsts, 10 before GFX10, 16 from GFX10.3), getEUsPerCU (4),
     getMaxWorkGroupsPerCU (single-wave groups: waves/EU x EUs; else min(that / waves, 16),
     32 in WGP mode), getVGPRAllocGranule (GFX90AInsts 8; 1.5x VGPRs 24|12; GFX10.3 16|8;
     else 8|4 for wave32|wave64), getTotalNumVGPRs (GFX90AInsts 512; before GFX10 256;
     1.5x 1536|768; else 1024|512), getOccupancyWithNumSGPRs (gfx8/9: <=80 -> 10,
     <=88 -> 9, <=100 -> 8, else 7; GFX10+: no limit), getAddressableLocalMemorySize,
     getLocalMemorySize (doubled in WGP mode), getLdsDwGranularity (128 dwords; 320 with
     160 KiB LDS), getTotalNumVGPRs(has90AInsts, AGPR, VGPR) = alignTo(VGPR, 4) + AGPR on
     gfx90a+, else max(VGPR, AGPR).
[L2] same @00421b28 llvm/lib/Target/AMDGPU/AMDGPU.td: FeatureISAVersion9_0_A/9_4_Common carry
     FeatureGFX90AInsts; 9_4_2 LDS 65536; 9_5_Common LDS 163840; 11_0_0, 11_0_1, 11_5_1 and
     12 carry Feature1536VGPRs; 10_3_0 FeatureGFX10_3Insts. GCNProcessors.td @06c62775 maps
     gfx1030-1036 -> 10_3_0, gfx1100 -> 11_0_0, ..., gfx1151 -> 11_5_1, gfx1200/1201 -> 12.
     FeatureGFX11 implies LocalMemorySize65536 and GFX10_3Insts (reviews.llvm.org/D125261).
[L3] reviews.llvm.org/D138443 (occupancy vs VGPR table, cross-check): gfx90a/gfx940
     8 waves <= 64 VGPRs, 5 <= 96, 4 <= 128, 2 <= 256; gfx908 10 waves <= 24 VGPRs.
[R1] ROCm/rocprofiler metrics.xml (docs/formats/amd-counters.md, "Derived metrics"):
     OccupancyPercent = 400 x SQ_WAVE_CYCLES / GRBM_GUI_ACTIVE / CU_NUM / 32 on
     gfx90a/gfx940 (x XCC_NUM), 100 x ... on gfx11; MeanOccupancyPerCU =
     SQ_ACCUM_PREV_HIRES / GRBM_GUI_ACTIVE / CU_NUM.
"""

from __future__ import annotations

import msgspec
from msgspec.structs import replace

from roofscope.errors import UsageError
from roofscope.model.access import launches, query
from roofscope.model.profile import Profile
from roofscope.model.schema import Role

LIMITERS = ("registers", "lds", "workgroup-slots", "waves-per-simd")


class Arch(msgspec.Struct, frozen=True):
    """What limits residency on one architecture; every value from [L1]/[L2] above."""

    max_waves_per_simd: int
    vgprs_per_simd: dict[int, int]  # wave size -> VGPRs per lane in one SIMD's register file
    vgpr_granule: dict[int, int]  # wave size -> VGPR allocation granule
    lds_bytes: int  # LDS the workgroups on one CU (WGP in WGP mode) share
    lds_granule_bytes: int
    simds_per_cu: int = 4  # physical SIMDs of a CU
    simds_sharing: int = 4  # SIMDs the workgroups sharing that LDS are spread over
    max_workgroups: int = 16  # workgroups with a barrier per CU (WGP mode: 32)
    unified_agprs: bool = False  # AccVGPRs in the VGPR file (gfx90a+) or a file of their own
    sgpr_steps: tuple[tuple[int, int], ...] = ((80, 10), (88, 9), (100, 8))  # () = no limit
    sgpr_waves_above: int = 7
    default_wave_size: int = 64
    wave_cycles_per_count: int | None = 4  # SQ_WAVE_CYCLES unit: quad-cycles on gfx9 [R1]
    one_xcd: bool = True  # the agent is one XCD (GRBM_GUI_ACTIVE is not summed over several)


_GFX9 = Arch(10, {64: 256}, {64: 4}, 65536, 512)
_GFX90A = replace(
    _GFX9, max_waves_per_simd=8, vgprs_per_simd={64: 512}, vgpr_granule={64: 8}, unified_agprs=True
)
_RDNA = Arch(
    16, {32: 1024, 64: 512}, {32: 16, 64: 8}, 2 * 65536, 512, simds_per_cu=2,
    max_workgroups=32, sgpr_steps=(), default_wave_size=32, wave_cycles_per_count=None,
)  # fmt: skip
_RDNA_1536 = replace(_RDNA, vgprs_per_simd={32: 1536, 64: 768}, vgpr_granule={32: 24, 64: 12})
_GFX11 = replace(_RDNA, wave_cycles_per_count=1)  # OccupancyPercent uses 100, not 400 [R1]
_GFX11_1536 = replace(_RDNA_1536, wave_cycles_per_count=1)

ARCHS: dict[str, Arch] = {
    "gfx906": _GFX9,
    "gfx908": _GFX9,
    "gfx90a": _GFX90A,
    "gfx942": replace(_GFX90A, one_xcd=False),
    "gfx950": replace(_GFX90A, lds_bytes=163840, lds_granule_bytes=1280, one_xcd=False),
    **dict.fromkeys([f"gfx103{i}" for i in range(7)], _RDNA),
    **dict.fromkeys(["gfx1100", "gfx1101", "gfx1151"], _GFX11_1536),
    **dict.fromkeys(["gfx1102", "gfx1103", "gfx1150", "gfx1152"], _GFX11),
    **dict.fromkeys(["gfx1200", "gfx1201"], _RDNA_1536),
}


class Shape(msgspec.Struct, frozen=True):
    """The part of a launch that decides occupancy, in the units the profilers report."""

    workgroup_size: int  # work-items
    arch_vgpr: int
    accum_vgpr: int = 0
    sgpr: int | None = None  # None: not reported
    lds_bytes: int = 0  # per workgroup
    wave_size: int | None = None  # None: not reported; the architecture's default is used


class Occupancy(msgspec.Struct, frozen=True):
    """Theoretical occupancy of one shape; ``limits`` are workgroups per CU each allows."""

    arch: str
    shape: Shape
    wave_size: int
    waves_per_workgroup: int
    vgprs: int  # allocated per lane: arch + accum rounded to the granule
    waves_per_simd_limits: dict[str, int]  # "architecture", "vgprs", ("sgprs")
    limits: dict[str, int]  # "registers", "lds" (when LDS is used), "workgroup-slots"
    workgroups_per_cu: int
    waves_per_simd: float
    waves_per_cu: float  # per physical CU
    max_waves_per_simd: int
    fraction: float  # waves_per_simd / max_waves_per_simd
    limiter: str  # one of LIMITERS
    lift: str  # what would let one more workgroup in
    lift_value: int | None  # VGPRs, SGPRs, LDS bytes or workgroup size that would
    notes: tuple[str, ...] = ()
    dispatches: int = 0  # of this shape (per-kernel results)
    other_shapes: int = 0  # other shapes the kernel was launched with


def arch_limits(arch: str) -> Arch:
    """The constants of ``arch`` (a target id such as ``gfx90a:sramecc+:xnack-`` works)."""
    found = ARCHS.get(arch.split(":", 1)[0].strip().lower())
    if found is None:
        known = ", ".join(sorted(ARCHS))
        raise UsageError(f"no occupancy constants for arch {arch!r}; known: {known}")
    return found


def occupancy(shape: Shape, arch: str) -> Occupancy:
    """Theoretical occupancy of ``shape`` on ``arch`` (waves resident per SIMD and CU)."""
    a = arch_limits(arch)
    wave = shape.wave_size or a.default_wave_size
    if wave not in a.vgprs_per_simd:
        raise UsageError(f"{arch} has no wave{wave}; the profile's wave size does not fit it")
    n = max(1, -(-shape.workgroup_size // wave))
    vgprs = _align(max(1, _vgprs(a, shape)), a.vgpr_granule[wave])
    per_simd = {"architecture": a.max_waves_per_simd}
    per_simd["vgprs"] = min(max(a.vgprs_per_simd[wave] // vgprs, 1), a.max_waves_per_simd)
    if shape.sgpr is not None and a.sgpr_steps:
        per_simd["sgprs"] = min(_sgpr_waves(a, shape.sgpr), a.max_waves_per_simd)
    limits = {"registers": min(per_simd.values()) * a.simds_sharing // n}
    lds = _align(shape.lds_bytes, a.lds_granule_bytes)
    if lds > 0:
        limits["lds"] = a.lds_bytes // lds
    limits["workgroup-slots"] = _slots(a, n)
    groups = min(limits.values())
    simd = groups * n / a.simds_sharing
    limiter = _limiter(a, n, per_simd, limits, groups)
    lift, value = _lift(a, wave, n, per_simd, limits, limiter, shape)
    return Occupancy(
        arch, shape, wave, n, vgprs, per_simd, limits, groups, simd, simd * a.simds_per_cu,
        a.max_waves_per_simd, simd / a.max_waves_per_simd, limiter, lift, value,
        _notes(a, shape, wave, groups),
    )  # fmt: skip


def theoretical(profile: Profile, arch: str | None = None) -> dict[int, Occupancy]:
    """Per kernel (name_id), the occupancy of its dominant launch shape (most dispatches).

    ``arch`` defaults to the profile's. Kernels whose launches carry no VGPR count or
    workgroup size (older rocprofv3 traces) are left out: nothing can be said of them.
    """
    target = arch_of(profile, arch)
    return profile.derived(("theoretical", target), lambda: _theoretical(profile, target))


def _theoretical(profile: Profile, target: str) -> dict[int, Occupancy]:
    """:func:`theoretical`, computed (once per profile and arch: the metrics and achieved
    occupancy both read it)."""
    sources = profile.sources(Role.DISPATCHES)
    if not sources:
        return {}
    rows = query(
        profile,
        launches(profile, sources),
        """SELECT name_id, workgroup_size, arch_vgpr, coalesce(accum_vgpr, 0), sgpr,
        coalesce(lds_bytes, 0), wave_size, sum(dispatches) AS n FROM d
        WHERE workgroup_size IS NOT NULL AND arch_vgpr IS NOT NULL
        GROUP BY ALL ORDER BY name_id, n DESC, 2, 3, 4, 5, 6, 7""",
    ).fetchall()
    shapes: dict[int, list[tuple[Shape, int]]] = {}
    for name_id, wg, arch_v, acc, sgpr, lds, wave, n in rows:
        shapes.setdefault(int(name_id), []).append((Shape(wg, arch_v, acc, sgpr, lds, wave), n))
    out = {}
    for name_id, found in shapes.items():
        (top, n), others = found[0], len(found) - 1
        out[name_id] = replace(occupancy(top, target), dispatches=int(n), other_shapes=others)
    return out


# --- theoretical: the pieces ----------------------------------------------------------------


def _align(value: int, granule: int) -> int:
    return -(-value // granule) * granule


def _vgprs(a: Arch, s: Shape) -> int:
    """VGPRs per lane one wave holds: arch + accum in one file (gfx90a+), else the larger."""
    if a.unified_agprs and s.accum_vgpr:
        return _align(s.arch_vgpr, 4) + s.accum_vgpr
    return max(s.arch_vgpr, s.accum_vgpr)


def _sgpr_waves(a: Arch, sgprs: int) -> int:
    return next((waves for most, waves in a.sgpr_steps if sgprs <= most), a.sgpr_waves_above)


def _slots(a: Arch, waves_per_group: int) -> int:
    """Workgroups per CU the wave slots and barriers allow (getMaxWorkGroupsPerCU)."""
    slots = a.max_waves_per_simd * a.simds_sharing
    if waves_per_group == 1:  # a single-wave workgroup needs no barrier
        return slots
    return min(slots // waves_per_group, a.max_workgroups)


def _limiter(a: Arch, n: int, per_simd: dict[str, int], limits: dict[str, int], g: int) -> str:
    if g * n == a.max_waves_per_simd * a.simds_sharing:
        return "waves-per-simd"
    if min(per_simd.values()) < a.max_waves_per_simd and limits["registers"] == g:
        return "registers"
    if limits.get("lds") == g:
        return "lds"
    if limits["workgroup-slots"] == g and g < a.max_waves_per_simd * a.simds_sharing // n:
        return "workgroup-slots"
    return "waves-per-simd"  # the waves of a workgroup do not divide the CU's wave slots


def _lift(
    a: Arch, wave: int, n: int, per_simd: dict[str, int], limits: dict[str, int], limiter: str,
    s: Shape,
) -> tuple[str, int | None]:  # fmt: skip
    """What would let one more workgroup onto a CU, and the value it takes."""
    if limiter in ("waves-per-simd", "workgroup-slots"):
        return _refit(a, wave, n)
    now = min(limits.values())
    want = now + 1
    if limiter == "lds":
        most = a.lds_bytes // want // a.lds_granule_bytes * a.lds_granule_bytes
        text = f"at most {most} bytes of LDS per workgroup (now {s.lds_bytes})"
    else:
        need = -(-want * n // a.simds_sharing)  # waves per SIMD that many workgroups take
        if need > a.max_waves_per_simd:
            return f"none: {want} workgroups of {n} waves exceed the wave slots", None
        text, most = _fewer_registers(a, wave, need, per_simd, s)
    text += f": {now} -> {want} workgroups per CU"
    others = {k: v for k, v in limits.items() if k != limiter and v < want}
    for k, v in others.items():
        text += f", but {k} still allows only {v}"
    return text, most


def _fewer_registers(
    a: Arch, wave: int, need: int, per_simd: dict[str, int], s: Shape
) -> tuple[str, int]:
    """The VGPR (else SGPR) count that lets ``need`` waves onto each SIMD; both if both bind."""
    parts, values = [], []
    if per_simd["vgprs"] < need:
        granule = a.vgpr_granule[wave]
        values.append(a.vgprs_per_simd[wave] // need // granule * granule)
        parts.append(f"at most {values[-1]} VGPRs per lane (arch + accum, now {_vgprs(a, s)})")
    if per_simd.get("sgprs", need) < need:
        values.append(max((m for m, w in a.sgpr_steps if w >= need), default=0))
        parts.append(f"at most {values[-1]} SGPRs (now {s.sgpr})")
    return " and ".join(parts), values[0]


def _refit(a: Arch, wave: int, n: int) -> tuple[str, int | None]:
    """The workgroup size nearest above (else below) ``n`` waves that fills every wave slot."""
    slots = a.max_waves_per_simd * a.simds_sharing
    if min(_slots(a, n) * n, slots) == slots:
        return f"nothing: at the maximum of {a.max_waves_per_simd} waves per SIMD", None
    fits = [k for k in range(1, 1024 // wave + 1) if _slots(a, k) * k == slots]
    best = min(fits, key=lambda k: (k < n, abs(k - n)))
    return f"workgroups of {best * wave} work-items ({best} waves) fill all {slots} wave slots", (
        best * wave
    )


def _notes(a: Arch, s: Shape, wave: int, groups: int) -> tuple[str, ...]:
    notes = []
    if s.wave_size is None:
        notes.append(f"wave size not in the profile: wave{wave} assumed (the arch's default)")
    if s.sgpr is None and a.sgpr_steps:
        notes.append("SGPR count not in the profile: SGPRs not checked")
    if a.simds_sharing != a.simds_per_cu:
        notes.append("limits per workgroup processor (WGP mode): 4 SIMDs share LDS and slots")
    if groups == 0:
        notes.append("one workgroup does not fit on a CU: the launch cannot run")
    return tuple(notes)


def arch_of(profile: Profile, arch: str | None) -> str:
    """``arch``, else the profile's; a UsageError when neither names one."""
    found = arch or profile.run.arch
    if not found:
        raise UsageError("the profile does not name its GPU architecture; pass arch (gfx90a, ...)")
    return found
