"""``Report``: the check-up of one profile, as ``roofscope analyze`` shows and writes it."""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from roofscope.analysis.device import DeviceChoice
from roofscope.analysis.hotspots import KernelStats
from roofscope.analysis.roofline import Roofline
from roofscope.diagnosis.findings import Finding
from roofscope.model.profile import InputFile, Warning
from roofscope.outfile import write_atomically
from roofscope.report import Report as Checkup

if TYPE_CHECKING:
    from pandas import DataFrame


@dataclass(frozen=True)
class Summary:
    """The JSON document's ``summary``: times in seconds; the timeline's fields are None
    where the input has no dispatch timestamps."""

    kernel_time_s: float | None
    dispatches: int
    kernels: int
    kernels_for_80pct: int | None
    wall_s: float | None
    busy_s: float | None
    idle_s: float | None
    idle_share: float | None
    gaps: int | None
    gap_total_s: float | None
    gap_threshold_s: float | None


@dataclass(frozen=True, eq=False)
class Report:
    """What ``roofscope.analyze`` returns. ``checkup`` is the result every renderer reads;
    the properties are its parts, as the renderers use them. ``full_names``: the HTML and
    the charts show kernel names whole (``--full-names``)."""

    checkup: Checkup
    read: tuple[str, ...] = ()  # every file read: never overwritten by ``to_html``
    full_names: bool = False

    @property
    def summary(self) -> Summary:
        from roofscope.render.json import summary_dict

        return Summary(**summary_dict(self.checkup))

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
        from roofscope.render.json import to_dict

        return to_dict(self.checkup)

    def to_json(self) -> str:
        """The ``analyze --json`` text, byte for byte."""
        from roofscope.render.json import render_json

        return render_json(self.checkup)

    @overload
    def to_html(self, path: None = None) -> str: ...
    @overload
    def to_html(self, path: str | os.PathLike[str]) -> None: ...
    def to_html(self, path: str | os.PathLike[str] | None = None) -> str | None:
        """The offline HTML report (``--html``): returned, or written to ``path`` whole
        (replacing an earlier report there, never a file this report read)."""
        from roofscope.render.html import render_html

        with self._names():
            page = render_html(self.checkup)
        if path is None:
            return page
        write_atomically(Path(path), page, force=True, keep=self.read)
        return None

    def to_pandas(self) -> DataFrame:
        """One row per kernel, most time first: times in seconds, share, hotspot, limiter,
        roofline bound, efficiency, FLOP/s, and intensity and bytes/s per memory level."""
        from roofscope.api.frames import kernel_frame

        return kernel_frame(self.to_dict())

    def hotspots_svg(self, top: int = 20) -> str:
        """The top kernels' time as bars (hotspots red), the rest folded into 'other'."""
        from roofscope.render.charts import hotspot_svg

        with self._names():
            return hotspot_svg(self.checkup, top)

    def roofline_svg(self) -> str:
        """The roofline with each kernel placed (``--svg``'s ``roofline.svg``)."""
        from roofscope.render.charts import roofline_svg

        with self._names():
            return roofline_svg(self.checkup)

    def timeline_svg(self) -> str:
        """Busy and idle over time, the hot kernels told apart; empty without timestamps."""
        from roofscope.render.timeline_chart import timeline_svg

        with self._names():
            return timeline_svg(self.checkup)

    def _repr_html_(self) -> str:
        from roofscope.render.notebook import report_fragment

        with self._names():
            return report_fragment(self.checkup)

    def _names(self) -> AbstractContextManager[None]:
        """Names whole or short in what is rendered inside it, as ``full_names`` says."""
        from roofscope.render.names import full_names

        return full_names(self.full_names)

    def __repr__(self) -> str:
        from roofscope.model.words import count

        s, who = self.summary, self.device.name or "GPU unknown"
        return (
            f"<roofscope.Report: {count(s.kernels, 'kernel')}, {count(s.dispatches, 'dispatch')}, "
            f"kernel time {s.kernel_time_s} s, {who}, {count(len(self.findings), 'finding')}>"
        )
