"""Each paged-attention operator call and the serving step range around it, whose name
gives the step's sequence-length sums (:mod:`roofscope.analysis.work.shapes.steps`).

An eager call's step is the innermost range of its process whose name reads like a sums
annotation and that holds the call's start. A call captured into a graph
(``--graph-capture``) ran at each replay: its step is the one range around the graph
launches of the replayed kernels matched to it, where all of them lie in ranges of one
name (a graph replayed in steps of other sums gives no step: one op, one count). Only the
operators with a paged-attention formula are looked up."""

from __future__ import annotations

from roofscope.analysis.work.shapes.paged import PAGED_ATTENTION
from roofscope.analysis.work.shapes.steps import STEP_LIKE
from roofscope.model.access import (
    Relation,
    all_dispatches,
    graph_kernel_ops,
    operators,
    range_launches,
    user_ranges,
)
from roofscope.model.profile import Profile

_NAMES = ", ".join(f"'{name}'" for name in sorted(PAGED_ATTENTION))
_LIKE = " OR ".join(f"name LIKE '{pattern}' ESCAPE '\\'" for pattern in STEP_LIKE)
_STEPS = f"""
paged AS (SELECT source, op_id, start_ns, end_ns FROM ops WHERE name IN ({_NAMES}))
, steps AS (SELECT source, range_id, name, start_ns, end_ns FROM ranges WHERE {_LIKE})
, eager AS (
    SELECT p.source, p.op_id, arg_min(s.name, s.end_ns - s.start_ns) AS step FROM paged p
    JOIN steps s ON s.source = p.source AND p.start_ns BETWEEN s.start_ns AND s.end_ns
    GROUP BY p.source, p.op_id)
, launched_in AS (
    SELECT h.source, h.correlation, s.name FROM held h
    JOIN steps s ON s.source = h.source AND s.range_id = h.range_id)
, replayed AS (
    SELECT p.source, p.op_id, l.name FROM paged p
    JOIN ops o ON o.source = p.source AND o.start_ns BETWEEN p.start_ns AND p.end_ns
    JOIN gk g ON g.source = o.source AND g.op_id = o.op_id
    JOIN disp d ON d.row_id = g.row_id
    LEFT JOIN launched_in l ON l.source = d.source AND l.correlation = d.dispatch_id)
, captured AS (
    SELECT r.source, r.op_id, min(r.name) AS step FROM replayed r
    ANTI JOIN eager e ON e.source = r.source AND e.op_id = r.op_id
    GROUP BY r.source, r.op_id HAVING count(DISTINCT r.name) = 1 AND count(r.name) = count(*))
SELECT * FROM eager UNION ALL SELECT * FROM captured
"""


def op_steps(profile: Profile) -> Relation:
    """``source, op_id, step``: each paged-attention call inside a step range, its name."""
    return profile.kept(("op_steps",), lambda: _op_steps(profile))


def _op_steps(profile: Profile) -> Relation:
    ops = operators(profile)
    if not ops.filter(f"name IN ({_NAMES})").limit(1).fetchall():  # most traces: no step
        return ops.filter("false").project("source, op_id, NULL::VARCHAR AS step")
    tables = {
        "ops": operators(profile),
        "ranges": user_ranges(profile),
        "held": range_launches(profile),
        "gk": graph_kernel_ops(profile),
        "disp": all_dispatches(profile),
    }
    ctes = ", ".join(f"{name} AS ({rel.sql})" for name, rel in tables.items())
    return Relation(profile.con, f"WITH {ctes}, {_STEPS}")
