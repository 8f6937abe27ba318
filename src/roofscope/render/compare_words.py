"""How a comparison reads in every output: speedups, shares, the gate's reasons and each
side's data-quality warnings labelled with their side."""

from __future__ import annotations

from roofscope.compare.compare import Interval
from roofscope.compare.gate import Check, Verdict
from roofscope.compare.quality import SideWarning


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


def check_reason(c: Check) -> str:
    """One check in words: how much slower or faster, against its threshold and the noise."""
    slower, pct = c.slower_pct, c.threshold_pct
    if slower is None:
        return f"{c.name}: no time to compare"
    if not c.over:
        change = f"{slower:.1f}% slower" if slower >= 0 else f"{-slower:.1f}% faster"
        return f"{c.name}: {change} (threshold {pct:g}% slower)"
    if c.beyond_noise is None:
        return f"{c.name}: {slower:.1f}% slower, over {pct:g}% (spread unknown: counted)"
    if c.beyond_noise and c.interval is not None:
        return (
            f"{c.name}: {slower:.1f}% slower, over {pct:g}% and beyond noise "
            f"(95% interval {c.interval.low:.3f}x-{c.interval.high:.3f}x)"
        )
    return f"{c.name}: {slower:.1f}% slower, over {pct:g}% but within noise"


def side_label(w: SideWarning) -> str:
    """``baseline``, ``candidate``, or ``baseline run 2`` where the side has several runs."""
    return w.side if w.run is None else f"{w.side} run {w.run}"


def warning_text(w: SideWarning) -> str:
    """``[clocks-apart] the timestamps …``; a validity finding names its kernel first."""
    about = f"{w.kernel}: " if w.kernel else ""
    return f"[{w.code}] {about}{w.message}"


def block_reason(w: SideWarning) -> str:
    """Why a run-mixing warning fails the gate: the side, the warning, what to do."""
    if w.code == "nested-runs":
        return (
            f"{side_label(w)}'s folder holds other runs, so which run it means is a guess: "
            f"{warning_text(w)}; name the run's own files, or move the other runs out"
        )
    return (
        f"{side_label(w)} is not one run, so its times are no run's times: "
        f"{warning_text(w)}; compare one run with one run"
    )


def gate_reasons(verdict: Verdict) -> list[str]:
    """Every reason the gate failed: the failed checks, then the blocking warnings."""
    return [*map(check_reason, verdict.failed), *(block_reason(w) for w in verdict.blocked_by)]
