"""Kernel names a person can tell apart: the one shortening every table, bar and label uses.

A demangled C++ name such as ``void ns::benchmark_func<int, 256, 8u, 512u>(int, int*)`` is
shown as ``benchmark_func<int,256,8u,512u>``: the return type and the parameter list dropped,
namespaces elided from the left. Among the names shown together, the template arguments that
are the same for every kernel of a stem are elided (``benchmark_func<int,…,512u>`` beside
``benchmark_func<float,…,256u>``); those that differ are kept. The full name stays in the JSON
and in the HTML's tooltips.

Within :func:`full_names` (``--full-names``, the API's ``full_names=True``) every name is shown
whole as the profile names it (demangled, never shortened or cut): tables wrap it, charts make
room for it. It is the one rendering option that is no argument: every renderer shows names
through this module, so the switch is here, set by the command or the API around a rendering.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from html import escape

import msgspec

from roofscope.model.names import normalise
from roofscope.render import name_fit
from roofscope.render.layout import copy_button, elided, words
from roofscope.render.name_fit import ELLIPSIS, apart, depths

__all__ = [
    "ELLIPSIS",
    "fit",
    "full_names",
    "name_cell",
    "parts",
    "short_name",
    "short_names",
    "shortened",
    "shortened_to",
    "showing_full",
]

_FULL: ContextVar[bool] = ContextVar("roofscope_full_names", default=False)


@contextmanager
def full_names(on: bool = True) -> Iterator[None]:
    """Within it (``on``), every name a renderer shows is the whole demangled name."""
    token = _FULL.set(on)
    try:
        yield
    finally:
        _FULL.reset(token)


def showing_full() -> bool:
    """Whether names are shown whole (inside :func:`full_names`)."""
    return _FULL.get()


def fit(text: str, width: int) -> str:
    """``text`` in ``width`` characters (:func:`name_fit.fit`); whole within
    :func:`full_names`."""
    return text if _FULL.get() else name_fit.fit(text, width)


_NAMESPACE = re.compile(r"(?:\(anonymous namespace\)::|<unnamed>::|[A-Za-z_][\w$]*::)+")


class Parts(msgspec.Struct, frozen=True):
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


def _top_level_split(text: str, sep: str) -> list[str]:
    depth, parts, start = depths(text), [], 0
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
    depth = depths(name)
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
    if len(words) > 1 and (words[-1].startswith("<") or not _is_code(head, params)):
        last = head  # "operator< <T>"; words, not a declaration ("Unknown command type")
    last = _top_level_split(last, "::")[-1] or last
    if last.endswith(">") and "<" in last:
        cut = last.index("<")
        inner = last[cut + 1 : -1]
        args = tuple(tidy(a) for a in _top_level_split(inner, ","))
        return Parts(last[:cut], args, tidy(params))
    return Parts(tidy(last) or full, None, tidy(params))


def short_names(names: Sequence[str], width: int | None = None) -> list[str]:
    """Each of ``names`` (shown together) short, distinct where the names are, and at most
    ``width`` characters (cut in the middle, keeping the ending, where they must be); each
    whole (demangled) within :func:`full_names`."""
    if _FULL.get():
        return [normalise(n) for n in names]
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
    return apart(out, width) if width else out


def _separate(names: Sequence[str], cut: list[Parts], out: list[str]) -> list[str]:
    """Names that still read alike keep their parameter lists (overloads), then the
    namespaces of their arguments (``device_kernel<a::Gemm>`` beside
    ``device_kernel<b::Gemm>``), then their own (``vllm::rotary_embedding_kernel`` beside
    SGLang's ``rotary_embedding_kernel``), then all they are (their return type too)."""
    steps: list[Callable[[int], str]] = [
        lambda i: out[i] + cut[i].params,
        lambda i: _qualified(names[i], params=False),
        lambda i: _qualified(names[i], params=True),
        lambda i: _qualified(names[i], params=True, own=True),
        lambda i: normalise(names[i]),
    ]
    for more in steps:
        seen: dict[str, set[str]] = {}
        for n, shown in zip(names, out, strict=True):
            seen.setdefault(shown, set()).add(normalise(n))
        out = [more(i) if len(seen[shown]) > 1 else shown for i, shown in enumerate(out)]
    return out


def _qualified(name: str, *, params: bool, own: bool = False) -> str:
    """The name with the namespaces of its arguments (and its parameters; and its ``own``
    namespaces), without its return type and blanks after commas."""
    head, rest = _drop_params(normalise(name))
    head = _top_level_split(head, " ")[-1] or head
    if not own:
        head = _top_level_split(head, "::")[-1] or head
    text = head + rest if params else head
    return re.sub(r"\s*,\s*", ",", re.sub(r"(?<=>)\s+(?=>)", "", text)).strip()


def _is_code(head: str, params: str) -> bool:
    """Whether a name is a C++ declaration (whose first words are a return type)."""
    return bool(params) or "::" in head or "<" in head


def short_name(name: str, width: int | None = None) -> str:
    """One name shown alone: every template argument kept (as far as ``width`` allows)."""
    return short_names([name], width)[0]


def shortened(names: Sequence[str], width: int | None = None) -> dict[str, str]:
    """Each of ``names`` (shown together) to its short name (in ``width`` characters)."""
    return shortened_to(names, [width])[0]


def shortened_to(names: Sequence[str], widths: Sequence[int | None]) -> list[dict[str, str]]:
    """:func:`shortened` at each of ``widths``, the names' short forms worked out once and
    then fitted to each width (``short_names(n, w)`` is ``apart(short_names(n), w)``)."""
    unique = sorted(set(names))
    base = short_names(unique)
    fitted = [apart(base, w) if w and not _FULL.get() else base for w in widths]
    return [dict(zip(unique, shown, strict=True)) for shown in fitted]


def name_cell(full: str, short: str, *, mark: str = "", after: str = "") -> str:
    """A kernel's HTML table cell: its short name in one line (cut with an ellipsis where the
    cell is narrower; the full name as a tooltip, and a button that copies it), which opens
    to the full name (wrapping between words, never inside one). ``after``: markup already
    escaped (the validity flags). Within :func:`full_names`: the full name, wrapping between
    words."""
    if _FULL.get():
        return f'<td class="name" title="{escape(full)}">{escape(mark)}{words(full)}{after}</td>'
    return (
        f'<td class="name"><details><summary title="{escape(full)}"><span class="w">'
        f"{escape(mark)}{elided(short)}{copy_button(full)}</span>{after}</summary>"
        f'<span class="full">{words(full)}</span></details></td>'
    )
