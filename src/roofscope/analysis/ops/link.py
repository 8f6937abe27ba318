"""Each dispatch tied to the host operator that launched it, and to the operator whose work
it did (docs/formats/pytorch-kineto.md, "Operators and their kernels").

A kernel's correlation id leads to its launch, and the launch to the innermost operator of
its thread around it (the reader's sweep: ``op_launches.op_id``), the kernel's *operator*.
Its *work operator* is the innermost of that operator and those around it (``parent``)
whose work is known: annotated by a compiler (Inductor's ``kernel_flop``/``kernel_num_gb``)
or given by a formula of :mod:`roofscope.analysis.work.shapes`, so that ``aten::linear`` ->
``aten::addmm`` -> kernel counts the GEMM once, as ``aten::addmm``'s shapes give it. A
graph-replayed kernel carries its graph launch's correlation id: its operator is the one
around the replay, unless a capture trace of its graph matched it to a captured launch
(``graph_kernel_ops``, :mod:`roofscope.readers.torch.graph_merge`): then the captured
launch's operator is its own, as an eager kernel's.

One operator call's work goes to the longest of the kernels it launched (a GEMM and the
small reduction of its split-K, the attention kernel and its combine): that kernel did it;
the others of the call are left without. A kernel that only moves data, as its name says (a
copy, a fill, a layout transpose: model/categories' memory kernels), is passed over while
the call has another: MIOpen's convolutions launch transposes around the convolution
kernel, and one can outlast it. A kernel event's own annotation wins over them.
A captured call runs once per replay of its graph: each replay (graph launch) is a call of
its own, with its own work.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

import msgspec

from roofscope.analysis.ops.steps import op_steps
from roofscope.analysis.work.shapes import (
    NoWork,
    OpCall,
    OpWork,
    has_formula,
    op_work,
    work_or_reason,
)
from roofscope.errors import RoofscopeError
from roofscope.model.access import (
    Relation,
    graph_kernel_ops,
    kernel_annotations,
    names,
    op_launches,
    operators,
    query,
)
from roofscope.model.categories import Category, category_of
from roofscope.model.profile import Profile

# each launched-from operator (leaf) and the operators around it, innermost (depth 1) first:
# ids alone (carrying every operator's columns, their texts, through the walk and its join
# took 430 MiB at the 1 M-kernel trace's 1 M leaves)
_CHAIN = """
, chain AS (
    WITH RECURSIVE c(source, leaf, op_id, depth) AS (
        SELECT DISTINCT source, op_id, op_id, 1 FROM (
            SELECT source, op_id FROM launch UNION ALL SELECT source, op_id FROM gk)
        WHERE op_id IS NOT NULL
        UNION ALL
        SELECT c.source, c.leaf, o.parent, c.depth + 1 FROM c
        JOIN (SELECT source, op_id, parent FROM ops WHERE parent IS NOT NULL) o
            ON o.source = c.source AND o.op_id = c.op_id)
    SELECT * FROM c)
"""


class Signature(msgspec.Struct, frozen=True):
    """One distinct operator call as recorded: name and inputs (JSON text, or None)."""

    name: str
    dims: str | None
    types: str | None
    concrete: str | None
    step: str | None = None  # the serving step range around a paged attention (ops/steps.py)

    def call(self) -> OpCall | None:
        """The decoded call; None where an input list is no JSON list."""
        dims, types = _list(self.dims), _list(self.types)
        if dims is None or types is None:
            return None
        concrete = _list(self.concrete) or []
        return OpCall(self.name, dims, [str(t) for t in types], concrete, self.step or "")


def _list(text: str | None) -> list[Any] | None:
    """A recorded input list, from the text the reader kept (Python's ``str`` of it)."""
    if text is None:
        return []
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, list) else None


# an operator's call signature, its operator key and its name as 64-bit hashes of their
# texts: joined and grouped in their place, the texts are looked up for the few distinct
# ones (the 1 M-kernel trace's 1 M operators carried their four texts through each join
# and grouping: 200 MiB of the hash table of signatures' join alone)
SIG_KEY = "hash(name, dims, types, concrete, step)"
OP_KEY = "hash(name, dims, types)"
NAME_KEY = "hash(name)"


class Calls(msgspec.Struct, frozen=True):
    """The distinct operator calls: those that launched kernels or hold one that did
    (``used``), and the texts of each operator key and name key."""

    used: list[Signature]
    operators: dict[int, tuple[str, str | None, str | None]]  # OP_KEY -> name, dims, types
    names: dict[int, str]  # NAME_KEY -> name


def signatures(profile: Profile) -> list[Signature]:
    """The distinct operator calls that launched kernels or hold one that did."""
    return calls(profile).used


def calls(profile: Profile) -> Calls:
    """The distinct operator calls and their keys, asked once per profile."""
    return profile.derived(("operator-calls",), lambda: _calls(profile))


# each operator with the serving step around it, where it is a paged attention (ops/steps.py)
_STEPPED = "ops o LEFT JOIN steps t ON t.source = o.source AND t.op_id = o.op_id"


def _calls(profile: Profile) -> Calls:
    sql = f"""{_CHAIN}, keyed AS MATERIALIZED (SELECT o.source, o.op_id, {SIG_KEY} AS sig
            FROM {_STEPPED})
        , used AS (SELECT DISTINCT o.sig FROM keyed o
            SEMI JOIN chain c ON c.source = o.source AND c.op_id = o.op_id)
        SELECT *, sig IN (SELECT sig FROM used) FROM (SELECT DISTINCT name, dims, types,
            concrete, step, {SIG_KEY} AS sig, {OP_KEY}, {NAME_KEY} FROM {_STEPPED})
        ORDER BY ALL"""
    rows = query(profile, op_launches(profile), sql, (), **relations(profile)).fetchall()
    found = Calls([Signature(*r[:5]) for r in rows if r[8]], {}, {})
    keyed: dict[int, Signature] = {}
    for name, dims, types, concrete, step, sig, op, nm, _ in rows:
        _once(keyed, sig, Signature(name, dims, types, concrete, step))
        _once(found.operators, op, (name, dims, types))
        _once(found.names, nm, name)
    return found


def _once(texts: dict[int, Any], key: int, value: object) -> None:
    """``texts[key] = value``, refused where another text has that hash (an odds of 2^-64 a
    pair: the join would merge two operators' rows)."""
    if texts.setdefault(key, value) != value:
        raise RoofscopeError(
            f"two operator signatures share the hash {key}: {texts[key]!r} and {value!r}; "
            "please report this trace to roofscope's issues"
        )


def works(sigs: Sequence[Signature], fp32_matmul: str) -> dict[Signature, OpWork]:
    """The work each signature's formula gives (where one applies); the inputs of an
    operator without one are not decoded (``ast.literal_eval`` of every signature's took 60
    ms of HTA's trace_filter trace)."""
    out = {}
    for sig in (s for s in sigs if has_formula(s.name)):
        call = sig.call()
        work = None if call is None else op_work(call, fp32_matmul=fp32_matmul)
        if work is not None:
            out[sig] = work
    return out


def why_unknown(name: str, dims: str | None, types: str | None) -> str:
    """Why an operator signature whose kernels got no work has none: no formula for it, its
    shapes not recorded, or what its formula found missing (a paged attention's sequence
    lengths, a MoE's expert weights: :mod:`roofscope.analysis.work.shapes`)."""
    if not has_formula(name):
        return "no formula for this operator"
    if dims is None:
        return "its input shapes are not recorded (record_shapes=True records them)"
    call = Signature(name, dims, types, None).call()
    found = None if call is None else work_or_reason(call)
    if isinstance(found, NoWork):
        return found.reason.removeprefix(f"{name}: ")
    return "its recorded inputs give no work"


_LINKED = """
, keyed AS MATERIALIZED (SELECT o.source, o.op_id, o.flops, o.bytes, {SIG_KEY} AS sig,
    {OP_KEY} AS op, {NAME_KEY} AS nm FROM {_STEPPED})
, sigw AS (SELECT unnest($1::VARCHAR[]) AS name, unnest($2::VARCHAR[]) AS dims,
    unnest($3::VARCHAR[]) AS types, unnest($4::VARCHAR[]) AS concrete,
    unnest($5::DOUBLE[]) AS w_flops, unnest($6::DOUBLE[]) AS w_bytes,
    unnest($7::VARCHAR[]) AS ceiling, unnest($8::VARCHAR[]) AS formula,
    unnest($9::VARCHAR[]) AS step)
, known AS (
    SELECT s.source, s.op_id, s.flops, s.bytes, w.w_flops, w.w_bytes, w.ceiling, w.formula,
        s.flops IS NOT NULL OR s.bytes IS NOT NULL AS noted
    FROM keyed s
    LEFT JOIN (SELECT *, {SIG_KEY} AS sig FROM sigw) w ON w.sig = s.sig
    WHERE s.flops IS NOT NULL OR s.bytes IS NOT NULL OR w.formula IS NOT NULL)
, tagged AS (
    SELECT c.leaf, c.depth, k.* FROM chain c
    JOIN known k ON k.source = c.source AND k.op_id = c.op_id)
, per_leaf AS (
    SELECT source, leaf, arg_min(op_id, depth) AS work_row,
        arg_min(CASE WHEN noted THEN flops ELSE w_flops END, depth) AS o_flops,
        arg_min(CASE WHEN noted THEN bytes ELSE w_bytes END, depth) AS o_bytes,
        arg_min(ceiling, depth) AS ceiling,
        arg_min(CASE WHEN noted THEN 'annotation' ELSE formula END, depth) AS formula
    FROM tagged GROUP BY source, leaf)
, disp AS (
    SELECT d.row_id, d.source, d.name_id, d.dispatch_id, d.start_ns,
        d.end_ns - d.start_ns AS dur, coalesce(g.op_id, l.op_id) AS op_row,
        CASE WHEN g.row_id IS NULL THEN l.op_id ELSE g.op_id END AS leaf,
        CASE WHEN g.row_id IS NOT NULL THEN d.dispatch_id END AS replay
    FROM d LEFT JOIN launch l ON l.source = d.source AND l.correlation = d.dispatch_id
    LEFT JOIN gk g ON g.row_id = d.row_id)
, ranked AS (
    SELECT d.*, p.work_row, row_number() OVER (PARTITION BY d.source,
        coalesce(p.work_row, d.op_row), d.replay,
        CASE WHEN p.work_row IS NULL AND d.op_row IS NULL THEN d.row_id END
        ORDER BY list_contains({MOVES}, d.name_id), d.dur DESC NULLS LAST, d.start_ns,
        d.row_id) AS nth
    FROM disp d LEFT JOIN per_leaf p ON p.source = d.source AND p.leaf = d.leaf)
, assigned AS (
    SELECT r.*, p.o_flops, p.o_bytes, p.ceiling, p.formula,
        a.flops AS k_flops, a.bytes AS k_bytes,
        a.flops IS NOT NULL OR a.bytes IS NOT NULL AS own,
        r.work_row IS NOT NULL AND r.nth = 1 AS given
    FROM ranked r LEFT JOIN per_leaf p ON p.source = r.source AND p.leaf = r.leaf
    LEFT JOIN ann a ON a.source = r.source AND a.correlation = r.dispatch_id
        AND a.start_ns = r.start_ns)
, linked AS (
    SELECT row_id, source, name_id, dur, op_row, coalesce(work_row, op_row) AS call_row,
        nth = 1 AS first,
        CASE WHEN own THEN k_flops WHEN given THEN o_flops END AS flops,
        CASE WHEN own THEN k_bytes WHEN given THEN o_bytes END AS bytes,
        CASE WHEN own OR given THEN ceiling END AS ceiling,
        CASE WHEN own THEN 'annotation' WHEN given THEN formula END AS formula
    FROM assigned)
"""


def linked_sql(profile: Profile, work: dict[Signature, OpWork]) -> tuple[str, list[object]]:
    """Common table expressions ending in ``linked`` (and their parameters), to follow the
    ``WITH`` of :func:`query` over the dispatches ``d`` (``row_id, source, name_id,
    dispatch_id, start_ns, end_ns``) and :func:`relations`. ``linked`` holds per dispatch
    ``row_id, source, name_id, dur``; ``op_row``, its operator (None: none launched it);
    ``call_row``, the operator call it belongs to (its work operator, else its operator);
    ``first``, whether it is the first (longest) dispatch of that call (a dispatch of no
    call is a call of its own);
    and where it did that call's work (its longest kernel) or carries its own annotation:
    ``flops``, ``bytes``, ``ceiling``, ``formula`` ("annotation" for a compiler's)."""
    keys = list(work)
    params: list[object] = [
        [k.name for k in keys],
        [k.dims for k in keys],
        [k.types for k in keys],
        [k.concrete for k in keys],
        [work[k].flops for k in keys],
        [work[k].bytes for k in keys],
        [work[k].ceiling for k in keys],
        [work[k].formula for k in keys],
        [k.step for k in keys],
    ]
    marks = {
        "{SIG_KEY}": SIG_KEY,
        "{OP_KEY}": OP_KEY,
        "{NAME_KEY}": NAME_KEY,
        "{_STEPPED}": _STEPPED,
        "{MOVES}": f"{_moving(profile)}::INTEGER[]",
    }
    sql = f"{_CHAIN} {_LINKED}"
    for mark, key in marks.items():
        sql = sql.replace(mark, key)
    return sql, params


def _moving(profile: Profile) -> list[int]:
    """The name ids of the kernels that only move data, by their names (memory kernels)."""
    rows = names(profile).project("name_id, kernel").fetchall()
    return [int(i) for i, kernel in rows if category_of(str(kernel)) is Category.MEMORY]


def relations(profile: Profile) -> dict[str, Relation]:
    """The relations :func:`linked_sql` names besides the dispatches."""
    return {
        "launch": op_launches(profile),
        "ops": operators(profile),
        "ann": kernel_annotations(profile),
        "gk": graph_kernel_ops(profile),
        "steps": op_steps(profile),
    }
