"""The inline view of a report in a notebook (Jupyter, JupyterLab, VS Code):
one HTML fragment with the summary line and the charts, drawn by the same functions as the
HTML report. No script (notebooks do not run an output's script until it is trusted): each
chart's tooltips are its SVG ``<title>``s. Kernel names are escaped as everywhere else."""

from __future__ import annotations

from roofscope.diagnosis.findings import Finding
from roofscope.render.charts.hotspots import hotspot_svg
from roofscope.render.charts.roofline import roofline_svg
from roofscope.render.escape import escape_text as _e
from roofscope.render.names import shortened
from roofscope.render.numbers import count
from roofscope.render.page import FRAGMENT_STYLE, chart_row
from roofscope.render.report.text import busy_idle, gpu_title, kernel_time
from roofscope.report import Report

FINDINGS = 3  # the leading findings named under the charts


def report_fragment(report: Report) -> str:
    """Summary line, hotspot bars and roofline, and the leading findings."""
    h, t = report.hotspots, report.timeline
    line = kernel_time(h)
    if t is not None:
        line += f"; GPU {busy_idle(t)}"
    producer = report.run.producer or "unknown producer"
    section = report.roofline
    roof = roofline_svg(report) if section.result.ceilings else ""
    if section.problem:
        roof = f'<p class="muted">{_e(section.problem)}.</p>{roof}'
    findings = _findings(report.findings[:FINDINGS])
    return "".join([
        f'<div class="roofscope">{FRAGMENT_STYLE}',
        f"<p><b>roofscope</b> · {_e(producer)} · {_e(gpu_title(report))}: {_e(line)}.</p>",
        chart_row(hotspot_svg(report), roof),
        f"<p>Findings ({len(report.findings)}):</p><ol>{findings}</ol>" if findings else "",
        f'<p class="muted">{count(len(report.warnings), "warning")}</p>' if report.warnings else "",
        "</div>",
    ])  # fmt: skip


def _findings(findings: tuple[Finding, ...]) -> str:
    """Each finding's one line, after the (shortened) name of its kernel."""
    short = shortened([f.kernel for f in findings if f.kernel], 40)
    return "".join(
        f"<li>{_e(short[f.kernel] + ': ' if f.kernel else '')}{_e(f.summary)}</li>"
        for f in findings
    )
