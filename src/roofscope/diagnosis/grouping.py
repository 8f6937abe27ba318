"""Findings as a person reads them: one entry per cause, with the kernels it covers.

A rule that fires on many kernels with one prescription (167 single-dispatch benchmarks,
a dozen kernels near their compute roof) is one cause: its findings fold into one
``FindingGroup`` listing its kernels, largest gain first. Groups rank as findings do
(``findings.rank_key``): validity problems first, then by the group's total gain (the
kernels' gain shares are of disjoint time, so they add up), severity, and the order the
findings came in. Findings about the whole program stay one to a group. The per-kernel
findings stay as they are (``Report.findings``, the JSON's ``findings[]``): a group only
points at them.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from roofscope.diagnosis.findings import SEVERITY_ORDER, Finding, Kind, Severity
from roofscope.model.words import sig


class FindingGroup(msgspec.Struct, frozen=True):
    """The findings of one rule with one prescription, largest gain first (ties in their
    ranked order)."""

    rule: str
    kind: Kind
    prescription: str
    members: tuple[int, ...]  # indices into the ranked findings, largest gain first
    findings: tuple[Finding, ...]

    @property
    def severity(self) -> Severity:
        """The highest of its findings'."""
        return min((f.severity for f in self.findings), key=SEVERITY_ORDER.__getitem__)

    @property
    def kernels(self) -> tuple[str, ...]:
        return tuple(f.kernel for f in self.findings if f.kernel is not None)

    @property
    def gain_share(self) -> float | None:
        """The sum of its findings' gain shares; None when none has one."""
        gains = [f.gain_share for f in self.findings if f.gain_share is not None]
        return sum(gains) if gains else None

    @property
    def program_speedup_bound(self) -> float | None:
        """Amdahl over the group's whole gain."""
        gain = self.gain_share
        return None if gain is None or gain >= 1 else 1 / (1 - gain)

    @property
    def formula(self) -> str | None:
        """The group's gain as the sum of its kernels' (a single finding: its own formula)."""
        gain = self.gain_share
        if len(self.findings) == 1:
            return self.findings[0].formula
        if gain is None or gain >= 1:
            return None
        counted = sum(f.gain_share is not None for f in self.findings)
        return (
            f"gain = sum over {counted} kernels of share x (1 - efficiency) = {gain:.3f}; "
            f"program speedup <= 1 / (1 - {gain:.3f}) = {sig(1 / (1 - gain))}x"
        )

    @property
    def same_summary(self) -> bool:
        """Whether every finding says the same words (a validity check's fixed sentence)."""
        return len({f.summary for f in self.findings}) == 1


def grouped(findings: Sequence[Finding]) -> tuple[FindingGroup, ...]:
    """The ranked findings folded by (kind, rule, prescription), the groups ranked."""
    slots: dict[tuple[str, str, str] | int, list[int]] = {}
    for i, f in enumerate(findings):
        key = (f.kind, f.rule, f.prescription) if f.kernel is not None else i
        slots.setdefault(key, []).append(i)
    groups = [_group(findings, members) for members in slots.values()]
    return tuple(sorted(groups, key=group_rank_key))


def _group(findings: Sequence[Finding], members: list[int]) -> FindingGroup:
    order = sorted(members, key=lambda i: (-(findings[i].gain_share or 0.0), i))
    first = findings[members[0]]
    chosen = tuple(findings[i] for i in order)
    return FindingGroup(first.rule, first.kind, first.prescription, tuple(order), chosen)


def group_rank_key(g: FindingGroup) -> tuple[bool, float, int, int]:
    """Validity first, then the group's total gain, severity, the first finding's place."""
    return (g.kind != "validity", -(g.gain_share or 0.0), SEVERITY_ORDER[g.severity],
            min(g.members))  # fmt: skip
