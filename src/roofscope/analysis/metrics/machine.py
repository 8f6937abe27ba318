"""The machine constants the counter formulas need (docs/formats/rocprof-compute.md,
"sysinfo.csv"; docs/formats/amd-counters.md, "Speed of light").

:func:`machine_for` takes each value from the first source that gives it:

1. the workload's ``sysinfo.csv`` (``profile.sysinfo``), whatever its version: Omniperf 1.x
   (``numSE, numCU, numSIMD, waveSize, maxWavesPerCU, sclk, mclk, L2Banks, numSQC, hbmBW,
   gpu_soc``) or rocprof-compute 2.x/3.x (``se_per_gpu, cu_per_gpu, simd_per_cu, wave_size,
   max_waves_per_cu, max_sclk, max_mclk, total_l2_chan, num_xcd, lds_banks_per_cu,
   sqc_per_gpu, hbm_bw, num_hbm_channels, gpu_arch``). Empty, ``N/A``, ``NA``, ``0`` and
   ``0.0`` mean "not given" (MI350 writes ``max_sclk`` 0);
2. what the reader learnt about the run (``profile.run``: arch, CUs, XCDs);
3. the catalogue device the caller matched, if any (CUs only for a product that ROCm does
   not split into partitions, since the agent profiled may be one of them);
4. facts of the architecture itself, for the few values that do not vary within it: one XCD
   per agent before gfx94x, 32 LDS banks and 4 SIMDs per CU on CDNA.

Anything no source gives stays None, and so do the metrics that need it.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from msgspec.structs import replace

from roofscope.catalogue.devices import Device
from roofscope.model.profile import Profile

_NOT_GIVEN = {"", "n/a", "na", "none", "0", "0.0"}

# field <- sysinfo keys that hold it (rocprof-compute 2.x/3.x name first, then Omniperf 1.x)
_SYSINFO: dict[str, tuple[str, ...]] = {
    "compute_units": ("cu_per_gpu", "numCU"),
    "num_xcd": ("num_xcd",),
    "se_per_gpu": ("se_per_gpu", "numSE"),
    "simd_per_cu": ("simd_per_cu", "numSIMD"),
    "wave_size": ("wave_size", "waveSize"),
    "max_waves_per_cu": ("max_waves_per_cu", "maxWavesPerCU"),
    "max_sclk_mhz": ("max_sclk", "sclk"),
    "max_mclk_mhz": ("max_mclk", "mclk"),
    "lds_banks_per_cu": ("lds_banks_per_cu",),
    "l2_channels": ("total_l2_chan", "L2Banks"),
    "sqc_per_gpu": ("sqc_per_gpu", "numSQC"),
    "hbm_channels": ("num_hbm_channels", "num_memory_channels"),
    "hbm_bandwidth_gbs": ("hbm_bw", "hbmBW"),
}
_CDNA = ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")
_ONE_XCD = ("gfx906", "gfx908", "gfx90a", "gfx10", "gfx11", "gfx12")


class Machine(msgspec.Struct, frozen=True):
    """Constants of the profiled agent; None where no source gives them."""

    arch: str | None = None  # gfx target without features, e.g. "gfx90a"
    compute_units: int | None = None  # of the profiled agent (cu_per_gpu)
    num_xcd: int | None = None
    se_per_gpu: int | None = None
    simd_per_cu: int | None = None
    wave_size: int | None = None
    max_waves_per_cu: int | None = None
    max_sclk_mhz: float | None = None
    max_mclk_mhz: float | None = None
    lds_banks_per_cu: int | None = None
    l2_channels: int | None = None
    sqc_per_gpu: int | None = None
    hbm_channels: int | None = None
    hbm_bandwidth_gbs: float | None = None  # peak, GB/s
    sources: tuple[tuple[str, str], ...] = ()  # (field, where its value came from)

    def source_of(self, field: str) -> str | None:
        return dict(self.sources).get(field)


def machine_for(profile: Profile, device: Device | None) -> Machine:
    """The machine of ``profile``: its sysinfo, then its run, then ``device``, then the arch."""
    steps: list[Callable[[Machine], dict[str, tuple[object, str]]]] = [
        lambda m: _from_sysinfo(profile.sysinfo),
        lambda m: _from_run(profile),
        lambda m: _from_device(device, m),
        _from_arch,
        _derived,
    ]
    machine = Machine()
    for step in steps:
        machine = _fill(machine, step(machine))
    return machine


def _fill(machine: Machine, found: dict[str, tuple[object, str]]) -> Machine:
    """``machine`` with the values of ``found`` it does not have yet."""
    new = {k: v for k, (v, _) in found.items() if v is not None and getattr(machine, k) is None}
    if not new:
        return machine
    sources = machine.sources + tuple((k, found[k][1]) for k in new)
    return replace(machine, **new, sources=sources)


def _from_sysinfo(info: dict[str, str]) -> dict[str, tuple[object, str]]:
    found: dict[str, tuple[object, str]] = {}
    for field, keys in _SYSINFO.items():
        for key in keys:
            value = _number(info.get(key))
            if value is not None:
                whole = field not in ("max_sclk_mhz", "max_mclk_mhz", "hbm_bandwidth_gbs")
                found[field] = (int(value) if whole else value, f"sysinfo.csv {key}")
                break
    for key in ("gpu_arch", "gpu_soc"):
        arch = _arch(info.get(key))
        if arch:
            found["arch"] = (arch, f"sysinfo.csv {key}")
            break
    return found


def _from_run(profile: Profile) -> dict[str, tuple[object, str]]:
    run = profile.run
    return {
        "arch": (_arch(run.arch), "profiler run info"),
        "compute_units": (run.compute_units, "profiler run info"),
        "num_xcd": (run.xcds, "profiler run info"),
    }


def _from_device(device: Device | None, machine: Machine) -> dict[str, tuple[object, str]]:
    if device is None:
        return {}
    where = f"catalogue {device.key}"
    found: dict[str, tuple[object, str]] = {
        "arch": (_arch(device.arch), where),
        "wave_size": (device.wave_size, where),
        "max_sclk_mhz": (float(device.clock_mhz) if device.clock_mhz else None, where),
        "max_waves_per_cu": (device.max_waves_per_cu, where),
    }
    parts = device.partitions
    if parts is None:
        found["compute_units"] = (device.compute_units, where)
    whole = machine.compute_units in (None, device.compute_units)
    if parts is not None and parts.kind == "xcd" and whole:
        found["num_xcd"] = (parts.count, where)
    return found


def _from_arch(machine: Machine) -> dict[str, tuple[object, str]]:
    arch = machine.arch
    if arch is None:
        return {}
    found: dict[str, tuple[object, str]] = {}
    if arch.startswith(_ONE_XCD):
        found["num_xcd"] = (1, f"{arch}: one XCD per agent")
    if arch in _CDNA:
        found["lds_banks_per_cu"] = (32, f"{arch}: 32 LDS banks per CU")
        found["simd_per_cu"] = (4, f"{arch}: 4 SIMDs per CU")
    return found


def _derived(machine: Machine) -> dict[str, tuple[object, str]]:
    """rocprof-compute 3.x's ``hbmBandwidth = max_mclk / 1000 * 32 * num_hbm_channels``."""
    mclk, channels = machine.max_mclk_mhz, machine.hbm_channels
    if mclk is None or channels is None:
        return {}
    return {"hbm_bandwidth_gbs": (mclk / 1000 * 32 * channels, "max_mclk x 32 B x channels")}


def _number(text: str | None) -> float | None:
    if text is None or text.strip().lower() in _NOT_GIVEN:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value > 0 else None


def _arch(text: str | None) -> str | None:
    if not text or text.strip().lower() in _NOT_GIVEN:
        return None
    return text.strip().split(":", 1)[0].lower()
