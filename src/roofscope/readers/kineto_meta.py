"""A Kineto trace's metadata (docs/formats/pytorch-kineto.md, "Top level and
metadata"): ``deviceProperties`` -> the
run's GPU and each device's warp size, ``distributedInfo.rank`` -> the input's rank,
``schemaVersion`` -> the producer version; and its data-loader steps (``cpu_op``,
``Operator`` or ``user_annotation`` events whose name holds "DataLoader", e.g.
``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__``) -> ``host_ranges``.
See :mod:`~roofscope.readers.kineto`."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from roofscope.model.profile import Profile, RunInfo
from roofscope.readers.batches import INT64, fits

PRODUCER = "pytorch-profiler"


LOADER_CATS = frozenset({"cpu_op", "Operator", "user_annotation"})
LOADER = re.compile(r"dataloader", re.IGNORECASE)

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


def _arch(entry: dict[str, Any]) -> str | None:
    for key in ("gcnArchName", "archName", "gfxArch"):
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value.split(":")[0]
    name = str(entry.get("name", ""))
    major, minor = _int(entry.get("computeMajor")), _int(entry.get("computeMinor"))
    if name.startswith("AMD") or major is None or minor is None:
        return None
    return f"sm_{major}{minor}"


def run_info(meta: dict[str, Any], device: int | None) -> RunInfo:
    """The run as the metadata describes it; the GPU is the entry of ``device``, the one most
    kernels ran on (the list names every visible GPU). ``deviceProperties`` records no clock
    and no memory bus: name, ``numSms``, ``totalGlobalMem`` and the compute capability are
    what it gives of the device."""
    version = _int(meta.get("schemaVersion"))
    entry = _device_entries(meta).get(device) if device is not None else None
    sms = _int(entry.get("numSms")) if entry else None
    memory = _int(entry.get("totalGlobalMem")) if entry else None
    return RunInfo(
        producer=PRODUCER,
        producer_version=None if version is None else f"schemaVersion {version}",
        gpu=str(entry["name"]) if entry and entry.get("name") else None,
        arch=_arch(entry) if entry else None,
        compute_units=sms if sms and sms > 0 else None,
        memory_bytes=memory if memory and memory > 0 else None,
    )


def run_rank(meta: dict[str, Any]) -> int | None:
    info = meta.get("distributedInfo")
    return _int(info.get("rank")) if isinstance(info, dict) else None


def waves(meta: dict[str, Any], hip: bool) -> list[tuple[int, int | None]]:
    """(device, warp size) for every described device, and the default under device -1."""
    sizes = [(i, _int(e.get("warpSize"))) for i, e in _device_entries(meta).items()]
    return [*sizes, (-1, None if hip else 32)]


def insert_loader_steps(profile: Profile, source: int, steps: list[tuple[str, int, int]]) -> None:
    """The data-loader steps (name, start_ns, end_ns) under the trace's dispatch source."""
    rows = [(source, "data-loader", n[:200], a, b) for n, a, b in steps if fits(a) and fits(b)]
    if rows:
        profile.con.executemany("INSERT INTO host_ranges VALUES (?, ?, ?, ?, ?)", rows)
