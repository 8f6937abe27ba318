"""Kernel time per category in the HTML report: a table after the hotspots, with a bar of
its share and, where the roofline placed some of its kernels, their time-weighted efficiency
(analysis/categories.py)."""

from __future__ import annotations

from roofscope.analysis.categories import CategoryTime
from roofscope.render.layout import kept, number
from roofscope.render.numbers import duration, pct
from roofscope.report import Report

BAR = "display:inline-block;height:9px;background:#4c72b0;"  # 100 px: the whole kernel time
HEAD = (
    '<table id="categories"><tr><th>Category</th><th>Kernels</th><th>Calls</th><th>Total</th>'
    "<th>Share</th><th>Efficiency</th><th>Placed</th></tr>"
)


def categories_table(report: Report) -> str:
    rows = report.categories.rows
    if not rows:
        return ""
    return "<h3>Kernel time by category</h3>" + HEAD + "".join(map(_row, rows)) + "</table>"


def _row(r: CategoryTime) -> str:
    share = r.share or 0.0
    bar = f'<span style="{BAR}width:{100 * share:.1f}px"></span>'
    placed = duration(r.placed_ns) if r.efficiency is not None else "-"
    return (
        f"<tr><td>{r.category.label}</td>{number(f'{r.kernels:,}')}{number(f'{r.calls:,}')}"
        f'{number(duration(r.total_ns))}<td class="n">{kept(pct(r.share))} {bar}</td>'
        f"{number(pct(r.efficiency))}{number(placed)}</tr>"
    )
