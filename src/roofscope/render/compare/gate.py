"""The gate's CI reports: JUnit XML and a Markdown summary (their words: ``compare.words``)."""

from __future__ import annotations

from collections.abc import Mapping
from xml.etree import ElementTree as ET

from roofscope.render.compare.folds import Fold, fold_text, folds, shown_names
from roofscope.render.compare.levels import by_operator_note, categories_markdown, matched_words
from roofscope.render.compare.words import (
    across_gpus_text,
    block_reason,
    check_reason,
    gate_reasons,
    gate_set,
    side_label,
    speedup_text,
    warning_text,
)
from roofscope.render.numbers import count, duration
from roofscope.verify.compare import Comparison
from roofscope.verify.gate import Verdict
from roofscope.verify.quality import SideWarning


def junit(cmp: Comparison, verdict: Verdict) -> str:
    """The checks as a JUnit XML test suite, one test case each, and one case per side with
    warnings (``data quality: baseline``): it fails when one of them blocks the gate, and its
    system-err lists them all. Each warning is also a suite property, after the note that
    the two sides ran on different GPUs where they did."""
    suite = ET.Element("testsuite", name="roofscope.compare")
    across = across_gpus_text(cmp)
    if cmp.warnings or across is not None:
        props = ET.SubElement(suite, "properties")
        if across is not None:  # said first, as every compare output does
            ET.SubElement(props, "property", name="across-gpus", value=across)
        for w in cmp.warnings:
            ET.SubElement(props, "property", name=f"warning.{side_label(w)}", value=warning_text(w))
    failures = 0
    for c in verdict.checks:
        reason = check_reason(c)
        failures += _case(suite, c.name, reason, [reason] if c.failed else [])
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
        f"### roofscope compare: {_verdict(verdict)}",
        "",
        *_across(cmp),
        f"Baseline `{cmp.base_label}` ({count(cmp.runs[0], 'run')}) vs candidate `{cmp.new_label}` "
        f"({count(cmp.runs[1], 'run')}).",
        "",
        f"End to end (kernel time): {speedup_text(e.speedup, e.interval)}",
        "",
    ]
    names = shown_names(cmp)
    if reasons := gate_reasons(verdict, names):
        lines += ["Gate failed:", *[f"- {r}" for r in reasons], ""]
    lines += _table(cmp, names, top)
    if note := by_operator_note(cmp):
        lines += ["", note]
    lines += categories_markdown(cmp)
    if cmp.warnings:  # after the numbers they qualify, folded by kind
        items = [_markdown_item(f, names) for f in folds(cmp.warnings)]
        lines += ["", "Data-quality warnings:", *items]
    return "\n".join(lines) + "\n"


def _table(cmp: Comparison, names: Mapping[str, str], top: int) -> list[str]:
    """The ``top`` kernels' changes, named as every compare output names them."""
    lines = ["| kernel | base | new | speedup | share of change |", "|---|---:|---:|---:|---:|"]
    for k in cmp.kernels[:top]:
        share = "-" if k.attribution is None else f"{100 * k.attribution:.1f}%"
        lines.append(
            f"| {names[k.name]} ({matched_words(k.how)}) | {duration(k.total_ns[0])} | "
            f"{duration(k.total_ns[1])} | {speedup_text(k.speedup, k.interval)} | {share} |"
        )
    return lines


def _across(cmp: Comparison) -> list[str]:
    """Said first where base and new ran on different GPUs: the note and a blank line."""
    text = across_gpus_text(cmp)
    return [] if text is None else [f"**{text}**", ""]


def _verdict(verdict: Verdict) -> str:
    """PASS or FAIL where a gate was set; ``no gate set`` where none was."""
    if not gate_set(verdict):
        return "no gate set"
    return "PASS" if verdict.passed else "FAIL"


def _markdown_item(f: Fold, names: Mapping[str, str]) -> str:
    blocks = " **(fails the gate)**" if f.blocks_gate else ""
    return f"- {f.side}: {fold_text(f, names)}{blocks}"
