"""Baseline against candidate: per-kernel and end-to-end speedup with its spread, and which
kernels made the program faster or slower.

Speedup = base time / new time (> 1: faster). Its spread is a 95 % interval:

- several runs on both sides: a bootstrap over runs (each run's total), 2000 resamples;
- one run a side, with dispatches: a bootstrap over each side's dispatch durations (2000
  resamples of the kernel's total), or, above BOOTSTRAP_MAX dispatches, the normal
  approximation of the two totals (CLT; delta method for the ratio);
- summaries only (no dispatches): no spread; the change cannot be told from noise.

A change is *beyond noise* when its interval excludes 1. Attribution: a kernel's share of
the end-to-end change is its change in time (new - base; added kernels count their whole
time, removed ones minus theirs) over the sum of all kernels' changes: the shares sum to 1.
Each side's data-quality warnings travel with the comparison (``compare/quality.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from roofscope.analysis.roofline import Bound, KernelRoofline
from roofscope.model.access import launches, named, query
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION, VALID_DURATION
from roofscope.model.selection import among, dispatches
from roofscope.report import Report
from roofscope.verify.match import Matching, Shape, match
from roofscope.verify.quality import SideWarning, side_warnings

BOOTSTRAP_MAX = 20_000
SPREAD_MIN_SHARE = 0.01  # kernels below this share of the time may lack a spread
RESAMPLES = 2000
Z95 = 1.959963984540054
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Run:
    """One profile of one side: its check-up and, per kernel, its dispatch durations."""

    report: Report
    durations: dict[str, Floats]  # kernels with at most BOOTSTRAP_MAX dispatches
    profile: Profile


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str  # "bootstrap over runs" | "bootstrap over dispatches" | "normal approximation"

    @property
    def beyond_noise(self) -> bool:
        return self.low > 1 or self.high < 1


@dataclass(frozen=True)
class Movement:
    """The kernel's place on the roofline, before and after."""

    intensity: tuple[float | None, float | None]
    achieved_flops_s: tuple[float | None, float | None]
    achieved_bytes_s: tuple[float | None, float | None]
    efficiency: tuple[float | None, float | None]
    bound: tuple[Bound | None, Bound | None]
    level: str


@dataclass(frozen=True)
class KernelChange:
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


@dataclass(frozen=True)
class EndToEnd:
    kernel_ns: tuple[float, float]
    wall_ns: tuple[float | None, float | None]
    idle_ns: tuple[float | None, float | None]
    speedup: float | None  # of total kernel time
    interval: Interval | None
    wall_speedup: float | None
    implied_wall_speedup: float | None  # Amdahl: kernel changes only, the rest unchanged


@dataclass(frozen=True)
class Comparison:
    base_label: str
    new_label: str
    runs: tuple[int, int]
    matching: Matching
    kernels: tuple[KernelChange, ...]  # biggest absolute change first
    end_to_end: EndToEnd
    warnings: tuple[SideWarning, ...] = ()  # both sides', baseline first


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
    base_total = _mean([r.report.hotspots.total_ns or 0.0 for r in base])
    changes = [_pair(base, new, p.base, p.new, p.how, p.score, base_total) for p in matching.pairs]
    changes += [_pair(base, new, k, None, "removed", None, base_total) for k in matching.removed]
    changes += [_pair(base, new, None, k, "added", None, base_total) for k in matching.added]
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
        _end_to_end(base, new, changes),
        side_warnings([r.report for r in base], [r.report for r in new]),
    )


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
) -> KernelChange:
    bt, bc = _stat(base, b)
    nt, nc = _stat(new, n)
    tb, tn = _mean(bt), _mean(nt)
    speedup = tb / tn if b is not None and n is not None and tn > 0 else None
    interval = _interval(base, new, b, n, bt, nt) if speedup is not None else None
    return KernelChange(
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


def _with_attribution(c: KernelChange, share: float | None) -> KernelChange:
    return replace(c, attribution=share)


def _interval(
    base: Sequence[Run],
    new: Sequence[Run],
    b: str | None,
    n: str | None,
    bt: list[float],
    nt: list[float],
) -> Interval | None:
    rng = np.random.default_rng(0)
    if len(base) > 1 and len(new) > 1:
        return _bootstrap_runs(np.asarray(bt), np.asarray(nt), rng)
    if len(base) != 1 or len(new) != 1 or b is None or n is None:
        return None
    db, dn = base[0].durations.get(b), new[0].durations.get(n)
    if db is not None and dn is not None and db.size > 1 and dn.size > 1:
        rb = _resampled_totals(db, rng)
        rn = _resampled_totals(dn, rng)
        ratios = rb / rn
        low, high = np.percentile(ratios, [2.5, 97.5])
        return Interval(float(low), float(high), "bootstrap over dispatches")
    sb = _kernel_stats(base[0], b)
    sn = _kernel_stats(new[0], n)
    if sb is None or sn is None:
        return None
    return _normal(sb, sn)


def _bootstrap_runs(bt: Floats, nt: Floats, rng: np.random.Generator) -> Interval:
    b = rng.choice(bt, size=(RESAMPLES, bt.size)).mean(axis=1)
    n = rng.choice(nt, size=(RESAMPLES, nt.size)).mean(axis=1)
    ratios = b / np.where(n > 0, n, np.nan)
    low, high = np.nanpercentile(ratios, [2.5, 97.5])
    return Interval(float(low), float(high), "bootstrap over runs")


def _resampled_totals(d: Floats, rng: np.random.Generator) -> Floats:
    """Totals of RESAMPLES resamples of the dispatch durations (in chunks: bounded memory)."""
    out = np.empty(RESAMPLES)
    step = max(1, 2_000_000 // d.size)
    for first in range(0, RESAMPLES, step):
        count = min(step, RESAMPLES - first)
        out[first : first + count] = d[rng.integers(0, d.size, size=(count, d.size))].sum(axis=1)
    return out


def _kernel_stats(run: Run, kernel: str) -> tuple[float, float, int] | None:
    """(total, standard error of the total, calls) from the kernel's statistics."""
    k = next((k for k in run.report.hotspots.kernels if k.name == kernel), None)
    if k is None or k.total_ns is None or k.std_ns is None or k.calls < 2:
        return None
    return float(k.total_ns), float(k.std_ns) * math.sqrt(k.calls), k.calls


def _normal(sb: tuple[float, float, int], sn: tuple[float, float, int]) -> Interval:
    (tb, eb, _), (tn, en, _) = sb, sn
    ratio = tb / tn
    rel = math.sqrt((eb / tb) ** 2 + (en / tn) ** 2) if tb and tn else 0.0
    return Interval(ratio * (1 - Z95 * rel), ratio * (1 + Z95 * rel), "normal approximation")


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


def _end_to_end(base: Sequence[Run], new: Sequence[Run], changes: list[KernelChange]) -> EndToEnd:
    kb = _mean([r.report.hotspots.total_ns or 0.0 for r in base])
    kn = _mean([r.report.hotspots.total_ns or 0.0 for r in new])
    wall = (_timeline(base, "wall_ns"), _timeline(new, "wall_ns"))
    idle = (_timeline(base, "idle_ns"), _timeline(new, "idle_ns"))
    speedup = kb / kn if kn else None
    interval = None
    if speedup is not None:
        if len(base) > 1 and len(new) > 1:
            totals = [[r.report.hotspots.total_ns or 0.0 for r in side] for side in (base, new)]
            interval = _bootstrap_runs(
                np.asarray(totals[0]), np.asarray(totals[1]), np.random.default_rng(1)
            )
        else:
            interval = _combined(changes, kb, kn)
    wall_speedup = wall[0] / wall[1] if wall[0] and wall[1] else None
    implied = None
    if wall[0]:
        implied = wall[0] / (wall[0] - (kb - kn)) if wall[0] - (kb - kn) > 0 else None
    return EndToEnd((kb, kn), wall, idle, speedup, interval, wall_speedup, implied)


def _timeline(runs: Sequence[Run], field: str) -> float | None:
    values = [getattr(r.report.timeline, field) for r in runs if r.report.timeline]
    return _mean(values) if len(values) == len(runs) and values else None


def _combined(changes: list[KernelChange], kb: float, kn: float) -> Interval | None:
    """The end-to-end interval from the kernels' own (independent) spreads."""
    var_b = var_n = 0.0
    for c in changes:
        if c.interval is None or c.speedup is None:
            if c.base is not None and c.new is not None and (c.base_share or 0) >= SPREAD_MIN_SHARE:
                return None  # a sizeable kernel without spread: the total has none either
            continue  # added, removed, or too small to move the total's spread
        half = (c.interval.high - c.interval.low) / 2 / Z95  # sd of the ratio
        rel = half / c.speedup
        # split the ratio's relative variance evenly between the two totals
        var_b += (c.total_ns[0] * rel) ** 2 / 2
        var_n += (c.total_ns[1] * rel) ** 2 / 2
    ratio = kb / kn
    rel = math.sqrt(var_b / kb**2 + var_n / kn**2) if kb and kn else 0.0
    return Interval(ratio * (1 - Z95 * rel), ratio * (1 + Z95 * rel), "normal approximation")
