"""Each paged-attention operator call and the serving step range around it, whose name
gives the step's sequence-length sums (:mod:`roofscope.analysis.work.shapes.steps`): the
innermost range of the call's process whose name reads like a sums annotation and that holds
the call's start. Only the operators with a paged-attention formula are looked up."""

from __future__ import annotations

from roofscope.analysis.work.shapes.paged import PAGED_ATTENTION
from roofscope.analysis.work.shapes.steps import STEP_LIKE
from roofscope.model.access import Relation, operators, user_ranges
from roofscope.model.profile import Profile

_NAMES = ", ".join(f"'{name}'" for name in sorted(PAGED_ATTENTION))
_LIKE = " OR ".join(f"step LIKE '{pattern}' ESCAPE '\\'" for pattern in STEP_LIKE)


def op_steps(profile: Profile) -> Relation:
    """``source, op_id, step``: each paged-attention call inside a step range, its name."""
    return profile.kept(("op_steps",), lambda: _op_steps(profile))


def _op_steps(profile: Profile) -> Relation:
    calls = operators(profile).filter(f"name IN ({_NAMES})")
    calls = calls.select("source AS o_source, op_id, start_ns AS o_start")
    steps = user_ranges(profile).select(
        "source AS r_source, name AS step, start_ns AS r_start, end_ns AS r_end"
    )
    inside = calls.join(
        steps.filter(_LIKE), "o_source = r_source AND o_start BETWEEN r_start AND r_end"
    )
    return inside.aggregate(
        "o_source AS source, op_id, arg_min(step, r_end - r_start) AS step", "o_source, op_id"
    )
