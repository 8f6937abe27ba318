"""Which GPU the profile ran on, and the ceilings of its Roofline.

The GPU is the one named by ``--gpu``, else the one the profile's metadata names. A name
that fits several products (rocprof-compute's series names ``MI200``, ``MI350``; rocminfo's
"AMD Instinct MI250X / MI250") is narrowed by the gfx arch and the compute-unit count (one
MI250X GCD has 110 CUs, one MI250 GCD 104). When products remain that the profile cannot
tell apart, only the ceilings they share are used (an MI210 and one MI250 GCD have the same
peaks), and the choice says so. Ceilings come from the user (``--peak-*``, ``--ceilings``),
then from measured peaks in the profile (rocprof-compute ``roofline.csv``), then from the
catalogue; integer and FP16 vector ceilings no source gives are derived from the FP32 vector
one in effect (vector_rates.py).

When the profiled agent reports another compute-unit count than the catalogue's product and
no scope (one GCD) explains it, the catalogue's ceilings may not fit what was profiled:
:func:`catalogue_doubt` says what is known (the two counts, the partition mode the profile
reports) without guessing a mode, and verdicts resting on those ceilings are lowered
(diagnosis/trust.py).

Where the catalogue cannot serve (the GPU is in none, or that doubt), the ceilings come from
the profile's own device attributes instead, when it records them: SM/CU count, clocks and
memory bus (:func:`from_profile_attributes`, catalogue/from_attributes.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum, StrEnum

import msgspec
from msgspec.structs import replace

from roofscope.catalogue import devices, from_attributes
from roofscope.catalogue.ceilings import Ceiling, resolve
from roofscope.catalogue.vector_rates import derived
from roofscope.errors import UsageError
from roofscope.model.profile import RunInfo

MEMORY_CLOCK_TOLERANCE = 0.10  # a profile's memory clock within 10 % of a part's fits it
# a device's reported memory within 10 % of a part's (its GB read as 10^9 or as 2^30 bytes,
# as vendors and drivers differ) fits it: an MI300X reports 206,141,652,992 B (192 GiB), an
# MI325X would report 256 GiB; an H100 SXM 85,018,279,936 B of its 80 GB
MEMORY_TOLERANCE = 0.10


class DeviceSource(StrEnum):
    """What chose the device; the values begin the JSON report's ``device.detected_from``."""

    GPU_OPTION = "--gpu"  # the user named it
    PROFILE = "profile"  # the profile's GPU name or arch, narrowed by its units and memory
    ATTRIBUTES = from_attributes.PREFIX  # no catalogue part: the profile's device attributes


class Unserved(Enum):
    """Why the catalogue's part cannot serve, so the profile's device attributes do."""

    NOT_NAMED = "the profile names no GPU"
    NOT_CATALOGUED = "its GPU is in no catalogue"
    NO_COMPUTE_PEAK = "the catalogue states no compute peak of the part"
    OTHER_UNITS = "the profile reports another unit count than the part has"


class Detection(msgspec.Struct, frozen=True):
    """How the device was chosen, as facts (the renderers word them, render/device_choice.py)."""

    source: DeviceSource
    names: tuple[str, ...] = ()  # what named it: --gpu's NAME; the profile's GPU and arch
    units: int | None = None  # the profile's compute units, where they were weighed
    unit_name: str = ""  # what the profile calls them: "CUs", "SMs"
    memory_bytes: int | None = None  # the profile's memory, where it narrowed the parts
    shared: bool = False  # several parts fit: the ceilings they share are used
    unserved: Unserved | None = None  # ATTRIBUTES: why not the catalogue's part
    part: devices.Device | None = None  # ATTRIBUTES: the catalogue's part that cannot serve
    derived: from_attributes.Derived | None = None  # ATTRIBUTES: what the attributes lack


class DeviceChoice(msgspec.Struct, frozen=True):
    device: devices.Device | None
    scope: str  # "device", or "gcd" when the profiled agent is one GCD of the product
    detected: Detection | None  # None: no device known
    problem: str | None  # one line: why no device is known, and what to pass
    alternatives: tuple[devices.Device, ...] = ()  # others the profile cannot tell apart
    units: int | None = None  # the compute units the profile reports
    # ceilings derived from the profile's device attributes, in place of the catalogue's
    # (from_profile_attributes), with the GPU and arch as the profile names them
    attribute_ceilings: tuple[Ceiling, ...] = ()
    profiled: tuple[str | None, str | None] = (None, None)

    @property
    def name(self) -> str | None:
        if self.device is None:
            return (self.profiled[0] or self.profiled[1]) if self.attribute_ceilings else None
        return " or ".join(d.model for d in (self.device, *self.alternatives))

    @property
    def arch(self) -> str | None:
        if self.device is None:
            return self.profiled[1] if self.attribute_ceilings else None
        return self.device.arch


def choose_device(run: RunInfo, gpu: str | None) -> DeviceChoice:
    if gpu is not None:
        return _named_by_user(run, gpu)
    for name in (n for n in (run.gpu, run.arch) if n):
        found = devices.find(name)
        if found is not None:
            scope = devices.agent_scope(found, run.compute_units)
            return DeviceChoice(found, scope, Detection(DeviceSource.PROFILE, (name,)), None)
    pool = _candidates(run)
    if run.compute_units:  # parts of that count first, then parts whose count no vendor states
        fits = [d for d in pool if d.compute_units and _fits(d, run)]
        pool = fits or [d for d in pool if not d.compute_units] or pool
        # no count fits: a partition the catalogue does not know (warned)
    by_memory = [d for d in pool if _memory_fits(d, run)] or pool  # none: a slice (MIG, a VF)
    said = " / ".join(n for n in (run.gpu, run.arch) if n)
    seen = Detection(
        DeviceSource.PROFILE,
        tuple(n for n in (run.gpu, run.arch) if n),
        run.compute_units or None,
        from_attributes.unit_name(run),
        run.memory_bytes if len(by_memory) < len(pool) and run.memory_bytes else None,
    )
    pool = by_memory
    if len(pool) == 1:
        scope = devices.agent_scope(pool[0], run.compute_units)
        return DeviceChoice(pool[0], scope, seen, None)
    if len(pool) > 1 and devices.shared_ceilings(pool, run.compute_units):
        scope = devices.agent_scope(pool[0], run.compute_units)
        seen = replace(seen, shared=True)
        return DeviceChoice(pool[0], scope, seen, None, tuple(pool[1:]), run.compute_units)
    names = [d.key for d in pool] or devices.closest(said or "")
    hint = f" (candidates: {', '.join(names[:4])}{', ...' if len(names) > 4 else ''})"
    if not devices.names_a_part(run.gpu) and len(pool) > 1:  # an arch, which parts share
        units = f" with {seen.units} {seen.unit_name}" if seen.units else ""
        if seen.memory_bytes:
            units += f"{' and' if units else ' with'} {seen.memory_bytes / 2**30:,.0f} GiB"
        known = f"the profile names only its arch, {run.arch}{units}, which {len(pool)} parts share"
    elif said:
        known = f"the GPU is not in the catalogue: {said}"
    else:
        known = "the GPU is not known from the profile"
    problem = f"{known}; pass --gpu NAME{hint if names else ''}, or --peak-flops and --peak-bw"
    return DeviceChoice(None, "device", None, problem)


def _named_by_user(run: RunInfo, gpu: str) -> DeviceChoice:
    """``--gpu``: one product, or the parts a natural name fits (``a100``) that the profile's
    arch and compute units leave, with the ceilings they share."""
    named = devices.resolve(gpu)
    if not named:
        raise UsageError(f"--gpu {devices.not_found(gpu)}, or pass --peak-flops and --peak-bw")
    pool = [d for d in named if _fits(d, run)] or named
    first = pool[0]
    scope = devices.agent_scope(first, run.compute_units)
    if len(pool) == 1:
        return DeviceChoice(first, scope, Detection(DeviceSource.GPU_OPTION), None)
    parts = ", ".join(d.model for d in pool)
    if not devices.shared_ceilings(pool, run.compute_units):
        keys = ", ".join(d.key for d in pool)
        problem = (
            f"--gpu {gpu} fits {parts}, whose peaks differ: they share no ceiling; "
            f"pass the one profiled: {keys}"
        )
        return DeviceChoice(None, "device", None, problem)
    said = Detection(DeviceSource.GPU_OPTION, (gpu,), shared=True)
    return DeviceChoice(first, scope, said, None, tuple(pool[1:]), run.compute_units)


def _fits(d: devices.Device, run: RunInfo) -> bool:
    """Whether the profile's arch, compute-unit count and memory clock allow ``d`` (unknown
    ones do)."""
    if run.arch and d.arch.lower() != run.arch.split(":", 1)[0].lower():
        return False
    if not _memory_clock_fits(d, run):
        return False
    units = run.compute_units
    if not units or d.compute_units is None:
        return True
    return units == d.compute_units or devices.scope_for(d, units) != "device"


def _memory_clock_fits(d: devices.Device, run: RunInfo) -> bool:
    """Whether an NVIDIA part's memory clock, by the CUDA convention (``hbm`` = 2 x clock x
    bus width / 8), is within 10 % of the profile's: an H100 SXM's 3.35 TB/s over 5120 bits
    is 2617 MHz, where an H200 runs at 3201. Unknown (no clock, bus or ``hbm``): it fits."""
    hbm = next((c.value for c in devices.ceilings_for(d, "device") if c.level == "hbm"), None)
    if d.vendor != "NVIDIA" or not run.memory_clock_mhz or not hbm or not d.bus_width_bits:
        return True
    expected_mhz = hbm / (2 * d.bus_width_bits / 8) / 1e6
    return abs(run.memory_clock_mhz - expected_mhz) <= MEMORY_CLOCK_TOLERANCE * expected_mhz


def _memory_fits(d: devices.Device, run: RunInfo) -> bool:
    """Whether the memory the profile reports is ``d``'s, or one partition's where the
    compute units are one partition's (one MI250 GCD: 64 of its 128 GB). Unknown: it fits."""
    if not run.memory_bytes or not d.memory_gb:
        return True
    scope = devices.scope_for(d, run.compute_units)
    share = d.partitions.count if d.partitions is not None and scope != "device" else 1
    low = d.memory_gb / share * 1e9 * (1 - MEMORY_TOLERANCE)
    high = d.memory_gb / share * 2**30 * (1 + MEMORY_TOLERANCE)
    return low <= run.memory_bytes <= high


def _amd_by_units(run: RunInfo) -> list[devices.Device]:
    """For an AMD GPU that names neither its part nor its arch (HIP's "AMD Radeon Graphics"
    with compute capability 9.0, which gfx900-gfx90a share): the AMD parts whose compute
    units (or one partition's) are the profile's; none without a count."""
    if not run.compute_units or not (run.gpu or "").lower().startswith("amd"):
        return []
    return [
        d
        for d in devices.catalogue()
        if d.vendor == "AMD" and d.compute_units and _fits(d, run) and _memory_fits(d, run)
    ]


def _candidates(run: RunInfo) -> list[devices.Device]:
    """Products of the profile's arch that its GPU name can mean. A name that names a part
    the catalogue lacks ("NVIDIA H800" before it was added) leaves none: another part of its
    arch (an H100, with 34 times its FP64 peak) is another GPU. A name that names no part
    ("AMD Radeon Graphics") leaves the arch to say."""
    by_arch = devices.candidates(run.arch) if run.arch else []
    if not devices.names_a_part(run.gpu):
        return by_arch or _amd_by_units(run)
    by_name = devices.candidates(run.gpu or "")
    if not by_arch:
        return by_name
    both = [d for d in by_arch if d in by_name]
    said = (run.gpu or "").lower().replace(" ", "")
    return [d for d in both if d.key.replace("-", "") in said] or both


def gather_ceilings(
    choice: DeviceChoice, measured: Sequence[Ceiling], user: Sequence[Ceiling]
) -> list[Ceiling]:
    """The user's, then measured, then catalogue ceilings; then those derived from them
    (integer and FP16 vector, vector_rates.py)."""
    chosen = resolve(user, measured, catalogue_ceilings(choice))
    return resolve(chosen, derived(chosen, choice.arch))


def catalogue_ceilings(choice: DeviceChoice) -> list[Ceiling]:
    """The catalogue's (theoretical) ceilings of the chosen GPU, those its candidates share,
    or those derived from the profile's device attributes in their place."""
    if choice.attribute_ceilings:
        return list(choice.attribute_ceilings)
    if choice.device is not None and choice.alternatives:
        others = ", ".join(d.model for d in choice.alternatives)
        return [
            replace(c, source=f"{c.source} (the same for {others})")
            for c in devices.shared_ceilings((choice.device, *choice.alternatives), choice.units)
        ]
    if choice.device is not None:
        return devices.ceilings_for(choice.device, choice.scope)
    return []


def catalogue_doubt(choice: DeviceChoice, run: RunInfo) -> str | None:
    """Why the catalogue's ceilings may not fit the profiled agent: it reports another number
    of compute units than the product has, and no known scope (one GCD) explains it."""
    d, units = choice.device, run.compute_units
    if d is None or not units or not d.compute_units:
        return None
    if choice.scope != "device":
        return _partition_doubt(d, units, choice.scope)
    if units == d.compute_units:
        return None
    mode = (
        f"while the profile says the compute partition is {run.partition}"
        if run.partition
        else "and the profile does not say its partition mode"
    )
    return (
        f"the profile reports {units} {d.unit_word} where the catalogue's {d.model} has "
        f"{d.compute_units}, {mode}: the catalogue's whole-device ceilings may not fit what "
        "was profiled (efficiencies may read low); pass --ceilings measured on this GPU"
    )


def _partition_doubt(d: devices.Device, units: int, scope: str) -> str | None:
    """A profiled agent judged as one partition (an MI250X GCD) whose count is not that
    partition's: the parts of the catalogue whose partition has that count, if any."""
    per = d.partition_compute_units
    if per is None or units == per:
        return None
    others = [o.model for o in devices.catalogue() if o.generation == d.generation
              and o.partition_compute_units == units]  # fmt: skip
    maybe = f" (one {scope.upper()} of {' or '.join(others)} has {units})" if others else ""
    return (
        f"the profile reports {units} {d.unit_word} where one {scope.upper()} of the "
        f"catalogue's {d.model} has {per}{maybe}: judged against one {scope.upper()}'s "
        "ceilings, which may not fit what was profiled; name the GPU it ran on with --gpu, or "
        "pass --ceilings measured on it"
    )


def from_profile_attributes(choice: DeviceChoice, run: RunInfo) -> DeviceChoice:
    """The ceilings derived from the profile's device attributes (catalogue/from_attributes.py)
    where the catalogue cannot serve: the GPU is in no catalogue (not even when parts of its
    arch are: they are other GPUs), or the profile reports another SM/CU count than the
    catalogue's part has and no partition explains it (:func:`catalogue_doubt`). A part named
    with ``--gpu`` is kept. In the second case the catalogue stays unless the attributes give
    a compute and the ``hbm`` ceiling; a GPU in no catalogue takes what they give, and the
    choice says what they lack."""
    if choice.detected is not None and choice.detected.source is DeviceSource.GPU_OPTION:
        return choice
    unknown, why = _why_not_catalogue(choice, run)
    if why is None:
        return choice
    got = from_attributes.derive(run)
    lacking = from_attributes.shortfall(got)
    if not unknown and {c.kind for c in got.ceilings} != {"compute", "memory"}:
        return choice
    if not got.ceilings:
        if choice.device is not None or choice.problem is None or not (run.gpu or run.arch):
            return choice  # a profile that names no GPU has no attributes to speak of
        said = f"; no ceilings from its device attributes either: {lacking}" if lacking else ""
        return replace(choice, problem=f"{choice.problem}{said}")
    return DeviceChoice(
        None,
        "device",
        replace(why, derived=got),
        None,
        units=run.compute_units,
        attribute_ceilings=got.ceilings,
        profiled=(run.gpu, run.arch),
    )


def _why_not_catalogue(choice: DeviceChoice, run: RunInfo) -> tuple[bool, Detection | None]:
    """(whether the profile's GPU is in no catalogue, why the catalogue's part does not serve
    it or None when it does)."""
    source, part = DeviceSource.ATTRIBUTES, choice.device
    if part is None:
        named = run.gpu or run.arch
        if not named:
            return True, Detection(source, unserved=Unserved.NOT_NAMED)
        return True, Detection(source, (named,), unserved=Unserved.NOT_CATALOGUED)
    if not any(c.kind == "compute" for c in devices.ceilings_for(part, choice.scope)):
        return True, Detection(source, unserved=Unserved.NO_COMPUTE_PEAK, part=part)
    if devices.names_a_part(run.gpu) and not devices.candidates(run.gpu or ""):
        return True, Detection(source, (run.gpu or "",), unserved=Unserved.NOT_CATALOGUED)
    if catalogue_doubt(choice, run) is None:
        return False, None
    units, unit_name = run.compute_units, from_attributes.unit_name(run)
    return False, Detection(source, (), units, unit_name, unserved=Unserved.OTHER_UNITS, part=part)
