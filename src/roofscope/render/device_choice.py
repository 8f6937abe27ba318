"""How the device was chosen, in words: the JSON's ``device.detected_from`` (which the text
and HTML reports show too), from the facts ``analysis.device`` gives."""

from __future__ import annotations

from roofscope.analysis.device import Detection, DeviceChoice, DeviceSource, Unserved
from roofscope.catalogue.from_attributes import shortfall


def detected_from(choice: DeviceChoice) -> str | None:
    """ "--gpu", "--gpu a100: the ceilings A100 PCIe, A100 SXM share", "profile: NVIDIA H200",
    "profile: gfx942 with 304 CUs and 192 GiB", "derived from the profile's device
    attributes: NVIDIA X is in no catalogue; the profile does not record its memory clock";
    None when no device is known."""
    d = choice.detected
    if d is None:
        return None
    if d.source is DeviceSource.GPU_OPTION:
        if not d.shared:
            return str(d.source)
        parts = ", ".join(p.model for p in (choice.device, *choice.alternatives) if p)
        return f"{d.source} {d.names[0]}: the ceilings {parts} share"
    if d.source is DeviceSource.PROFILE:
        shared = "; the ceilings its candidates share" if d.shared else ""
        return f"{d.source}: {' / '.join(d.names)}{_weighed(d)}{shared}"
    lacking = shortfall(d.derived) if d.derived is not None else ""
    return f"{d.source}: {_unserved(d)}" + (f"; {lacking}" if lacking else "")


def _weighed(d: Detection) -> str:
    """ " with 304 CUs and 192 GiB": the units and memory that narrowed the parts."""
    said = f" with {d.units} {d.unit_name}" if d.units else ""
    if d.memory_bytes:
        said += f"{' and' if said else ' with'} {d.memory_bytes / 2**30:,.0f} GiB"
    return said


def _unserved(d: Detection) -> str:
    """Why the catalogue's part cannot serve."""
    model = d.part.model if d.part is not None else ""
    match d.unserved:
        case Unserved.NOT_CATALOGUED:
            return f"{d.names[0]} is in no catalogue"
        case Unserved.NO_COMPUTE_PEAK:
            return f"the catalogue states no compute peak of {model}"
        case Unserved.OTHER_UNITS:
            units = d.part.compute_units if d.part is not None else None
            return f"the profile reports {d.units} {d.unit_name} where {model} has {units}"
        case _:
            return "the profile names no GPU"
