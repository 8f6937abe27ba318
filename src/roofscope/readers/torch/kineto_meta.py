"""A Kineto trace's metadata (docs/formats/pytorch-kineto.md, "Top level and
metadata"): ``deviceProperties`` -> the
run's GPU and each device's warp size, ``distributedInfo.rank`` -> the input's rank,
``schemaVersion`` -> the producer version; and its data-loader steps (``cpu_op``,
``Operator`` or ``user_annotation`` events whose name holds "DataLoader", e.g.
``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__``) and its blocking runtime
calls (device, stream and event synchronisations, synchronous copies:
:data:`~roofscope.readers.io.host_calls.SYNC`) ->
``host_ranges`` of kind "data-loader" and "sync", and the ranges and calls that compile
(readers/io/host_calls.py: Dynamo/Inductor and nvFuser ranges, module loads, NVRTC) of kind
"compile"; its graph launches (runtime events
``cudaGraphLaunch``, ``hipGraphLaunch``) -> ``graph_launches``.
See :mod:`~roofscope.readers.torch.kineto`."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from roofscope.model.profile import Profile, RunInfo
from roofscope.readers.io.batches import (
    GRAPH_LAUNCH_COLUMNS,
    INT64,
    fits,
    insert_rows,
)

PRODUCER = "pytorch-profiler"


LOADER_CATS = frozenset({"cpu_op", "Operator", "user_annotation"})
LOADER = re.compile(r"dataloader", re.IGNORECASE)
# a runtime call that replays a captured CUDA/HIP graph: its kernels carry its correlation id
GRAPH_LAUNCH = re.compile(r"(cuda|hip|cu)GraphLaunch(_v\d+)?$")
# the start of a stream capture: the launches until its end build a graph, run no kernel
CAPTURE_BEGIN = re.compile(r"(cuda|hip)StreamBeginCapture(_v\d+)?$")

BEYOND = INT64 + 1  # stands for a JSON number past 64 bits; numpy refuses it when written


def whole(value: object) -> int | None:
    """A JSON integer (int, or a Decimal with no fraction) as int; None for anything else.

    A Decimal past 64 bits is :data:`BEYOND`, never converted: ``1e999999999`` would build an
    integer of a billion digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        return BEYOND if value.adjusted() > 18 else int(value)
    return None


def _int(value: object) -> int | None:
    """:func:`whole` within 64 bits: a metadata number past them is as good as absent."""
    number = whole(value)
    return number if number is not None and fits(number) else None


def _device_entries(meta: dict[str, Any]) -> dict[int, dict[str, Any]]:
    entries = meta.get("deviceProperties") or meta.get("computeProperties") or []
    if not isinstance(entries, list):
        return {}
    return {i: e for e in entries if isinstance(e, dict) and (i := _int(e.get("id"))) is not None}


# HIP reports an AMD GPU's gfx IP version as its compute capability (major.minor, the
# stepping dropped): ROCm clr's table of targets (opencl/tests/ocltst/module/runtime/
# OCLDeviceQueries.cpp) gives 9.4 to gfx942 alone and 9.5 to gfx950 alone, while 9.0 is any
# of gfx900-gfx90a and 10.x-12.x several Radeon parts: those are left unnamed.
HIP_ARCH = {(9, 4): "gfx942", (9, 5): "gfx950"}
# Kineto's ROCm builds record these (roctracer's; rocprofiler-sdk's in newer ones)
HIP_KEYS = (
    "roctracer_version",
    "rocprofiler-sdk_version",
    "hip_runtime_version",
    "hip_driver_version",
)


def is_hip(meta: dict[str, Any], entry: dict[str, Any] | None, hip_calls: bool) -> bool:
    """Whether the trace is HIP's: HIP runtime calls, HIP version metadata, an AMD name or a
    warp size of 64 (an NVIDIA warp is 32)."""
    if hip_calls or any(k in meta for k in HIP_KEYS):
        return True
    return entry is not None and (
        str(entry.get("name", "")).startswith("AMD") or _int(entry.get("warpSize")) == 64
    )


def described(meta: dict[str, Any], device: int | None) -> dict[str, Any] | None:
    """The ``deviceProperties`` entry of ``device``: the one of its id; else, where the ids
    are no device ids (Kineto on ROCm: one entry, id 0, and kernels on device 2 or 9), the
    one entry or the entries that are all alike but for their id. None where entries differ."""
    entries = _device_entries(meta)
    if device is None or device in entries:
        return entries.get(device) if device is not None else None
    alike = {repr(sorted((k, v) for k, v in e.items() if k != "id")) for e in entries.values()}
    return next(iter(entries.values())) if len(alike) == 1 else None


def _arch(entry: dict[str, Any], hip: bool) -> str | None:
    for key in ("gcnArchName", "archName", "gfxArch"):
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value.split(":")[0]
    major, minor = _int(entry.get("computeMajor")), _int(entry.get("computeMinor"))
    if major is None or minor is None:
        return None
    return HIP_ARCH.get((major, minor)) if hip else f"sm_{major}{minor}"


def arch_doubt(meta: dict[str, Any], device: int | None, hip_calls: bool) -> str | None:
    """Why a HIP trace whose entry has no name leaves its GPU unknown: its compute capability
    is one several gfx targets share (None when the name or the arch is known)."""
    entry = described(meta, device)
    if entry is None or entry.get("name") or not is_hip(meta, entry, hip_calls):
        return None
    if _arch(entry, True) is not None:
        return None
    major, minor = entry.get("computeMajor"), entry.get("computeMinor")
    return (
        f"deviceProperties names no GPU, and HIP's compute capability {major}.{minor} is no "
        "single gfx target (9.4 is gfx942, 9.5 gfx950; 9.0 any of gfx900-gfx90a)"
    )


def run_info(meta: dict[str, Any], device: int | None, hip_calls: bool = False) -> RunInfo:
    """The run as the metadata describes it; the GPU is the entry of ``device``, the one most
    kernels ran on (the list names every visible GPU; :func:`described`). ``deviceProperties``
    records no clock and no memory bus: name, ``numSms``, ``totalGlobalMem`` and the compute
    capability are what it gives of the device."""
    version = _int(meta.get("schemaVersion"))
    entry = described(meta, device)
    sms = _int(entry.get("numSms")) if entry else None
    memory = _int(entry.get("totalGlobalMem")) if entry else None
    return RunInfo(
        producer=PRODUCER,
        producer_version=None if version is None else f"schemaVersion {version}",
        gpu=str(entry["name"]) if entry and entry.get("name") else None,
        arch=_arch(entry, is_hip(meta, entry, hip_calls)) if entry else None,
        compute_units=sms if sms and sms > 0 else None,
        memory_bytes=memory if memory and memory > 0 else None,
        **_job(meta),
    )


def _job(meta: dict[str, Any]) -> dict[str, Any]:
    """``distributedInfo``'s world size and backend (its rank is the input's: run_rank)."""
    info = meta.get("distributedInfo")
    if not isinstance(info, dict):
        return {}
    size, backend = _int(info.get("world_size")), info.get("backend")
    return {
        "world_size": size if size and size > 0 else None,
        "backend": backend if isinstance(backend, str) and backend else None,
    }


def run_rank(meta: dict[str, Any]) -> int | None:
    info = meta.get("distributedInfo")
    return _int(info.get("rank")) if isinstance(info, dict) else None


def waves(meta: dict[str, Any], hip: bool) -> list[tuple[int, int | None]]:
    """(device, warp size) for every described device, and the default under device -1: the
    warp size all entries share (:func:`described`), else 32 unless the trace is HIP's."""
    sizes = [(i, _int(e.get("warpSize"))) for i, e in _device_entries(meta).items()]
    shared = {size for _, size in sizes}
    if len(shared) == 1 and None not in shared:
        return [*sizes, (-1, shared.pop())]
    return [*sizes, (-1, None if hip else 32)]


def insert_graph_launches(
    profile: Profile, source: int, launches: list[tuple[int | None, int | None, int | None]]
) -> None:
    """The graph launches (correlation id, start_ns, end_ns) under the trace's dispatch
    source; a value past 64 bits is left unknown."""
    rows = [(source, *(v if v is not None and fits(v) else None for v in g)) for g in launches]
    insert_rows(profile, "graph_launches", GRAPH_LAUNCH_COLUMNS, rows)
