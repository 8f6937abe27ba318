"""Occupancy: theoretical per launch shape, per kernel from real traces, achieved from counters.

Every expected value below is worked out by hand in the comment above it, from the rules in
``roofscope.analysis.metrics.occupancy`` (LLVM AMDGPUBaseInfo.cpp): waves per SIMD from the
architecture, VGPRs (``file // alignTo(vgprs, granule)``) and SGPRs; workgroups per CU from
those waves (``waves_per_simd * 4 // waves_per_workgroup``), LDS (``LDS per CU // LDS per
workgroup``) and slots (``min(max waves per CU // waves_per_workgroup, 16)``); the fewest wins.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from roofscope.analysis.metrics.achieved import Achieved, achieved
from roofscope.analysis.metrics.occupancy import ARCHS, Occupancy, Shape, occupancy, theoretical
from roofscope.errors import UsageError
from roofscope.model.profile import Profile
from roofscope.readers.load import load
from tests.conftest import DATA, SHARED_CORPUS

STENCILS = DATA / "rocprofv1-mi250x" / "stencils" / "results.csv"
MI100 = SHARED_CORPUS / "amd" / "omniperf-v1-2022" / "Axes1" / "mi100"
needs_corpus = pytest.mark.skipif(not MI100.is_dir(), reason="shared corpus not beside the project")


def by_kernel(profile: Profile, arch: str | None = None) -> dict[str, Occupancy]:
    names = dict(profile.con.execute("SELECT name_id, kernel FROM names").fetchall())
    return {names[k]: o for k, o in theoretical(profile, arch).items()}


# --- real kernels ---------------------------------------------------------------------------


def test_stencil_kernel_limited_by_vgprs() -> None:
    # compute_fd_xyz_lds_window_kernel, MI250X (gfx90a): wgr 512, lds 4096, arch_vgpr 84,
    # accum_vgpr 4, sgpr 64, wave64.
    #   VGPRs: one unified file of 512, granule 8: 84 + 4 = 88 (a multiple of 8) -> 512 // 88 = 5
    #   SGPRs: 64 <= 80 -> 10, capped at gfx90a's 8 waves per SIMD
    #   waves per workgroup: 512 / 64 = 8
    #   workgroups per CU: registers 5 * 4 SIMDs // 8 = 2; LDS 65536 // 4096 = 16;
    #   slots min(32 // 8, 16) = 4  ->  2 workgroups = 16 waves per CU = 4 per SIMD = 4/8 = 50 %
    #   lift: 3 workgroups = 24 waves = 6 per SIMD -> 512 // 6 = 85 -> down to granule 8 = 80
    occ = by_kernel(load([str(STENCILS)]))["compute_fd_xyz_lds_window_kernel"]
    assert occ.arch == "gfx90a"  # from the run's rocminfo
    assert occ.vgprs == 88
    assert occ.waves_per_simd_limits == {"architecture": 8, "vgprs": 5, "sgprs": 8}
    assert occ.limits == {"registers": 2, "lds": 16, "workgroup-slots": 4}
    assert (occ.workgroups_per_cu, occ.waves_per_cu, occ.waves_per_simd) == (2, 16.0, 4.0)
    assert occ.fraction == 0.5
    assert occ.limiter == "registers"
    assert occ.lift_value == 80
    assert occ.lift == "at most 80 VGPRs per lane (arch + accum, now 88): 2 -> 3 workgroups per CU"
    assert (occ.dispatches, occ.other_shapes) == (100, 0)


def test_stencil_kernel_limited_by_lds() -> None:
    # compute_fd_xy_lds_vec_kernel, gfx90a: wgr 256, lds 12288, arch_vgpr 32, accum 0, sgpr 32.
    #   VGPRs 32 -> 512 // 32 = 16 -> capped 8; SGPRs 32 -> 8; waves per workgroup 256/64 = 4
    #   workgroups per CU: registers 8 * 4 // 4 = 8; LDS 65536 // 12288 = 5 (61440 used);
    #   slots min(32 // 4, 16) = 8  ->  5 workgroups = 20 waves per CU = 5 per SIMD = 62.5 %
    #   lift: 6 workgroups -> 65536 // 6 = 10922 -> down to the 512-byte granule = 10752
    occ = by_kernel(load([str(STENCILS)]))["compute_fd_xy_lds_vec_kernel"]
    assert occ.limits == {"registers": 8, "lds": 5, "workgroup-slots": 8}
    assert (occ.waves_per_cu, occ.waves_per_simd, occ.fraction) == (20.0, 5.0, 0.625)
    assert occ.limiter == "lds"
    assert occ.lift_value == 10752
    assert occ.lift.startswith("at most 10752 bytes of LDS per workgroup (now 12288)")


def test_stencil_kernel_with_accvgprs_and_many_sgprs() -> None:
    # compute_fd_xyz_lds_window_vec_kernel, gfx90a: wgr 512, lds 16384, arch 64, accum 128, sgpr 112
    #   VGPRs 64 + 128 = 192 -> 512 // 192 = 2; SGPRs 112 > 100 -> 7; waves per workgroup 8
    #   workgroups: registers 2 * 4 // 8 = 1; LDS 65536 // 16384 = 4; slots min(32 // 8, 16) = 4
    #   -> 1 workgroup = 8 waves per CU = 2 per SIMD = 25 %
    #   lift: 2 workgroups = 16 waves = 4 per SIMD -> 512 // 4 = 128 VGPRs (SGPRs allow 7 >= 4)
    occ = by_kernel(load([str(STENCILS)]))["compute_fd_xyz_lds_window_vec_kernel"]
    assert occ.waves_per_simd_limits == {"architecture": 8, "vgprs": 2, "sgprs": 7}
    assert occ.limits == {"registers": 1, "lds": 4, "workgroup-slots": 4}
    assert (occ.waves_per_simd, occ.fraction, occ.limiter) == (2.0, 0.25, "registers")
    assert occ.lift_value == 128


def test_laplacian_at_the_architecture_maximum() -> None:
    # laplacian_kernel, MI250X gfx90a (no rocminfo beside it, so arch is passed):
    # wgr 256, lds 0, arch_vgpr 24, accum 0, sgpr 32.
    #   VGPRs 24 -> 512 // 24 = 21 -> capped 8; SGPRs 32 -> 8; waves per workgroup 4
    #   workgroups: registers 8 * 4 // 4 = 8; no LDS; slots min(32 // 4, 16) = 8
    #   -> 8 workgroups = 32 waves per CU = 8 per SIMD = 100 %
    occ = by_kernel(load([str(DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv")]), "gfx90a")
    lap = occ["laplacian_kernel"]
    assert lap.limits == {"registers": 8, "workgroup-slots": 8}
    assert (lap.waves_per_simd, lap.waves_per_cu, lap.fraction) == (8.0, 32.0, 1.0)
    assert lap.limiter == "waves-per-simd"
    assert lap.lift_value is None
    assert lap.dispatches == 1001


def test_mi100_kernel_limited_by_vgprs() -> None:
    # Omniperf 1.0.3 MI100 (gfx908) benchmark_func<double, 256, 8u, 2u>: wgr 256, vgpr 28,
    # sgpr 24, lds 0; rocprof v1 of that age has no wave-size column (gfx9 is wave64 only).
    #   VGPRs: gfx908 has 256 per SIMD lane, granule 4: 28 -> 256 // 28 = 9 (9 * 28 = 252)
    #   SGPRs 24 <= 80 -> 10 = gfx908's maximum; waves per workgroup 4
    #   workgroups: registers 9 * 4 // 4 = 9; slots min(40 // 4, 16) = 10
    #   -> 9 workgroups = 36 waves per CU = 9 per SIMD = 90 %
    #   lift: 10 workgroups = 40 waves = 10 per SIMD -> 256 // 10 = 25 -> granule 4 -> 24
    occ = by_kernel(load([str(DATA / "omniperf-v1-mi100")]), "gfx908")
    bench = occ["void benchmark_func<double, 256, 8u, 2u>(double, double*)"]
    assert bench.waves_per_simd_limits == {"architecture": 10, "vgprs": 9, "sgprs": 10}
    assert (bench.waves_per_cu, bench.fraction, bench.limiter) == (36.0, 0.9, "registers")
    assert bench.lift_value == 24
    assert bench.notes == ("wave size not in the profile: wave64 assumed (the arch's default)",)


def test_mi300a_accvgprs_share_the_file() -> None:
    # rocprof-compute MI300A (gfx942) vecCopy: wgr 256, Arch_VGPR 4, Accum_VGPR 4, SGPR 16.
    #   VGPRs alignTo(4, 4) + 4 = 8 -> 512 // 8 = 64 -> capped 8 -> 8 workgroups, 100 %
    (occ,) = theoretical(load([str(DATA / "rocprof-compute-mi300a")])).values()
    assert (occ.arch, occ.vgprs, occ.waves_per_simd, occ.limiter) == (
        "gfx942",
        8,
        8.0,
        "waves-per-simd",
    )


def test_rdna_wave32_kernel_per_workgroup_processor() -> None:
    # rocprofv3 on gfx1151 (Strix Halo): rms_norm_f32<1024, ...>: workgroup 1024, 16 VGPRs,
    # no wave size in the trace -> wave32, HIP's RDNA default.
    #   VGPRs: 1536 per SIMD lane (1.5x file), granule 24: 16 -> 24 -> 1536 // 24 = 64 -> 16 max
    #   waves per workgroup 1024 / 32 = 32; WGP mode: 4 SIMDs x 16 = 64 wave slots
    #   workgroups: registers 16 * 4 // 32 = 2; slots min(64 // 32, 32) = 2 -> 64 waves per WGP
    #   = 16 per SIMD = 100 %; a CU has 2 SIMDs -> 32 waves per CU
    path = DATA / "rocprofv3-layouts" / "gfx1151_decode_kernel_trace.csv"
    occ = {k.split("(")[0]: o for k, o in by_kernel(load([str(path)]), "gfx1151").items()}
    rms = occ["void rms_norm_f32<1024, true, false>"]
    assert (rms.wave_size, rms.waves_per_workgroup, rms.vgprs) == (32, 32, 24)
    assert rms.limits == {"registers": 2, "workgroup-slots": 2}
    assert (rms.waves_per_simd, rms.waves_per_cu, rms.fraction) == (16.0, 32.0, 1.0)
    assert "wave32 assumed" in rms.notes[0]


def test_kernels_without_register_counts_are_left_out() -> None:
    old = load([str(DATA / "rocprofv3-layouts" / "2024-07_kernel_trace.csv")])
    assert theoretical(old, "gfx90a") == {}


# --- synthetic shapes -----------------------------------------------------------------------


def test_zero_vgprs_take_one_granule() -> None:
    # 0 VGPRs -> alignTo(max(0, 1), 8) = 8 -> 512 // 8 = 64 -> 8: the architecture's maximum
    occ = occupancy(Shape(256, 0), "gfx90a")
    assert (occ.vgprs, occ.waves_per_simd, occ.limiter) == (8, 8.0, "waves-per-simd")


def test_lds_exactly_filling_the_cu() -> None:
    # 65536 bytes per workgroup of 4 waves: 65536 // 65536 = 1 workgroup -> 4 waves per CU
    # = 1 per SIMD; half the LDS (32768) lets a second one in. Exactly half: 2 workgroups.
    full = occupancy(Shape(256, 8, lds_bytes=65536), "gfx90a")
    assert (full.workgroups_per_cu, full.waves_per_simd, full.limiter) == (1, 1.0, "lds")
    assert full.lift_value == 32768
    assert occupancy(Shape(256, 8, lds_bytes=32768), "gfx90a").workgroups_per_cu == 2
    # gfx950: 160 KiB per CU, granule 320 dwords = 1280 bytes; 81920 + 1 rounds to 83200
    assert occupancy(Shape(256, 8, lds_bytes=163840), "gfx950").workgroups_per_cu == 1
    assert occupancy(Shape(256, 8, lds_bytes=81921), "gfx950").workgroups_per_cu == 1
    assert occupancy(Shape(256, 8, lds_bytes=81920), "gfx950").workgroups_per_cu == 2


def test_workgroup_of_1024_on_wave64() -> None:
    # 1024 / 64 = 16 waves per workgroup; slots min(32 // 16, 16) = 2 workgroups
    # 64 VGPRs: 512 // 64 = 8 -> 8 * 4 // 16 = 2 -> 32 waves, 100 %
    assert occupancy(Shape(1024, 64), "gfx90a").waves_per_simd == 8.0
    # 128 VGPRs: 512 // 128 = 4 -> 4 * 4 // 16 = 1 workgroup -> 16 waves = 4 per SIMD;
    # 2 workgroups need 32 waves = 8 per SIMD -> 512 // 8 = 64 VGPRs
    occ = occupancy(Shape(1024, 128, sgpr=32), "gfx90a")
    assert (occ.workgroups_per_cu, occ.waves_per_simd, occ.limiter) == (1, 4.0, "registers")
    assert occ.lift_value == 64


def test_wave32_on_rdna3() -> None:
    # gfx1100, wave32, 256 work-items = 8 waves, 128 VGPRs: granule 24 -> 144 -> 1536 // 144 = 10
    # WGP: registers 10 * 4 // 8 = 5 workgroups; slots min(64 // 8, 32) = 8 -> 5 * 8 = 40 waves
    # per WGP = 10 per SIMD = 62.5 % = 20 per CU (2 SIMDs)
    # lift: 6 workgroups = 48 waves = 12 per SIMD -> 1536 // 12 = 128 -> down to 24s = 120
    occ = occupancy(Shape(256, 128, wave_size=32), "gfx1100")
    assert (occ.vgprs, occ.workgroups_per_cu, occ.waves_per_simd) == (144, 5, 10.0)
    assert (occ.waves_per_cu, occ.fraction, occ.lift_value) == (20.0, 0.625, 120)
    # the same kernel compiled wave64: 768 per lane, granule 12: 128 -> 132 -> 768 // 132 = 5
    assert occupancy(Shape(256, 128, wave_size=64), "gfx1100").waves_per_simd_limits["vgprs"] == 5


def test_barrier_slots_limit_small_workgroups_on_gfx908() -> None:
    # gfx908, 128 work-items = 2 waves: slots min(40 // 2, 16) = 16 workgroups -> 32 of 40 waves
    # 4-wave workgroups (256 work-items) fill them: min(40 // 4, 16) * 4 = 40
    occ = occupancy(Shape(128, 16, sgpr=16), "gfx908")
    assert (occ.waves_per_simd, occ.limiter, occ.lift_value) == (8.0, "workgroup-slots", 256)


def test_workgroups_that_do_not_divide_the_wave_slots() -> None:
    # gfx90a, 192 work-items = 3 waves: 8 * 4 // 3 = 10 workgroups = 30 of 32 waves = 7.5 per SIMD
    occ = occupancy(Shape(192, 16), "gfx90a")
    assert (occ.waves_per_simd, occ.limiter, occ.lift_value) == (7.5, "waves-per-simd", 256)


def test_vgprs_and_sgprs_both_binding_name_both() -> None:
    # gfx908: 32 VGPRs -> 256 // 32 = 8; 96 SGPRs <= 100 -> 8. Nine waves need <= 28 VGPRs
    # (256 // 9 = 28) and <= 88 SGPRs.
    occ = occupancy(Shape(256, 32, sgpr=96), "gfx908")
    assert occ.lift.startswith("at most 28 VGPRs per lane (arch + accum, now 32) and at most 88")


@pytest.mark.parametrize(
    ("arch", "vgprs", "waves"),
    # reviews.llvm.org/D138443, the occupancy table LLVM's unit test prints
    [("gfx90a", v, w) for v, w in [(64, 8), (65, 7), (72, 7), (80, 6), (96, 5), (128, 4)]]
    + [("gfx942", v, w) for v, w in [(129, 3), (168, 3), (169, 2), (256, 2), (257, 1), (512, 1)]]
    + [("gfx908", 24, 10), ("gfx908", 25, 9)],
)
def test_vgpr_table_matches_llvm(arch: str, vgprs: int, waves: int) -> None:
    assert occupancy(Shape(64, vgprs), arch).waves_per_simd_limits["vgprs"] == waves


def test_gfx908_accvgprs_are_a_file_of_their_own() -> None:
    # gfx908: max(arch 40, accum 64) = 64 -> 256 // 64 = 4; gfx90a: 40 + 64 = 104 -> 512 // 104 = 4
    assert occupancy(Shape(256, 40, 64), "gfx908").vgprs == 64
    assert occupancy(Shape(256, 40, 64), "gfx90a").vgprs == 104


def test_errors_name_the_remedy() -> None:
    with pytest.raises(UsageError, match="no occupancy constants for arch 'gfx1036x'"):
        occupancy(Shape(64, 8), "gfx1036x")
    with pytest.raises(UsageError, match="gfx90a has no wave32"):
        occupancy(Shape(64, 8, wave_size=32), "gfx90a")
    assert occupancy(Shape(64, 8), "gfx90a:sramecc+:xnack-").arch == "gfx90a:sramecc+:xnack-"


@given(
    arch=st.sampled_from(sorted(ARCHS)),
    size=st.integers(1, 1024),
    vgprs=st.integers(0, 256),
    lds=st.integers(0, 65536),
    sgpr=st.sampled_from([None, 16, 32, 80, 96, 112]),
)
def test_occupancy_never_exceeds_a_limit(
    arch: str, size: int, vgprs: int, lds: int, sgpr: int | None
) -> None:
    occ = occupancy(Shape(size, vgprs, sgpr=sgpr, lds_bytes=lds), arch)
    assert occ.workgroups_per_cu == min(occ.limits.values())
    assert occ.waves_per_simd <= min(occ.waves_per_simd_limits.values())
    assert 0 <= occ.fraction <= 1
    if not occ.lift_value or "but" in occ.lift or " and " in occ.lift:
        return
    fields = {"lds": "lds_bytes", "registers": "sgpr" if "SGPRs" in occ.lift else "arch_vgpr"}
    if occ.limiter in fields:  # the value the lift names lets at least one more workgroup in
        lifted = occupancy(replace(occ.shape, **{fields[occ.limiter]: occ.lift_value}), arch)
        assert lifted.workgroups_per_cu > occ.workgroups_per_cu


# --- achieved -------------------------------------------------------------------------------


def over_dispatches(found: dict[int, Achieved], value: str) -> float:
    """The mean over all dispatches of a per-kernel mean (each kernel weighted by its count)."""
    total = sum(getattr(k, value) * k.dispatches for k in found.values())
    return float(total / sum(k.dispatches for k in found.values()))


@needs_corpus
def test_wave_occupancy_matches_omniperf_exactly() -> None:
    # Omniperf 1.0.3 MI100 prev_analysis/201.csv: "Wave Occupancy, 3179.407834818687,
    # Wavefronts, 4800" = mean over the 167 dispatches of SQ_ACCUM_PREV_HIRES /
    # GRBM_GUI_ACTIVE, both from the SQ_LEVEL_WAVES pass; per CU 3179.41 / 120 = 26.495.
    found = achieved(load([str(MI100 / "SQ_LEVEL_WAVES.csv")]), "gfx908", compute_units=120)
    assert sum(k.dispatches for k in found.values()) == 167
    assert over_dispatches(found, "waves_on_gpu") == pytest.approx(3179.407834818687, rel=1e-12)
    cu = over_dispatches(found, "waves_per_cu")
    assert cu == pytest.approx(3179.407834818687 / 120, rel=1e-12)
    # SQ_WAVE_CYCLES (quad-cycles): 4 * SQ_WAVE_CYCLES / GRBM_GUI_ACTIVE / 120 = 26.448 per CU
    assert over_dispatches(found, "wave_cycles_waves_per_cu") == pytest.approx(cu, rel=0.01)
    one = next(iter(found.values()))
    assert one.counters == ("SQ_ACCUM_PREV_HIRES", "SQ_WAVE_CYCLES", "GRBM_GUI_ACTIVE")
    assert one.wave_cycles_waves_per_cu is not None and one.waves_per_cu is not None
    assert one.occupancy_percent == pytest.approx(100 * one.wave_cycles_waves_per_cu / 40)
    assert one.theoretical_waves_per_cu == 40.0  # fillBuffer: 8 VGPRs, 32 SGPRs, 4 waves
    assert one.ratio == pytest.approx(one.waves_per_cu / 40.0)


@needs_corpus
def test_workload_folder_per_cu_consistent() -> None:
    # Read as a whole, the folder keeps the SQ_LEVEL_WAVES pass's own GRBM_GUI_ACTIVE beside
    # pmc_perf.csv's, so the waves are divided by the busy cycles of the pass that counted
    # them, as Omniperf does: 3179.41 / 120 waves per CU.
    found = achieved(load([str(MI100)]))  # gfx908 and 120 CUs from sysinfo.csv
    cu = over_dispatches(found, "waves_per_cu")
    assert cu == pytest.approx(3179.407834818687 / 120, rel=1e-9)
    assert all(k.counters[0] == "SQ_LEVEL_WAVES_ACCUM" for k in found.values())
    ratios = [k.ratio for k in found.values() if k.ratio is not None]
    assert len(ratios) == len(found) and all(0 < r <= 1 for r in ratios)


@needs_corpus
def test_several_xcds_must_be_known() -> None:
    profile = load([str(MI100 / "SQ_LEVEL_WAVES.csv")])
    with pytest.raises(UsageError, match="pass xcds"):
        achieved(profile, "gfx942", compute_units=304)
    assert achieved(profile, "gfx942", compute_units=304, xcds=8) != {}


def test_no_counters_no_achieved() -> None:
    assert achieved(load([str(STENCILS)])) == {}
