"""rocprof v1's derived metrics (docs/formats/amd-counters.md, "Derived
metrics"): as the file wrote them, and
recomputed from the raw counters beside them where those were collected."""

from __future__ import annotations

from roofscope.analysis.counters import Array, Counters
from roofscope.analysis.metrics.formula import (
    G90A,
    G94,
    G908,
    G950,
    GFX9,
    RDNA,
    V1,
    V3,
    Archs,
    Kind,
    Metric,
    Parts,
    Side,
    col,
    instances,
    need,
    ratio,
)
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.metrics.sol import bubble_read, ea_read, ea_write, gl2c_read, gl2c_write

# --- rocprof v1 derived metrics -------------------------------------------------------------

# name -> unit and kind, as rocprof v1 writes the column (``FETCH_SIZE`` in KiB, ...)
_V1: dict[str, tuple[str, Kind]] = {
    "GPUBusy": ("%", "level"),
    "Wavefronts": ("waves", "amount"),
    **{n: ("instr/wave", "level") for n in (
        "VALUInsts", "SALUInsts", "SFetchInsts", "GDSInsts", "VFetchInsts", "VWriteInsts",
        "FlatVMemInsts", "LDSInsts", "FlatLDSInsts")},
    **{n: ("%", "level") for n in (
        "VALUUtilization", "VALUBusy", "SALUBusy", "MemUnitBusy", "MemUnitStalled",
        "WriteUnitStalled", "ALUStalledByLDS", "LDSBankConflict", "L2CacheHit",
        "OccupancyPercent")},
    **{n: ("KiB", "amount") for n in ("FETCH_SIZE", "WRITE_SIZE", "FetchSize", "WriteSize")},
    **{n: ("requests", "amount") for n in ("WRITE_REQ_32B", "MemWrites32B")},
    "MeanOccupancyPerCU": ("waves", "level"),
    "MeanOccupancyPerActiveCU": ("waves", "level"),
    "BANDWIDTH_EA": ("bytes/cycle", "level"),
}  # fmt: skip


def _reported(name: str) -> Metric:
    unit, kind = _V1[name]
    return Metric(
        name, unit, kind, None, "the profiler's own column (rocprof v1 metrics.xml)",
        f"{name} as the file reports it", lambda c, m, d: Parts(c[name], d),
    )  # fmt: skip


def _v1(
    name: str, archs: Archs, text: str, num: Side, den: Side | None = None, src: str = V1
) -> Metric:
    """``NAME (recomputed)`` from raw counters: a ratio, or an amount without ``den``."""
    unit, _ = _V1[name]
    label = f"{name} (recomputed)"
    if den is None:
        return Metric(label, unit, "amount", archs, src, text, lambda c, m, d: Parts(num(c, m), d))
    return ratio(label, unit, archs, src, text, num, den)


def _v1_max(column: str, counter: str) -> Side:
    """rocprof v1 ``max(counter,16)``: its ``column`` when written, else ``counter[0..15]``."""
    return lambda c, m: c[column] if column in c else instances(c, counter, "max")


def _sum16(counter: str) -> Side:
    return lambda c, m: instances(c, counter, "sum")


def _per_wave(counter: str, minus: str | None = None) -> Side:
    return lambda c, m: c[counter] - c[minus] if minus else c[counter]


def _grbm_times(*factors: str, scale: float = 1) -> Side:
    """``GRBM_GUI_ACTIVE`` times the machine constants ``factors`` and ``scale``."""

    def den(c: Counters, m: Machine) -> Array:
        out = c["GRBM_GUI_ACTIVE"] * scale
        for f in factors:
            out = out * need(getattr(m, f), f)
        return out

    return den


def _simds(c: Counters, m: Machine) -> Array:
    simds = need(m.simd_per_cu, "simd_per_cu") * need(m.compute_units, "compute_units")
    return c["GRBM_GUI_ACTIVE"] * simds


def _per_xcc(counter: str, scale: float) -> Side:
    return lambda c, m: scale * c[counter] * need(m.num_xcd, "num_xcd")


def _kib(side: Side) -> Side:
    return lambda c, m: side(c, m) / 1024


def _write_32b(p: str) -> Side:
    return lambda c, m: 2 * c[f"{p}WRREQ_64B_sum"] + (c[f"{p}WRREQ_sum"] - c[f"{p}WRREQ_64B_sum"])


_WAVES = col("SQ_WAVES")
_G94_950 = G94 + G950

ROCPROF_V1: list[Metric] = [
    *(_reported(name) for name in _V1),
    _v1("GPUBusy", None, "100 * GRBM_GUI_ACTIVE / GRBM_COUNT",
        lambda c, m: 100 * c["GRBM_GUI_ACTIVE"], col("GRBM_COUNT")),
    _v1("Wavefronts", None, "SQ_WAVES", _WAVES),
    _v1("VALUInsts", None, "SQ_INSTS_VALU / SQ_WAVES", col("SQ_INSTS_VALU"), _WAVES),
    _v1("SALUInsts", None, "SQ_INSTS_SALU / SQ_WAVES", col("SQ_INSTS_SALU"), _WAVES),
    _v1("SFetchInsts", None, "SQ_INSTS_SMEM / SQ_WAVES", col("SQ_INSTS_SMEM"), _WAVES),
    _v1("GDSInsts", None, "SQ_INSTS_GDS / SQ_WAVES", col("SQ_INSTS_GDS"), _WAVES),
    _v1("VFetchInsts", GFX9 + G950, "(SQ_INSTS_VMEM_RD - TA_FLAT_READ_WAVEFRONTS_sum) / SQ_WAVES",
        _per_wave("SQ_INSTS_VMEM_RD", "TA_FLAT_READ_WAVEFRONTS_sum"), _WAVES),
    _v1("VWriteInsts", GFX9 + G950, "(SQ_INSTS_VMEM_WR - TA_FLAT_WRITE_WAVEFRONTS_sum) / SQ_WAVES",
        _per_wave("SQ_INSTS_VMEM_WR", "TA_FLAT_WRITE_WAVEFRONTS_sum"), _WAVES),
    _v1("LDSInsts", GFX9, "(SQ_INSTS_LDS - SQ_INSTS_FLAT_LDS_ONLY) / SQ_WAVES",
        _per_wave("SQ_INSTS_LDS", "SQ_INSTS_FLAT_LDS_ONLY"), _WAVES),
    _v1("VALUUtilization", None, "100 * SQ_THREAD_CYCLES_VALU / (SQ_ACTIVE_INST_VALU * wave_size)",
        lambda c, m: 100 * c["SQ_THREAD_CYCLES_VALU"],
        lambda c, m: c["SQ_ACTIVE_INST_VALU"] * need(m.wave_size, "wave_size")),
    _v1("VALUBusy", GFX9, "100 * SQ_ACTIVE_INST_VALU * 4 / SIMD_NUM / GRBM_GUI_ACTIVE",
        lambda c, m: 400 * c["SQ_ACTIVE_INST_VALU"], _simds),
    _v1("SALUBusy", GFX9, "100 * SQ_INST_CYCLES_SALU * 4 / SIMD_NUM / GRBM_GUI_ACTIVE",
        lambda c, m: 400 * c["SQ_INST_CYCLES_SALU"], _simds),
    _v1("MemUnitBusy", GFX9, "100 * max(TA_TA_BUSY,16) / GRBM_GUI_ACTIVE / SE_NUM",
        lambda c, m: 100 * _v1_max("TA_BUSY_max", "TA_TA_BUSY")(c, m), _grbm_times("se_per_gpu")),
    _v1("MemUnitStalled", GFX9,
        "100 * max(TCP_TCP_TA_DATA_STALL_CYCLES,16) / GRBM_GUI_ACTIVE / SE_NUM",
        lambda c, m: 100 * _v1_max("TCP_TCP_TA_DATA_STALL_CYCLES_max",
                                   "TCP_TCP_TA_DATA_STALL_CYCLES")(c, m),
        _grbm_times("se_per_gpu")),
    _v1("WriteUnitStalled", GFX9, "100 * TCC_WRREQ_STALL_max / GRBM_GUI_ACTIVE",
        lambda c, m: 100 * c["TCC_WRREQ_STALL_max"], _grbm_times()),
    _v1("ALUStalledByLDS", GFX9, "100 * SQ_WAIT_INST_LDS * 4 / SQ_WAVES / GRBM_GUI_ACTIVE",
        lambda c, m: 400 * c["SQ_WAIT_INST_LDS"],
        lambda c, m: c["SQ_WAVES"] * c["GRBM_GUI_ACTIVE"]),
    _v1("LDSBankConflict", GFX9, "100 * SQ_LDS_BANK_CONFLICT / GRBM_GUI_ACTIVE / CU_NUM",
        lambda c, m: 100 * c["SQ_LDS_BANK_CONFLICT"], _grbm_times("compute_units")),
    _v1("LDSBankConflict", RDNA, "100 * SQC_LDS_BANK_CONFLICT / SQC_LDS_IDX_ACTIVE",
        lambda c, m: 100 * c["SQC_LDS_BANK_CONFLICT"], col("SQC_LDS_IDX_ACTIVE")),
    _v1("L2CacheHit", GFX9, "100 * sum(TCC_HIT,16) / (sum(TCC_HIT,16) + sum(TCC_MISS,16))",
        lambda c, m: 100 * _sum16("TCC_HIT")(c, m),
        lambda c, m: _sum16("TCC_HIT")(c, m) + _sum16("TCC_MISS")(c, m)),
    _v1("L2CacheHit", RDNA, "100 * sum(GL2C_HIT,16) / (sum(GL2C_HIT,16) + sum(GL2C_MISS,16))",
        lambda c, m: 100 * _sum16("GL2C_HIT")(c, m),
        lambda c, m: _sum16("GL2C_HIT")(c, m) + _sum16("GL2C_MISS")(c, m)),
    _v1("FETCH_SIZE", G908 + G90A, "(32 * TCC_EA_RDREQ_32B_sum + 64 * (RDREQ - 32B)) / 1024",
        _kib(ea_read("TCC_EA_"))),
    # rocprof v1's gfx940 expression changed between releases (64 or 128 bytes per
    # non-32B request); rocprofv3's, with the 128-byte TCC_BUBBLE reads, is the one used
    _v1("FETCH_SIZE", _G94_950, "(128 * TCC_BUBBLE + 64 * (...) + 32 * EA0_RDREQ_32B) / 1024 "
        "(rocprofv3 counter_defs.yaml)", _kib(bubble_read), src=V3),
    _v1("FETCH_SIZE", RDNA, "(32, 64, 96, 128 x GL2C_EA_RDREQ_<n>B_sum) / 1024", _kib(gl2c_read)),
    _v1("WRITE_SIZE", G908 + G90A, "(32 * (WRREQ - WRREQ_64B) + 64 * WRREQ_64B) / 1024 (TCC_EA)",
        _kib(ea_write("TCC_EA_"))),
    _v1("WRITE_SIZE", _G94_950, "(32 * (WRREQ - WRREQ_64B) + 64 * WRREQ_64B) / 1024 (TCC_EA0)",
        _kib(ea_write("TCC_EA0_"))),
    _v1("WRITE_SIZE", RDNA, "(32 * (GL2C_MC_WRREQ - GL2C_EA_WRREQ_64B) + 64 * 64B) / 1024",
        _kib(gl2c_write)),
    _v1("WRITE_REQ_32B", G908 + G90A, "2 * TCC_EA_WRREQ_64B_sum + (WRREQ - WRREQ_64B)",
        _write_32b("TCC_EA_")),
    _v1("WRITE_REQ_32B", G94, "2 * TCC_EA0_WRREQ_64B_sum + (WRREQ - WRREQ_64B)",
        _write_32b("TCC_EA0_")),
    _v1("OccupancyPercent", G90A, "400 * SQ_WAVE_CYCLES / GRBM_GUI_ACTIVE / CU_NUM / 32",
        lambda c, m: 400 * c["SQ_WAVE_CYCLES"], _grbm_times("compute_units", scale=32)),
    _v1("OccupancyPercent", G94, "400 * SQ_WAVE_CYCLES * XCC_NUM / GRBM_GUI_ACTIVE / CU_NUM / 32",
        _per_xcc("SQ_WAVE_CYCLES", 400), _grbm_times("compute_units", scale=32)),
    _v1("OccupancyPercent", RDNA, "100 * SQ_WAVE_CYCLES / GRBM_GUI_ACTIVE / CU_NUM / 32",
        lambda c, m: 100 * c["SQ_WAVE_CYCLES"], _grbm_times("compute_units", scale=32)),
    _v1("MeanOccupancyPerCU", G90A, "SQ_ACCUM_PREV_HIRES / GRBM_GUI_ACTIVE / CU_NUM",
        col("SQ_LEVEL_WAVES_ACCUM"), _grbm_times("compute_units")),
    _v1("MeanOccupancyPerCU", G94, "SQ_ACCUM_PREV_HIRES * XCC_NUM / GRBM_GUI_ACTIVE / CU_NUM",
        _per_xcc("SQ_LEVEL_WAVES_ACCUM", 1), _grbm_times("compute_units")),
]  # fmt: skip
