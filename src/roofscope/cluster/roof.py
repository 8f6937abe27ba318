"""The roofline of the cluster summary, from the merged counter sums.

The work formulas (``analysis.work.counters.quantities``) are linear in the counters, so a
kernel's FLOPs and bytes are the formulas applied to its summed counters, and the mean of its
per-dispatch rates the formulas applied to its summed per-dispatch counter rates, divided by
its timed dispatches. Only the counters every dispatch with counters carries are used, as
``analysis.counters.dispatch_counters`` does. The device is chosen from the runs' metadata
(``analysis.device.choose_device``, as ``analyze`` does without ``--gpu``), with the measured
ceilings the runs carry; the ranks of one job ran on one kind of GPU, and runs that name
different ones get no roofline. ``--gpu`` names the device instead, and the user's ceilings
(``--peak-flops``, ``--peak-bw``, ``--ceilings``) replace the catalogue's of the same name, as
in ``analyze`` (``analysis.device.gather_ceilings``). The user's ``--work`` rules come first,
evaluated over each kernel's launch shapes and their dispatch counts (``records.py``), which
is what ``analysis.work.assign`` evaluates them over. The placing itself is
``analysis.roofline.roofline``.

Left out against ``analyze``: counter runs scaled onto a trace (each run that has one says
so in a ``counter-run-left-out`` warning, ``partial.py``), and the limiter's correction of a
bandwidth-placed kernel's bound (it needs the per-kernel metrics).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from roofscope.analysis.counters import Counters
from roofscope.analysis.device import (
    DeviceChoice,
    catalogue_doubt,
    choose_device,
    from_profile_attributes,
    gather_ceilings,
)
from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.roofline import KernelRoofline, Roofline, roofline
from roofscope.analysis.work.assign import rule_work
from roofscope.analysis.work.counters import quantities
from roofscope.analysis.work.model import Work
from roofscope.analysis.work.spec import Rule
from roofscope.cluster.counters import CounterPart, KernelCounters, complete
from roofscope.cluster.records import SHAPE_COLUMNS
from roofscope.model.profile import RunInfo
from roofscope.render.device_choice import detected_from
from roofscope.render.json import ceiling_dict, kernel_roofline
from roofscope.report import DEFAULTS, RooflineOptions

if TYPE_CHECKING:
    from roofscope.cluster.partial import Partial


@dataclass(frozen=True)
class ClusterRoofline:
    choice: DeviceChoice | None  # None: the runs name different GPUs
    result: Roofline
    problem: str | None  # why there is no roofline
    doubt: str | None = None  # why the catalogue's ceilings may not fit (catalogue_doubt)


def kernel_work(part: CounterPart, arch: str | None) -> dict[str, Work]:
    """Work by kernel from its summed counters; kernels whose counters give neither FLOPs
    nor bytes get none (``analysis.work.assign``)."""
    used = complete(part)
    out = {}
    for name, k in part.kernels.items():
        flops, nbytes = quantities(_columns(k, used, rates=False), arch)
        if not flops and not nbytes:
            continue
        rates: dict[str, float] = {}
        if k.timed:
            f_rate, b_rate = quantities(_columns(k, used, rates=True), arch)
            rates = {q: float(v[0]) / k.timed * 1e9 for q, v in {**f_rate, **b_rate}.items()}
        out[name] = Work(
            flops={q: float(v[0]) for q, v in flops.items()} or None,
            bytes={q: float(v[0]) for q, v in nbytes.items()},
            source="counters",
            rates=rates,
            dispatches=k.dispatches,
            time_ns=float(k.time_ns),
        )
    return out


def ruled_work(p: Partial, hot: Hotspots, rules: Sequence[Rule]) -> dict[str, Work]:
    """Work by the user's rules (``--work``): the first rule that matches a kernel, over the
    launch shapes the partials counted, as ``analysis.work.assign`` does over the rows."""
    out = {}
    for k in hot.kernels:
        rule = next((r for r in rules if r.matches(k.name)), None)
        if rule is not None:
            shapes = sorted(p.shapes.get(k.name, {}).items(), key=lambda s: repr(s[0]))
            launches = [{**dict(zip(SHAPE_COLUMNS, s, strict=True)), "dispatches": n}
                        for s, n in shapes]  # fmt: skip
            out[k.name] = rule_work(rule, launches, k.calls)
    return out


def _columns(k: KernelCounters, used: set[str], *, rates: bool) -> Counters:
    """One-element arrays: the kernel's summed counters (or summed per-dispatch rates)."""
    return Counters(
        {
            n: np.array([c.rate_total if rates else float(c.total)], dtype=np.float64)
            for n, c in k.counters.items()
            if n in used
        }
    )


def device_of(
    infos: Sequence[RunInfo], gpu: str | None = None
) -> tuple[DeviceChoice | None, RunInfo, str | None]:
    """The device the runs ran on (``gpu``: the user's ``--gpu``), chosen as ``analyze``
    chooses it, the run info it was chosen from, and why there is none where the runs name
    different GPUs."""
    distinct = list(dict.fromkeys(infos))
    choices = [from_profile_attributes(choose_device(i, gpu), i) for i in distinct]
    named = sorted({c.name or "an unknown GPU" for c in choices})
    if len(named) > 1:
        return None, distinct[0], f"no roofline: the runs name different GPUs ({', '.join(named)})"
    if not choices:
        return None, RunInfo(), "no roofline: no run read"
    return choices[0], distinct[0], None


def cluster_roofline(
    p: Partial, hot: Hotspots, roof: RooflineOptions = DEFAULTS
) -> ClusterRoofline:
    """Every kernel with counter work on the roofline of the runs' device; ``hot``: the
    kernels of ``p`` ranked (``cluster.hot``); ``roof``: the user's ``--gpu`` and ceilings."""
    choice, info, problem = device_of([r.info for r in p.runs], roof.gpu)
    ceilings = []
    if choice is not None:
        ceilings = gather_ceilings(choice, p.counters.ceilings, roof.ceilings)
    work = {**kernel_work(p.counters, info.arch), **ruled_work(p, hot, roof.rules)}
    result = roofline(hot, work, ceilings)
    if choice is not None and problem is None:
        if not ceilings:
            problem = f"no roofline: {choice.problem}" if choice.problem else "no ceilings known"
        elif not work:
            problem = "no roofline: no kernel has counters that give FLOPs or bytes"
    doubt = catalogue_doubt(choice, info) if choice is not None else None
    return ClusterRoofline(choice, result, problem, doubt)


def roofline_doc(p: Partial, found: ClusterRoofline) -> dict[str, Any]:
    """The ``roofline`` section of the summary: the device, its ceilings, and each kernel with
    work as ``analyze --json`` places it (SI units); ``found``: ``cluster_roofline(p, ...)``."""
    c, r = found.choice, found.result
    return {
        "device": {
            "name": c.name if c else None,
            "key": c.device.key if c and c.device else None,
            "arch": c.arch if c else None,
            "scope": c.scope if c else None,
            "detected_from": detected_from(c) if c else None,
            "problem": found.problem,
            "doubt": found.doubt,
        },
        "main_ceiling": r.main_ceiling,
        "ridge_flop_per_byte": r.ridge,
        "ceilings": [ceiling_dict(x) for x in r.ceilings],
        "kernels": [_kernel(k, _dispatches(p, k)) for k in r.kernels],
    }


def _dispatches(p: Partial, k: KernelRoofline) -> int:
    """The dispatches a kernel's work is of: those with counters, or all of them (a ``--work``
    rule)."""
    sums = p.counters.kernels.get(k.name)
    by_counters = sums is not None and (k.work_source or "").startswith("counters")
    return sums.dispatches if by_counters and sums is not None else p.kernels[k.name].calls


def _kernel(k: KernelRoofline, dispatches: int) -> dict[str, Any]:
    """One kernel, with the keys of ``analyze --json``'s ``kernels[].roofline``."""
    return {
        "name": k.name,
        "dispatches": dispatches,
        "time_s": k.time_s,
        **(kernel_roofline(k) or {}),
    }


def counters_doc(part: CounterPart) -> list[dict[str, Any]]:
    """Per kernel and counter: the sum and both aggregations, the ratio of sums (per second
    of the dispatches that carry it) and the mean of per-dispatch rates (per second)."""
    return [
        {
            "name": name,
            "dispatches": k.dispatches,
            "timed": k.timed,
            "time_ns": k.time_ns,
            "counters": {
                n: {
                    "total": c.total,
                    "dispatches": c.dispatches,
                    "time_weighted_per_s": c.total / c.time_ns * 1e9 if c.time_ns > 0 else None,
                    "dispatch_mean_per_s": c.rate_total / c.timed * 1e9 if c.timed else None,
                }
                for n, c in k.counters.items()
            },
        }
        for name, k in part.kernels.items()
    ]
