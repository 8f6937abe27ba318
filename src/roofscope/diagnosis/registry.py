"""Every check and rule of the diagnosis, in the order they run. Adding one is one function
(of a :class:`~roofscope.diagnosis.evidence.KernelView` or a
:class:`~roofscope.diagnosis.evidence.ProgramView`, returning a Finding, a list of them, or
None) and one line here.

- ``validity``: per studied kernel, first. A finding that is no caveat (validity.CAVEATS)
  stops that kernel's verdicts: a diagnosis built on a wrong number is worse than none.
- ``kernel``: per studied kernel (hot, or on the roofline): the bottleneck verdicts.
- ``program``: once per profile: idle time, copies, communication, launch overhead, ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from roofscope.diagnosis import rules, validity
from roofscope.diagnosis.evidence import KernelView, ProgramView
from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.idle import idle_gaps

Found = Finding | Sequence[Finding] | None
View = TypeVar("View", KernelView, ProgramView)


@dataclass(frozen=True)
class Registry:
    validity: tuple[Callable[[KernelView], Found], ...]
    kernel: tuple[Callable[[KernelView], Found], ...]
    program: tuple[Callable[[ProgramView], Found], ...]


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
    ),
    program=(
        idle_gaps,
        rules.copies_dominate,
        rules.communication_share,
        rules.short_kernels,
        rules.stragglers,
    ),
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
