"""Names in a given width that stay as distinct as they were.

:func:`fit` shortens one name: nested template arguments elided deepest first, then a cut in
the middle that keeps the end. Names shown together are fitted by :func:`apart`: where two
of them would read alike, each keeps the words that tell it from the others (the middle of
``split_embedding_backward_…_cta_per_row_1<…>`` beside ``…_warp_per_row_1<…>``) and elides
what they share, as Nsight Systems' short names do not; where even that cannot tell them
apart in the width, a number (``#2``) does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

ELLIPSIS = "…"
_TOKEN = re.compile(r"[A-Za-z]+|\d+|.")
_OPEN, _CLOSE = "<([{", ">)]}"


def depths(text: str) -> list[int]:
    """The bracket depth at each character (the brackets themselves at the outer depth)."""
    out, depth = [], 0
    for ch in text:
        if ch in _CLOSE:
            depth = max(0, depth - 1)
        out.append(depth)
        if ch in _OPEN:
            depth += 1
    return out


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
    depth = depths(text)
    best: tuple[int, int, int] | None = None  # (depth, start, end)
    for m in re.finditer(r"<([^<>]*)>", text):
        d = depth[m.start()]
        if d >= 1 and m.group(1) != ELLIPSIS and (best is None or d > best[0]):
            best = (d, m.start(), m.end())
    if best is None:
        return text
    return text[: best[1]] + "<" + ELLIPSIS + ">" + text[best[2] :]


def apart(texts: Sequence[str], width: int) -> list[str]:
    """Each of ``texts`` in at most ``width`` characters, two alike only where the texts
    are (from a width of 4 on: a number needs room)."""
    out = [fit(t, width) for t in texts]
    for group in _clashes(texts, out):
        members = sorted({texts[i] for i in group})
        told = dict(zip(members, _told_apart(members, width), strict=True))
        for i in group:
            out[i] = told[texts[i]]
    return _numbered_apart(texts, out, width)


def _numbered_apart(texts: Sequence[str], out: list[str], width: int) -> list[str]:
    """The shown texts that still stand for several texts, each cut to leave room for a
    number and numbered among those its cut text stands for. Cut and numbered as one set:
    numbered group by group, two groups whose texts cut alike gave the same ``…#1``."""
    clashing = [i for group in _clashes(texts, out) for i in group]
    room = len(f"#{len(clashing)}")
    if not clashing or width <= room:
        return out
    cut = {i: fit(out[i], width - room) for i in clashing}
    by_cut: dict[str, set[str]] = {}
    for i in clashing:
        by_cut.setdefault(cut[i], set()).add(texts[i])
    for i in clashing:
        out[i] = f"{cut[i]}#{sorted(by_cut[cut[i]]).index(texts[i]) + 1}"
    return out


def _clashes(texts: Sequence[str], out: Sequence[str]) -> list[list[int]]:
    """The indices of each shown text that stands for more than one text."""
    by_shown: dict[str, list[int]] = {}
    for i, shown in enumerate(out):
        by_shown.setdefault(shown, []).append(i)
    return [g for g in by_shown.values() if len({texts[i] for i in g}) > 1]


def _told_apart(members: list[str], width: int) -> list[str]:
    """Each member with the words that tell it from the others kept, the rest elided."""
    tokens = [_TOKEN.findall(t) for t in members]
    out = []
    for i, own in enumerate(tokens):
        keep = _differing(own, [t for j, t in enumerate(tokens) if j != i])
        out.append(fit(_widened(own, keep, width), width))
    return out


def _differing(own: list[str], others: list[list[str]]) -> set[int]:
    """The positions of ``own``'s tokens that some other name does not share there."""
    keep: set[int] = set()
    for other in others:
        ops = SequenceMatcher(None, own, other, autojunk=False).get_opcodes()
        for tag, i1, i2, _, _ in ops:
            if tag != "equal":
                keep.update(range(i1, i2) if i2 > i1 else [min(i1, len(own) - 1)])
    return keep


def _widened(tokens: list[str], keep: set[int], width: int) -> str:
    """The kept tokens, then as many more from the start and from the end as ``width``
    allows (each side until its next token does not fit)."""
    first = keep | {0}  # the name's first word: what a person looks for
    keep = _context(tokens, first if len(_joined(tokens, first)) <= width else keep, width)
    sides = [iter(range(len(tokens))), iter(range(len(tokens) - 1, -1, -1))]
    while sides:
        for side in list(sides):
            i = next(side, None)
            if i is None or len(_joined(tokens, keep | {i})) > width:
                sides.remove(side)
            else:
                keep.add(i)
    return _joined(tokens, keep)


def _context(tokens: list[str], keep: set[int], width: int, reach: int = 3) -> set[int]:
    """The differing tokens with up to ``reach`` neighbours each side, as ``width`` allows
    (``C<128>,C<64>``, not ``128…64``)."""
    keep, core = set(keep), sorted(keep)
    for step in range(1, reach + 1):
        for i in (j for c in core for j in (c - step, c + step)):
            if 0 <= i < len(tokens) and len(_joined(tokens, keep | {i})) <= width:
                keep.add(i)
    return keep


def _joined(tokens: list[str], keep: set[int]) -> str:
    """The kept tokens in order, each run of left-out ones as one ellipsis."""
    out: list[str] = []
    for i, t in enumerate(tokens):
        if i in keep:
            out.append(t)
        elif not out or out[-1] != ELLIPSIS:
            out.append(ELLIPSIS)
    return "".join(out)


_BREAK = re.compile(r"(?<=[ ,<])|(?<=::)|(?<=\w\()")


def wrap(text: str, width: int) -> list[str]:
    """``text`` whole in lines of at most ``width`` characters, broken after a blank, a comma,
    ``::``, ``<`` or a name's ``(``; inside a word only where the word is longer than a line."""
    lines, line = [], ""
    for piece in (p for p in _BREAK.split(text) if p):
        if line.strip() and len(line) + len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece.lstrip() if not line else piece
        while len(line.rstrip()) > width:  # a word longer than a line, folded
            lines.append(line[:width])
            line = line[width:]
    return [*lines, line.rstrip()] if line.strip() else lines
