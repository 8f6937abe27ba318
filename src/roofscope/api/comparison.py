"""``Comparison``: baseline against candidate, as ``roofscope compare`` shows and writes it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import msgspec
from msgspec.structs import asdict

from roofscope.api.report import Report
from roofscope.catalogue.ceilings import Ceiling
from roofscope.checkup.engine import Compared
from roofscope.checkup.options import GateOptions, Spelling
from roofscope.outfile import write_atomically
from roofscope.render.compare.words import across_gpus_text
from roofscope.render.names import full_names
from roofscope.render.registry import Gated, compare_dict, renderer
from roofscope.verify.compare import Comparison as Result
from roofscope.verify.compare import EndToEnd, KernelChange
from roofscope.verify.gate import Verdict, gate
from roofscope.verify.quality import SideWarning

if TYPE_CHECKING:
    from pandas import DataFrame


class Comparison(msgspec.Struct, frozen=True, eq=False):
    """What ``roofscope.compare`` returns. ``result`` is what the compare renderers read;
    ``base`` and ``new`` are each side's runs, as reports. ``full_names``: the HTML and the
    charts show kernel names whole (``--full-names``)."""

    result: Result
    base: tuple[Report, ...]
    new: tuple[Report, ...]
    read: tuple[str, ...] = ()  # every file read: never overwritten by ``to_html``
    full_names: bool = False

    @classmethod
    def of(cls, both: Compared, *, full_names: bool = False) -> Comparison:
        base = tuple(Report(r.report, both.read, full_names) for r in both.base)
        new = tuple(Report(r.report, both.read, full_names) for r in both.new)
        return cls(both.comparison, base, new, both.read, full_names)

    @property
    def kernels(self) -> tuple[KernelChange, ...]:
        """Every kernel's change, biggest first; added and removed ones included."""
        return self.result.kernels

    @property
    def end_to_end(self) -> EndToEnd:
        return self.result.end_to_end

    @property
    def added(self) -> tuple[str, ...]:
        return self.result.matching.added

    @property
    def removed(self) -> tuple[str, ...]:
        return self.result.matching.removed

    @property
    def note(self) -> str | None:
        """Said first of a comparison across GPUs (compare's words), None on one GPU."""
        return across_gpus_text(self.result)

    @property
    def warnings(self) -> tuple[SideWarning, ...]:
        return self.result.warnings

    def gate(
        self,
        *,
        fail_if_slower: float | None = None,
        fail_if_kernel_slower: float | None = None,
        min_share: float = 0.01,
    ) -> Verdict:
        """The CI gate's verdict (``--fail-if-slower`` etc.): thresholds in % slower."""
        thresholds = GateOptions(
            fail_if_slower=fail_if_slower, fail_if_kernel_slower=fail_if_kernel_slower,
            min_share=min_share,
        ).checked(Spelling.PYTHON)  # fmt: skip
        return gate(self.result, **asdict(thresholds))

    def to_dict(self, verdict: Verdict | None = None) -> dict[str, Any]:
        """The ``compare --json`` document; its gate is ``verdict`` (default: none set)."""
        return compare_dict(self._gated(verdict))

    def to_json(self, verdict: Verdict | None = None) -> str:
        return self._render("json", verdict)

    @overload
    def to_html(self, path: None = None, verdict: Verdict | None = None) -> str: ...
    @overload
    def to_html(self, path: str | os.PathLike[str], verdict: Verdict | None = None) -> None: ...
    def to_html(
        self, path: str | os.PathLike[str] | None = None, verdict: Verdict | None = None
    ) -> str | None:
        """The compare page (``--html``): returned, or written to ``path`` whole."""
        page = self._render("html", verdict)
        if path is None:
            return page
        write_atomically(Path(path), page, force=True, keep=self.read)
        return None

    def to_pandas(self, *, level: str = "kernels") -> DataFrame:
        """``level="kernels"``: one row per kernel change: base_s, new_s, speedup and its 95 %
        interval (low, high), beyond_noise, share_of_change, matched_by (``operator``: paired
        through the PyTorch operator that launched both); ``attrs["note"]`` is ``note``.
        ``"categories"``: one row per kernel category; ``"operators"``: one per operator
        signature (name, input_dims, input_types, side); both with base and new calls and
        time, speedup and its interval."""
        from roofscope.api.frames import category_frame, change_frame, operator_frame

        frames = {"kernels": change_frame, "categories": category_frame,
                  "operators": operator_frame}  # fmt: skip
        if level not in frames:
            raise ValueError(f"level={level!r}: expected one of {', '.join(map(repr, frames))}")
        return frames[level](self.result)

    def waterfall_svg(self) -> str:
        """Each kernel's contribution to the change, from the baseline's total to the new."""
        return self._render("waterfall")

    def movement_svg(self) -> str:
        """Each kernel's move on the roofline; empty when none has roofline data both sides."""
        return self._render("movement")

    def _render(self, name: str, verdict: Verdict | None = None) -> str:
        """The registry's ``name`` view of the comparison (its gate ``verdict``, by default
        none set), names whole or short as ``full_names`` says."""
        with full_names(self.full_names):
            return renderer("compare", name).render(self._gated(verdict))

    def _gated(self, verdict: Verdict | None) -> Gated:
        return Gated(self.result, verdict or self.gate(), self._ceilings(), self._gpus())

    def _ceilings(self) -> tuple[tuple[Ceiling, ...], tuple[Ceiling, ...]]:
        return self.base[0].roofline.ceilings, self.new[0].roofline.ceilings

    def _gpus(self) -> tuple[str, str]:
        return self.base[0].device.name or "baseline", self.new[0].device.name or "candidate"

    def _repr_html_(self) -> str:
        return self._render("notebook")

    def __repr__(self) -> str:
        from roofscope.model.words import count

        e = self.end_to_end
        across = "" if self.note is None else f"{self.note}; "
        return (
            f"<roofscope.Comparison: {across}{self.result.base_label} -> {self.result.new_label}, "
            f"speedup {e.speedup}, {count(len(self.kernels), 'kernel')}>"
        )
