"""The operator level of a PyTorch trace: per operator call signature (name, input shapes and
types), its calls, the GPU time and kernels it launched and its share; and per kernel, the
work its operators' shapes (or a compiler's annotations) give, for the roofline.

See :mod:`roofscope.analysis.ops.link` for which operator a kernel belongs to."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.ops.link import linked_sql, relations, signatures, works
from roofscope.analysis.work.model import Work
from roofscope.analysis.work.shapes import FP32_MATMUL
from roofscope.model.access import is_empty, names, op_launches, query
from roofscope.model.profile import Profile
from roofscope.model.selection import Selection, dispatches

TOP = 50  # operator rows kept (by GPU time); the rest are summed in ``others``
UNKNOWN_TYPE = "unknown"  # the ceiling key of annotated FLOPs whose data type is unknown


@dataclass(frozen=True)
class OperatorRow:
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


@dataclass(frozen=True)
class Operators:
    """The operator table; ``unlinked_ns``: kernel time no operator launched (graph replays
    whose launch had none around it, kernels of other processes)."""

    rows: tuple[OperatorRow, ...]
    others: int  # operator signatures beyond TOP
    others_ns: float
    unlinked_dispatches: int
    unlinked_ns: float
    fp32_matmul: str


@dataclass(frozen=True)
class OperatorView:
    table: Operators | None  # None: the input has no operators
    work: dict[str, Work]  # by kernel name, from shapes or annotations
    launched_by: dict[str, str]  # by kernel name: the operator that launched most of its time


def operator_view(
    profile: Profile, selection: Selection, hot: Hotspots, fp32_matmul: str
) -> OperatorView:
    """The operator table and the kernels' work from their operators; ``fp32_matmul``: how
    fp32 GEMMs ran (a key of ``shapes.FP32_MATMUL``)."""
    if is_empty(profile, op_launches(profile)):
        return OperatorView(None, {}, {})
    sql, params = linked_sql(profile, works(signatures(profile), fp32_matmul))
    more = {**relations(profile), "named": names(profile)}
    sel = dispatches(profile, selection)
    rows = query(profile, sel, sql + _BY_OPERATOR, params, **more).fetchall()
    per_kernel = query(profile, sel, sql + _BY_KERNEL, params, **more).fetchall()
    launched = query(profile, sel, sql + _LAUNCHED_BY, params, **more).fetchall()
    table = _table(rows, hot.total_ns or 0.0, FP32_MATMUL[fp32_matmul])
    return OperatorView(table, _work(per_kernel), {str(k): str(op) for k, op in launched})


_BY_OPERATOR = """
SELECT o.name, o.dims, o.types, count(DISTINCT l.call_row), count(*), sum(l.dur),
    list(n.kernel ORDER BY l.dur DESC, n.kernel), sum(l.flops), sum(l.bytes),
    string_agg(DISTINCT l.formula, '; ' ORDER BY l.formula), count(l.flops), count(l.bytes)
FROM linked l LEFT JOIN ops o ON o.source = l.source AND o.op_id = l.call_row
JOIN named n ON n.name_id = l.name_id
GROUP BY o.name, o.dims, o.types
ORDER BY sum(l.dur) DESC NULLS LAST, o.name, o.dims NULLS FIRST, o.types NULLS FIRST
"""

_LAUNCHED_BY = """
SELECT kernel, name FROM (
    SELECT n.kernel, o.name, row_number() OVER (PARTITION BY n.kernel
        ORDER BY sum(l.dur) DESC NULLS LAST, o.name) AS nth
    FROM linked l JOIN ops o ON o.source = l.source AND o.op_id = l.call_row
    JOIN named n ON n.name_id = l.name_id GROUP BY n.kernel, o.name)
WHERE nth = 1 ORDER BY kernel
"""

_BY_KERNEL = """
SELECT n.kernel, l.ceiling, sum(l.flops), sum(l.bytes), count(*), sum(l.dur),
    string_agg(DISTINCT l.formula, '; ' ORDER BY l.formula)
FROM linked l JOIN named n ON n.name_id = l.name_id
WHERE l.flops IS NOT NULL OR l.bytes IS NOT NULL
GROUP BY n.kernel, l.ceiling ORDER BY n.kernel, l.ceiling NULLS LAST
"""


def _table(rows: list[tuple[Any, ...]], total: float, fp32_matmul: str) -> Operators:
    linked = [r for r in rows if r[0] is not None]
    unlinked = [r for r in rows if r[0] is None]
    rest = linked[TOP:]
    return Operators(
        rows=tuple(_row(r, total) for r in linked[:TOP]),
        others=len(rest),
        others_ns=sum(float(r[5] or 0) for r in rest),
        unlinked_dispatches=sum(int(r[4]) for r in unlinked),
        unlinked_ns=sum(float(r[5] or 0) for r in unlinked),
        fp32_matmul=fp32_matmul,
    )


def _row(r: tuple[Any, ...], total: float) -> OperatorRow:
    name, dims, types, calls, n, time_ns, kernels, flops, nbytes, formula, nf, nb = r
    time = float(time_ns or 0)
    return OperatorRow(
        name=str(name),
        dims=None if dims is None else str(dims),
        types=None if types is None else str(types),
        calls=int(calls),
        dispatches=int(n),
        time_ns=time,
        share=time / total if total else 0.0,
        kernels=tuple(dict.fromkeys(str(k) for k in kernels)),
        flops=float(flops) if nf else None,
        bytes=float(nbytes) if nb else None,
        formula=None if formula is None else str(formula),
    )


def _work(rows: list[tuple[Any, ...]]) -> dict[str, Work]:
    """Work by kernel name: FLOPs under their ceilings, bytes as the compulsory HBM traffic
    of the operands; over the dispatches that did an operator's work, whose time the
    roofline then divides by (``rate_time_ns``)."""
    flops: dict[str, dict[str, float]] = defaultdict(dict)
    nbytes: dict[str, float] = defaultdict(float)
    covered: dict[str, int] = defaultdict(int)
    time: dict[str, float] = defaultdict(float)
    formulas: dict[str, set[str]] = defaultdict(set)
    for kernel, ceiling, f, b, n, dur, formula in rows:
        k = str(kernel)
        if f:  # no FLOPs (data movement) is no compute work: placed by its bytes
            key = str(ceiling) if ceiling is not None else UNKNOWN_TYPE
            flops[k][key] = flops[k].get(key, 0.0) + float(f)
        if b is not None:
            nbytes[k] += float(b)
        covered[k] += int(n)
        time[k] += float(dur or 0)
        formulas[k].update(str(formula).split("; ") if formula else ())
    return {
        k: Work(
            flops=flops.get(k),
            bytes={"hbm": nbytes[k]} if k in nbytes else {},
            source=_source(formulas[k]),
            dispatches=covered[k],
            rate_time_ns=time[k],
        )
        for k in covered
    }


def _source(formulas: set[str]) -> str:
    if formulas == {"annotation"}:
        return "annotations (Inductor kernel_flop/kernel_num_gb)"
    return "shapes"
