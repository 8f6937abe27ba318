"""A small, safe evaluator for the arithmetic of work files.

Work files say how much a kernel computes and moves, e.g. ``flops = "2 * M * N * K"`` or
``bytes = "grid_size * 3 * 4"``. Only numbers, names given by the caller, ``+ - * / // % **``,
unary minus, parentheses and the functions in :data:`FUNCTIONS` are accepted: no attribute
access, no subscripts, no other calls, no comprehension, no lambda. Anything else raises
:class:`ExprError` saying what was refused.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping

from roofscope.model import words

MAX_LENGTH = 2000
MAX_POWER = 1024.0

FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": math.log2,
    "sqrt": math.sqrt,
}
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


class ExprError(ValueError):
    """An expression that is not plain arithmetic, or that cannot be evaluated."""


def names_in(text: str) -> set[str]:
    """The variable names an expression uses (after checking that it is allowed)."""
    tree = _parse(text)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in FUNCTIONS}


def evaluate(text: str, values: Mapping[str, float]) -> float:
    """The value of ``text`` with ``values`` bound to its names."""
    return float(_eval(_parse(text).body, values))


def _parse(text: str) -> ast.Expression:
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ExprError(f"not an arithmetic expression ({e.msg})") from None
    for node in ast.walk(tree):
        _check(node)
    return tree


def _check(node: ast.AST) -> None:
    allowed = (
        ast.Expression,
        ast.BinOp,
        ast.UnaryOp,
        ast.Constant,
        ast.Name,
        ast.Load,
        ast.Call,
        ast.USub,
        ast.UAdd,
        *_BINARY,
    )
    if not isinstance(node, allowed):
        raise ExprError(f"{_describe(node)} is not allowed; use numbers, names and + - * / **")
    if isinstance(node, ast.Constant) and (
        isinstance(node.value, bool) or not isinstance(node.value, int | float)
    ):
        raise ExprError(f"constant {node.value!r} is not a number")
    if isinstance(node, ast.Name) and node.id.startswith("_"):
        raise ExprError(f"name {node.id!r} is not allowed")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            called = ast.unparse(node.func)[:40]
            raise ExprError(f"call of {called} is not allowed; only {', '.join(sorted(FUNCTIONS))}")
        if node.keywords:
            raise ExprError(f"keyword arguments to {node.func.id} are not allowed")


def _describe(node: ast.AST) -> str:
    names = {
        ast.Attribute: "attribute access",
        ast.Subscript: "subscript",
        ast.Lambda: "lambda",
        ast.Compare: "comparison",
        ast.BoolOp: "boolean operator",
        ast.IfExp: "conditional",
        ast.Starred: "starred argument",
    }
    for kind, name in names.items():
        if isinstance(node, kind):
            return name
    return type(node).__name__


def _eval(node: ast.expr, values: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in values:
            known = ", ".join(sorted(values)) or "none"
            raise ExprError(f"unknown name {node.id!r} (known: {known})")
        return float(values[node.id])
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, values)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, values), _eval(node.right, values)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_POWER:
            raise ExprError(f"exponent {words.sized(right)} is too large")
        try:
            return float(_BINARY[type(node.op)](left, right))
        except (ZeroDivisionError, OverflowError, ValueError) as e:
            raise ExprError(f"cannot evaluate: {e}") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_eval(a, values) for a in node.args]
        try:
            return float(FUNCTIONS[node.func.id](*args))
        except (TypeError, ValueError) as e:
            raise ExprError(f"cannot evaluate {node.func.id}(): {e}") from None
    raise ExprError(f"{_describe(node)} is not allowed")  # unreachable after _check
