"""Baseline against candidate: per-kernel and end-to-end speedup with its spread, and which
kernels made the program faster or slower.

Speedup = base time / new time (> 1: faster). Its spread is a 95 % interval, per kernel and
end to end from the same draws (``verify/spread.py``); summaries only (no dispatches): no
spread; the change cannot be told from noise.

A change is *beyond noise* when its interval excludes 1. Attribution: a kernel's share of
the end-to-end change is its change in time (new - base; added kernels count their whole
time, removed ones minus theirs) over the sum of all kernels' changes: the shares sum to 1.
Each side's data-quality warnings travel with the comparison (``compare/quality.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np
import numpy.typing as npt
from msgspec.structs import replace

from roofscope.analysis.roofline import Bound, KernelRoofline
from roofscope.model.access import launches, named, query
from roofscope.model.profile import Profile
from roofscope.model.relation import among
from roofscope.model.schema import DURATION, VALID_DURATION
from roofscope.model.selection import dispatches
from roofscope.report import Report
from roofscope.verify.byop import by_operator
from roofscope.verify.levels import (
    CategoryChange,
    OperatorChanges,
    category_changes,
    operator_changes,
)
from roofscope.verify.match import Matching, Shape, match
from roofscope.verify.quality import SideWarning, side_warnings
from roofscope.verify.spread import (
    BOOTSTRAP_MAX,
    Draws,
    Interval,
    Spread,
    dominant_interval,
    end_to_end_interval,
    generator,
    of_dispatches,
    of_runs,
    of_totals,
)

__all__ = ["Interval", "compare", "run_of"]
Floats = npt.NDArray[np.float64]


class Run(msgspec.Struct, frozen=True):
    """One profile of one side: its check-up and, per kernel, its dispatch durations."""

    report: Report
    durations: dict[str, Floats]  # kernels with at most BOOTSTRAP_MAX dispatches
    profile: Profile


class Movement(msgspec.Struct, frozen=True):
    """The kernel's place on the roofline, before and after."""

    intensity: tuple[float | None, float | None]
    achieved_flops_s: tuple[float | None, float | None]
    achieved_bytes_s: tuple[float | None, float | None]
    efficiency: tuple[float | None, float | None]
    bound: tuple[Bound | None, Bound | None]
    level: str

    @property
    def same_bound(self) -> bool:
        """Whether both efficiencies are of the same kind of roof (memory or compute): only
        then do they compare; otherwise each side's placement stands with its own bound."""
        return self.bound[0] is not None and self.bound[0] == self.bound[1]


class KernelChange(msgspec.Struct, frozen=True):
    base: str | None  # None: added
    new: str | None  # None: removed
    how: str  # "name" | "similarity" | "added" | "removed"
    score: float | None
    calls: tuple[float, float]  # mean over runs
    total_ns: tuple[float, float]
    mean_ns: tuple[float | None, float | None]
    base_share: float | None
    speedup: float | None
    interval: Interval | None
    delta_ns: float  # new - base
    attribution: float | None  # share of the end-to-end change
    movement: Movement | None

    @property
    def name(self) -> str:
        return str(self.new if self.base is None else self.base)


class EndToEnd(msgspec.Struct, frozen=True):
    kernel_ns: tuple[float, float]
    wall_ns: tuple[float | None, float | None]
    idle_ns: tuple[float | None, float | None]
    speedup: float | None  # of total kernel time
    interval: Interval | None
    wall_speedup: float | None
    implied_wall_speedup: float | None  # Amdahl: kernel changes only, the rest unchanged


class Comparison(msgspec.Struct, frozen=True):
    base_label: str
    new_label: str
    runs: tuple[int, int]
    matching: Matching
    kernels: tuple[KernelChange, ...]  # biggest absolute change first
    end_to_end: EndToEnd
    warnings: tuple[SideWarning, ...] = ()  # both sides', baseline first
    devices: tuple[str | None, str | None] = (None, None)  # the GPU each side ran on
    categories: tuple[CategoryChange, ...] = ()  # per kernel category (verify/levels.py)
    operators: OperatorChanges | None = None  # per operator signature, PyTorch traces both sides

    @property
    def across_gpus(self) -> bool:
        """Base and new ran on different GPUs (both named, and the names differ)."""
        return None not in self.devices and self.devices[0] != self.devices[1]


def run_of(profile: Profile, report: Report) -> Run:
    """What the comparison needs of one profile beyond its report: the dispatch durations of
    the kernels its report selected, on the device it selected (``--device``)."""
    durations: dict[str, Floats] = {}
    small = [k.name for k in report.hotspots.kernels if k.calls <= BOOTSTRAP_MAX]
    if small:
        # the report's own selection: under --device, that device's dispatches alone
        timed = named(profile, dispatches(profile, report.selection)).filter(VALID_DURATION)
        rows = (
            timed.filter(among("kernel", small))
            .aggregate(f"kernel, list({DURATION})", "kernel")
            .fetchall()
        )
        durations = {str(k): np.asarray(v, dtype=np.float64) for k, v in rows}
    return Run(report, durations, profile)


def shapes_of(profile: Profile) -> dict[str, Shape]:
    """Each kernel's dominant launch shape (grid, workgroup), read only when needed."""
    rows = query(
        profile,
        named(profile, launches(profile)),
        """SELECT kernel, grid_size, workgroup_size, sum(dispatches) AS c
        FROM d GROUP BY ALL ORDER BY c DESC""",
    ).fetchall()
    shapes: dict[str, Shape] = {}
    for kernel, grid, group, _ in rows:
        shapes.setdefault(str(kernel), (grid, group))
    return shapes


def compare(base: Sequence[Run], new: Sequence[Run], labels: tuple[str, str]) -> Comparison:
    names = (list(_kernels(base)), list(_kernels(new)))
    matching = match(*names)
    if matching.added and matching.removed:  # renamed kernels may hide there: ask the shapes
        shapes = (shapes_of(base[0].profile), shapes_of(new[0].profile))
        matching = match(*names, shapes)
    reports = ([r.report for r in base], [r.report for r in new])
    # kernels of the same operator signature, where names cannot tell (across vendors)
    matching = by_operator(matching, reports[0][0].operators, reports[1][0].operators)
    base_total = _mean([r.report.hotspots.total_ns or 0.0 for r in base])
    paired = [_pair(base, new, p.base, p.new, p.how, p.score, base_total) for p in matching.pairs]
    paired += [_pair(base, new, k, None, "removed", None, base_total) for k in matching.removed]
    paired += [_pair(base, new, None, k, "added", None, base_total) for k in matching.added]
    changes, spreads = [c for c, _ in paired], [s for _, s in paired]
    total_delta = sum(c.delta_ns for c in changes)
    changes = [
        _with_attribution(c, c.delta_ns / total_delta if total_delta else None) for c in changes
    ]
    changes.sort(key=lambda c: (-abs(c.delta_ns), c.name))
    return Comparison(
        labels[0],
        labels[1],
        (len(base), len(new)),
        matching,
        tuple(changes),
        _end_to_end(base, new, spreads),
        side_warnings(*reports),
        (_device(base[0].report), _device(new[0].report)),
        category_changes(*reports, paired),
        operator_changes(*reports),
    )


def _device(report: Report) -> str | None:
    """The GPU a side ran on: the catalogue's model, else the name the profiler reports."""
    return report.roofline.choice.name or report.run.gpu


def _kernels(runs: Sequence[Run]) -> dict[str, None]:
    return {k.name: None for r in runs for k in r.report.hotspots.kernels}


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _stat(runs: Sequence[Run], kernel: str | None) -> tuple[list[float], list[float]]:
    """Per run: the kernel's total time and its calls (0 where the run lacks it)."""
    totals, calls = [], []
    for r in runs:
        k = next((k for k in r.report.hotspots.kernels if k.name == kernel), None)
        totals.append(float(k.total_ns or 0.0) if k else 0.0)
        calls.append(float(k.calls) if k else 0.0)
    return totals, calls


def _pair(
    base: Sequence[Run],
    new: Sequence[Run],
    b: str | None,
    n: str | None,
    how: str,
    score: float | None,
    base_total: float,
) -> tuple[KernelChange, Spread]:
    bt, bc = _stat(base, b)
    nt, nc = _stat(new, n)
    tb, tn = _mean(bt), _mean(nt)
    speedup = tb / tn if b is not None and n is not None and tn > 0 else None
    interval, draws = _interval(base, new, b, n, bt, nt) if speedup is not None else (None, None)
    change = KernelChange(
        base=b,
        new=n,
        how=how,
        score=score,
        calls=(_mean(bc), _mean(nc)),
        total_ns=(tb, tn),
        mean_ns=(tb / _mean(bc) if _mean(bc) else None, tn / _mean(nc) if _mean(nc) else None),
        base_share=tb / base_total if base_total else None,
        speedup=speedup,
        interval=interval,
        delta_ns=tn - tb,
        attribution=None,
        movement=_movement(base[0].report, new[0].report, b, n),
    )
    return change, Spread((tb, tn), interval, draws)


def _with_attribution(c: KernelChange, share: float | None) -> KernelChange:
    return replace(c, attribution=share)


def _interval(
    base: Sequence[Run],
    new: Sequence[Run],
    b: str | None,
    n: str | None,
    bt: list[float],
    nt: list[float],
) -> tuple[Interval | None, Draws | None]:
    rng = generator(b, n)
    if len(base) > 1 and len(new) > 1:
        return of_runs(bt, nt, rng), None
    if len(base) != 1 or len(new) != 1 or b is None or n is None:
        return None, None
    db, dn = base[0].durations.get(b), new[0].durations.get(n)
    if db is not None and dn is not None and db.size > 1 and dn.size > 1:
        return of_dispatches(db, dn, rng)
    sb, sn = _kernel_stats(base[0], b), _kernel_stats(new[0], n)
    if sb is None or sn is None:
        return None, None
    return of_totals(sb, sn, rng)


def _kernel_stats(run: Run, kernel: str) -> tuple[float, float] | None:
    """(total, standard error of the total) from the kernel's statistics."""
    k = next((k for k in run.report.hotspots.kernels if k.name == kernel), None)
    if k is None or k.total_ns is None or k.std_ns is None or k.calls < 2:
        return None
    return float(k.total_ns), float(k.std_ns) * math.sqrt(k.calls)


def _movement(base: Report, new: Report, b: str | None, n: str | None) -> Movement | None:
    rb = _roof(base, b)
    rn = _roof(new, n)
    if rb is None or rn is None:
        return None
    level = rb.limiting_level or rn.limiting_level or "hbm"
    return Movement(
        (rb.intensity.get(level), rn.intensity.get(level)),
        (rb.achieved_flops_s, rn.achieved_flops_s),
        (rb.achieved_bytes_s.get(level), rn.achieved_bytes_s.get(level)),
        (rb.efficiency, rn.efficiency),
        (rb.bound, rn.bound),
        level,
    )


def _roof(report: Report, kernel: str | None) -> KernelRoofline | None:
    return next((k for k in report.roofline.result.kernels if k.name == kernel), None)


def _end_to_end(base: Sequence[Run], new: Sequence[Run], spreads: list[Spread]) -> EndToEnd:
    kb = _mean([r.report.hotspots.total_ns or 0.0 for r in base])
    kn = _mean([r.report.hotspots.total_ns or 0.0 for r in new])
    wall = (_timeline(base, "wall_ns"), _timeline(new, "wall_ns"))
    idle = (_timeline(base, "idle_ns"), _timeline(new, "idle_ns"))
    speedup = kb / kn if kn else None
    interval = None
    if speedup is not None:
        interval = _end_to_end_interval(base, new, spreads, (kb, kn))
    wall_speedup = wall[0] / wall[1] if wall[0] and wall[1] else None
    implied = None
    if wall[0]:
        implied = wall[0] / (wall[0] - (kb - kn)) if wall[0] - (kb - kn) > 0 else None
    return EndToEnd((kb, kn), wall, idle, speedup, interval, wall_speedup, implied)


def _end_to_end_interval(
    base: Sequence[Run], new: Sequence[Run], spreads: list[Spread], totals: tuple[float, float]
) -> Interval | None:
    """A kernel that is nearly all the time lends its interval; else, several runs a side:
    the bootstrap over the runs' totals; one run a side: the kernels' draws summed."""
    if len(base) > 1 and len(new) > 1:
        dominant = dominant_interval(spreads, totals)
        if dominant is not None:
            return dominant
        runs = [[r.report.hotspots.total_ns or 0.0 for r in side] for side in (base, new)]
        return of_runs(runs[0], runs[1], generator("end to end"))
    return end_to_end_interval(spreads, totals)


def _timeline(runs: Sequence[Run], field: str) -> float | None:
    values = [getattr(r.report.timeline, field) for r in runs if r.report.timeline]
    return _mean(values) if len(values) == len(runs) and values else None
