"""The inline view of a report or a comparison in a notebook (Jupyter, JupyterLab, VS Code):
one HTML fragment with the summary line and the charts, drawn by the same functions as the
HTML report. No script (notebooks do not run an output's script until it is trusted): each
chart's tooltips are its SVG ``<title>``s. Kernel names are escaped as everywhere else."""

from __future__ import annotations

from roofscope.catalogue.ceilings import Ceiling
from roofscope.diagnosis.findings import Finding
from roofscope.render.charts.hotspots import escape_text as _e
from roofscope.render.charts.hotspots import hotspot_svg, roofline_svg
from roofscope.render.charts.movement import movement_svg
from roofscope.render.charts.waterfall import waterfall_svg
from roofscope.render.compare.words import gate_reasons, gate_set, speedup_text
from roofscope.render.names import shortened
from roofscope.render.numbers import count, duration
from roofscope.render.report.text import busy_idle, gpu_title
from roofscope.report import Report
from roofscope.verify.compare import Comparison
from roofscope.verify.gate import Verdict

STYLE = (
    "<style>.roofscope svg{max-width:100%;height:auto}.roofscope .charts{display:flex;"
    "flex-wrap:wrap;gap:16px;align-items:flex-start}.roofscope .charts>div{flex:1 1 480px;"
    "min-width:0}.roofscope .muted{color:#777}</style>"
)
FINDINGS = 3  # the leading findings named under the charts


def report_fragment(report: Report) -> str:
    """Summary line, hotspot bars and roofline, and the leading findings."""
    h, t = report.hotspots, report.timeline
    line = (
        f"kernel time {duration(h.total_ns)} in {count(h.dispatches, 'dispatch')} of "
        f"{count(len(h.kernels), 'kernel')}; {h.kernels_for_80pct or '-'} make 80% of it"
    )
    if t is not None:
        line += f"; GPU {busy_idle(t)}"
    producer = report.run.producer or "unknown producer"
    section = report.roofline
    roof = roofline_svg(report) if section.result.ceilings else ""
    if section.problem:
        roof = f'<p class="muted">{_e(section.problem)}.</p>{roof}'
    findings = _findings(report.findings[:FINDINGS])
    return "".join([
        f'<div class="roofscope">{STYLE}',
        f"<p><b>roofscope</b> · {_e(producer)} · {_e(gpu_title(report))}: {_e(line)}.</p>",
        _charts(hotspot_svg(report), roof),
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


def compare_fragment(
    cmp: Comparison,
    verdict: Verdict,
    ceilings: tuple[tuple[Ceiling, ...], tuple[Ceiling, ...]],
    gpus: tuple[str, str],
) -> str:
    """End-to-end speedup, the gate's verdict, the waterfall and the roofline movement."""
    e = cmp.end_to_end
    line = (
        f"kernel time {duration(e.kernel_ns[0])} → {duration(e.kernel_ns[1])}: "
        f"{speedup_text(e.speedup, e.interval)}"
    )
    movement = movement_svg(cmp, ceilings[0], ceilings[1], gpus)
    return "".join([
        f'<div class="roofscope">{STYLE}',
        f"<p><b>roofscope compare</b> · {_e(cmp.base_label)} → {_e(cmp.new_label)}: "
        f"{_e(line)}</p>",
        _gate(verdict),
        _charts(waterfall_svg(cmp), movement),
        "</div>",
    ])  # fmt: skip


def _gate(verdict: Verdict) -> str:
    """The verdict and its reasons; where no gate was set, how to set one (``gate()``)."""
    if not gate_set(verdict):
        return '<p class="muted">Gate: none set (Comparison.gate(fail_if_slower=PCT, ...))</p>'
    reasons = "".join(f"<li>{_e(r)}</li>" for r in gate_reasons(verdict))
    return f"<p>Gate: {'PASS' if verdict.passed else 'FAIL'}</p><ul>{reasons}</ul>"


def _charts(*charts: str) -> str:
    """The charts that have something to show, side by side where the output is wide."""
    inner = "".join(f"<div>{c}</div>" for c in charts if c)
    return f'<div class="charts">{inner}</div>'
