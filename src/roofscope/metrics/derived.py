"""Derived counter metrics per architecture, and their two aggregations.

Each :class:`Metric` is a small Python function of the per-dispatch counters, the
:class:`~roofscope.metrics.machine.Machine` and the durations, returning a numerator and a
denominator per dispatch; its per-dispatch value is their quotient. A metric whose counters
(or machine constants) are missing raises :class:`Missing` and is absent, never 0. Several
variants may share a name, one per architecture family (``archs``, fnmatch patterns; None
for any); a variant for an architecture applies only when the machine's arch is known.

Kinds, and how :func:`metrics` aggregates them over a set of dispatches:

``rate``   (bytes, FLOPs, ... per second; the denominator is the duration in ns)
    ``value_dispatch_mean`` is the mean of the per-dispatch rates (rocprof-compute 1.x-2.x
    ``AVG``); ``value_time_weighted`` is the total amount over the total time (rocprof-compute
    3.x ``SUM/SUM``). Dispatches of zero or unknown duration are left out and counted.
``ratio``  (hit rates, utilisations, latencies, per-wave counts)
    mean of the per-dispatch ratios, and the ratio of sums (``sum(hits)/sum(accesses)``:
    weighted by the denominator). Dispatches whose denominator is 0 are left out, as the
    tools' ``if den != 0 else None`` does.
``amount`` (KiB, waves: a quantity per dispatch)
    mean per dispatch and ``total``; there is no ratio of sums.
``level``  (a ratio the profiler wrote as a column, e.g. rocprof v1 ``VALUBusy``)
    mean per dispatch, and the mean weighted by duration where durations are known.

``pct_of_peak`` is of the dispatch mean, as the speed-of-light panels print it. Formulas are
those of formats-amd.md sections 6.3 (speed of light) and 7 (rocprof v1), checked against
Omniperf 1.0.3's own analysis of the same counters (tests/test_metrics.py).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from roofscope.counters.table import Array, Counters, Missing, dispatch_counters
from roofscope.metrics.machine import Machine
from roofscope.model import Profile
from roofscope.work.counters import FLOPS

Kind = Literal["rate", "ratio", "amount", "level"]
ALL = -1  # key of the whole profile in the result of :func:`metrics`


class Parts(NamedTuple):
    num: Array
    den: Array  # the duration (ns) for rates and levels


Mask = npt.NDArray[np.bool_]
Side = Callable[[Counters, Machine], Array]
PartsFn = Callable[[Counters, Machine, Array], Parts]
PeakFn = Callable[[Machine], float]
FinishFn = Callable[[float, Machine], float]


@dataclass(frozen=True)
class Metric:
    """One variant of a named metric: its formula for the architectures ``archs``.

    ``parts`` raises :class:`Missing` for a counter or machine constant it lacks, including
    the constants ``finish`` needs. ``definition`` is the formula in one line; ``source`` the
    file it comes from.
    """

    name: str
    unit: str
    kind: Kind
    archs: tuple[str, ...] | None
    source: str
    definition: str
    parts: PartsFn
    peak: PeakFn | None = None
    finish: FinishFn | None = None  # applied to an aggregate (Active CUs)

    def applies(self, arch: str | None) -> bool:
        if self.archs is None:
            return True
        return arch is not None and any(fnmatch.fnmatch(arch, p) for p in self.archs)

    def per_dispatch(self, c: Counters, m: Machine, duration_ns: Array) -> Array:
        """The value of each dispatch; NaN where its denominator is 0 or unknown."""
        num, den = self.parts(c, m, duration_ns)
        if self.kind in ("amount", "level"):
            return np.asarray(num, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(_valid(self.kind, num, den), num / den, np.nan)


@dataclass(frozen=True)
class MetricValue:
    unit: str
    kind: Kind
    value_dispatch_mean: float | None
    value_time_weighted: float | None  # ratio of sums (rate, ratio); duration-weighted (level)
    total: float | None  # amounts only
    peak: float | None
    pct_of_peak: float | None  # of value_dispatch_mean
    dispatches: int  # that entered the values
    left_out: int  # zero or unknown duration (rates), zero denominator (ratios)
    aggregation_differs: bool  # the two values differ by more than 1%
    source: str


def need(value: float | None, what: str) -> float:
    """A machine constant a formula needs; :class:`Missing` when unknown."""
    if value is None:
        raise Missing(f"machine.{what}")
    return value


def grbm_per_xcd(c: Counters, m: Machine) -> Array:
    """``GRBM_GUI_ACTIVE / num_xcd``: busy cycles of one XCD (the counter sums all XCDs)."""
    return c["GRBM_GUI_ACTIVE"] / need(m.num_xcd, "num_xcd")


def cu_cycles(c: Counters, m: Machine) -> Array:
    return grbm_per_xcd(c, m) * need(m.compute_units, "compute_units")


# --- builders -------------------------------------------------------------------------------


Archs = tuple[str, ...] | None


def rate(
    name: str,
    unit: str,
    archs: Archs,
    src: str,
    text: str,
    amount: Side,
    peak: PeakFn | None = None,
    *,
    duration: Callable[[Counters, Array], Array] | None = None,
) -> Metric:
    """``amount / duration``; amounts in units per ns are G-units per second."""

    def parts(c: Counters, m: Machine, d: Array) -> Parts:
        return Parts(amount(c, m), d if duration is None else duration(c, d))

    return Metric(name, unit, "rate", archs, src, text, parts, peak)


def own_run(side: Side, run: str) -> Side:
    """``side`` over the counters of one counter run (``NAME@run``, kept by the workload
    reader for the run's clock counters) where the profile has them, else over the merged
    dispatch's."""

    def pick(c: Counters, m: Machine) -> Array:
        if f"GRBM_GUI_ACTIVE@{run}" in c:
            return side(_Renamed(c, {"GRBM_GUI_ACTIVE": f"GRBM_GUI_ACTIVE@{run}"}), m)
        return side(c, m)

    return pick


def own_duration(run: str) -> Callable[[Counters, Array], Array]:
    """The duration of one counter run's dispatch where kept, else the dispatch's."""
    return lambda c, d: c.get(f"duration_ns@{run}", d)


class _Renamed(Counters):
    """``c`` with some names read from other columns."""

    def __init__(self, c: Counters, renamed: dict[str, str]) -> None:
        self._base, self._renamed = c, renamed

    def __getitem__(self, name: str) -> Array:
        return self._base[self._renamed.get(name, name)]

    def __contains__(self, name: str) -> bool:
        return self._renamed.get(name, name) in self._base

    def get(self, name: str, default: Array) -> Array:
        return self._base.get(self._renamed.get(name, name), default)


def ratio(
    name: str,
    unit: str,
    archs: Archs,
    src: str,
    text: str,
    num: Side,
    den: Side,
    peak: PeakFn | None = None,
    finish: FinishFn | None = None,
) -> Metric:
    def parts(c: Counters, m: Machine, d: Array) -> Parts:
        return Parts(num(c, m), den(c, m))

    return Metric(name, unit, "ratio", archs, src, text, parts, peak, finish)


def per_clock(per_cu: float, units: str = "compute_units", mhz: str = "max_sclk_mhz") -> PeakFn:
    """Peak of ``per_cu`` per clock of each of ``units``, in G-units per second."""
    return lambda m: need(getattr(m, mhz), mhz) * need(getattr(m, units), units) * per_cu / 1000


def const(value: float) -> PeakFn:
    return lambda m: value


def col(name: str) -> Side:
    return lambda c, m: c[name]


def total(*names: str) -> Side:
    return lambda c, m: sum((c[n] for n in names), np.zeros(1))


def _instances(c: Counters, name: str, how: Literal["sum", "max"]) -> Array:
    """rocprof v1 ``sum(X,16)`` / ``max(X,16)``: over instances ``X[0]..X[15]`` only."""
    stack = np.vstack([c[f"{name}[{i}]"] for i in range(16)])
    return np.asarray(stack.sum(axis=0) if how == "sum" else stack.max(axis=0), dtype=np.float64)


# --- architectures and sources --------------------------------------------------------------

G908, G90A, G94, G950 = ("gfx908",), ("gfx90a",), ("gfx94[0-2]",), ("gfx950",)
CDNA = G908 + G90A + G94 + G950
CDNA2_UP = G90A + G94 + G950
GFX9 = G908 + G90A + G94
RDNA = ("gfx11*",)
_SOL = "rocprofiler-compute analysis_configs/{}/0200_system_speed_of_light.yaml"
SOL_1X = (
    "Omniperf 1.0.3 gfx908 0200_system-speed-of-light.yaml (ROCm/omniperf "
    "src/omniperf_analyze/configs @049ba12f); reproduces prev_analysis/201.csv"
)
SOL = (
    _SOL.format("gfx908|gfx90a|gfx942|gfx950")
    + " (ROCm/rocm-systems @125b3400; for gfx908 also Omniperf 1.0.3's; formats-amd.md 6.3)"
)
SOL_950 = _SOL.format("gfx950") + " (ROCm/rocm-systems @019e04cf)"
SOL_RDNA = _SOL.format("gfx115x") + " (ROCm/rocm-systems @4056e092)"
NUM_ACTIVE_CUS = "rocprofiler-compute parser.py build_in_vars numActiveCUs (formats-amd.md 6.3)"
V1 = "rocprofiler metrics.xml (ROCm/rocprofiler src/core/counters/derived; formats-amd.md 7)"
V3 = "rocprofiler-sdk counter_defs.yaml (formats-amd.md 7)"


# --- speed of light: compute ----------------------------------------------------------------


def _valu_flops(c: Counters, m: Machine) -> Array:
    return sum((FLOPS[f"fp{b}-vector"](c) for b in (16, 32, 64)), np.zeros(1))


def _issued(c: Counters, m: Machine) -> Array:
    kinds = ("VALU", "VMEM", "SALU", "SMEM", "GDS", "BRANCH", "SENDMSG", "VSKIPPED")
    return sum((c[f"SQ_INSTS_{k}"] for k in kinds), np.zeros(1))


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
    r = float(np.round(busy))
    return float(int(min(r / waves * 8 + min(r % waves, 8), cus)))


def _max_waves(m: Machine) -> float:
    """Wavefront Occupancy's peak: ``max_waves_per_cu * cu_per_gpu``."""
    return need(m.max_waves_per_cu, "max_waves_per_cu") * need(m.compute_units, "compute_units")


def _util(name: str, counter: str, archs: Archs, scale: float = 1.0) -> Metric:
    text = f"100 * {counter} / (GRBM_GUI_ACTIVE / num_xcd * cu_per_gpu * {scale:g})"
    return ratio(
        name, "%", archs, SOL, text,
        lambda c, m: 100 * c[counter], lambda c, m: cu_cycles(c, m) * scale, const(100),
    )  # fmt: skip


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
    _util("VALU Utilization", "SQ_ACTIVE_INST_VALU", CDNA),
    _util("SALU Utilization", "SQ_ACTIVE_INST_SCA", CDNA),
    _util("MFMA Utilization", "SQ_VALU_MFMA_BUSY_CYCLES", CDNA, 4),
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
    ratio("Wavefront Occupancy", "waves", CDNA, SOL,
          "SQ_ACCUM_PREV_HIRES of SQ_LEVEL_WAVES / (GRBM_GUI_ACTIVE / num_xcd), both of the "
          "SQ_LEVEL_WAVES run where the profile keeps it",
          col("SQ_LEVEL_WAVES_ACCUM"), own_run(grbm_per_xcd, "SQ_LEVEL_WAVES"),
          _max_waves),
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


def _ea_read(p: str) -> Side:
    """gfx908/gfx90a (``p`` = "TCC_EA_"): 32-byte and 64-byte read requests."""
    return lambda c, m: (
        32 * c[f"{p}RDREQ_32B_sum"] + 64 * (c[f"{p}RDREQ_sum"] - c[f"{p}RDREQ_32B_sum"])
    )


def _bubble_read(c: Counters, m: Machine) -> Array:
    """gfx94x/gfx950: ``TCC_BUBBLE`` counts 128-byte reads among ``TCC_EA0_RDREQ``."""
    bubble, r32 = c["TCC_BUBBLE_sum"], c["TCC_EA0_RDREQ_32B_sum"]
    return 128 * bubble + 64 * (c["TCC_EA0_RDREQ_sum"] - bubble - r32) + 32 * r32


def _sized_read(c: Counters, m: Machine) -> Array:
    return sum((s * c[f"TCC_EA0_RDREQ_{s}B_sum"] for s in (32, 64, 128)), np.zeros(1))


def _gl2c_read(c: Counters, m: Machine) -> Array:
    return sum((s * c[f"GL2C_EA_RDREQ_{s}B_sum"] for s in (32, 64, 96, 128)), np.zeros(1))


def _ea_write(p: str) -> Side:
    return lambda c, m: (
        64 * c[f"{p}WRREQ_64B_sum"] + 32 * (c[f"{p}WRREQ_sum"] - c[f"{p}WRREQ_64B_sum"])
    )


def _gl2c_write(c: Counters, m: Machine) -> Array:
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
         _ea_read("TCC_EA_"), _hbm),
    rate(_RD, "GB/s", G950, SOL_950, "(32 * RDREQ_32B + 64 * RDREQ_64B + 128 * RDREQ_128B) "
         "of TCC_EA0 / duration", _sized_read, _hbm),
    rate(_RD, "GB/s", G94 + G950, SOL,
         "(128 * TCC_BUBBLE + 64 * (EA0_RDREQ - BUBBLE - EA0_RDREQ_32B) + 32 * EA0_RDREQ_32B) "
         "/ duration", _bubble_read, _hbm),
    rate(_RD, "GB/s", RDNA, SOL_RDNA, "(32, 64, 96, 128 x GL2C_EA_RDREQ_<n>B_sum) / duration",
         _gl2c_read),
    rate(_WR, "GB/s", G908 + G90A, SOL, "(64 * WRREQ_64B + 32 * (WRREQ - WRREQ_64B)) / duration",
         _ea_write("TCC_EA_"), _hbm),
    rate(_WR, "GB/s", G94 + G950, SOL, "(64 * EA0_WRREQ_64B + 32 * (EA0_WRREQ - EA0_WRREQ_64B)) "
         "/ duration", _ea_write("TCC_EA0_"), _hbm),
    rate(_WR, "GB/s", RDNA, SOL_RDNA,
         "(64 * GL2C_EA_WRREQ_64B + 32 * (GL2C_MC_WRREQ - GL2C_EA_WRREQ_64B)) / duration",
         _gl2c_write),
    _latency("RD", "TCC_EA_", G908 + G90A),
    _latency("RD", "TCC_EA0_", G94 + G950),
    _latency("WR", "TCC_EA_", G908 + G90A),
    _latency("WR", "TCC_EA0_", G94 + G950),
]  # fmt: skip


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
    return lambda c, m: c[column] if column in c else _instances(c, counter, "max")


def _sum16(counter: str) -> Side:
    return lambda c, m: _instances(c, counter, "sum")


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
        _kib(_ea_read("TCC_EA_"))),
    # rocprof v1's gfx940 expression changed between releases (64 or 128 bytes per
    # non-32B request); rocprofv3's, with the 128-byte TCC_BUBBLE reads, is the one used
    _v1("FETCH_SIZE", _G94_950, "(128 * TCC_BUBBLE + 64 * (...) + 32 * EA0_RDREQ_32B) / 1024 "
        "(rocprofv3 counter_defs.yaml)", _kib(_bubble_read), src=V3),
    _v1("FETCH_SIZE", RDNA, "(32, 64, 96, 128 x GL2C_EA_RDREQ_<n>B_sum) / 1024", _kib(_gl2c_read)),
    _v1("WRITE_SIZE", G908 + G90A, "(32 * (WRREQ - WRREQ_64B) + 64 * WRREQ_64B) / 1024 (TCC_EA)",
        _kib(_ea_write("TCC_EA_"))),
    _v1("WRITE_SIZE", _G94_950, "(32 * (WRREQ - WRREQ_64B) + 64 * WRREQ_64B) / 1024 (TCC_EA0)",
        _kib(_ea_write("TCC_EA0_"))),
    _v1("WRITE_SIZE", RDNA, "(32 * (GL2C_MC_WRREQ - GL2C_EA_WRREQ_64B) + 64 * 64B) / 1024",
        _kib(_gl2c_write)),
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

CATALOGUE: tuple[Metric, ...] = (*COMPUTE, *MEMORY, *ROCPROF_V1)


# --- evaluation and aggregation -------------------------------------------------------------


def evaluate(c: Counters, m: Machine, duration_ns: Array) -> dict[str, tuple[Metric, Parts]]:
    """Each metric name whose variant for ``m.arch`` has all its counters and constants."""
    out: dict[str, tuple[Metric, Parts]] = {}
    for metric in CATALOGUE:
        if metric.name in out or not metric.applies(m.arch):
            continue
        try:
            num, den = metric.parts(c, m, duration_ns)
        except Missing:
            continue
        size = duration_ns.shape
        out[metric.name] = (metric, Parts(_float(num, size), _float(den, size)))
    return out


def peak(name: str, m: Machine) -> float | None:
    """The peak of metric ``name`` on ``m`` (whether or not its counters were collected)."""
    found = (x for x in CATALOGUE if x.name == name and x.applies(m.arch) and x.peak)
    metric = next(found, None)
    return None if metric is None else _peak(metric, m)


def metrics(
    profile: Profile, sources: list[int], machine: Machine
) -> dict[int, dict[str, MetricValue]]:
    """Every metric that applies, per ``name_id`` and for all dispatches under :data:`ALL`;
    empty when these sources have no counters."""
    table = dispatch_counters(profile, sources)
    if table is None:
        return {}
    found = evaluate(table.counters, machine, table.duration_ns)
    groups = [*table.by_kernel(), (ALL, np.ones(table.size, dtype=bool))]
    return {
        name_id: {
            name: aggregate(metric, Parts(p.num[mask], p.den[mask]), machine)
            for name, (metric, p) in found.items()
        }
        for name_id, mask in groups
    }


def aggregate(metric: Metric, parts: Parts, m: Machine) -> MetricValue:
    """The two aggregations of ``metric`` over the dispatches of ``parts``."""
    ok, mean, weighted, whole = _aggregates(metric.kind, *parts)
    if metric.finish is not None:
        mean = None if mean is None else metric.finish(mean, m)
        weighted = None if weighted is None else metric.finish(weighted, m)
    top = _peak(metric, m)
    return MetricValue(
        unit=metric.unit,
        kind=metric.kind,
        value_dispatch_mean=mean,
        value_time_weighted=weighted,
        total=whole,
        peak=top,
        pct_of_peak=100 * mean / top if mean is not None and top else None,
        dispatches=int(ok.sum()),
        left_out=int(ok.size - ok.sum()),
        aggregation_differs=_differ(mean, weighted),
        source=metric.source,
    )


Maybe = float | None


def _aggregates(kind: Kind, num: Array, den: Array) -> tuple[Mask, Maybe, Maybe, Maybe]:
    """Dispatches used, dispatch mean, ratio of sums (or duration-weighted mean), total."""
    if kind in ("rate", "ratio"):
        ok = _valid(kind, num, den)
        pooled = _quotient(num[ok].sum(), den[ok].sum()) if ok.any() else None
        return ok, _mean(num[ok] / den[ok]), pooled, None
    ok = np.isfinite(num)
    if kind == "amount":
        return ok, _mean(num[ok]), None, float(num[ok].sum()) if ok.any() else None
    timed = ok & np.isfinite(den) & (den > 0)
    weighted = _quotient((num * den)[timed].sum(), den[timed].sum()) if timed.any() else None
    return ok, _mean(num[ok]), weighted, None


def _valid(kind: Kind, num: Array, den: Array) -> Mask:
    ok = np.isfinite(num) & np.isfinite(den)
    return ok & (den > 0) if kind == "rate" else ok & (den != 0)


def _float(values: Array, size: tuple[int, ...]) -> Array:
    return np.broadcast_to(np.asarray(values, dtype=np.float64), size)


def _mean(values: Array) -> float | None:
    return float(values.mean()) if values.size else None


def _quotient(num: float, den: float) -> float | None:
    return float(num / den) if den != 0 else None


def _peak(metric: Metric, m: Machine) -> float | None:
    if metric.peak is None:
        return None
    try:
        return float(metric.peak(m))
    except Missing:
        return None


def _differ(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) > 0.01 * max(abs(a), abs(b))
