"""The pass/fail gate for CI: each check and the verdict as data (their words, the JUnit and
Markdown reports: ``render/compare/words.py``, ``render/compare/gate.py``; the exit code: the
CLI).

A regression counts only when it is larger than its threshold AND beyond noise (its 95 %
interval lies wholly below 1x). A change whose spread is unknown (summaries only) counts on
its size alone. Kernels are checked when they hold at least ``min_share`` of the baseline's
kernel time; added and removed kernels are listed, not gated. A side that mixes runs or clocks
(a warning in ``quality.RUN_MIXING``) fails the gate whatever the thresholds: its times are
no run's times.
"""

from __future__ import annotations

import msgspec

from roofscope.verify.compare import Comparison, Interval
from roofscope.verify.quality import SideWarning


class Check(msgspec.Struct, frozen=True):
    name: str  # a kernel, or "end-to-end"
    slower_pct: float | None  # (new / base - 1) * 100; None: no time to compare
    threshold_pct: float
    beyond_noise: bool | None  # None: spread unknown
    failed: bool
    interval: Interval | None = None  # the speedup's 95 % interval, where known

    @property
    def over(self) -> bool:
        """Slower than the threshold allows (beyond noise or not)."""
        return self.slower_pct is not None and self.slower_pct > self.threshold_pct


class Verdict(msgspec.Struct, frozen=True):
    passed: bool
    checks: tuple[Check, ...]
    blocked_by: tuple[SideWarning, ...] = ()  # run-mixing warnings: the gate fails on them

    @property
    def failed(self) -> tuple[Check, ...]:
        """The failed checks (the blocking warnings are in ``blocked_by``)."""
        return tuple(c for c in self.checks if c.failed)


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
        return Check(name, None, pct, None, False)
    slower = (1 / speedup - 1) * 100
    noise = None if interval is None else interval.high < 1
    failed = slower > pct and noise is not False
    return Check(name, slower, pct, noise, failed, interval)
