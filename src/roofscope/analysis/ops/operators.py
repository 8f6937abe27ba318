"""The operator level of a PyTorch trace: per operator call signature (name, input shapes and
types), its calls, the GPU time and kernels it launched and its share; and per kernel, the
work its operators' shapes (or a compiler's annotations) give, for the roofline.

See :mod:`roofscope.analysis.ops.link` for which operator a kernel belongs to."""

from __future__ import annotations

from collections import defaultdict

import msgspec
from msgspec.structs import replace

from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.ops.link import (
    Calls,
    calls,
    linked_sql,
    relations,
    why_unknown,
    works,
)
from roofscope.analysis.work.model import Work
from roofscope.analysis.work.shapes import FP32_MATMUL
from roofscope.model.access import is_empty, names, op_launches, query
from roofscope.model.profile import Profile
from roofscope.model.selection import Selection, dispatches

TOP = 50  # operator rows kept (by GPU time); the rest are summed in ``others``
UNKNOWN_TYPE = "unknown"  # the ceiling key of annotated FLOPs whose data type is unknown


class OperatorRow(msgspec.Struct, frozen=True):
    name: str
    dims: str | None  # the recorded Input Dims (JSON text), None where not recorded
    types: str | None  # the recorded Input type (JSON text)
    calls: int  # operator calls that launched kernels
    dispatches: int  # kernels they launched
    time_ns: float  # those kernels' summed duration
    share: float  # of the selection's kernel time
    kernels: tuple[str, ...]  # kernel names, longest total first
    flops: float | None  # from shapes or annotations; None where unknown
    bytes: float | None
    formula: str | None
    why: str | None = None  # why neither flops nor bytes are known; None where one is


class Operators(msgspec.Struct, frozen=True):
    """The operator table; ``unlinked_ns``: kernel time no operator launched (graph replays
    whose launch had none around it, kernels of other processes)."""

    rows: tuple[OperatorRow, ...]
    others: int  # operator signatures beyond TOP
    others_ns: float
    unlinked_dispatches: int
    unlinked_ns: float
    fp32_matmul: str


class OperatorView(msgspec.Struct, frozen=True):
    table: Operators | None  # None: the input has no operators
    work: dict[str, Work]  # by kernel name, from shapes or annotations
    launched_by: dict[str, str]  # by kernel name: the operator that launched most of its time


def operator_view(
    profile: Profile, selection: Selection, hot: Hotspots, fp32_matmul: str
) -> OperatorView:
    """The operator table and the kernels' work from their operators; ``fp32_matmul``: how
    fp32 GEMMs ran (a key of ``shapes.FP32_MATMUL``). One query over the linked dispatches,
    its four groupings read apart (three queries, each linking again, took 0.75 s on the
    1 M-event bench trace's 200,000 kernels; this one 0.41 s)."""
    if is_empty(profile, op_launches(profile)):
        return OperatorView(None, {}, {})
    rows = _groups(profile, selection, fp32_matmul)
    table = _table(rows[BY_OPERATOR], rows[BY_OPERATOR_KERNEL], hot.total_ns or 0.0)
    return OperatorView(
        replace(table, fp32_matmul=FP32_MATMUL[fp32_matmul]),
        _work(rows[BY_KERNEL_CEILING]),
        _launched_by(rows[BY_KERNEL_OPERATOR]),
    )


def _groups(profile: Profile, selection: Selection, fp32_matmul: str) -> dict[int, list[_Group]]:
    """The rows of _GROUPED by grouping set, their keys' texts looked up."""
    known = calls(profile)
    work = works(known.used, fp32_matmul)
    sql, params = linked_sql(profile, work)
    formulas = sorted({w.formula for w in work.values()} | {"annotation"})
    grouped = _GROUPED.replace("{formulas}", str(len(formulas)))
    more = {**relations(profile), "named": names(profile)}
    found = query(
        profile, dispatches(profile, selection), sql + grouped, [*params, formulas], **more
    )
    rows: dict[int, list[_Group]] = defaultdict(list)
    for sets, op, name, *rest in found.fetchall():
        group = _Group(*_texts(known, op, name), *rest)  # its formula the query's bit string
        rows[sets].append(replace(group, formula=_formulas(group.formula, formulas)))
    return rows


def _texts(
    known: Calls, op: int | None, name: int | None
) -> tuple[str | None, str | None, str | None]:
    """A group's operator name, dims and types, from the keys it was grouped by."""
    if op is not None:
        return known.operators[op]
    return (None if name is None else known.names[name], None, None)


# GROUPING(op, name, kernel, ceiling): a bit for each column a set leaves out; ``op``, the
# operator key (name, dims, types), ``name`` the name's (link.OP_KEY, link.NAME_KEY).
# A group's distinct calls and formulas are no DISTINCT aggregates, which DuckDB plans and
# runs per grouping set (HTA's traces: 21-52 ms to 15-42 ms for the statement, the rows the
# same), nor lists made distinct (a list of 1 M entries per set on the 1 M-kernel trace:
# 135 MiB of its peak and 2 CPU s): a call is counted at its first dispatch, and the
# formulas are a bit string over the sorted distinct formulas (bit i: formula i)
BY_OPERATOR = 0b0011  # (name, dims, types): the operator table's rows
BY_OPERATOR_KERNEL = 0b0001  # (name, dims, types, kernel): the kernels of each, longest
BY_KERNEL_CEILING = 0b1100  # (kernel, ceiling): the work of each kernel
BY_KERNEL_OPERATOR = 0b1001  # (kernel, name): which operator launched most of a kernel

_GROUPED = """
, kernel_ids AS (SELECT name_id, kernel, min(name_id) OVER (PARTITION BY kernel) AS kernel_id
    FROM named)
, grouped AS (
SELECT GROUPING(o.op, o.nm, k.kernel_id, l.ceiling) AS sets, o.op, o.nm,
    k.kernel_id, l.ceiling, count(*) FILTER (l.first), count(*),
    sum(l.dur), max(l.dur), sum(l.flops), sum(l.bytes), count(l.flops), count(l.bytes),
    count(*) FILTER (l.flops IS NOT NULL OR l.bytes IS NOT NULL),
    sum(l.dur) FILTER (l.flops IS NOT NULL OR l.bytes IS NOT NULL),
    bitstring_agg(list_position($10::VARCHAR[], l.formula), 1, {formulas})
        FILTER (l.formula IS NOT NULL)
FROM linked l
LEFT JOIN keyed o ON o.source = l.source AND o.op_id = l.call_row
JOIN kernel_ids k ON k.name_id = l.name_id
GROUP BY GROUPING SETS ((o.op, o.nm), (o.op, o.nm, k.kernel_id), (k.kernel_id, l.ceiling),
    (k.kernel_id, o.nm)))
SELECT g.sets, g.op, g.nm, k.kernel, g.* EXCLUDE (sets, op, nm, kernel_id)
FROM grouped g LEFT JOIN (SELECT DISTINCT kernel_id, kernel FROM kernel_ids) k
    ON k.kernel_id = g.kernel_id
"""


def _formulas(bits: str | None, formulas: list[str]) -> str | None:
    """A group's formulas from its bit string (bit i: ``formulas[i]``), sorted, joined."""
    if bits is None:
        return None
    return "; ".join(f for f, bit in zip(formulas, bits, strict=True) if bit == "1")


class _Group(msgspec.Struct, frozen=True):
    """One row of _GROUPED: the dispatches of one group (a column its set leaves out: None)."""

    name: str | None
    dims: str | None
    types: str | None
    kernel: str | None
    ceiling: str | None
    calls: int  # distinct operator calls, each at its first dispatch (a dispatch no operator
    # launched counts as one): the operator set's count, where a call's dispatches all fall
    dispatches: int
    time_ns: float | None
    longest_ns: float | None
    flops: float | None
    bytes: float | None
    with_flops: int
    with_bytes: int
    worked: int  # dispatches that did an operator call's work, or carry their own annotation
    worked_ns: float | None
    formula: str | None

    @property
    def key(self) -> tuple[str | None, str | None, str | None]:
        return (self.name, self.dims, self.types)


def _table(ops: list[_Group], kernels: list[_Group], total: float) -> Operators:
    """The operator rows by kernel time (then name, dims, types), the first TOP of them."""
    by_key: dict[tuple[str | None, str | None, str | None], list[_Group]] = defaultdict(list)
    for k in kernels:
        by_key[k.key].append(k)
    linked = sorted(
        (g for g in ops if g.name is not None),
        key=lambda g: (-float(g.time_ns or 0), g.name or "", g.dims or "", g.types or ""),
    )
    unlinked = [g for g in ops if g.name is None]
    rest = linked[TOP:]
    return Operators(
        rows=tuple(_row(g, by_key[g.key], total) for g in linked[:TOP]),
        others=len(rest),
        others_ns=sum(float(g.time_ns or 0) for g in rest),
        unlinked_dispatches=sum(g.dispatches for g in unlinked),
        unlinked_ns=sum(float(g.time_ns or 0) for g in unlinked),
        fp32_matmul="",
    )


def _row(g: _Group, kernels: list[_Group], total: float) -> OperatorRow:
    time = float(g.time_ns or 0)
    longest = sorted(kernels, key=lambda k: (-float(k.longest_ns or 0), k.kernel or ""))
    return OperatorRow(
        name=str(g.name),
        dims=g.dims,
        types=g.types,
        calls=g.calls,
        dispatches=g.dispatches,
        time_ns=time,
        share=time / total if total else 0.0,
        kernels=tuple(str(k.kernel) for k in longest),
        flops=float(g.flops or 0) if g.with_flops else None,
        bytes=float(g.bytes or 0) if g.with_bytes else None,
        formula=g.formula,
        why=None if g.with_flops or g.with_bytes else why_unknown(str(g.name), g.dims, g.types),
    )


def _launched_by(groups: list[_Group]) -> dict[str, str]:
    """By kernel, the operator whose calls hold most of its time (of a tie, the first name)."""
    best: dict[str, tuple[float, str]] = {}
    for g in groups:
        if g.name is None or g.kernel is None:
            continue
        mine = (-float(g.time_ns or 0), g.name)
        if g.kernel not in best or mine < best[g.kernel]:
            best[g.kernel] = mine
    return {k: name for k, (_, name) in sorted(best.items())}


def _work(groups: list[_Group]) -> dict[str, Work]:
    """Work by kernel name: FLOPs under their ceilings, bytes as the compulsory HBM traffic
    of the operands; over the dispatches that did an operator's work, whose time the
    roofline then divides by (``rate_time_ns``)."""
    flops: dict[str, dict[str, float]] = defaultdict(dict)
    nbytes: dict[str, float] = defaultdict(float)
    covered: dict[str, int] = defaultdict(int)
    time: dict[str, float] = defaultdict(float)
    formulas: dict[str, set[str]] = defaultdict(set)
    for g in groups:
        if not g.worked or g.kernel is None:
            continue
        k = g.kernel
        if g.with_flops and g.flops:  # no FLOPs (data movement) is no compute work
            key = g.ceiling if g.ceiling is not None else UNKNOWN_TYPE
            flops[k][key] = flops[k].get(key, 0.0) + float(g.flops)
        if g.with_bytes:
            nbytes[k] += float(g.bytes or 0)
        covered[k] += g.worked
        time[k] += float(g.worked_ns or 0)
        formulas[k].update(g.formula.split("; ") if g.formula else ())
    return {
        k: Work(
            flops=flops.get(k),
            bytes={"hbm": nbytes[k]} if k in nbytes else {},
            source=_source(formulas[k]),
            dispatches=covered[k],
            rate_time_ns=time[k],
            bytes_bound=any(f.startswith(BUFFER_COUNTS) for f in formulas[k]),
        )
        for k in covered
    }


# the formulas whose bytes count each buffer a kernel was given, not what it read of them
BUFFER_COUNTS = ("annotation", "Inductor Triton kernel")


def _source(formulas: set[str]) -> str:
    if formulas == {"annotation"}:
        return "annotations (Inductor kernel_flop/kernel_num_gb)"
    return "shapes"
