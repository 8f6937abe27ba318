"""The speed-of-light metrics, compute and memory (docs/formats/amd-counters.md, "Speed of
light")."""

from __future__ import annotations

from roofscope.analysis.counters import Array, Counters, Missing
from roofscope.analysis.metrics.column import summed
from roofscope.analysis.metrics.formula import (
    CDNA,
    CDNA2_UP,
    G90A,
    G94,
    G908,
    G950,
    NUM_ACTIVE_CUS,
    RDNA,
    SOL,
    SOL_1X,
    SOL_33,
    SOL_33_WAVES,
    SOL_950,
    SOL_RDNA,
    Archs,
    Metric,
    PeakFn,
    Side,
    col,
    const,
    cu_cycles,
    grbm_per_xcd,
    need,
    noted,
    own_duration,
    own_run,
    per_clock,
    rate,
    ratio,
    total,
)
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.work.counters import FLOPS
from roofscope.model import words

# --- speed of light: compute ----------------------------------------------------------------


def _valu_flops(c: Counters, m: Machine) -> Array:
    return c.column(summed(c.column(FLOPS[f"fp{b}-vector"](c)) for b in (16, 32, 64)))


def _issued(c: Counters, m: Machine) -> Array:
    kinds = ("VALU", "VMEM", "SALU", "SMEM", "GDS", "BRANCH", "SENDMSG", "VSKIPPED")
    return c.column(summed(c[f"SQ_INSTS_{k}"] for k in kinds))


def _busy_cus(c: Counters, m: Machine) -> Array:
    need(m.max_waves_per_cu, "max_waves_per_cu")
    need(m.compute_units, "compute_units")
    return 4 * c["SQ_BUSY_CU_CYCLES"]


def _active_cus(busy: float, m: Machine) -> float:
    """Omniperf's ``numActiveCUs`` from the aggregate ``4*SQ_BUSY_CU_CYCLES/GRBM_PER_XCD``:
    ``TO_INT(MIN(R / max_waves * 8 + MIN(R mod max_waves, 8), cu_per_gpu))``, R = ROUND(x)."""
    waves, cus = (
        need(m.max_waves_per_cu, "max_waves_per_cu"),
        need(m.compute_units, "compute_units"),
    )
    r = float(round(busy))  # half to even, as numpy's round
    return float(int(min(r / waves * 8 + min(r % waves, 8), cus)))


def _max_waves(m: Machine) -> float:
    """Wavefront Occupancy's peak: ``max_waves_per_cu * cu_per_gpu``."""
    return need(m.max_waves_per_cu, "max_waves_per_cu") * need(m.compute_units, "compute_units")


def _util(name: str, archs: Archs, *counters: str, scale: float = 1.0, src: str = SOL) -> Metric:
    """The share of CU cycles a unit was busy: ``100 * sum(counters)`` over ``scale`` x the
    CU cycles of the dispatch."""
    busy = " + ".join(counters)
    text = f"100 * ({busy}) / (GRBM_GUI_ACTIVE / num_xcd * cu_per_gpu * {words.plain(scale)})"
    cycles = total(*counters)
    return ratio(
        name, "%", archs, src, text,
        lambda c, m: 100 * cycles(c, m), lambda c, m: cu_cycles(c, m) * scale, const(100),
    )  # fmt: skip


_WAVES_CLOCK = "GRBM_GUI_ACTIVE@SQ_LEVEL_WAVES"  # the SQ_LEVEL_WAVES run's own busy cycles
_OCCUPANCY_PEER = "Wavefront Occupancy (rocprof-compute)"
_OCCUPANCY_NOTE = (
    "roofscope divides the waves accumulated in the SQ_LEVEL_WAVES pass by that pass's own "
    "GRBM_GUI_ACTIVE; rocprof-compute 3.3.0 divides them by pmc_perf.csv's, counted in another "
    "pass"
)


def _other_pass_clock(c: Counters, m: Machine) -> Array:
    """rocprof-compute's ``$GRBM_GUI_ACTIVE_PER_XCD`` for Wavefront Occupancy: pmc_perf.csv's
    GRBM_GUI_ACTIVE. Only where the profile keeps the waves' pass's own clock: elsewhere
    (rocpd, rocprof v1) both tools divide by the same counter."""
    if _WAVES_CLOCK not in c:
        raise Missing(_WAVES_CLOCK)
    return grbm_per_xcd(c, m)


# MFMA FLOPs per CU per clock, per arch (speed-of-light peaks; gfx950 F6F4 16384 where the
# yaml writes 16834, a typo for 2 x F8)
_MFMA_PEAK: dict[str, dict[str, float]] = {
    "F8": {"gfx94[0-2]": 4096, "gfx950": 8192},
    "BF16": {"gfx908": 512, "gfx90a": 1024, "gfx94[0-2]": 2048, "gfx950": 4096},
    "F16": {"gfx908": 1024, "gfx90a": 1024, "gfx94[0-2]": 2048, "gfx950": 4096},
    "F32": {"gfx908": 256, "gfx90a": 256, "gfx94[0-2]": 256, "gfx950": 256},
    "F64": {"gfx908": 256, "gfx90a": 256, "gfx94[0-2]": 256, "gfx950": 128},
    "F6F4": {"gfx950": 16384},
    "I8": {"gfx908": 1024, "gfx90a": 1024, "gfx94[0-2]": 4096, "gfx950": 8192},
}


def _mops(counter: str) -> Side:
    return lambda c, m: 512 * c[counter]


def _mfma() -> list[Metric]:
    out = []
    for dtype, peaks in _MFMA_PEAK.items():
        counter = f"SQ_INSTS_VALU_MFMA_MOPS_{dtype}"
        name = "MFMA IOPs (INT8)" if dtype == "I8" else f"MFMA FLOPs ({dtype})"
        unit = "GIOP/s" if dtype == "I8" else "GFLOP/s"
        text = f"512 * {counter} / duration"
        out += [
            rate(name, unit, (a,), SOL, text, _mops(counter), per_clock(k))
            for a, k in peaks.items()
        ]
    return out


COMPUTE: list[Metric] = [
    rate("VALU FLOPs", "GFLOP/s", CDNA, SOL,
         "64 * (ADD + MUL + TRANS + 2*FMA) over F16, F32, F64 VALU instructions / duration",
         _valu_flops, per_clock(128)),
    rate("VALU FLOPs", "GFLOP/s", RDNA, SOL_RDNA, "SQ_INSTS_VALU_sum * wave_size / duration",
         lambda c, m: c["SQ_INSTS_VALU_sum"] * need(m.wave_size, "wave_size"), per_clock(128)),
    rate("VALU IOPs", "GIOP/s", CDNA, SOL, "64 * (SQ_INSTS_VALU_INT32 + INT64) / duration",
         lambda c, m: 64 * (c["SQ_INSTS_VALU_INT32"] + c["SQ_INSTS_VALU_INT64"]),
         per_clock(128)),
    *_mfma(),
    ratio("Active CUs", "CUs", CDNA, NUM_ACTIVE_CUS,
          "numActiveCUs of 4 * SQ_BUSY_CU_CYCLES / (GRBM_GUI_ACTIVE / num_xcd), aggregated first",
          _busy_cus, grbm_per_xcd, lambda m: need(m.compute_units, "compute_units"),
          _active_cus),
    _util("VALU Utilization", CDNA, "SQ_ACTIVE_INST_VALU"),
    _util("SALU Utilization", CDNA, "SQ_ACTIVE_INST_SCA"),
    _util("MFMA Utilization", CDNA, "SQ_VALU_MFMA_BUSY_CYCLES", scale=4),
    _util("VMEM Utilization", CDNA2_UP, "SQ_ACTIVE_INST_FLAT", "SQ_ACTIVE_INST_VMEM",
          src=SOL_33),
    _util("Branch Utilization", CDNA2_UP, "SQ_ACTIVE_INST_MISC", src=SOL_33),
    ratio("VALU Active Threads", "threads", CDNA, SOL,
          "SQ_THREAD_CYCLES_VALU / SQ_ACTIVE_INST_VALU",
          col("SQ_THREAD_CYCLES_VALU"), col("SQ_ACTIVE_INST_VALU"),
          lambda m: need(m.wave_size, "wave_size")),
    ratio("IPC", "instr/cycle", CDNA, SOL, "SQ_INSTS / SQ_BUSY_CU_CYCLES",
          col("SQ_INSTS"), col("SQ_BUSY_CU_CYCLES"), const(5)),
    ratio("IPC", "instr/cycle", RDNA, SOL_RDNA,
          "(SQ_INSTS_ALL_sum - SQ_INSTS_INTERNAL_sum) / SQ_BUSY_CYCLES_sum",
          lambda c, m: c["SQ_INSTS_ALL_sum"] - c["SQ_INSTS_INTERNAL_sum"],
          col("SQ_BUSY_CYCLES_sum"), const(5)),
    ratio("IPC (Issue)", "instr/cycle", CDNA, SOL_1X,
          "(VALU+VMEM+SALU+SMEM+GDS+BRANCH+SENDMSG+VSKIPPED instructions) / SQ_ACTIVE_INST_ANY",
          _issued, col("SQ_ACTIVE_INST_ANY"), const(5)),
    noted(ratio("Wavefront Occupancy", "waves", CDNA, SOL,
                "SQ_ACCUM_PREV_HIRES of SQ_LEVEL_WAVES / (GRBM_GUI_ACTIVE / num_xcd), both of "
                "the SQ_LEVEL_WAVES run where the profile keeps it",
                col("SQ_LEVEL_WAVES_ACCUM"), own_run(grbm_per_xcd, "SQ_LEVEL_WAVES"),
                _max_waves), _OCCUPANCY_NOTE, _OCCUPANCY_PEER),
    ratio(_OCCUPANCY_PEER, "waves", CDNA, SOL_33_WAVES,
          "SQ_ACCUM_PREV_HIRES of SQ_LEVEL_WAVES / (GRBM_GUI_ACTIVE of pmc_perf.csv / num_xcd), "
          "as rocprof-compute 3.3.0 computes it; only where the SQ_LEVEL_WAVES run's own "
          "GRBM_GUI_ACTIVE is kept",
          col("SQ_LEVEL_WAVES_ACCUM"), _other_pass_clock, _max_waves),
    ratio("Wavefront Occupancy", "waves", RDNA, SOL_RDNA, "SQ_WAVE_CYCLES_sum / SQ_BUSY_CYCLES_avr",
          col("SQ_WAVE_CYCLES_sum"), col("SQ_BUSY_CYCLES_avr"),
          _max_waves),
]  # fmt: skip


# --- speed of light: memory -----------------------------------------------------------------

_TCP_TO_TCC = ("READ_REQ", "WRITE_REQ", "ATOMIC_WITH_RET_REQ", "ATOMIC_WITHOUT_RET_REQ")


def _vl1d_hits(c: Counters, m: Machine) -> Array:
    misses = total(*(f"TCP_TCC_{k}_sum" for k in _TCP_TO_TCC))(c, m)
    return 100 * (c["TCP_TOTAL_CACHE_ACCESSES_sum"] - misses)


def _hit_rate(name: str, archs: Archs, src: str, hits: str, misses: str) -> Metric:
    return ratio(
        name, "%", archs, src, f"100 * {hits} / ({hits} + {misses})",
        lambda c, m: 100 * c[hits], total(hits, misses), const(100),
    )  # fmt: skip


def _per_access(name: str, archs: Archs, src: str, counter: str, size: int, peak: PeakFn) -> Metric:
    return rate(name, "GB/s", archs, src, f"{size} * {counter} / duration",
                lambda c, m: size * c[counter], peak)  # fmt: skip


def _lds_bytes(c: Counters, m: Machine) -> Array:
    banks = need(m.lds_banks_per_cu, "lds_banks_per_cu")
    return (c["SQ_LDS_IDX_ACTIVE"] - c["SQ_LDS_BANK_CONFLICT"]) * 4 * banks


def ea_read(p: str) -> Side:
    """gfx908/gfx90a (``p`` = "TCC_EA_"): 32-byte and 64-byte read requests."""
    return lambda c, m: (
        32 * c[f"{p}RDREQ_32B_sum"] + 64 * (c[f"{p}RDREQ_sum"] - c[f"{p}RDREQ_32B_sum"])
    )


def bubble_read(c: Counters, m: Machine) -> Array:
    """gfx94x/gfx950: ``TCC_BUBBLE`` counts 128-byte reads among ``TCC_EA0_RDREQ``."""
    bubble, r32 = c["TCC_BUBBLE_sum"], c["TCC_EA0_RDREQ_32B_sum"]
    return 128 * bubble + 64 * (c["TCC_EA0_RDREQ_sum"] - bubble - r32) + 32 * r32


def _sized_read(c: Counters, m: Machine) -> Array:
    return c.column(summed(s * c[f"TCC_EA0_RDREQ_{s}B_sum"] for s in (32, 64, 128)))


def gl2c_read(c: Counters, m: Machine) -> Array:
    return c.column(summed(s * c[f"GL2C_EA_RDREQ_{s}B_sum"] for s in (32, 64, 96, 128)))


def ea_write(p: str) -> Side:
    return lambda c, m: (
        64 * c[f"{p}WRREQ_64B_sum"] + 32 * (c[f"{p}WRREQ_sum"] - c[f"{p}WRREQ_64B_sum"])
    )


def gl2c_write(c: Counters, m: Machine) -> Array:
    w64 = c["GL2C_EA_WRREQ_64B_sum"]
    return 64 * w64 + 32 * (c["GL2C_MC_WRREQ_sum"] - w64)


def _hbm(m: Machine) -> float:
    return need(m.hbm_bandwidth_gbs, "hbm_bandwidth_gbs")


def _latency(kind: str, p: str, archs: Archs) -> Metric:
    level, req = f"{p}{kind}REQ_LEVEL_sum", f"{p}{kind}REQ_sum"
    name = f"L2-Fabric {'Read' if kind == 'RD' else 'Write'} Latency"
    return ratio(name, "cycles", archs, SOL, f"{level} / {req}", col(level), col(req))


_RD, _WR = "L2-Fabric Read Bandwidth", "L2-Fabric Write Bandwidth"
_SQC = "sqc_per_gpu"

MEMORY: list[Metric] = [
    rate("LDS Bandwidth", "GB/s", CDNA, SOL,
         "(SQ_LDS_IDX_ACTIVE - SQ_LDS_BANK_CONFLICT) * 4 * lds_banks_per_cu / duration",
         _lds_bytes, per_clock(128)),
    ratio("LDS Bank Conflicts/Access", "conflicts/access", CDNA, SOL,
          "SQ_LDS_BANK_CONFLICT / (SQ_LDS_IDX_ACTIVE - SQ_LDS_BANK_CONFLICT)",
          col("SQ_LDS_BANK_CONFLICT"),
          lambda c, m: c["SQ_LDS_IDX_ACTIVE"] - c["SQ_LDS_BANK_CONFLICT"], const(32)),
    _hit_rate("Instruction Cache Hit Rate", CDNA, SOL, "SQC_ICACHE_HITS", "SQC_ICACHE_MISSES"),
    _hit_rate("Instruction Cache Hit Rate", RDNA, SOL_RDNA,
              "SQC_ICACHE_HITS_sum", "SQC_ICACHE_MISSES_sum"),
    _per_access("Instruction Cache Bandwidth", CDNA, SOL, "SQC_ICACHE_REQ", 64,
                per_clock(64, _SQC)),
    _per_access("Instruction Cache Bandwidth", RDNA, SOL_RDNA, "SQC_TC_INST_REQ_sum", 128,
                per_clock(64, _SQC)),
    rate("Instruction Fetch Bandwidth", "GB/s", CDNA, SOL_1X,
         "32 * SQ_IFETCH / duration, the duration of the SQ_IFETCH_LEVEL run where the profile "
         "keeps it", lambda c, m: 32 * c["SQ_IFETCH"], per_clock(32, _SQC),
         duration=own_duration("SQ_IFETCH_LEVEL")),
    ratio("Instruction Fetch Latency", "cycles", CDNA, SOL,
          "SQ_ACCUM_PREV_HIRES of SQ_IFETCH_LEVEL / SQ_IFETCH",
          col("SQ_IFETCH_LEVEL_ACCUM"), col("SQ_IFETCH")),
    _hit_rate("Scalar L1D Cache Hit Rate", CDNA, SOL, "SQC_DCACHE_HITS", "SQC_DCACHE_MISSES"),
    _hit_rate("Scalar L1D Cache Hit Rate", RDNA, SOL_RDNA,
              "SQC_DCACHE_HITS_sum", "SQC_DCACHE_MISSES_sum"),
    _per_access("Scalar L1D Cache Bandwidth", CDNA, SOL, "SQC_DCACHE_REQ", 64,
                per_clock(64, _SQC)),
    _per_access("Scalar L1D Cache Bandwidth", RDNA, SOL_RDNA, "SQC_TC_DATA_READ_REQ_sum", 128,
                per_clock(64, _SQC)),
    ratio("Vector L1D Cache Hit Rate", "%", CDNA, SOL,
          "100 - 100 * (TCP_TCC_{READ,WRITE,ATOMIC_WITH_RET,ATOMIC_WITHOUT_RET}_REQ_sum) "
          "/ TCP_TOTAL_CACHE_ACCESSES_sum",
          _vl1d_hits, col("TCP_TOTAL_CACHE_ACCESSES_sum"), const(100)),
    _per_access("Vector L1D Cache Bandwidth", G908 + G90A, SOL,
                "TCP_TOTAL_CACHE_ACCESSES_sum", 64, per_clock(64)),
    _per_access("Vector L1D Cache Bandwidth", G94 + G950, SOL,
                "TCP_TOTAL_CACHE_ACCESSES_sum", 128, per_clock(128)),
    _hit_rate("L2 Cache Hit Rate", CDNA, SOL, "TCC_HIT_sum", "TCC_MISS_sum"),
    _hit_rate("L2 Cache Hit Rate", RDNA, SOL_RDNA, "GL2C_HIT_sum", "GL2C_MISS_sum"),
    _per_access("L2 Cache Bandwidth", G908, SOL, "TCC_REQ_sum", 64, per_clock(64, "l2_channels")),
    # the gfx90a yaml's peak uses 64 bytes per channel-clock against 128 in its value
    _per_access("L2 Cache Bandwidth", CDNA2_UP, SOL, "TCC_REQ_sum", 128,
                per_clock(128, "l2_channels")),
    rate(_RD, "GB/s", G908 + G90A, SOL, "(32 * RDREQ_32B + 64 * (RDREQ - RDREQ_32B)) / duration",
         ea_read("TCC_EA_"), _hbm),
    rate(_RD, "GB/s", G950, SOL_950, "(32 * RDREQ_32B + 64 * RDREQ_64B + 128 * RDREQ_128B) "
         "of TCC_EA0 / duration", _sized_read, _hbm),
    rate(_RD, "GB/s", G94 + G950, SOL,
         "(128 * TCC_BUBBLE + 64 * (EA0_RDREQ - BUBBLE - EA0_RDREQ_32B) + 32 * EA0_RDREQ_32B) "
         "/ duration", bubble_read, _hbm),
    rate(_RD, "GB/s", RDNA, SOL_RDNA, "(32, 64, 96, 128 x GL2C_EA_RDREQ_<n>B_sum) / duration",
         gl2c_read),
    rate(_WR, "GB/s", G908 + G90A, SOL, "(64 * WRREQ_64B + 32 * (WRREQ - WRREQ_64B)) / duration",
         ea_write("TCC_EA_"), _hbm),
    rate(_WR, "GB/s", G94 + G950, SOL, "(64 * EA0_WRREQ_64B + 32 * (EA0_WRREQ - EA0_WRREQ_64B)) "
         "/ duration", ea_write("TCC_EA0_"), _hbm),
    rate(_WR, "GB/s", RDNA, SOL_RDNA,
         "(64 * GL2C_EA_WRREQ_64B + 32 * (GL2C_MC_WRREQ - GL2C_EA_WRREQ_64B)) / duration",
         gl2c_write),
    _latency("RD", "TCC_EA_", G908 + G90A),
    _latency("RD", "TCC_EA0_", G94 + G950),
    _latency("WR", "TCC_EA_", G908 + G90A),
    _latency("WR", "TCC_EA0_", G94 + G950),
]  # fmt: skip
