"""The 95 % interval of a speedup (base time / new time), per kernel and end to end, from one
set of draws so that the two always agree.

- several runs on both sides: a bootstrap over runs (each run's total), 2000 resamples;
- one run a side: each kernel's total is drawn 2000 times, from a bootstrap over its dispatch
  durations, or, above BOOTSTRAP_MAX dispatches, from the normal approximation of its total
  (CLT); the kernel's interval is the percentiles of its drawn ratios, the end-to-end one
  those of the drawn sums (the kernels without spread added as constants);
- a kernel that is nearly all the time (DOMINANT_SHARE on both sides) lends its interval to
  the end to end: a total that is one kernel cannot be beyond noise where the kernel is not.

Each kernel draws from its own generator (seeded by its names), so that two kernels' draws
are independent, as the end-to-end sum assumes.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import msgspec
import numpy as np
import numpy.typing as npt

BOOTSTRAP_MAX = 20_000
SPREAD_MIN_SHARE = 0.01  # kernels below this share of the time may lack a spread
DOMINANT_SHARE = 0.99  # a kernel this much of both sides' time is the end to end
RESAMPLES = 2000
Floats = npt.NDArray[np.float64]
Draws = tuple[Floats, Floats]  # RESAMPLES draws of (base total, new total)


class Interval(msgspec.Struct, frozen=True):
    """The 95 % interval of a speedup (base / new), low <= high."""

    low: float
    high: float
    method: str  # "bootstrap over runs" | "bootstrap over dispatches" | "normal approximation"

    @property
    def beyond_noise(self) -> bool:
        return self.low > 1 or self.high < 1


class Spread(msgspec.Struct, frozen=True):
    """What one matched kernel contributes to the end-to-end interval."""

    totals: tuple[float, float]  # mean over runs, base and new
    interval: Interval | None
    draws: Draws | None  # one run a side only


def generator(*names: str | None) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32("\0".join(n or "" for n in names).encode()))


def of_runs(bt: Sequence[float], nt: Sequence[float], rng: np.random.Generator) -> Interval:
    """Bootstrap over runs: the ratio of the resampled means of each side's run totals."""
    b = rng.choice(np.asarray(bt), size=(RESAMPLES, len(bt))).mean(axis=1)
    n = rng.choice(np.asarray(nt), size=(RESAMPLES, len(nt))).mean(axis=1)
    return _percentiles(b, n, "bootstrap over runs")


def of_dispatches(db: Floats, dn: Floats, rng: np.random.Generator) -> tuple[Interval, Draws]:
    draws = (_resampled_totals(db, rng), _resampled_totals(dn, rng))
    return _percentiles(*draws, "bootstrap over dispatches"), draws


def of_totals(
    sb: tuple[float, float], sn: tuple[float, float], rng: np.random.Generator
) -> tuple[Interval, Draws]:
    """From (total, standard error of the total) a side: the normal approximation, the
    delta method for the ratio; its draws are normal draws of each total."""
    (tb, eb), (tn, en) = sb, sn
    ratio = tb / tn
    rel = math.hypot(eb / tb, en / tn) if tb and tn else 0.0
    z95 = 1.959963984540054
    interval = Interval(ratio * (1 - z95 * rel), ratio * (1 + z95 * rel), "normal approximation")
    return interval, (rng.normal(tb, eb, RESAMPLES), rng.normal(tn, en, RESAMPLES))


def end_to_end_interval(spreads: Sequence[Spread], totals: tuple[float, float]) -> Interval | None:
    """The end-to-end interval of one run a side: a dominant kernel's own, else the
    percentiles of the summed draws (None where a sizeable kernel has no spread)."""
    dominant = dominant_interval(spreads, totals)
    if dominant is not None:
        return dominant
    if any(s.draws is None and s.totals[0] >= SPREAD_MIN_SHARE * totals[0] for s in spreads):
        return None  # a sizeable kernel without spread: the total has none either
    drawn = [(s.draws, s.interval) for s in spreads if s.draws is not None and s.interval]
    if not drawn:
        return None
    spread_totals = [s.totals for s in spreads if s.draws is not None and s.interval]
    b = totals[0] - sum(t[0] for t in spread_totals) + np.sum([d[0] for d, _ in drawn], axis=0)
    n = totals[1] - sum(t[1] for t in spread_totals) + np.sum([d[1] for d, _ in drawn], axis=0)
    methods = {i.method for _, i in drawn}
    return _percentiles(b, n, methods.pop() if len(methods) == 1 else "bootstrap over dispatches")


def dominant_interval(spreads: Sequence[Spread], totals: tuple[float, float]) -> Interval | None:
    """The interval of the kernel that is nearly all of both sides' time, if one is."""
    return next(
        (s.interval for s in spreads if s.interval is not None and _dominant(s.totals, totals)),
        None,
    )


def _dominant(kernel: tuple[float, float], totals: tuple[float, float]) -> bool:
    return all(t > 0 and k >= DOMINANT_SHARE * t for k, t in zip(kernel, totals, strict=True))


def _percentiles(b: Floats, n: Floats, method: str) -> Interval:
    ratios = b / np.where(n > 0, n, np.nan)
    low, high = np.nanpercentile(ratios, [2.5, 97.5])
    return Interval(float(low), float(high), method)


def _resampled_totals(d: Floats, rng: np.random.Generator) -> Floats:
    """Totals of RESAMPLES resamples of the dispatch durations (in chunks: bounded memory)."""
    out = np.empty(RESAMPLES)
    step = max(1, 2_000_000 // d.size)
    for first in range(0, RESAMPLES, step):
        count = min(step, RESAMPLES - first)
        out[first : first + count] = d[rng.integers(0, d.size, size=(count, d.size))].sum(axis=1)
    return out
