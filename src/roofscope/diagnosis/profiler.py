"""The profiler's own words first: Nsight Compute's rule rows as findings.

Where Nsight Compute's rules name a cause for a kernel, that kernel's findings lead with them,
each with ncu's whole text and its estimated speedup, and roofscope's own finding on the same
cause folds into it. What each rule kind becomes (NvRules' MsgType; speedup types as the
NvRules API defines them, docs.nvidia.com/nsight-compute/NvRulesAPI):

- ``OPT`` with a ``global`` speedup ("the proportional reduction in runtime of the entire
  workload", the kernel): gain = share x speedup, severity as roofscope's own rules (high from
  10 % of all kernel time, medium from 2 %);
- ``OPT`` with a ``local`` speedup ("increase in efficiency of the hardware usage ... in
  isolation", not runtime) or none, and ``WRN`` (Nsight Compute 2021-2022 gave its hints as WRN,
  without estimates: leleucas-opanalysis-a100): no gain; severity from the kernel's share (the
  most any fix could save), at most medium;
- ``INF`` (and any other kind): information, never a finding; kept in ``profiler_rules``.

A roofscope finding names the same cause as an ncu rule where SAME_CAUSE pairs them; it folds
into the first such rule of its kernel (largest estimate first). Its summary and numbers stay
as evidence, its gain and severity where ncu estimates no runtime gain; its prescription
follows ncu's text only where that text names no remedy of its own (SAME_CAUSE's flag, read
from the texts ncu's rule scripts write). A rule that folds nothing points at its section.
"""

from __future__ import annotations

import re

import msgspec
from msgspec.structs import replace

from roofscope.diagnosis.findings import SEVERITY_ORDER, Finding, Severity, rank_key
from roofscope.diagnosis.launch import RULE as LAUNCH_RULE
from roofscope.diagnosis.launch import SMALL_GRID
from roofscope.diagnosis.rules import severity
from roofscope.model.words import plain, sig

# the ncu rule -> (the roofscope rule naming the same cause, whether ncu's text gives a remedy)
SAME_CAUSE: dict[str, tuple[str, bool]] = {
    # "...'s theoretical occupancy (16.7%) is limited by the number of required registers."
    "TheoreticalOccupancy": ("occupancy-limited", False),
    # "...can be the result of warp scheduling overheads or workload imbalances..."
    "AchievedOccupancy": ("occupancy-limited", False),
    "Occupancy": ("occupancy-limited", False),  # 2021-2022: both of the above in one
    # "...consider reducing the block size to have at least one block per multiprocessor or
    # increase the size of the grid to fully utilize the available hardware resources."
    "LaunchConfiguration": ("occupancy-limited", True),
    # "This kernel has uncoalesced global accesses resulting in ... excessive sectors ... on
    # reducing uncoalesced device memory accesses."
    "UncoalescedGlobalAccess": ("memory-far-below-roof", True),
}
FINDING_KINDS = ("OPT", "WRN")


class ProfilerRule(msgspec.Struct, frozen=True):
    section: str
    rule: str
    kind: str  # OPT, WRN, INF
    text: str
    speedup_kind: str | None
    speedup_pct: float | None

    @property
    def label(self) -> str:
        """'Occupancy/TheoreticalOccupancy (OPT, estimated speedup 80.34%, global)'."""
        gain = "" if self.speedup_pct is None else f", estimated speedup {plain(self.speedup_pct)}%"
        how = f", {self.speedup_kind}" if gain and self.speedup_kind else ""
        return f"{self.section}/{self.rule} ({self.kind}{gain}{how})"


def rule_id(name: str) -> str:
    """'TheoreticalOccupancy' -> 'ncu-theoretical-occupancy' (a finding's kebab-case rule)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name)
    return "ncu-" + re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")


def _gain(rule: ProfilerRule, share: float | None) -> tuple[float | None, str | None]:
    """share x ncu's global speedup, and its arithmetic; None for any other estimate."""
    pct = rule.speedup_pct
    if rule.kind != "OPT" or rule.speedup_kind != "global" or pct is None or share is None:
        return None, None
    gain = share * min(max(pct, 0.0), 100.0) / 100
    formula = f"gain = share x ncu's global speedup = {share:.3f} x {plain(pct)}% = {gain:.3f}"
    if gain < 1:
        formula += f"; program speedup <= 1 / (1 - {gain:.3f}) = {sig(1 / (1 - gain))}x"
    return gain, formula


def _severity(gain: float | None, share: float | None) -> Severity:
    """As roofscope's own rules where ncu estimates the kernel's runtime; else from the
    kernel's share (the most any fix could save), at most medium."""
    if gain is not None:
        return severity(gain)
    return "medium" if (share or 0.0) >= 0.02 else "low"


def rule_finding(kernel: str, rule: ProfilerRule, share: float | None) -> Finding:
    gain, formula = _gain(rule, share)
    level = _severity(gain, share)
    return Finding(
        rule_id(rule.rule),
        kernel,
        "bottleneck",
        level,
        f"Nsight Compute {rule.label}: {rule.text}",
        f"see Nsight Compute's {rule.section} section for the details",
        {
            "producer": "ncu",
            "section": rule.section,
            "rule": rule.rule,
            "rule_kind": rule.kind,
            "speedup_kind": rule.speedup_kind,
            "speedup_pct": rule.speedup_pct,
            "share": share,
        },
        {},
        gain,
        formula,
    )


def _fold(lead: Finding, own: Finding, remedy_named: bool) -> Finding:
    """``lead`` (ncu's) with roofscope's ``own`` finding on the same cause as its evidence:
    its numbers, and its gain (and severity) where ncu estimates no runtime gain."""
    evidence = {**own.evidence, **lead.evidence, "roofscope_rule": own.rule,
                "roofscope_summary": own.summary}  # fmt: skip
    folded = replace(
        lead,
        evidence=evidence,
        thresholds={**own.thresholds, **lead.thresholds},
        prescription=lead.prescription if remedy_named else own.prescription,
    )
    if lead.gain_share is None:
        folded = replace(
            folded, severity=own.severity, gain_share=own.gain_share, formula=own.formula
        )
    return folded


def _cause(r: ProfilerRule) -> tuple[tuple[str, ...], bool]:
    """The roofscope rules naming the same cause as ``r`` (the first one found folds in), and
    whether ``r`` names a remedy: a text calling the grid too small is the launch's first
    (SOLBottleneck only points at Launch Statistics; LaunchConfiguration says to enlarge the
    grid), then its SAME_CAUSE (an occupancy that the small grid explains)."""
    same, named = SAME_CAUSE.get(r.rule, ("", True))
    if SMALL_GRID.search(r.text):
        return (LAUNCH_RULE, same), r.rule == "LaunchConfiguration"
    return (same,), named


def _same_cause(own: list[Finding], causes: tuple[str, ...], folded: set[int]) -> Finding | None:
    """The first of roofscope's findings, in the order of ``causes``, not folded yet."""
    return next((o for c in causes for o in own if o.rule == c and id(o) not in folded), None)


def _kernel_findings(
    kernel: str, rules: tuple[ProfilerRule, ...], share: float | None, own: list[Finding]
) -> tuple[list[Finding], set[int]]:
    """ncu's findings about one kernel (one per section/rule: the row of the largest speedup),
    and the ids of roofscope's own findings folded into them."""
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    folded: set[int] = set()
    for r in rules:
        if r.kind not in FINDING_KINDS or (r.section, r.rule) in seen:
            continue
        seen.add((r.section, r.rule))
        f = rule_finding(kernel, r, share)
        causes, remedy_named = _cause(r)
        if (o := _same_cause(own, causes, folded)) is not None:
            f = _fold(f, o, remedy_named)
            folded.add(id(o))
        out.append(f)
    out.sort(key=lambda f: (-(f.gain_share or 0.0), SEVERITY_ORDER[f.severity]))
    return out, folded


def lead_with_profiler(
    findings: list[Finding],
    rules: dict[str, tuple[ProfilerRule, ...]],
    shares: dict[str, float | None],
) -> list[Finding]:
    """``findings`` (ranked) with ncu's rule findings added: each kernel's ncu findings lead
    its own (folded where they name the same cause); the kernel's block ranks where its best
    finding would."""
    blocks: dict[str, list[Finding]] = {}
    folded: set[int] = set()
    for kernel, rows in rules.items():
        own = [f for f in findings if f.kernel == kernel and f.kind == "bottleneck"]
        lead, gone = _kernel_findings(kernel, rows, shares.get(kernel), own)
        if lead:
            blocks[kernel] = lead
            folded |= gone
    rest = []
    for f in findings:
        if f.kind == "bottleneck" and f.kernel in blocks:
            if id(f) not in folded:
                blocks[f.kernel].append(f)
        else:
            rest.append(f)
    return _merge(rest, sorted(blocks.values(), key=lambda b: _block_key(b, shares)))


def _block_key(block: list[Finding], shares: dict[str, float | None]) -> tuple[object, ...]:
    """A kernel's findings rank by their best; alike ones (no gain, one severity: ncu's hints
    without estimates) by the kernel's share of the time, then its name."""
    best = min(map(rank_key, block))
    return (*best[:3], -(shares.get(best[3]) or 0.0), *best[3:])


def _merge(rest: list[Finding], blocks: list[list[Finding]]) -> list[Finding]:
    """``rest`` in its order, each block before the first finding that ranks below its best."""
    out: list[Finding] = []
    for f in rest:
        while blocks and min(map(rank_key, blocks[0])) <= rank_key(f):
            out += blocks.pop(0)
        out.append(f)
    return out + [f for b in blocks for f in b]
