"""Ceilings derived from what the profile records of its own device.

A GPU the catalogue does not know still tells its profiler its SM or CU count, its clocks
and its memory bus: Nsight Compute's ``device__attribute_*``, rocminfo's ``Compute Unit``
and ``Max Clock Freq. (MHz)``, rocprof-compute's ``sysinfo.csv`` (readers fill
``model.profile.RunInfo``, an :class:`Attributes`). With the architecture's rates per unit and clock
(``data/archs.csv``, each with the vendor document that states it) they give the peaks:

- compute: units x FLOP/clk/unit (the arch's rate for that data type) x maximum clock;
  matrix ceilings only where every part of the arch has the same rate;
- ``hbm``: 2 x memory clock x bus width / 8, the CUDA convention (``memoryClockRate`` is
  half the data rate: an H200's 3201 MHz over 6016 bits gives 4.81 TB/s), only when both are
  recorded; rocminfo and ``sysinfo.csv`` give no bus width, Kineto's ``deviceProperties``
  neither clock nor bus.

Each ceiling's source writes the formula with every input. The rates are the catalogue's
``[[arch]]`` tables, which tools/gen_devices.py writes from ``data/gpus/archs.csv``.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

import msgspec

from roofscope.catalogue.ceilings import Ceiling, is_integer
from roofscope.catalogue.devices import arch_entries

PREFIX = "derived from the profile's device attributes"


class Attributes(Protocol):
    """What a profile records of its device (``model.profile.RunInfo`` is one); None where
    it does not say."""

    @property
    def arch(self) -> str | None: ...
    @property
    def compute_units(self) -> int | None: ...
    @property
    def clock_mhz(self) -> float | None: ...
    @property
    def memory_clock_mhz(self) -> float | None: ...
    @property
    def bus_width_bits(self) -> int | None: ...


class Rate(msgspec.Struct, frozen=True):
    per_clock: float  # FLOP (or integer OP) per clock per SM/CU
    source: str  # the title of the document that states it (where: archs.csv)


class Arch(msgspec.Struct, frozen=True):
    arch: str  # "sm_90", "gfx942"
    vendor: str
    family: str
    unit: str  # "SM" or "CU"
    rates: dict[str, Rate] = msgspec.field(default_factory=dict)  # "fp32-vector" -> its rate


class Derived(msgspec.Struct, frozen=True):
    ceilings: tuple[Ceiling, ...]
    missing: tuple[str, ...]  # attributes the profile does not record that more ceilings need
    unknown_arch: str | None = None  # the profile's arch, when the arch table lacks it


@cache
def archs() -> dict[str, Arch]:
    """Every architecture of the catalogue by its name, with its rates (loaded once)."""
    return {
        e["arch"]: Arch(
            e["arch"],
            e["vendor"],
            e["family"],
            e["unit"],
            {f: Rate(float(v), e["documents"][f]) for f, v in e["per_clock"].items()},
        )
        for e in arch_entries()
    }


def arch_of(run: Attributes) -> Arch | None:
    """The profile's architecture in the table (``gfx90a:sramecc+:xnack-`` is ``gfx90a``)."""
    name = (run.arch or "").split(":", 1)[0].strip().lower()
    return archs().get(name)


def unit_name(run: Attributes) -> str:
    """What the profile's compute units are called: SMs (NVIDIA) or CUs (AMD), by the arch
    table, else by the arch's spelling (sm_XY, gfxNNN)."""
    arch = arch_of(run)
    if arch is not None:
        return f"{arch.unit}s"
    name = (run.arch or "").lower()
    return "SMs" if name.startswith("sm_") else "CUs" if name.startswith("gfx") else "compute units"


def derive(run: Attributes) -> Derived:
    """The ceilings the profile's device attributes give, and what it lacks for the rest."""
    unknown = run.arch if run.arch and arch_of(run) is None else None
    return Derived((*_compute(run), *_memory(run)), _missing(run), unknown)


def _compute(run: Attributes) -> list[Ceiling]:
    arch, units, mhz = arch_of(run), run.compute_units, run.clock_mhz
    if arch is None or not units or not mhz:
        return []
    out = []
    for name, rate in arch.rates.items():
        dtype, _, engine = name.partition("-")
        value = units * rate.per_clock * mhz * 1e6
        ops = "OP" if is_integer(name) else "FLOP"
        source = (
            f"{PREFIX}: {units} {arch.unit}s x {rate.per_clock:g} {ops}/clk/{arch.unit} "
            f"({arch.arch}, {rate.source}) x {mhz:g} MHz = "
            f"{_scaled(value, 'IOP/s' if ops == 'OP' else 'FLOP/s')}"
        )
        out.append(Ceiling("compute", value, source, "catalogue", dtype=dtype, unit=engine))
    return out


def _memory(run: Attributes) -> list[Ceiling]:
    mhz, bits = run.memory_clock_mhz, run.bus_width_bits
    if not mhz or not bits:
        return []
    value = 2 * mhz * 1e6 * bits / 8
    source = (
        f"{PREFIX}: hbm = 2 x {mhz:g} MHz memory clock x {bits}-bit bus / 8 = "
        f"{_scaled(value, 'B/s')}"
    )
    return [Ceiling("memory", value, source, "catalogue", level="hbm")]


def _scaled(value: float, unit: str) -> str:
    """``value`` with an SI prefix, 3 significant digits: 66.9 TFLOP/s, 1.07 PFLOP/s."""
    value = float(f"{value:.3g}")  # rounded first: 999.6e12 is 1 P, not 1e+03 T
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _missing(run: Attributes) -> tuple[str, ...]:
    """The attributes the profile lacks, each as a few words."""
    wanted = (
        (run.arch, "its architecture"),
        (run.compute_units, f"its number of {unit_name(run)}"),
        (run.clock_mhz, "its engine clock"),
        (run.memory_clock_mhz, "its memory clock"),
        (run.bus_width_bits, "its memory bus width"),
    )
    return tuple(words for value, words in wanted if not value)


def shortfall(derived: Derived) -> str:
    """Why some ceilings could not be derived, as one clause: "the profile does not record
    its engine clock, its memory clock or its memory bus width"."""
    said = []
    if derived.unknown_arch:
        said.append(f"roofscope has no rates per clock for {derived.unknown_arch}")
    items = derived.missing
    if items:
        listed = items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"
        said.append(f"the profile does not record {listed}")
    return "; ".join(said)
