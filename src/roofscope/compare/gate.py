"""The pass/fail gate for CI, with JUnit and Markdown reports of what it checked.

A regression counts only when it is larger than its threshold AND beyond noise (its 95 %
interval lies wholly below 1x). A change whose spread is unknown (summaries only) counts on
its size alone, and the reason says so. Kernels are checked when they hold at least
``min_share`` of the baseline's kernel time; added and removed kernels are listed, not gated.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.etree import ElementTree as ET

from roofscope.compare.compare import Comparison, Interval

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

    @property
    def reasons(self) -> list[str]:
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
    return Verdict(not any(c.failed for c in checks), tuple(checks))


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


def junit(verdict: Verdict) -> str:
    """The checks as a JUnit XML test suite, one test case each."""
    suite = ET.Element(
        "testsuite",
        name="roofscope.compare",
        tests=str(len(verdict.checks)),
        failures=str(sum(c.failed for c in verdict.checks)),
    )
    for c in verdict.checks:
        case = ET.SubElement(suite, "testcase", classname="roofscope.compare", name=c.name)
        if c.failed:
            ET.SubElement(case, "failure", message=c.reason).text = c.reason
        else:
            ET.SubElement(case, "system-out").text = c.reason
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def markdown(cmp: Comparison, verdict: Verdict, top: int = 15) -> str:
    e = cmp.end_to_end
    lines = [
        f"### roofscope compare: {'PASS' if verdict.passed else 'FAIL'}",
        "",
        f"Baseline `{cmp.base_label}` ({cmp.runs[0]} run(s)) vs candidate `{cmp.new_label}` "
        f"({cmp.runs[1]} run(s)).",
        "",
        f"End to end (kernel time): {speedup_text(e.speedup, e.interval)}",
        "",
        "| kernel | base | new | speedup | share of change |",
        "|---|---:|---:|---:|---:|",
    ]
    for k in cmp.kernels[:top]:
        share = "-" if k.attribution is None else f"{100 * k.attribution:.1f}%"
        lines.append(
            f"| {k.name[:80]} ({k.how}) | {k.total_ns[0] / 1e6:.3f} ms | "
            f"{k.total_ns[1] / 1e6:.3f} ms | {speedup_text(k.speedup, k.interval)} | {share} |"
        )
    if verdict.reasons:
        lines += ["", "Gate failed:", *[f"- {r}" for r in verdict.reasons]]
    return "\n".join(lines) + "\n"


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
