"""A finding: what a rule or a validity check concluded about a kernel or the program.

Findings are ranked by what fixing them could save of the whole program. For a kernel with
a time share ``s`` of all kernel time and a roofline efficiency ``e``, reaching its roof
would save at most ``s * (1 - e)`` of the kernel time (the gain share), and by Amdahl's law
the kernels would run at most ``1 / (1 - s * (1 - e))`` times faster (the program speedup
bound). Program-level findings (idle gaps, copies) carry their own gain share: the idle or
copy time that could be hidden, over the wall time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from roofscope.model.words import sig

Kind = Literal["validity", "bottleneck", "program"]
Severity = Literal["high", "medium", "low"]
Value = float | int | str | None
SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


class Finding(msgspec.Struct, frozen=True):
    rule: str
    kernel: str | None  # None for findings about the whole program
    kind: Kind
    severity: Severity
    summary: str  # one line: what is wrong, with its numbers
    prescription: str  # what to change
    evidence: dict[str, Value] = msgspec.field(default_factory=dict)
    thresholds: dict[str, float] = msgspec.field(default_factory=dict)
    gain_share: float | None = None  # the share of kernel (or wall) time fixing it could save
    formula: str | None = None  # the gain's arithmetic, with the numbers

    @property
    def program_speedup_bound(self) -> float | None:
        """Amdahl: the whole program's speedup if the gain were fully won."""
        if self.gain_share is None or self.gain_share >= 1:
            return None
        return 1 / (1 - self.gain_share)


def validity_of(findings: Iterable[Finding], kernel: str) -> tuple[str, ...]:
    """The validity findings (rule names) about one kernel: shown beside its numbers, and
    setting its point aside from the roofline's axes."""
    return tuple(f.rule for f in findings if f.kind == "validity" and f.kernel == kernel)


def kernel_gain(share: float | None, efficiency: float | None) -> tuple[float | None, str | None]:
    """``share * (1 - efficiency)`` and the formula with its numbers."""
    if share is None or efficiency is None:
        return None, None
    gain = share * max(0.0, 1 - efficiency)
    formula = (
        f"gain = share x (1 - efficiency) = {share:.3f} x (1 - {efficiency:.3f}) = {gain:.3f}; "
        f"program speedup <= 1 / (1 - {gain:.3f}) = {sig(1 / (1 - gain))}x"
        if gain < 1
        else None
    )
    return gain, formula


def ranked(findings: Iterable[Finding]) -> list[Finding]:
    """Validity problems first (they must be fixed before anything else is believed), then
    by gain share (largest first), severity, and name."""
    return sorted(findings, key=rank_key)


def rank_key(f: Finding) -> tuple[bool, float, int, str, str]:
    return (f.kind != "validity", -(f.gain_share or 0.0), SEVERITY_ORDER[f.severity],
            f.kernel or "", f.rule)  # fmt: skip
