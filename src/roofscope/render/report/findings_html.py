"""The findings table of the HTML report: one row per cause (``grouping``), ranked; a
group's row names its top kernels, each with its own summary where they differ, the rest
behind a "+N more" that opens to them."""

from __future__ import annotations

from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.grouping import FindingGroup
from roofscope.render.escape import escape_text as _e
from roofscope.render.layout import elided, number
from roofscope.render.names import name_cell, shortened
from roofscope.report import Report

KERNELS_SHOWN = 3  # as in the terminal (findings_text.KERNELS_SHOWN)
HEAD = (
    '<table id="findings"><tr><th>Kernel</th><th>Rule</th><th>Severity</th><th class="n">Gain</th>'
    "<th>Evidence</th><th>Prescription</th></tr>"
)


def findings_table(report: Report) -> str:
    if not report.findings:
        return '<p class="muted">No findings.</p>'
    index = {k.name: i for i, k in enumerate(report.hotspots.kernels)}
    short = shortened([f.kernel for f in report.findings if f.kernel is not None])
    rows = [_row(g, index, short) for g in report.finding_groups]
    return HEAD + "".join(rows) + "</table>"


def _row(g: FindingGroup, index: dict[str, int], short: dict[str, str]) -> str:
    gain = "-" if g.gain_share is None else f"{100 * g.gain_share:.1f}%"
    if len(g.findings) == 1:
        f = g.findings[0]
        k = "" if f.kernel is None else f' data-k="{index.get(f.kernel, -1)}"'
        who = name_cell(f.kernel, short[f.kernel]) if f.kernel else "<td>whole program</td>"
        head, evidence = f"<tr{k}>{who}", _evidence(f)
    else:
        head, evidence = f"<tr>{_kernels(g, index, short)}", _group_evidence(g, short)
    return (
        f'{head}<td class="w">{_e(g.rule)}</td><td>{_e(g.severity)}</td>{number(gain)}'
        f"<td>{evidence}</td><td>{_e(g.prescription)}</td></tr>"
    )


def _kernels(g: FindingGroup, index: dict[str, int], short: dict[str, str]) -> str:
    """The group's kernels, largest gain first: the top ones named, the rest folded."""
    names = [
        f'<span data-k="{index.get(k, -1)}" title="{_e(k)}">{elided(short[k])}</span>'
        for k in g.kernels
    ]
    top, rest = names[:KERNELS_SHOWN], names[KERNELS_SHOWN:]
    more = f"<details><summary>+{len(rest)} more</summary>{'<br>'.join(rest)}</details>"
    return (
        f'<td class="name">{len(names)} kernels:<br>{"<br>".join(top)}{more if rest else ""}</td>'
    )


def _group_evidence(g: FindingGroup, short: dict[str, str]) -> str:
    """The summary once where every kernel's says the same; else each top kernel's own."""
    if g.same_summary:
        said = _evidence(g.findings[0])
    else:
        said = "<br>".join(
            f"{_e(short[f.kernel or ''])}: {_evidence(f)}" for f in g.findings[:KERNELS_SHOWN]
        )
    more = len(g.findings) - KERNELS_SHOWN
    if more > 0 and not g.same_summary:
        said += f'<br><span class="muted">+{more} more (the JSON\'s findings)</span>'
    formula = f'<br><span class="muted">{_e(g.formula)}</span>' if g.formula else ""
    return said + formula


def _evidence(f: Finding) -> str:
    """The finding's summary whole; under a profiler's rule, roofscope's own on that cause."""
    ours = f.evidence.get("roofscope_summary")
    extra = f'<br><span class="muted">roofscope: {_e(ours)}</span>' if isinstance(ours, str) else ""
    return _e(f.summary) + extra
