"""Derived bytes that no memory could have moved in the kernel's time.

An Inductor launcher's shapes (analysis/work/shapes) and a compiler's annotation count
each buffer a kernel was given once (``Work.bytes_bound``): an upper bound where the kernel
reads part of a buffer. An indexed read (an embedding gather in an Inductor kernel, whose
launcher is given the whole 201,088 x 2,880 table) reads the rows its index names, and the
count would put it at 20x the HBM roof. Bytes above a memory roof may have come from cache
(a low caveat, diagnosis/trust.py), but no cache holds more than its size: bytes beyond
what the device memory moves in the kernel's time plus every byte its caches hold (L2,
Infinity Cache / MALL) at each dispatch were not moved at all. Such a kernel's derived work
is left out, and said so. An exact count (an elementwise op reads every operand) is kept:
above its roof it is the above-roof caveat's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.work.model import Work
from roofscope.catalogue.ceilings import Ceiling
from roofscope.catalogue.devices import Device
from roofscope.model.words import sig

MEMORY = "hbm"  # the level derived bytes are counted against


class Overcount(msgspec.Struct, frozen=True):
    kernel: str
    bytes: float  # derived
    movable: float  # what memory moves in its time, plus the caches' bytes at each dispatch


def credible(
    work: Mapping[str, Work],
    hot: Hotspots,
    ceilings: Sequence[Ceiling],
    device: Device | None,
) -> tuple[dict[str, Work], list[Overcount]]:
    """``work`` without the derived work whose bytes no memory could have moved, and those
    kernels; measured (counter) and user-given work is kept as it is."""
    roof = next((c.value for c in ceilings if c.kind == "memory" and c.name == MEMORY), None)
    if roof is None:
        return dict(work), []
    cached = cache_bytes(device)
    times = {k.name: k.total_ns for k in hot.kernels}
    kept, dropped = {}, []
    for name, w in work.items():
        time_ns = w.rate_time_ns if w.rate_time_ns is not None else times.get(name)
        moved = w.bytes.get(MEMORY)
        # each dispatch may find its operands in cache (the previous kernel's output)
        movable = roof * (time_ns or 0.0) / 1e9 + cached * (w.dispatches or 1)
        if _derived(w) and time_ns and moved and moved > movable:
            dropped.append(Overcount(name, moved, movable))
        else:
            kept[name] = w
    return kept, dropped


def cache_bytes(device: Device | None) -> float:
    """The bytes the device's caches hold (L2 and a last-level cache), 0 where unknown."""
    if device is None:
        return 0.0
    return ((device.l2_mb or 0.0) + (device.mall_mb or 0.0)) * 2**20


def _derived(w: Work) -> bool:
    """Bytes that count whole buffers: an exact count (an elementwise op reads every
    operand) above the roof is the above-roof caveat's (cache, or the wrong GPU)."""
    return w.bytes_bound


def said(found: Overcount) -> str:
    """One overcount in words."""
    return (
        f"{found.kernel[:80]}: its operands' bytes from the shapes ({sig(found.bytes / 1e9)} GB) "
        f"exceed what memory moves in its time plus every byte its caches hold at each dispatch "
        f"({sig(found.movable / 1e9)} GB): it read part of a buffer (an indexed read, a "
        "gather), so the shapes do not give its traffic; not placed on the roofline"
    )
