"""The user-range part of the terminal view: the ranges the user named (``record_function``,
``ProfilerStep#N``) by the GPU time of the kernels launched inside them."""

from __future__ import annotations

from rich.console import Console

from roofscope.analysis.ranges import STEP, RangeRow, Ranges
from roofscope.render.columns import Cell, fitted_table, titled_table
from roofscope.render.numbers import cell, column_unit, count, duration, pct
from roofscope.report import Report

TOP = 10  # range rows shown (the JSON has the first 30)


def ranges_section(console: Console, report: Report, top: int) -> None:
    ranges = report.ranges
    if ranges is None or not ranges.rows:
        return
    shown = ranges.rows[: min(top, TOP)]
    scale, unit = column_unit([r.time_ns for r in shown])
    headers = ["Range", "Calls", "Kernels", f"Total [{unit}]", f"Mean [{unit}]", "Share"]
    rows = [(_row(r, scale), None) for r in shown]
    title = "User ranges (record_function; the kernels launched inside each)"
    table = fitted_table(headers, rows, width=console.width, name=0, left=(0,))
    titled_table(console, title, table, _notes(ranges, len(shown)))


def _row(r: RangeRow, scale: float) -> list[Cell]:
    return [
        r.name,  # as the user named it: no kernel-name shortening
        f"{r.calls:,}",
        f"{r.dispatches:,}",
        cell(r.time_ns, scale),
        cell(r.mean_ns, scale),
        pct(r.share),
    ]


def _notes(ranges: Ranges, shown: int) -> list[str]:
    notes = []
    step = next((r for r in ranges.rows if r.name == STEP), None)
    if step is not None:
        notes.append(
            f"{STEP}: {count(step.calls, 'step')}, {duration(step.mean_ns)} of kernel time "
            "a step on average."
        )
    if ranges.nested:
        notes.append("Nested ranges each count their kernels: a kernel counts in every range "
                     "around its launch, so shares overlap.")  # fmt: skip
    more = len(ranges.rows) - shown + ranges.others
    if more:
        notes.append(f"{count(more, 'more range name')} in the JSON report.")
    if ranges.outside_dispatches:
        notes.append(
            f"{count(ranges.outside_dispatches, 'kernel')} ({duration(ranges.outside_ns)}) "
            "launched inside no user range."
        )
    return notes
