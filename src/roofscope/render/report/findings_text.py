"""The findings part of the terminal view: one entry per cause (``grouping``), ranked, each
with its evidence and prescription."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.grouping import FindingGroup
from roofscope.render.columns import wrapped
from roofscope.render.names import fit, short_names
from roofscope.render.numbers import count
from roofscope.report import Report

STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}
KERNELS_SHOWN = 3  # a group's kernels shown by name, largest gain first; the rest counted


def findings_section(console: Console, report: Report, top: int) -> None:
    """The findings, one entry per cause: validity first, then by what fixing it could save."""
    if not report.findings:
        console.print("Findings: none (no hot kernel is far below or near its roof, or no work).")
        return
    console.print(
        Text("Findings (validity first, then by what fixing it could save):", style="bold")
    )
    groups = report.finding_groups
    labels = _labels([f for g in groups[:top] for f in g.findings[:KERNELS_SHOWN]])
    for i, g in enumerate(groups[:top], start=1):
        if len(g.findings) == 1:
            _single(console, f"{i:>2}. ", g.findings[0], labels)
        else:
            _group(console, f"{i:>2}. ", g, labels)
    if len(groups) > top:
        console.print(f"  … {len(groups) - top} more (see --json)")


def _single(console: Console, number: str, f: Finding, labels: dict[str, str]) -> None:
    head = f"{number}[{f.severity}] {f.rule} · "
    who = fit(labels.get(f.kernel or "", "whole program"), max(16, console.width - len(head)))
    console.print(Text(head + who, style=STYLE[f.severity]))
    wrapped(console, f.summary, "      ")
    if isinstance(ours := f.evidence.get("roofscope_summary"), str):
        wrapped(console, f"roofscope: {ours}", "      ")
    if f.formula:
        wrapped(console, f.formula, "      ", style="dim")
    wrapped(console, f"→ {f.prescription}", "      ", "        ")


def _group(console: Console, number: str, g: FindingGroup, labels: dict[str, str]) -> None:
    """The rule once, its top kernels (each with its own summary where they differ), the
    count of the rest, the group's gain and the one prescription."""
    console.print(
        Text(f"{number}[{g.severity}] {g.rule} · {count(len(g.findings), 'kernel')}",
             style=STYLE[g.severity])
    )  # fmt: skip
    if g.same_summary:
        wrapped(console, g.findings[0].summary, "      ")
    room = max(16, console.width - 8)
    for f in g.findings[:KERNELS_SHOWN]:
        who = fit(labels[f.kernel or ""], room if g.same_summary else room // 2)
        wrapped(console, who if g.same_summary else f"{who}: {f.summary}", "      ", "        ")
    if len(g.findings) > KERNELS_SHOWN:
        console.print(f"      + {len(g.findings) - KERNELS_SHOWN} more (see --json)")
    if g.formula:
        wrapped(console, g.formula, "      ", style="dim")
    wrapped(console, f"→ {g.prescription}", "      ", "        ")


def _labels(findings: list[Finding]) -> dict[str, str]:
    """The short names of the kernels the findings are about, shortened together."""
    kernels = sorted({f.kernel for f in findings if f.kernel is not None})
    return dict(zip(kernels, short_names(kernels), strict=True))
