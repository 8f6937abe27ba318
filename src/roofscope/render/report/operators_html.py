"""The operator table of the HTML report (a PyTorch trace's operators by the GPU time of the
kernels they launched, with their recorded input shapes and the work those give): operator
names and shapes are the trace's text, escaped."""

from __future__ import annotations

from roofscope.analysis.ops.operators import OperatorRow
from roofscope.render.escape import escape_text as _e
from roofscope.render.layout import number
from roofscope.render.numbers import count, duration, pct, si
from roofscope.render.report.operators_text import element_types, shapes
from roofscope.report import Report

TOP = 20  # rows shown (the JSON has the first 50)
HEAD = (
    '<table id="operators"><tr><th>Operator</th><th>Input dims</th><th>Input types</th>'
    "<th>Calls</th><th>Kernels</th><th>Total</th><th>Share</th><th>FLOPs</th><th>Bytes</th>"
    "<th>Formula</th></tr>"
)


def operators_table(report: Report) -> str:
    ops = report.operators
    if ops is None or not ops.rows:
        return ""
    rows = "".join(map(_row, ops.rows[:TOP]))
    more = len(ops.rows) - TOP + ops.others if len(ops.rows) > TOP else ops.others
    notes = []
    if more > 0:
        notes.append(f"{count(more, 'more operator signature')} in the JSON report")
    if ops.unlinked_dispatches:
        notes.append(
            f"{count(ops.unlinked_dispatches, 'kernel')} ({duration(ops.unlinked_ns)}) launched "
            "by no operator (graph replays, other threads)"
        )
    note = f'<p class="muted">{_e("; ".join(notes))}.</p>' if notes else ""
    return "<h3>Operators</h3>" + HEAD + rows + "</table>" + note


def _row(r: OperatorRow) -> str:
    return (
        f"<tr><td>{_e(r.name)}</td><td>{_e(shapes(r.dims))}</td><td>{_e(element_types(r.types))}</td>"
        f"{number(f'{r.calls:,}')}{number(f'{r.dispatches:,}')}{number(duration(r.time_ns))}"
        f"{number(pct(r.share))}{number(si(r.flops, 'FLOP') if r.flops else '-')}"
        f"{number(si(r.bytes, 'B') if r.bytes else '-')}<td>{_e(_formula(r))}</td></tr>"
    )


def _formula(r: OperatorRow) -> str:
    """The formula that gave the work, or why there is none."""
    if r.formula:
        return r.formula
    return f"no work known: {r.why}" if r.why else "-"
