"""The user's ranges in the HTML report (analysis/ranges.py): a table after the kernel
categories, per range name its calls, kernels, GPU time, mean per call and share. Range names
are the user's text: they reach the page only escaped."""

from __future__ import annotations

from roofscope.analysis.ranges import RangeRow
from roofscope.render.escape import escape_text
from roofscope.render.layout import number
from roofscope.render.numbers import duration, pct
from roofscope.report import Report

HEAD = (
    '<table id="ranges"><tr><th>Range</th><th>Calls</th><th>Kernels</th><th>Total</th>'
    "<th>Mean</th><th>Share</th></tr>"
)
NESTED = (
    '<p class="muted">Nested ranges each count their kernels: a kernel counts in every range '
    "around its launch, so shares overlap.</p>"
)


def ranges_table(report: Report) -> str:
    ranges = report.ranges
    if ranges is None or not ranges.rows:
        return ""
    table = HEAD + "".join(map(_row, ranges.rows)) + "</table>"
    return "<h3>User ranges (record_function)</h3>" + table + (NESTED if ranges.nested else "")


def _row(r: RangeRow) -> str:
    return (
        f"<tr><td>{escape_text(r.name)}</td>{number(f'{r.calls:,}')}{number(f'{r.dispatches:,}')}"
        f"{number(duration(r.time_ns))}{number(duration(r.mean_ns))}{number(pct(r.share))}</tr>"
    )
