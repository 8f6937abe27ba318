"""The nesting of a large trace's operators in numpy (see
:mod:`~roofscope.readers.torch.kineto_nest`, whose stack sweep gives the same answers row by
row in Python: 6.0 s of the 1 M-kernel trace's 2 M operators and launches).

On one thread's rows in the sweep's order the starts never decrease, so an operator no
longer open at some row's start is never open again: a row's operator (an operator's parent,
a launch's innermost operator) is the last earlier operator whose end is at or after the
row's start. That is a search, for all of a window's rows at once, over the running maxima
of the operators' ends (:func:`innermost`); the operators still open after a window (the
stack: the last row's operator and its parents, up) are put before the next window's.
Kept are the operators a launch is in and their parents, up; numbered in the sweep's order.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]
    Column = npt.NDArray[Any]

_NONE: Ints = np.empty(0, dtype=np.int64)


def innermost(ends: Ints, before: Ints, starts: Ints) -> Ints:
    """For each row, the last of the operators before it (``ends[:before]``) whose end is at
    or after the row's start, -1 for none: ``levels[k][x]`` is the largest end of
    ``ends[x : x + 2**k]``, so each row steps back over whole blocks of ends below its start,
    the longest first."""
    if not len(ends):
        return np.full(len(starts), -1, dtype=np.int64)
    levels = [ends]
    while (width := 1 << len(levels)) <= len(ends):
        half = width >> 1
        levels.append(np.maximum(levels[-1][:-half], levels[-1][half:]))
    pos = before.copy()
    for k in reversed(range(len(levels))):
        at = pos - (1 << k)
        ok = at >= 0
        ok &= levels[k][np.where(ok, at, 0)] < starts
        pos = np.where(ok, at, pos)
    return pos - 1


def _at(values: Ints, index: Ints) -> Ints:
    """``values[index]``, -1 where the index is -1."""
    if not len(values):
        return np.full(len(index), -1, dtype=np.int64)
    return np.where(index >= 0, values[np.maximum(index, 0)], -1)


def _distinct(places: Ints, scratch: Ints) -> Ints:
    """``places`` each once (np.unique sorts: 0.6 s for 1 M), ``scratch`` as long as the
    largest place: of a place's positions, the one written last there is kept."""
    positions = np.arange(len(places))
    scratch[places] = positions
    once: Ints = places[scratch[places] == positions]
    return once


class Nesting:
    """The rows of every thread, a window at a time in the sweep's order (threads whole or
    cut at starts); each operator numbered in that order (its place), each row's operator
    given by its place."""

    def __init__(self) -> None:
        self.rank: int | None = None
        self.open_ends, self.open_places = _NONE, _NONE  # the stack, outermost first
        self.places = 0
        self.parts: dict[str, list[Ints]] = {"op_seq": [], "up": [], "seq": [], "leaf": []}

    def add(self, rows: dict[str, Column]) -> None:
        """A window's rows: ``rank``, ``start_ns``, ``end_ns``, ``seq``, ``kind`` (0 for an
        operator, 1 for a launch)."""
        rank = rows["rank"]
        if not len(rank):
            return
        cuts = [0, *(np.flatnonzero(rank[1:] != rank[:-1]) + 1).tolist(), len(rank)]
        for lo, hi in itertools.pairwise(cuts):
            self._thread(int(rank[lo]), {c: v[lo:hi] for c, v in rows.items()})

    def _thread(self, rank: int, rows: dict[str, Column]) -> None:
        if rank != self.rank:
            self.rank, self.open_ends, self.open_places = rank, _NONE, _NONE
        is_op = rows["kind"] == 0
        held, new = len(self.open_ends), int(is_op.sum())
        ends = np.concatenate([self.open_ends, rows["end_ns"][is_op]])
        places = np.concatenate([self.open_places, self.places + np.arange(new)])
        before = held + np.cumsum(is_op) - is_op
        found = innermost(ends, before, rows["start_ns"])
        up = _at(places, found)
        self.parts["op_seq"].append(rows["seq"][is_op])
        self.parts["up"].append(up[is_op])
        self.parts["seq"].append(rows["seq"][~is_op])
        self.parts["leaf"].append(up[~is_op])
        self.places += new
        parents = np.concatenate([np.arange(-1, held - 1), found[is_op]])
        self._keep_open(int(held + new - 1 if is_op[-1] else found[-1]), parents, ends, places)

    def _keep_open(self, node: int, parents: Ints, ends: Ints, places: Ints) -> None:
        """The stack after a window: its last row's operator and that one's parents, up."""
        chain: list[int] = []
        while node >= 0:
            chain.append(node)
            node = int(parents[node])
        chain.reverse()
        self.open_ends, self.open_places = ends[chain], places[chain]

    def numbered(self) -> tuple[dict[str, Ints], dict[str, Ints]]:
        """The kept operators (``seq``, ``op_id``, ``parent``) and the launches (``seq``,
        ``op_id``, ``pos``: their place in the sweep's order), -1 for no operator."""
        whole = {c: np.concatenate(v) if v else _NONE for c, v in self.parts.items()}
        self.parts = {c: [] for c in self.parts}
        up, leaf = whole["up"], whole["leaf"]
        kept, ids = np.zeros(len(up), dtype=bool), np.empty(len(up), dtype=np.int64)
        todo = leaf[leaf >= 0]
        while len(todo):  # each operator kept once, its parent next
            todo = _distinct(todo[~kept[todo]], ids)
            kept[todo] = True
            todo = up[todo]
            todo = todo[todo >= 0]
        ids = np.cumsum(kept) - 1
        at = np.flatnonzero(kept)
        ops = {"seq": whole["op_seq"][at], "op_id": np.arange(len(at)),
               "parent": _at(ids, up[at])}  # fmt: skip
        launches = {"seq": whole["seq"], "op_id": _at(ids, leaf), "pos": np.arange(len(leaf))}
        return ops, launches
