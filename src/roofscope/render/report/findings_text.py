"""The findings part of the terminal view: ranked, each with its evidence and prescription."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from roofscope.diagnosis.findings import Finding
from roofscope.render.columns import wrapped
from roofscope.render.names import fit, short_names
from roofscope.render.numbers import count

STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def findings_section(console: Console, findings: Sequence[Finding], top: int) -> None:
    """The findings, ranked: validity first, then by what fixing them could save."""
    if not findings:
        console.print("Findings: none (no hot kernel is far below or near its roof, or no work).")
        return
    console.print(
        Text("Findings (validity first, then by what fixing it could save):", style="bold")
    )
    shown = _grouped(list(findings))
    labels = _labels([f for f, _ in shown[:top]])
    for i, (f, others) in enumerate(shown[:top], start=1):
        alike = f" and {count(others, 'more kernel')} alike" if others else ""
        head = f"{i:>2}. [{f.severity}] {f.rule} · "
        room = max(16, console.width - len(head) - len(alike))
        who = fit(labels.get(f.kernel or "", "whole program"), room)
        console.print(Text(head + who + alike, style=STYLE[f.severity]))
        wrapped(console, f.summary, "      ")
        if isinstance(ours := f.evidence.get("roofscope_summary"), str):
            wrapped(console, f"roofscope: {ours}", "      ")
        if f.formula:
            wrapped(console, f.formula, "      ", style="dim")
        wrapped(console, f"→ {f.prescription}", "      ", "        ")
    if len(shown) > top:
        console.print(f"  … {len(shown) - top} more (see --json)")


def _labels(findings: list[Finding]) -> dict[str, str]:
    """The short names of the kernels the findings are about, shortened together."""
    kernels = sorted({f.kernel for f in findings if f.kernel is not None})
    return dict(zip(kernels, short_names(kernels), strict=True))


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
