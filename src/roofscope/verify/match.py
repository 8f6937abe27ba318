"""Which kernel of the baseline is which kernel of the candidate.

First by normalised name (``[clone .kd]``, ``.kd``, quotes and mangling already gone, so a
rocprof v1 trace meets a rocprofv3 one). Then, among the rest, kernels whose names differ
only in template arguments, parameters or compiler-added tags: they are matched when their
*base* names (``ns::gemm<float, 4>(float*)`` -> ``ns::gemm``) are equal, one to one, and
their launch shapes (grid, workgroup) agree where both sides give them; the similarity of
the full names (difflib's ratio, 0..1) is reported as the score. What is left is added or
removed, never dropped.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

import msgspec

_TEMPLATE = re.compile(r"<[^<>]*>")
_CLONE = re.compile(r"\s*\[clone [^\]]*\]|\.(?:kd|cold|part\.\d+|isra\.\d+|constprop\.\d+)$")

Shape = tuple[int | None, int | None]  # (grid size, workgroup size) of the dominant launch


class Pair(msgspec.Struct, frozen=True):
    base: str
    new: str
    how: str  # "name" | "similarity" | "operator" (verify/byop.py)
    score: float | None  # 1.0 for a match by name; None by operator (the names differ)


class Matching(msgspec.Struct, frozen=True):
    pairs: tuple[Pair, ...]
    removed: tuple[str, ...]  # in the baseline only
    added: tuple[str, ...]  # in the candidate only


def stem(kernel: str) -> str:
    """The qualified function name without template arguments, parameters and tags."""
    name = _CLONE.sub("", kernel.strip())
    while True:
        shorter = _TEMPLATE.sub("", name)
        if shorter == name:
            break
        name = shorter
    name = name.split("(", 1)[0].strip()
    return name.split(" ")[-1] if " " in name else name


def match(
    base: Sequence[str],
    new: Sequence[str],
    shapes: tuple[Mapping[str, Shape], Mapping[str, Shape]] = ({}, {}),
) -> Matching:
    pairs = [Pair(k, k, "name", 1.0) for k in base if k in set(new)]
    left = [k for k in base if k not in set(new)]
    right = [k for k in new if k not in set(base)]
    by_stem: dict[str, list[str]] = {}
    for k in right:
        by_stem.setdefault(stem(k), []).append(k)
    stems_left: dict[str, list[str]] = {}
    for k in left:
        stems_left.setdefault(stem(k), []).append(k)
    for s, olds in stems_left.items():
        news = by_stem.get(s, [])
        if len(olds) != 1 or len(news) != 1:
            continue  # ambiguous: several kernels share the stem; leave them apart
        old, candidate = olds[0], news[0]
        if not _same_shape(shapes[0].get(old), shapes[1].get(candidate)):
            continue
        score = difflib.SequenceMatcher(None, old, candidate).ratio()
        pairs.append(Pair(old, candidate, "similarity", round(score, 3)))
    matched_base = {p.base for p in pairs}
    matched_new = {p.new for p in pairs}
    return Matching(
        tuple(pairs),
        tuple(k for k in base if k not in matched_base),
        tuple(k for k in new if k not in matched_new),
    )


def _same_shape(a: Shape | None, b: Shape | None) -> bool:
    """Equal where both sides give a value; unknown on either side does not object."""
    if a is None or b is None:
        return True
    return all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))
