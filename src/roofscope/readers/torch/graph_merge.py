"""The kernels a CUDA/HIP graph replayed, matched to the launches of a capture trace of that
graph (docs/formats/pytorch-kineto.md, "Graph capture and replay"): each graph launch's
kernels in time order are aligned to the captured graph whose kernel names match most of
them, greedily in order (a replayed kernel takes the next captured launch of its name;
captured launches without a replayed kernel are skipped, and a replayed kernel whose name
comes no more is left unmatched), as AMD TraceLens's capture merge does. A matched kernel
gets the captured launch's operator chain, written under the replay's source as operators
of their own, so that the operator table, the work from shapes, the categories and the
roofline treat it as an eager kernel.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import msgspec

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role, Table
from roofscope.model.words import count
from roofscope.readers.io.batches import Kind, insert_rows
from roofscope.readers.torch.graph_capture import Capture, Graph

FORMAT = "kineto-graph-capture"
_OP_COLUMNS: tuple[tuple[str, Kind], ...] = (
    ("source", "int"), ("op_id", "int"), ("parent", "int"), ("name", "text"),
    ("start_ns", "int"), ("end_ns", "int"), ("dims", "text"), ("types", "text"),
    ("concrete", "text"), ("flops", "float"), ("bytes", "float"),
)  # fmt: skip
_KERNEL_COLUMNS: tuple[tuple[str, Kind], ...] = (
    ("source", "int"),
    ("row_id", "int"),
    ("op_id", "int"),
)
_REPLAYED = f"""
SELECT d.source, d.dispatch_id, d.rowid, n.kernel FROM {Table.DISPATCHES} d
JOIN {Table.NAMES} n ON n.name_id = d.name_id
JOIN (SELECT source, correlation, min(start_ns) AS launched FROM {Table.GRAPH_LAUNCHES}
    GROUP BY ALL) g ON g.source = d.source AND g.correlation = d.dispatch_id
ORDER BY d.source, g.launched, d.dispatch_id, d.start_ns, d.rowid
"""


class Merged(msgspec.Struct, frozen=True):
    """What the merge matched: graph-replayed kernels matched and not, graph launches."""

    matched: int
    unmatched: int
    launches: int


def align(replayed: Sequence[str], captured: Sequence[str]) -> list[int | None]:
    """Each replayed kernel's captured launch (its index), greedily in order: the next
    captured launch of its name after the last one taken; None where none comes. Each
    name's places are looked up by bisection: O(n log m), where a scan for a name that
    comes no more cost O(m)."""
    places: defaultdict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(captured):
        places[name].append(i)
    out: list[int | None] = []
    at = 0
    for name in replayed:
        mine = places.get(name, [])
        k = bisect_left(mine, at)
        found = mine[k] if k < len(mine) else None
        out.append(found)
        if found is not None:
            at = found + 1
    return out


class _Scored:
    """A replayed sequence aligned to every graph, and each alignment's matches."""

    def __init__(self, replayed: Sequence[str], graphs: Sequence[Graph]) -> None:
        self.aligned = [align(replayed, graph.kernels) for graph in graphs]
        self.scores = [sum(i is not None for i in a) for a in self.aligned]
        self.top = max(self.scores)

    def chosen(self, prefer: int) -> tuple[int, list[int | None]]:
        """The graph whose alignment matches most replayed kernels; on a tie, graph
        ``prefer`` (the launch's place in the order of the graph launches, modulo the
        graphs: a piecewise capture's pieces replay in the order they were captured, as
        TraceLens pairs them), else the first."""
        g = prefer if self.scores[prefer] == self.top else self.scores.index(self.top)
        return g, self.aligned[g]


def merge(profile: Profile, captures: Sequence[Capture]) -> Merged:
    """The profile's graph-replayed kernels matched to ``captures``' graphs; the matches
    written (``graph_kernel_ops``, the captured operators), each capture registered as an
    input, and the counts said in a warning. A capture that matches no replayed kernel is
    one InputError, worded with the option that named the first capture."""
    graphs = [g for c in captures for g in c.graphs]
    replays = _replays(profile)
    written = _Writer(profile, graphs)
    matched = unmatched = 0
    scored: dict[tuple[str, ...], _Scored] = {}  # per replayed sequence
    for nth, (source, rows, kernels) in zip(_places(replays), replays, strict=True):
        key = tuple(kernels)
        if key not in scored:
            scored[key] = _Scored(key, graphs)
        chosen, where = scored[key].chosen(nth % len(graphs))
        for row, at in zip(rows, where, strict=True):
            if at is not None:
                written.match(source, row, chosen, at)
        hits = sum(at is not None for at in where)
        matched, unmatched = matched + hits, unmatched + len(where) - hits
    if not matched:
        raise _matched_nothing(captures, replays, captures[0].option)
    written.flush()
    merged = Merged(matched, unmatched, len(replays))
    _register(profile, captures, merged)
    return merged


def _replays(profile: Profile) -> list[tuple[int, list[int], list[str]]]:
    """Each graph launch's kernels in time order: (source, their row ids, their names)."""
    out: list[tuple[int, list[int], list[str]]] = []
    last: tuple[int, int] | None = None
    for source, correlation, row, kernel in profile.con.execute(_REPLAYED).fetchall():
        if (source, correlation) != last:
            out.append((source, [], []))
            last = (source, correlation)
        out[-1][1].append(row)
        out[-1][2].append(kernel)
    return out


def _places(replays: list[tuple[int, list[int], list[str]]]) -> list[int]:
    """Each graph launch's place among its source's, in time order."""
    seen: dict[int, int] = {}
    out = []
    for source, _, _ in replays:
        out.append(seen.get(source, 0))
        seen[source] = out[-1] + 1
    return out


class _Writer:
    """The captured operators of each (source, graph) written once, with op ids after the
    source's own; each matched dispatch tied to its launch's innermost operator."""

    def __init__(self, profile: Profile, graphs: Sequence[Graph]) -> None:
        self.profile, self.graphs = profile, graphs
        self.first: dict[tuple[int, int], int] = {}  # (source, graph) -> its first op id
        self.ops: list[tuple[Any, ...]] = []
        self.kernels: list[tuple[int, int, int]] = []
        sql = f"SELECT coalesce(max(op_id) + 1, 0) FROM {Table.OPERATORS}"
        self.next = int(profile.con.execute(sql).fetchone()[0])  # type: ignore[index]

    def match(self, source: int, row: int, graph: int, at: int) -> None:
        op = self.graphs[graph].launch_op[at]
        if op is not None:
            self.kernels.append((source, row, self._base(source, graph) + op))

    def _base(self, source: int, graph: int) -> int:
        if (source, graph) not in self.first:
            base = self.first[(source, graph)] = self.next
            ops = self.graphs[graph].ops
            self.next += len(ops)
            self.ops += [
                (source, base + i, None if o.parent is None else base + o.parent, o.name,
                 o.start_ns, o.end_ns, o.dims, o.types, o.concrete, None, None)
                for i, o in enumerate(ops)
            ]  # fmt: skip
        return self.first[(source, graph)]

    def flush(self) -> None:
        insert_rows(self.profile, Table.OPERATORS, _OP_COLUMNS, self.ops)
        insert_rows(self.profile, Table.GRAPH_KERNEL_OPS, _KERNEL_COLUMNS, self.kernels)


def _register(profile: Profile, captures: Sequence[Capture], merged: Merged) -> None:
    for capture in captures:
        profile.add_input(capture.path, FORMAT, capture.launches, Role.METADATA)
    profile.warn(
        "graph-capture",
        f"{merged.matched:,} of {count(merged.matched + merged.unmatched, 'graph-replayed kernel')}"
        " matched to captured launches "
        f"({merged.unmatched:,} unmatched, over {count(merged.launches, 'graph launch')}): "
        "their operators and shapes are the capture's",
    )


def _matched_nothing(
    captures: Sequence[Capture], replays: list[tuple[int, list[int], list[str]]], option: str
) -> InputError:
    paths = ", ".join(c.path for c in captures)
    if not replays:
        what = (
            f"{option}: the profile holds no graph-replayed kernel to match (no "
            "cudaGraphLaunch/hipGraphLaunch with kernels)"
        )
        remedy = f"pass the trace of the graph replays, or leave out {option}"
    else:
        kernels = sum(len(r[1]) for r in replays)
        what = (
            f"{option}: none of its {count(sum(c.launches for c in captures), 'launch')}"
            f" names a kernel of the {count(kernels, 'graph-replayed kernel')}"
        )
        remedy = "pass the capture trace of the same program, model and batch sizes"
    return InputError(paths, what, remedy)
