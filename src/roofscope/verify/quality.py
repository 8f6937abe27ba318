"""The data-quality warnings of both sides of a comparison, and which of them block the gate.

A side's warnings are the ones ``analyze`` reports for it: the readers' (``profile.warnings``)
and the data checks' (``analysis/checks.py``), both in ``Report.warnings``, and the
per-kernel validity findings (``diagnosis/validity.py``). Each keeps its side and, where a
side has several runs (``--base-run``, ``--new-run``), its run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from roofscope.report import Report

Side = Literal["baseline", "candidate"]

RUN_MIXING: frozenset[str] = frozenset(
    {"clocks-apart", "mixed-runs", "mixed-producers", "nested-runs"}
)
"""Warning codes that say a side is not one run, so its times are no run's times: a gate that
sees one on either side fails (exit 3), whatever its thresholds. Every other warning is shown
beside the comparison and does not block.

- ``clocks-apart`` (analysis/checks.py): the side's inputs have timestamps far apart
  (different runs, nodes or clock bases): its kernel times add up several runs and its wall
  time spans the gap between them (a nested re-run folder read with the first run).
- ``mixed-runs`` (readers/runs.py): the side was read from several runs that are not ranks
  of one job.
- ``mixed-producers`` (analysis/checks.py): the side's dispatches come from several formats,
  so from several runs.
- ``nested-runs`` (readers/runs.py): the side's folder holds other runs in sub-folders, left
  out; which run the gate judges is then a guess about the folder: name the run's files.
"""


class SideWarning(msgspec.Struct, frozen=True):
    """One data-quality warning of one side."""

    side: Side
    run: int | None  # 1-based, where the side has several runs; None: the side's one run
    code: str  # a warning code, or a validity rule
    message: str
    count: int = 1
    kernel: str | None = None  # the kernel a validity finding is about

    @property
    def blocks_gate(self) -> bool:
        return self.code in RUN_MIXING


def side_warnings(base: Sequence[Report], new: Sequence[Report]) -> tuple[SideWarning, ...]:
    """Every warning of every run, baseline first, in the order ``analyze`` lists them."""
    return (*_of("baseline", base), *_of("candidate", new))


def _of(side: Side, reports: Sequence[Report]) -> list[SideWarning]:
    out = []
    for i, report in enumerate(reports):
        run = i + 1 if len(reports) > 1 else None
        out += [SideWarning(side, run, w.code, w.message, w.count) for w in report.warnings]
        out += [
            SideWarning(side, run, f.rule, f.summary, 1, f.kernel)
            for f in report.findings
            if f.kind == "validity"
        ]
    return out
