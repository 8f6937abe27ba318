"""A comparison's data-quality warnings folded by kind, as ``analyze`` folds its findings:
one entry per side, code and wording, naming its first few kernels and "+N more"
(``[single-dispatch] 167 kernels: a, b, c, +164 more: one dispatch: ...``); and the kernel
names every compare output shows, the table's short names, for the gate's failures too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from roofscope.render.compare.words import side_label
from roofscope.render.names import shortened
from roofscope.verify.compare import Comparison
from roofscope.verify.quality import SideWarning

NAMED = 3  # the kernels a folded warning names before "+N more"


class Fold(msgspec.Struct, frozen=True):
    """The warnings of one side, code and wording: one, or one per kernel it is about."""

    side: str  # ``baseline``, ``candidate``, ``baseline run 2``
    code: str
    message: str
    kernels: tuple[str, ...]  # the kernels, in the order the side lists them; () for a run's
    blocks_gate: bool


def folds(warnings: Sequence[SideWarning]) -> list[Fold]:
    """The warnings folded by side, code and message, in the order each first appears; a
    warning about no kernel stays alone."""
    groups: dict[tuple[str, str, str, int], list[SideWarning]] = {}
    for i, w in enumerate(warnings):
        alone = -1 if w.kernel is not None else i
        groups.setdefault((side_label(w), w.code, w.message, alone), []).append(w)
    return [_fold(ws) for ws in groups.values()]


def _fold(warnings: list[SideWarning]) -> Fold:
    first = warnings[0]
    kernels = tuple(w.kernel for w in warnings if w.kernel is not None)
    return Fold(side_label(first), first.code, first.message, kernels, first.blocks_gate)


def shown_names(cmp: Comparison) -> dict[str, str]:
    """Each compared kernel's name as the kernel tables show it (shortened together)."""
    return shortened([k.name for k in cmp.kernels])


def fold_text(f: Fold, names: Mapping[str, str]) -> str:
    """``[single-dispatch] 167 kernels: a, b, c, +164 more: one dispatch: ...``; one kernel
    is named before its words, as the unfolded warning reads."""
    if not f.kernels:
        return f"[{f.code}] {f.message}"
    if len(f.kernels) == 1:
        return f"[{f.code}] {_name(f.kernels[0], names)}: {f.message}"
    shown = [_name(k, names) for k in f.kernels[:NAMED]]
    more = len(f.kernels) - NAMED
    listed = ", ".join(shown) + (f", +{more} more" if more > 0 else "")
    return f"[{f.code}] {len(f.kernels)} kernels: {listed}: {f.message}"


def _name(kernel: str, names: Mapping[str, str]) -> str:
    return names.get(kernel, kernel)
