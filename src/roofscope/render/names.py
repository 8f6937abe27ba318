"""Kernel names a person can tell apart: the one shortening every table, bar and label uses.

A demangled C++ name such as ``void ns::benchmark_func<int, 256, 8u, 512u>(int, int*)`` is
shown as ``benchmark_func<int,256,8u,512u>``: the return type and the parameter list dropped,
namespaces elided from the left. Among the names shown together, the template arguments that
are the same for every kernel of a stem are elided (``benchmark_func<int,…,512u>`` beside
``benchmark_func<float,…,256u>``); those that differ are kept. The full name stays in the JSON
and in the HTML's tooltips.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from roofscope.model.names import normalise
from roofscope.render.layout import words

ELLIPSIS = "…"
_NAMESPACE = re.compile(r"(?:\(anonymous namespace\)::|<unnamed>::|[A-Za-z_][\w$]*::)+")
_OPEN, _CLOSE = "<([{", ">)]}"


@dataclass(frozen=True)
class Parts:
    """A name cut into its stem and its template arguments (None: not a template)."""

    stem: str
    args: tuple[str, ...] | None
    params: str = ""

    def text(self, keep: Sequence[bool] | None = None) -> str:
        if self.args is None:
            return self.stem
        shown: list[str] = []
        for i, a in enumerate(self.args):
            if keep is None or keep[i]:
                shown.append(a)
            elif not shown or shown[-1] != ELLIPSIS:
                shown.append(ELLIPSIS)
        return f"{self.stem}<{','.join(shown)}>"


def _depths(text: str) -> list[int]:
    """The bracket depth at each character (the brackets themselves at the outer depth)."""
    out, depth = [], 0
    for ch in text:
        if ch in _CLOSE:
            depth = max(0, depth - 1)
        out.append(depth)
        if ch in _OPEN:
            depth += 1
    return out


def _top_level_split(text: str, sep: str) -> list[str]:
    depth, parts, start = _depths(text), [], 0
    i = 0
    while i <= len(text) - len(sep):
        if depth[i] == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
        else:
            i += 1
    return [*parts, text[start:]]


def _drop_params(name: str) -> tuple[str, str]:
    """``f<int>(int, int*) const`` -> (``f<int>``, ``(int, int*)``); the last top-level
    bracket pair not followed by ``::`` (``(anonymous namespace)::f`` keeps its namespace)."""
    depth = _depths(name)
    for i in range(len(name) - 1, -1, -1):
        if name[i] == "(" and depth[i] == 0 and i > 0:
            close = next(
                (j for j in range(i + 1, len(name)) if name[j] == ")" and depth[j] == 0), None
            )
            if close is not None and not name.startswith("::", close + 1):
                return name[:i].rstrip(), name[i : close + 1]
    return name, ""


_CAST = re.compile(
    r"\((?:unsigned |signed )?(?:int|long|long long|short|char|bool|unsigned)\)(-?\d+)"
)
# a function's lambdas, one in another: ``f(A &)::[lambda() (instance 3)]::operator ()() const::
# [lambda(float) (instance 1)]`` (nsys), ``f(A&)::{lambda(int)#1}`` (Kineto)
_LAMBDAS = re.compile(
    r"\((?:[^()]|\([^()]*\))*\)(?:\s*const)?::"
    r"(?:(?:\[lambda[^\]]*\]|\{lambda[^}]*\})(?:::operator\s*\(\)\(\)(?:\s*const)?)?::)*"
    r"(?:\[lambda(\([^()]*\))[^\]]*\]|\{lambda(\([^()]*\))#\d+\})"
)


def _lambda(m: re.Match[str]) -> str:
    return ":λ" + (m.group(1) or m.group(2)).replace("()", "")


def tidy(text: str) -> str:
    """A type as a person reads it: namespaces out (``at::native::Fill<float>`` ->
    ``Fill<float>``), casts out (``(int)4`` -> ``4``), a chain of lambdas in a function as
    the function and the last lambda's parameters (``copy_kernel:λ(float)``), no blanks
    after commas, before ``*``/``&`` or between closing brackets."""
    while (done := _LAMBDAS.sub(_lambda, text)) != text:  # inner ones first
        text = done
    text = re.sub(r"\bvoid\s+|::operator\s*\(\)", "", text)
    text = _NAMESPACE.sub("", _CAST.sub(r"\1", text))
    text = re.sub(r"\s+([*&])", r"\1", re.sub(r"(?<=>)\s+(?=>)", "", text))
    return re.sub(r"\s*,\s*", ",", text).strip()


def parts(name: str) -> Parts:
    """Cut a (normalised or mangled) kernel name into stem and template arguments."""
    full = normalise(name)
    head, params = _drop_params(full)
    words = _top_level_split(head, " ")
    last = words[-1] if words[-1] else head
    if len(words) > 1 and words[-1].startswith("<"):  # "operator< <T>" and the like
        last = head
    last = _top_level_split(last, "::")[-1] or last
    if last.endswith(">") and "<" in last:
        cut = last.index("<")
        inner = last[cut + 1 : -1]
        args = tuple(tidy(a) for a in _top_level_split(inner, ","))
        return Parts(last[:cut], args, tidy(params))
    return Parts(tidy(last) or full, None, tidy(params))


def short_names(names: Sequence[str], width: int | None = None) -> list[str]:
    """Each of ``names`` (shown together) short, distinct where the names are, and at most
    ``width`` characters (cut in the middle, keeping the ending, where they must be)."""
    cut = [parts(n) for n in names]
    groups: dict[tuple[str, int], list[int]] = {}
    for i, p in enumerate(cut):
        if p.args is not None:
            groups.setdefault((p.stem, len(p.args)), []).append(i)
    out = [p.text() for p in cut]
    for (_, arity), members in groups.items():
        args = [cut[i].args or () for i in members]
        if len(set(args)) < 2:
            continue
        keep = [len({a[j] for a in args}) > 1 for j in range(arity)]
        for i in members:
            out[i] = cut[i].text(keep)
    out = _separate(names, cut, out)
    return [fit(s, width) for s in out] if width else out


def _separate(names: Sequence[str], cut: list[Parts], out: list[str]) -> list[str]:
    """Names that differ only in their parameters (overloads) keep their parameter lists."""
    seen: dict[str, set[str]] = {}
    for n, s in zip(names, out, strict=True):
        seen.setdefault(s, set()).add(n)
    return [s + p.params if len(seen[s]) > 1 else s for s, p in zip(out, cut, strict=True)]


def short_name(name: str, width: int | None = None) -> str:
    """One name shown alone: every template argument kept (as far as ``width`` allows)."""
    return short_names([name], width)[0]


def fit(text: str, width: int) -> str:
    """``text`` in ``width`` characters: the arguments of nested templates elided, deepest
    first (``array<char*,2>`` -> ``array<…>``), then a cut in the middle that keeps the end
    (where the arguments that tell kernels apart are)."""
    while len(text) > width and (shorter := _collapse_deepest(text)) != text:
        text = shorter
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail = min(len(text) // 3, (width - 1) // 2)
    head = width - 1 - tail
    return text[:head] + ELLIPSIS + text[len(text) - tail :]


def _collapse_deepest(text: str) -> str:
    """The deepest ``<…>`` group below the name's own arguments elided; ``text`` itself when
    none is left."""
    depth = _depths(text)
    best: tuple[int, int, int] | None = None  # (depth, start, end)
    for m in re.finditer(r"<([^<>]*)>", text):
        d = depth[m.start()]
        if d >= 1 and m.group(1) != ELLIPSIS and (best is None or d > best[0]):
            best = (d, m.start(), m.end())
    if best is None:
        return text
    return text[: best[1]] + "<" + ELLIPSIS + ">" + text[best[2] :]


def shortened(names: Sequence[str]) -> dict[str, str]:
    """Each of ``names`` (shown together) to its short name."""
    unique = sorted(set(names))
    return dict(zip(unique, short_names(unique), strict=True))


def name_cell(full: str, short: str, *, mark: str = "", after: str = "") -> str:
    """A kernel's HTML table cell: its short name (the full one as a tooltip), which opens
    to the full name (wrapping between words, never inside one). ``after``: markup already
    escaped (the validity flags)."""
    return (
        f'<td class="name"><details><summary title="{escape(full)}">{escape(mark)}'
        f'{escape(short)}{after}</summary><span class="full">{words(full)}</span></details></td>'
    )
