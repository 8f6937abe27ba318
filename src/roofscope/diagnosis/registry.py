"""Every check and rule of the diagnosis, in the order they run. Adding one is one function
(of a :class:`~roofscope.diagnosis.evidence.KernelView` or a
:class:`~roofscope.diagnosis.evidence.ProgramView`, returning a Finding, a list of them, or
None) and one line in :data:`RULES` (docs/ARCHITECTURE.md, "Add a diagnosis rule"); code
outside roofscope adds its rules with :func:`add`, after the built-in ones.

- ``validity``: per studied kernel, first. A finding that is no caveat (validity.CAVEATS)
  stops that kernel's verdicts: a diagnosis built on a wrong number is worse than none.
- ``kernel``: per studied kernel (hot, or on the roofline): the bottleneck verdicts.
- ``program``: once per profile: idle time, copies, communication, launch overhead, ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import msgspec

from roofscope.diagnosis import launch, rules, validity
from roofscope.diagnosis.evidence import KernelView, ProgramView
from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.graphs import graph_kernels_missing
from roofscope.diagnosis.idle import idle_gaps
from roofscope.diagnosis.sync_per_launch import sync_per_launch

Found = Finding | Sequence[Finding] | None
View = TypeVar("View", KernelView, ProgramView)
KernelCheck = Callable[[KernelView], Found]
ProgramCheck = Callable[[ProgramView], Found]


class Registry(msgspec.Struct, frozen=True):
    validity: tuple[KernelCheck, ...]
    kernel: tuple[KernelCheck, ...]
    program: tuple[ProgramCheck, ...]


RULES = Registry(
    validity=(
        validity.no_time,
        validity.roof_standing,
        validity.average_outside_range,
        validity.counters_missing,
        validity.pass_dispatch_mismatch,
        validity.metric_above_peak,
        validity.single_dispatch,
        validity.warm_up,
    ),
    kernel=(
        rules.roofline_rule,
        rules.occupancy_limited,
        rules.low_achieved_occupancy,
        rules.low_l2_hit_rate,
        rules.lds_bank_conflicts,
        rules.low_active_threads,
        launch.launch_too_small,
    ),
    program=(
        idle_gaps,
        rules.copies_dominate,
        rules.communication_share,
        rules.short_kernels,
        rules.stragglers,
        graph_kernels_missing,
        sync_per_launch,
    ),
)


def add(
    *,
    validity: Sequence[KernelCheck] = (),
    kernel: Sequence[KernelCheck] = (),
    program: Sequence[ProgramCheck] = (),
) -> None:
    """Register checks from outside roofscope (a plugin, a test), run after the built-in
    ones of their stage."""
    global RULES
    RULES = Registry(
        validity=(*RULES.validity, *validity),
        kernel=(*RULES.kernel, *kernel),
        program=(*RULES.program, *program),
    )


def run(checks: Sequence[Callable[[View], Found]], view: View) -> list[Finding]:
    """The findings of ``checks`` on ``view``, in the checks' order."""
    out: list[Finding] = []
    for check in checks:
        found = check(view)
        if isinstance(found, Finding):
            out.append(found)
        elif found is not None:
            out += found
    return out
