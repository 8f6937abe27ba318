"""The findings part of the terminal view: ranked, each with its evidence and prescription."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from roofscope.diagnosis.findings import Finding
from roofscope.report import Report

STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def findings_section(console: Console, report: Report, top: int) -> None:
    if not report.findings:
        console.print("Findings: none (no hot kernel is far below or near its roof, or no work).")
        return
    console.print(
        Text("Findings (validity first, then by what fixing it could save):", style="bold")
    )
    shown = _grouped(list(report.findings))
    for i, (f, others) in enumerate(shown[:top], start=1):
        who = f.kernel if f.kernel is not None else "whole program"
        if others:
            who += f" and {others} more kernel(s) alike"
        console.print(Text(f"{i:>2}. [{f.severity}] {f.rule} · {who}", style=STYLE[f.severity]))
        console.print(f"      {f.summary}")
        if f.formula:
            console.print(Text(f"      {f.formula}", style="dim"))
        console.print(f"      → {f.prescription}")
    if len(shown) > top:
        console.print(f"  … {len(shown) - top} more (see --json)")


def _grouped(findings: list[Finding]) -> list[tuple[Finding, int]]:
    """Validity findings that say the same of several kernels are shown once."""
    out: list[tuple[Finding, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for f in findings:
        key = (f.rule, f.summary)
        if f.kind == "validity" and key in seen:
            first, count = out[seen[key]]
            out[seen[key]] = (first, count + 1)
            continue
        seen[key] = len(out)
        out.append((f, 0))
    return out
