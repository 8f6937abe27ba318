"""The operator part of the terminal view: a PyTorch trace's operators by the GPU time of the
kernels they launched, with their recorded input shapes and the work those give."""

from __future__ import annotations

import ast

from rich.console import Console

from roofscope.analysis.ops.operators import OperatorRow, Operators
from roofscope.render.columns import NameCell, fitted_table, titled_table
from roofscope.render.numbers import cell, column_unit, count, duration, pct, si
from roofscope.report import Report

TOP = 10  # operator rows shown (the JSON has the first 50)


def operators_section(console: Console, report: Report, top: int) -> None:
    ops = report.operators
    if ops is None or not ops.rows:
        return
    shown = ops.rows[: min(top, TOP)]
    scale, unit = column_unit([r.time_ns for r in shown])
    headers = ["Operator", "Input dims", "Calls", f"Total [{unit}]", "Share", "Work"]
    rows = [(_row(r, scale, min(OPERATOR_WIDTH, console.width // 3)), None) for r in shown]
    title = "Operators (the PyTorch operators that launched the kernels; aten:: left out)"
    table = fitted_table(headers, rows, width=console.width, name=1, drop=(5,), left=(0,))
    line = _rest(ops, len(shown))
    titled_table(console, title, table, ([line] if line else []) + unknown_why(ops))


def _row(r: OperatorRow, scale: float, room: int) -> list[str | NameCell]:
    return [
        _short(r.name.removeprefix("aten::"), room),  # PyTorch's own: the namespace most have
        NameCell((shapes(r.dims),)),
        f"{r.calls:,}",
        cell(r.time_ns, scale),
        pct(r.share),
        si(r.flops, "FLOP") if r.flops else ("memory only" if r.bytes else "-"),
    ]


OPERATOR_WIDTH = 40  # at most; an Inductor launcher's name runs to 120 characters and more


def _short(name: str, room: int) -> str:
    """An operator name cut to ``room`` characters, so that the shapes and numbers keep
    theirs (the JSON and HTML have it whole)."""
    return name if len(name) <= room else name[: room - 1] + "…"


UNKNOWN_SHOWN = 4  # operators without a formula named, by kernel time


def unknown_work(ops: Operators) -> str | None:
    """The operators whose work is unknown (no formula for them, or their inputs were not
    recorded), with their share of the kernel time: what the roofline leaves out."""
    unknown = [r for r in ops.rows if r.flops is None and r.bytes is None]
    if not unknown:
        return None
    share = sum(r.share for r in unknown)
    names = list(dict.fromkeys(r.name.removeprefix("aten::") for r in unknown))
    listed = ", ".join(names[:UNKNOWN_SHOWN]) + (", …" if len(names) > UNKNOWN_SHOWN else "")
    return (
        f"no work known for {count(len(unknown), 'operator signature')} ({pct(share)} of the "
        f"kernel time: {listed}), why below"
    )


def unknown_why(ops: Operators) -> list[str]:
    """Why the work is unknown, for the first UNKNOWN_SHOWN operators without it (by kernel
    time; one line per operator name and reason)."""
    said: dict[tuple[str, str], float] = {}
    for r in ops.rows:
        if r.why is not None:
            key = (r.name.removeprefix("aten::"), r.why)
            said[key] = said.get(key, 0.0) + r.share
    return [
        f"{name} ({pct(share)}): {why}" for (name, why), share in list(said.items())[:UNKNOWN_SHOWN]
    ]


def shapes(dims: str | None) -> str:
    """Recorded input dims as a person reads them: ``512, 141x512, 512x512`` for
    ``[[512], [141, 512], [512, 512], [], []]`` (scalars and absent inputs left out, a
    tensor list in brackets); the text as recorded where it is no list of lists."""
    if not dims:
        return "-"
    try:
        value = ast.literal_eval(dims)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return dims
    if not isinstance(value, list):
        return dims
    shown = [_tensor(v) for v in value]
    return ", ".join(s for s in shown if s) or "scalars"


# PyTorch's names of its element types (c10::toString, the C++ names of the plain ones) ->
# the short names a person reads; types not here are shown as written
TYPES = {
    "c10::BFloat16": "bf16", "c10::Half": "fp16", "float": "fp32", "double": "fp64",
    "c10::Float8_e4m3fn": "fp8e4m3", "c10::Float8_e5m2": "fp8e5m2",
    "c10::Float8_e4m3fnuz": "fp8e4m3fnuz", "c10::Float8_e5m2fnuz": "fp8e5m2fnuz",
    "long int": "int64", "long": "int64", "int": "int32", "bool": "bool",
    "unsigned char": "uint8", "signed char": "int8",
}  # fmt: skip


def element_types(types: str | None) -> str:
    """Recorded input types as a person reads them: ``bf16 x3`` for three bf16 tensors and two
    scalars; scalars and absent inputs left out."""
    try:
        value = ast.literal_eval(types) if types else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return types or "-"
    if not isinstance(value, list):
        return types or "-"
    names = [TYPES.get(str(t), str(t)) for t in value if t not in ("", "Scalar", "ScalarList")]
    if not names:
        return "-"
    if len(set(names)) == 1:
        return names[0] if len(names) == 1 else f"{names[0]} x{len(names)}"
    return ", ".join(names)


def _tensor(value: object) -> str:
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        return "x".join(str(v) for v in value)
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return "[" + ", ".join(_tensor(v) or "-" for v in value) + "]"
    return ""


def _rest(ops: Operators, shown: int) -> str | None:
    more = len(ops.rows) - shown + ops.others
    parts = []
    if line := unknown_work(ops):
        parts.append(line)
    if more:
        parts.append(f"{count(more, 'more operator signature')} in the JSON report")
    if ops.unlinked_dispatches:
        parts.append(
            f"{count(ops.unlinked_dispatches, 'kernel')} ({duration(ops.unlinked_ns)}) "
            "launched by no operator (graph replays, other threads)"
        )
    return "; ".join(parts) + "." if parts else None
