"""The gate's reasons and its CI reports (JUnit XML, a Markdown summary), and each side's
data-quality warnings labelled with their side, as every compare output shows them."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from roofscope.compare.compare import Comparison
from roofscope.compare.gate import Verdict, speedup_text
from roofscope.compare.quality import SideWarning


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
    return [*verdict.reasons, *(block_reason(w) for w in verdict.blocked_by)]


def junit(cmp: Comparison, verdict: Verdict) -> str:
    """The checks as a JUnit XML test suite, one test case each, and one case per side with
    warnings (``data quality: baseline``): it fails when one of them blocks the gate, and its
    system-err lists them all. Each warning is also a suite property."""
    suite = ET.Element("testsuite", name="roofscope.compare")
    if cmp.warnings:
        props = ET.SubElement(suite, "properties")
        for w in cmp.warnings:
            ET.SubElement(props, "property", name=f"warning.{side_label(w)}", value=warning_text(w))
    failures = 0
    for c in verdict.checks:
        failures += _case(suite, c.name, c.reason, [c.reason] if c.failed else [])
    for label, warnings in _by_side(cmp.warnings).items():
        log = "\n".join(warning_text(w) for w in warnings)
        blocking = [block_reason(w) for w in warnings if w in verdict.blocked_by]
        failures += _case(suite, f"data quality: {label}", log, blocking, stream="system-err")
    suite.set("tests", str(len(suite.findall("testcase"))))
    suite.set("failures", str(failures))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _case(
    suite: ET.Element, name: str, log: str, failures: list[str], *, stream: str = "system-out"
) -> int:
    """One test case; returns 1 when it failed."""
    case = ET.SubElement(suite, "testcase", classname="roofscope.compare", name=name)
    if failures:
        text = "; ".join(failures)
        ET.SubElement(case, "failure", message=text).text = text
    if not failures or stream == "system-err":
        ET.SubElement(case, stream).text = log
    return 1 if failures else 0


def _by_side(warnings: tuple[SideWarning, ...]) -> dict[str, list[SideWarning]]:
    out: dict[str, list[SideWarning]] = {}
    for w in warnings:
        out.setdefault(side_label(w), []).append(w)
    return out


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
    ]
    if cmp.warnings:
        lines += ["Data-quality warnings:", *map(_markdown_item, cmp.warnings), ""]
    lines += ["| kernel | base | new | speedup | share of change |", "|---|---:|---:|---:|---:|"]
    for k in cmp.kernels[:top]:
        share = "-" if k.attribution is None else f"{100 * k.attribution:.1f}%"
        lines.append(
            f"| {k.name[:80]} ({k.how}) | {k.total_ns[0] / 1e6:.3f} ms | "
            f"{k.total_ns[1] / 1e6:.3f} ms | {speedup_text(k.speedup, k.interval)} | {share} |"
        )
    reasons = gate_reasons(verdict)
    if reasons:
        lines += ["", "Gate failed:", *[f"- {r}" for r in reasons]]
    return "\n".join(lines) + "\n"


def _markdown_item(w: SideWarning) -> str:
    blocks = " **(fails the gate)**" if w.blocks_gate else ""
    return f"- {side_label(w)}: {warning_text(w)}{blocks}"
