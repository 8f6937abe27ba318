"""The pass/fail gate for CI (its JUnit and Markdown reports: ``render/compare_gate.py``).

A regression counts only when it is larger than its threshold AND beyond noise (its 95 %
interval lies wholly below 1x). A change whose spread is unknown (summaries only) counts on
its size alone, and the reason says so. Kernels are checked when they hold at least
``min_share`` of the baseline's kernel time; added and removed kernels are listed, not gated.
A side that mixes runs or clocks (a warning in ``quality.RUN_MIXING``) fails the gate whatever
the thresholds: its times are no run's times.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofscope.compare.compare import Comparison, Interval
from roofscope.compare.quality import SideWarning

EXIT_GATE_FAILED = 3


@dataclass(frozen=True)
class Check:
    name: str  # a kernel, or "end-to-end"
    slower_pct: float | None  # (new / base - 1) * 100
    threshold_pct: float
    beyond_noise: bool | None  # None: spread unknown
    failed: bool
    reason: str


@dataclass(frozen=True)
class Verdict:
    passed: bool
    checks: tuple[Check, ...]
    blocked_by: tuple[SideWarning, ...] = ()  # run-mixing warnings: the gate fails on them

    @property
    def reasons(self) -> list[str]:
        """The failed checks' reasons (the blocking warnings are in ``blocked_by``)."""
        return [c.reason for c in self.checks if c.failed]


def gate(
    cmp: Comparison,
    *,
    fail_if_slower: float | None,
    fail_if_kernel_slower: float | None,
    min_share: float,
) -> Verdict:
    checks = []
    e = cmp.end_to_end
    if fail_if_slower is not None:
        checks.append(_check("end-to-end", e.speedup, e.interval, fail_if_slower))
    if fail_if_kernel_slower is not None:
        for k in cmp.kernels:
            if k.speedup is None or (k.base_share or 0) < min_share:
                continue
            checks.append(_check(k.name, k.speedup, k.interval, fail_if_kernel_slower))
    blocked = tuple(w for w in cmp.warnings if w.blocks_gate)
    return Verdict(not any(c.failed for c in checks) and not blocked, tuple(checks), blocked)


def _check(name: str, speedup: float | None, interval: Interval | None, pct: float) -> Check:
    if speedup is None or speedup <= 0:
        return Check(name, None, pct, None, False, f"{name}: no time to compare")
    slower = (1 / speedup - 1) * 100
    noise = None if interval is None else interval.high < 1
    over = slower > pct
    failed = over and noise is not False
    if not over:
        reason = f"{name}: {_pct(slower)} (threshold {pct:g}% slower)"
    elif noise is None:
        reason = f"{name}: {slower:.1f}% slower, over {pct:g}% (spread unknown: counted)"
    elif noise:
        reason = (
            f"{name}: {slower:.1f}% slower, over {pct:g}% and beyond noise "
            f"(95% interval {interval.low:.3f}x-{interval.high:.3f}x)"  # type: ignore[union-attr]
        )
    else:
        reason = f"{name}: {slower:.1f}% slower, over {pct:g}% but within noise"
    return Check(name, slower, pct, noise, failed, reason)


def _pct(slower: float) -> str:
    return f"{slower:.1f}% slower" if slower >= 0 else f"{-slower:.1f}% faster"


def speedup_text(speedup: float | None, interval: Interval | None) -> str:
    """``1.42 ± 0.03x faster`` (the half-width of the 95 % interval), or ``... slower``."""
    if speedup is None:
        return "n/a"
    word = "faster" if speedup > 1 else "slower" if speedup < 1 else "(no change)"
    shown = speedup if speedup >= 1 else 1 / speedup
    if interval is None:
        return f"{shown:.2f}x {word} (spread unknown)"
    low, high = (
        (interval.low, interval.high) if speedup >= 1 else (1 / interval.high, 1 / interval.low)
    )
    half = (high - low) / 2
    noise = "" if interval.beyond_noise else ", within noise"
    return f"{shown:.2f} ± {half:.2f}x {word}{noise}"


def share_text(share: float | None) -> str:
    """``+12.3%``; a share that rounds to zero shows as ``+0.0%``, never ``-0.0%``."""
    if share is None:
        return "-"
    return f"{round(100 * share, 1) + 0.0:+.1f}%"
