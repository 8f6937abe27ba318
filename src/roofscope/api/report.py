"""``Report``: the check-up of one profile, as ``roofscope analyze`` shows and writes it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import msgspec

from roofscope.analysis.device import DeviceChoice
from roofscope.analysis.hotspots import KernelStats
from roofscope.analysis.roofline import Roofline
from roofscope.diagnosis.findings import Finding
from roofscope.model.profile import InputFile, Warning
from roofscope.outfile import write_atomically
from roofscope.render.names import full_names
from roofscope.render.registry import NO_OPTIONS, Options, renderer, report_dict
from roofscope.report import Report as Result
from roofscope.report import Summary as Summary
from roofscope.report import summary_of

if TYPE_CHECKING:
    from pandas import DataFrame


class Report(msgspec.Struct, frozen=True, eq=False):
    """What ``roofscope.analyze`` returns. ``checkup`` is the result every renderer reads;
    the properties are its parts, as the renderers use them. ``full_names``: the HTML and
    the charts show kernel names whole (``--full-names``)."""

    checkup: Result  # the typed check-up every renderer reads
    read: tuple[str, ...] = ()  # every file read: never overwritten by ``to_html``
    full_names: bool = False

    @property
    def summary(self) -> Summary:
        return summary_of(self.checkup)

    @property
    def kernels(self) -> tuple[KernelStats, ...]:
        """Every kernel, most time first (the hotspots table)."""
        return self.checkup.hotspots.kernels

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Ranked: validity problems first, then by what fixing each could save."""
        return self.checkup.findings

    @property
    def device(self) -> DeviceChoice:
        """The GPU and how it was chosen (``.name``, ``.detected``, ``.problem``)."""
        return self.checkup.roofline.choice

    @property
    def roofline(self) -> Roofline:
        """The ceilings and each kernel's place under them."""
        return self.checkup.roofline.result

    @property
    def warnings(self) -> tuple[Warning, ...]:
        return self.checkup.warnings

    @property
    def inputs(self) -> tuple[InputFile, ...]:
        return self.checkup.inputs

    def to_dict(self) -> dict[str, Any]:
        """The ``analyze --json`` document (schema ``schema/report-v1.schema.json``)."""
        return report_dict(self.checkup)

    def to_json(self) -> str:
        """The ``analyze --json`` text, byte for byte."""
        return self._render("json")

    @overload
    def to_html(self, path: None = None) -> str: ...
    @overload
    def to_html(self, path: str | os.PathLike[str]) -> None: ...
    def to_html(self, path: str | os.PathLike[str] | None = None) -> str | None:
        """The offline HTML report (``--html``): returned, or written to ``path`` whole
        (replacing an earlier report there, never a file this report read)."""
        page = self._render("html")
        if path is None:
            return page
        write_atomically(Path(path), page, force=True, keep=self.read)
        return None

    def to_pandas(self) -> DataFrame:
        """One row per kernel, most time first: times in seconds, share, hotspot, limiter,
        roofline bound, efficiency, FLOP/s, and intensity and bytes/s per memory level."""
        from roofscope.api.frames import kernel_frame

        return kernel_frame(self.checkup)

    def hotspots_svg(self, top: int = 20) -> str:
        """The top kernels' time as bars (hotspots red), the rest folded into 'other'."""
        return self._render("hotspots", Options(top=top))

    def roofline_svg(self) -> str:
        """The roofline with each kernel placed (``--svg``'s ``roofline.svg``)."""
        return self._render("roofline")

    def timeline_svg(self) -> str:
        """Busy and idle over time, the hot kernels told apart; empty without timestamps."""
        return self._render("timeline")

    def _repr_html_(self) -> str:
        return self._render("notebook")

    def _render(self, name: str, options: Options = NO_OPTIONS) -> str:
        """The registry's ``name`` view of the check-up, names whole or short as ``full_names``
        says."""
        with full_names(self.full_names):
            return renderer("report", name, options).render(self.checkup)

    def __repr__(self) -> str:
        from roofscope.model.words import count

        s, who = self.summary, self.device.name or "GPU unknown"
        return (
            f"<roofscope.Report: {count(s.kernels, 'kernel')}, {count(s.dispatches, 'dispatch')}, "
            f"kernel time {s.kernel_time_s} s, {who}, {count(len(self.findings), 'finding')}>"
        )
