"""How a comparison reads in every output: speedups, shares, the gate's reasons and each
side's data-quality warnings labelled with their side."""

from __future__ import annotations

from collections.abc import Mapping

from roofscope.render.numbers import pct, ratio, ratio_range, sig
from roofscope.verify.compare import Comparison, Interval, Movement
from roofscope.verify.gate import Check, Verdict
from roofscope.verify.quality import SideWarning


def speedup_text(speedup: float | None, interval: Interval | None) -> str:
    """``1.99x faster [1.97, 2.01]``, ``0.800x [0.750, 0.850]: 1.25x slower``, or ``no change
    [0.990, 1.01], within noise`` where the ratio rounds to 1.00x. The number before an
    interval is always the speedup (base / new) and the interval its 95 % one, low before
    high, whichever way the change goes: kernels and end to end read the same way."""
    if speedup is None:
        return "n/a"
    if interval is None:
        return f"{_change(speedup)} (spread unknown)"
    noise = "" if interval.beyond_noise else ", within noise"
    spread = f"{ratio_range(interval.low, interval.high)}{noise}"
    if speedup >= 1 or ratio(1 / speedup) == "1.00x":
        return f"{_change(speedup)} {spread}"
    return f"{ratio(speedup)} {spread}: {_change(speedup)}"


SPREAD_UNKNOWN = "one run a side: give more with --base-run and --new-run for 95% intervals"


def spread_unknown(cmp: Comparison) -> bool:
    """No speedup has a spread (one run a side): the text says so once, after the end-to-end
    speedup, and its tables show bare speedups."""
    return cmp.end_to_end.interval is None and all(k.interval is None for k in cmp.kernels)


def end_to_end_text(cmp: Comparison) -> str:
    """The end-to-end speedup in words, with how to get its spread where it is unknown."""
    e = cmp.end_to_end
    return speedup_text(e.speedup, e.interval).replace(
        "(spread unknown)", f"(spread unknown: {SPREAD_UNKNOWN})"
    )


def speedup_cell(speedup: float | None, interval: Interval | None, bare: bool) -> str:
    """:func:`speedup_text` in a table cell; ``bare``: the spread is unknown for every row,
    which the text says once (:func:`spread_unknown`)."""
    text = speedup_text(speedup, interval)
    return text.removesuffix(" (spread unknown)") if bare else text


def _change(speedup: float) -> str:
    """``1.99x faster``, ``1.25x slower``, or ``no change`` where the ratio rounds to 1.00x."""
    shown = speedup if speedup >= 1 else 1 / speedup
    if ratio(shown) == "1.00x":
        return "no change"
    return f"{ratio(shown)} {'faster' if speedup > 1 else 'slower'}"


def across_gpus_text(cmp: Comparison) -> str | None:
    """The first thing said of a comparison across GPUs, None on one GPU."""
    if not cmp.across_gpus:
        return None
    base, new = cmp.devices
    return (
        f"Across GPUs: the baseline ran on {base}, the candidate on {new}: every speedup "
        "below mixes the change of hardware with the change of code"
    )


def placement_text(m: Movement) -> str:
    """The roofline efficiency before and after, compared only where both sides are bound
    alike; otherwise each side's placement with its own bound, never one beside the other."""
    if m.same_bound:
        before, after = pct(m.efficiency[0]), pct(m.efficiency[1])
        return f"efficiency {before} -> {after} of the {m.bound[0]} roof"
    sides = [
        f"{side} {pct(e)} of its {b} roof" if b is not None else f"{side} not placed"
        for side, e, b in zip(("before", "after"), m.efficiency, m.bound, strict=True)
    ]
    return f"{'; '.join(sides)} (bound differently: the efficiencies do not compare)"


def share_text(share: float | None) -> str:
    """``+12.3%``; a share that rounds to zero shows as ``+0.0%``, never ``-0.0%``."""
    if share is None:
        return "-"
    return f"{round(100 * share, 1) + 0.0:+.1f}%"


def check_reason(c: Check, names: Mapping[str, str] | None = None) -> str:
    """One check in words: how much slower or faster, against its threshold and the noise;
    its kernel named as ``names`` shows it (the tables' short names), else whole."""
    slower, pct, who = c.slower_pct, c.threshold_pct, (names or {}).get(c.name, c.name)
    if slower is None:
        return f"{who}: no time to compare"
    if not c.over:
        change = f"{slower:.1f}% slower" if slower >= 0 else f"{-slower:.1f}% faster"
        return f"{who}: {change} (threshold {sig(pct)}% slower)"
    if c.beyond_noise is None:
        return f"{who}: {slower:.1f}% slower, over {sig(pct)}% (spread unknown: counted)"
    if c.beyond_noise and c.interval is not None:
        return (
            f"{who}: {slower:.1f}% slower, over {sig(pct)}% and beyond noise "
            f"(95% interval of the speedup {ratio_range(c.interval.low, c.interval.high)})"
        )
    return f"{who}: {slower:.1f}% slower, over {sig(pct)}% but within noise"


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


NO_GATE = "no gate set (--fail-if-slower PCT, --fail-if-kernel-slower PCT)"


def gate_set(verdict: Verdict) -> bool:
    """Whether the gate checked anything: a threshold was given, or a side fails it."""
    return bool(verdict.checks or verdict.blocked_by)


def gate_reasons(verdict: Verdict, names: Mapping[str, str] | None = None) -> list[str]:
    """Every reason the gate failed: the failed checks (their kernels as ``names`` shows
    them), then the blocking warnings."""
    failed = [check_reason(c, names) for c in verdict.failed]
    return [*failed, *(block_reason(w) for w in verdict.blocked_by)]
