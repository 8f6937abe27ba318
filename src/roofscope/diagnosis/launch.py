"""Launch shape before memory advice: a kernel whose grid holds fewer blocks than the device
has SMs (CUs), or that Nsight Compute itself calls too small to fill the device, is told so
with its numbers, never to fix its access pattern (issue 38, point 2).

Fewer blocks than SMs leaves SMs without work for the whole launch: at most blocks / SMs of
the device works, so spreading the same work over every SM could save up to share x (1 -
blocks / SMs) of the kernel time. ncu's own words (SpeedOfLight/SOLBottleneck "This kernel
grid is too small to fill the available resources on this device, resulting in only 0.5 full
waves across all SMs"; LaunchStats/LaunchConfiguration "The grid for this launch is configured
to execute only 80 blocks, which is less than the GPU's 170 multiprocessors") mark it too,
where the shape's numbers alone would not (more blocks than SMs, less than one full wave).
The waves are ncu's own column (``launch__waves_per_multiprocessor``, "Waves Per SM") where
the export has it, else the number in its rule text.
"""

from __future__ import annotations

import re

from roofscope.analysis.launch import WAVES
from roofscope.diagnosis.evidence import KernelView
from roofscope.diagnosis.findings import Finding, Severity, Value
from roofscope.model.words import count, sig

RULE = "launch-too-small"
# the texts of ncu's rules (NvRules scripts SpeedOfLight and LaunchStatistics) that say so
SMALL_GRID = re.compile(r"grid is too small to fill|less than the GPU's [\d,]+ multiprocessors")
FULL_WAVES = re.compile(r"only ([\d.]+) full waves")
PRESCRIPTION = (
    "give every SM work: split the work into more blocks (more, smaller tiles; split-K or "
    "split-KV; a persistent or stream-K schedule), or run independent kernels beside it "
    "(streams, CUDA/HIP graphs); its memory access pattern is not what holds it back"
)


def producer_says_small(texts: list[str]) -> str | None:
    """The first of the profiler's rule texts that calls the grid too small, or None."""
    return next((t for t in texts if SMALL_GRID.search(t)), None)


def fewer_blocks_than_units(k: KernelView) -> bool:
    units = k.machine.compute_units
    return k.launch is not None and bool(units) and k.launch.blocks < (units or 0)


def launch_too_small(k: KernelView) -> Finding | None:
    """The launch-configuration finding of a kernel whose grid cannot fill the device."""
    fewer = fewer_blocks_than_units(k)
    if k.stats.communication or (not fewer and k.producer_small is None):
        return None  # NCCL/RCCL kernels run on few blocks by design
    waves, waves_from = _waves(k)
    evidence: dict[str, Value] = {
        "blocks": k.launch.blocks if k.launch else None,
        "block_size": k.launch.block_size if k.launch else None,
        "compute_units": k.machine.compute_units,
        "compute_units_from": k.machine.source_of("compute_units"),
        "ncu_full_waves": waves,
        "ncu_full_waves_from": waves_from,
        "share": k.stats.share,
    }
    gain, formula = _gain(k) if fewer else (None, None)
    return Finding(
        RULE,
        k.stats.name,
        "bottleneck",
        _severity(gain, k.stats.share),
        _summary(k, fewer, waves),
        PRESCRIPTION,
        evidence,
        {"blocks_per_unit_min": 1.0},
        gain,
        formula,
    )


def _waves(k: KernelView) -> tuple[float | None, str | None]:
    """ncu's waves per SM and where they were read: its metric first, its rule text second."""
    if k.launch is not None and k.launch.waves is not None:
        return k.launch.waves, WAVES
    found = FULL_WAVES.search(k.producer_small or "")
    return (float(found.group(1)), "rule text") if found else (None, None)


def _severity(gain: float | None, share: float | None) -> Severity:
    """As rules.severity for a gain; from the kernel's share where the gain is unknown."""
    weight = gain if gain is not None else share or 0.0
    return "high" if weight >= 0.1 else "medium" if weight >= 0.02 else "low"


def _word(k: KernelView) -> str:
    return "CU" if (k.machine.arch or "").startswith("gfx") else "SM"


def _summary(k: KernelView, fewer: bool, waves: float | None) -> str:
    ncu = f"; Nsight Compute: {sig(waves)} waves per SM" if waves is not None else ""
    if fewer and k.launch is not None and k.machine.compute_units:
        b, units, word = k.launch.blocks, k.machine.compute_units, _word(k)
        return (
            f"launch too small for the device: {count(b, 'block')} of "
            f"{count(k.launch.block_size, 'thread')} for {count(units, word)} "
            f"({sig(b / units)} blocks per {word}): {count(units - b, word)} had no work{ncu}"
        )
    shape = (
        f" ({count(k.launch.blocks, 'block')} of {count(k.launch.block_size, 'thread')})"
        if k.launch
        else ""
    )
    return f"launch too small to fill the device{shape}{ncu}"


def _gain(k: KernelView) -> tuple[float | None, str | None]:
    share, units = k.stats.share, k.machine.compute_units
    if share is None or k.launch is None or not units:
        return None, None
    used = k.launch.blocks / units
    gain = share * (1 - used)
    return gain, (
        f"gain <= share x (1 - blocks / {_word(k)}s) = {share:.3f} x (1 - {k.launch.blocks}/"
        f"{units}) = {gain:.3f}; program speedup <= 1 / (1 - {gain:.3f}) = {sig(1 / (1 - gain))}x"
    )
