"""The comparison above the kernels, in every form: per kernel category and per PyTorch
operator signature (``verify/levels.py``), base time, new time and speedup."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from roofscope.render.columns import NameCell, fitted_table, wrapped
from roofscope.render.compare.words import speedup_cell, spread_unknown
from roofscope.render.escape import escape_text as _e
from roofscope.render.layout import number
from roofscope.render.numbers import count, duration
from roofscope.render.report.operators_text import shapes
from roofscope.verify.compare import Comparison
from roofscope.verify.levels import CategoryChange, OperatorChange, OperatorChanges
from roofscope.verify.spread import Interval

TEXT_TOP = 10  # operator rows in the terminal, by base time
JSON_TOP = 50  # operator rows in the JSON; the rest are counted
BY_OPERATOR = "operator"  # verify/byop.py's ``how``: what the outputs call such a pair
BY_OPERATOR_WORDS = "by operator"


def matched_words(how: str) -> str:
    """How a kernel pair was matched, in words (the names differ where not by name)."""
    return BY_OPERATOR_WORDS if how == BY_OPERATOR else how


def by_operator_note(cmp: Comparison) -> str | None:
    """Said under the kernels where some were paired through their operators."""
    n = sum(1 for k in cmp.kernels if k.how == BY_OPERATOR)
    if not n:
        return None
    return (f"{count(n, 'kernel pair')} matched by operator: the names differ; the same "
            "PyTorch operator with the same input shapes and types launched both")  # fmt: skip


# terminal


def categories_section(console: Console, cmp: Comparison) -> None:
    if not cmp.categories:
        return
    wrapped(console, "Kernel categories (time per category, before -> after):", "", "  ")
    bare = spread_unknown(cmp)
    rows = [(_category_row(c, bare), None) for c in cmp.categories]
    headers = ["Category", "Calls", "Base", "New", "Speedup"]
    console.print(fitted_table(headers, rows, width=console.width, name=0))


def _category_row(c: CategoryChange, bare: bool) -> list[str | NameCell]:
    calls = f"{c.calls[0]:,.0f} -> {c.calls[1]:,.0f}"
    return [NameCell((c.category.label,)), calls, duration(c.total_ns[0]),
            duration(c.total_ns[1]), _speedup(c, bare)]  # fmt: skip


def operators_section(console: Console, cmp: Comparison) -> None:
    ops = cmp.operators
    if ops is None or not (ops.matched or ops.removed or ops.added):
        return
    shown = ops.matched[:TEXT_TOP]
    title = f"Operators matched by name and input shapes (top {TEXT_TOP} by base time):"
    wrapped(console, title, "", "  ")
    bare = spread_unknown(cmp)
    rows = [(_operator_row(o, bare), None) for o in shown]
    headers = ["Operator", "Input dims", "Calls", "Base", "New", "Speedup"]
    console.print(fitted_table(headers, rows, width=console.width, name=1, left=(0,)))
    if more := len(ops.matched) - len(shown):
        wrapped(console, f"{count(more, 'more matched operator')} in the JSON report", "  ", "    ")
    for title, side, items in (("Baseline only", 0, ops.removed), ("Candidate only", 1, ops.added)):
        if items:
            listed = "; ".join(f"{_signature(o)}: {duration(o.total_ns[side])}" for o in items)
            wrapped(console, f"Operators, {title.lower()}: {listed}", "", "  ")


def _operator_row(o: OperatorChange, bare: bool) -> list[str | NameCell]:
    calls = (
        f"{o.calls[0]:,.0f}"
        if o.calls[0] == o.calls[1]
        else f"{o.calls[0]:,.0f} -> {o.calls[1]:,.0f}"
    )
    return [o.name.removeprefix("aten::"), NameCell((shapes(o.dims),)), calls,
            duration(o.total_ns[0]), duration(o.total_ns[1]),
            speedup_cell(o.speedup, o.interval, bare)]  # fmt: skip


def _signature(o: OperatorChange) -> str:
    return f"{o.name.removeprefix('aten::')}({shapes(o.dims)})"


# JSON


def interval_dict(i: Interval | None) -> dict[str, Any] | None:
    if i is None:
        return None
    return {"low": i.low, "high": i.high, "method": i.method, "beyond_noise": i.beyond_noise}


def categories_json(cmp: Comparison) -> list[dict[str, Any]]:
    return [
        {
            "category": c.category.value,
            "calls": list(c.calls),
            "total_s": [c.total_ns[0] / 1e9, c.total_ns[1] / 1e9],
            "speedup": c.speedup,
            "interval": interval_dict(c.interval),
        }
        for c in cmp.categories
    ]


def operators_json(ops: OperatorChanges) -> dict[str, Any]:
    return {
        "matched": [_operator_json(o) for o in ops.matched[:JSON_TOP]],
        "more_matched": max(0, len(ops.matched) - JSON_TOP),
        "removed": [_operator_json(o) for o in ops.removed[:JSON_TOP]],
        "more_removed": max(0, len(ops.removed) - JSON_TOP),
        "added": [_operator_json(o) for o in ops.added[:JSON_TOP]],
        "more_added": max(0, len(ops.added) - JSON_TOP),
    }


def _operator_json(o: OperatorChange) -> dict[str, Any]:
    return {
        "name": o.name,
        "input_dims": o.dims,
        "input_types": o.types,
        "calls": list(o.calls),
        "total_s": [o.total_ns[0] / 1e9, o.total_ns[1] / 1e9],
        "speedup": o.speedup,
        "interval": interval_dict(o.interval),
        "kernels": [list(o.kernels[0]), list(o.kernels[1])],
    }


# Markdown (the gate report) and HTML


def categories_markdown(cmp: Comparison) -> list[str]:
    if not cmp.categories:
        return []
    lines = ["", "| category | base | new | speedup |", "|---|---:|---:|---:|"]
    for c in cmp.categories:
        lines.append(f"| {c.category.label} | {duration(c.total_ns[0])} | "
                     f"{duration(c.total_ns[1])} | {_speedup(c, False)} |")  # fmt: skip
    return lines


def categories_html(cmp: Comparison) -> str:
    if not cmp.categories:
        return ""
    bare = spread_unknown(cmp)
    rows = "".join(
        f"<tr><td>{_e(c.category.label)}</td>{number(duration(c.total_ns[0]))}"
        f"{number(duration(c.total_ns[1]))}<td>{_e(_speedup(c, bare))}</td></tr>"
        for c in cmp.categories
    )
    head = "<tr><th>Category</th><th>Base</th><th>New</th><th>Speedup</th></tr>"
    return f'<h2>Kernel categories</h2><table id="categories">{head}{rows}</table>'


def operators_html(cmp: Comparison) -> str:
    ops = cmp.operators
    if ops is None or not ops.matched:
        return ""
    bare = spread_unknown(cmp)
    rows = "".join(
        f"<tr><td>{_e(o.name)}</td><td>{_e(shapes(o.dims))}</td><td>{_calls(o)}</td>"
        f"{number(duration(o.total_ns[0]))}{number(duration(o.total_ns[1]))}"
        f"<td>{_e(speedup_cell(o.speedup, o.interval, bare))}</td></tr>"
        for o in ops.matched[:JSON_TOP]
    )
    head = ("<tr><th>Operator</th><th>Input dims</th><th>Calls</th><th>Base</th><th>New</th>"
            "<th>Speedup</th></tr>")  # fmt: skip
    return (
        f'<h2>Operators (same name and input shapes)</h2><table id="operators">{head}{rows}</table>'
    )


def _calls(o: OperatorChange) -> str:
    return (
        f"{o.calls[0]:,.0f}"
        if o.calls[0] == o.calls[1]
        else f"{o.calls[0]:,.0f} → {o.calls[1]:,.0f}"
    )


def _speedup(c: CategoryChange, bare: bool) -> str:
    return "one side only" if c.speedup is None else speedup_cell(c.speedup, c.interval, bare)
