"""Counter metrics as Python functions: the :class:`Metric` type, its builders, and the
architecture families and sources the catalogue cites.

Each :class:`Metric` is a small function of the per-dispatch counters, the
:class:`~roofscope.analysis.metrics.machine.Machine` and the durations, returning a numerator and a
denominator per dispatch; its per-dispatch value is their quotient. A metric whose counters
(or machine constants) are missing raises :class:`Missing` and is absent, never 0. Several
variants may share a name, one per architecture family (``archs``, fnmatch patterns; None
for any); a variant for an architecture applies only when the machine's arch is known.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable
from typing import Literal, NamedTuple

import msgspec
from msgspec.structs import replace

from roofscope.analysis.counters import Array, Counters, Missing
from roofscope.analysis.metrics.column import Mask, greatest, stacked_sum, summed, where
from roofscope.analysis.metrics.machine import Machine

Kind = Literal["rate", "ratio", "amount", "level"]


class Parts(NamedTuple):
    num: Array
    den: Array  # the duration (ns) for rates and levels


Side = Callable[[Counters, Machine], Array]
PartsFn = Callable[[Counters, Machine, Array], Parts]
PeakFn = Callable[[Machine], float]
FinishFn = Callable[[float, Machine], float]


class Metric(msgspec.Struct, frozen=True):
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
    note: str = ""  # why this value departs, by design, from another tool's
    peer: str | None = None  # the metric that computes that tool's value, where it differs

    def applies(self, arch: str | None) -> bool:
        if self.archs is None:
            return True
        return arch is not None and any(fnmatch.fnmatch(arch, p) for p in self.archs)

    def per_dispatch(self, c: Counters, m: Machine, duration_ns: Array) -> Array:
        """The value of each dispatch; NaN where its denominator is 0 or unknown."""
        num, den = self.parts(c, m, duration_ns)
        num, den = c.column(num), c.column(den)
        if self.kind in ("amount", "level"):
            return num
        return where(valid_mask(self.kind, num, den), num / den, math.nan)


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
        super().__init__({}, c.size)
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


def noted(metric: Metric, note: str, peer: str) -> Metric:
    """``metric`` with the reason it departs from another tool, and the metric holding that
    tool's value (present only where the two differ)."""
    return replace(metric, note=note, peer=peer)


def per_clock(per_cu: float, units: str = "compute_units", mhz: str = "max_sclk_mhz") -> PeakFn:
    """Peak of ``per_cu`` per clock of each of ``units``, in G-units per second."""
    return lambda m: need(getattr(m, mhz), mhz) * need(getattr(m, units), units) * per_cu / 1000


def const(value: float) -> PeakFn:
    return lambda m: value


def col(name: str) -> Side:
    return lambda c, m: c[name]


def total(*names: str) -> Side:
    return lambda c, m: c.column(summed(c[n] for n in names))


def instances(c: Counters, name: str, how: Literal["sum", "max"]) -> Array:
    """rocprof v1 ``sum(X,16)`` / ``max(X,16)``: over instances ``X[0]..X[15]`` only."""
    stack = [c[f"{name}[{i}]"] for i in range(16)]
    return stacked_sum(stack) if how == "sum" else greatest(stack)


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
    + " (ROCm/rocm-systems @125b3400; for gfx908 also Omniperf 1.0.3's;"
    + " docs/formats/amd-counters.md, Speed of light)"
)
_SOL_33 = (
    "rocprofiler-compute 3.3.0 "
    + _SOL.removeprefix("rocprofiler-compute ")
    + (" (ROCm/rocm-systems @1b1610fc; {})")
)
SOL_33 = _SOL_33.format("gfx90a|gfx942|gfx950", "its gfx908 file has None")
SOL_33_WAVES = _SOL_33.format(
    "gfx908|gfx90a|gfx942|gfx950",
    "coll_level SQ_LEVEL_WAVES, $GRBM_GUI_ACTIVE_PER_XCD of pmc_perf.csv: utils/parser.py",
)
SOL_950 = _SOL.format("gfx950") + " (ROCm/rocm-systems @019e04cf)"
SOL_RDNA = _SOL.format("gfx115x") + " (ROCm/rocm-systems @4056e092)"
NUM_ACTIVE_CUS = (
    "rocprofiler-compute parser.py build_in_vars numActiveCUs"
    " (docs/formats/amd-counters.md, Speed of light)"
)
V1 = (
    "rocprofiler metrics.xml (ROCm/rocprofiler src/core/counters/derived;"
    " docs/formats/amd-counters.md, Derived metrics)"
)
V3 = "rocprofiler-sdk counter_defs.yaml (docs/formats/amd-counters.md, Derived metrics)"


def valid_mask(kind: Kind, num: Array, den: Array) -> Mask:
    ok = num.finite() & den.finite()
    return ok & (den > 0) if kind == "rate" else ok & den.nonzero()
