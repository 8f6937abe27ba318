"""Kernel time per category in the terminal view, after the hotspots: category, kernels,
calls, time, share, and where the roofline placed some of its kernels their time-weighted
efficiency and the time it is over (analysis/categories.py). Fits 80 columns."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from roofscope.analysis.categories import CategoryTime
from roofscope.render.numbers import cell, column_unit, pct
from roofscope.report import Report


def categories_section(console: Console, report: Report) -> None:
    rows = report.categories.rows
    if not rows:
        return
    console.print(Text("Kernel time by category:", "bold"))
    console.print(Padding(categories_table(rows), (0, 0, 0, 2), expand=False))


def categories_table(rows: tuple[CategoryTime, ...]) -> Table:
    """One row per category; the roofline's two columns only where it placed any kernel."""
    placed = any(r.efficiency is not None for r in rows)
    scale, unit = column_unit([r.total_ns for r in rows] + [r.placed_ns for r in rows])
    headers = ["Category", "Kernels", "Calls", f"Total [{unit}]", "Share"]
    headers += ["Eff.", f"Placed [{unit}]"] if placed else []
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
    for r in rows:
        cells = [r.category.label, f"{r.kernels:,}", f"{r.calls:,}", cell(r.total_ns, scale)]
        cells.append(pct(r.share))
        if placed:
            cells += [pct(r.efficiency), cell(r.placed_ns if r.efficiency else None, scale)]
        table.add_row(*cells)
    return table
