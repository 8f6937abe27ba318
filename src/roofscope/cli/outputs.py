"""What the commands write: output names derived from the inputs, charts, the terminal view."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.outfile import make_folder, write_atomically

if TYPE_CHECKING:
    from roofscope.report import Report


def stem(path: str) -> str:
    """A file-name-safe name for an input: its file or folder name without suffix."""
    name = Path(path).resolve().name
    stem = name.split(".")[0] or "profile"
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in stem)


def html_path(html: str | None, out: str | None, name: str) -> str | None:
    """``--html FILE``, else ``-o DIR``'s ``DIR/NAME.roofscope.html`` (DIR made), else None."""
    if html or not out:
        return html
    make_folder(Path(out))
    return str(Path(out) / f"{name}.roofscope.html")


def write_charts(
    charts: dict[str, str],
    svg: str | None,
    png: str | None,
    *,
    force: bool,
    keep: list[str],
    why: Mapping[str, str] | None = None,
) -> None:
    """Each chart that has something to show as ``DIR/NAME.svg`` and/or ``DIR/NAME.png``; for
    each other, one line on stderr saying why there is none (``why``: the reasons known)."""
    absent = [name for name, chart in charts.items() if not chart]
    charts = {name: chart for name, chart in charts.items() if chart}
    if svg:
        make_folder(Path(svg))
        for name, chart in charts.items():
            write_atomically(Path(svg) / f"{name}.svg", chart, force=force, keep=keep)
    if png:
        from roofscope.render.registry import renderer

        to_png = renderer("chart", "png")
        make_folder(Path(png))
        for name, chart in charts.items():
            image = to_png.render(chart)  # the rasteriser's remedy before any file is written
            write_atomically(Path(png) / f"{name}{to_png.suffix}", image, force=force, keep=keep)
    for name in absent:  # once the others are written
        reason = (why or {}).get(name, "nothing to show")
        print(f"roofscope: no {name} chart written: {reason}", file=sys.stderr)


def write_report(
    report: Report,
    *,
    html: str | None,
    svg: str | None,
    png: str | None,
    force: bool,
    keep: list[str],
) -> None:
    """The report's HTML page (``--html``) and its charts (``--svg``, ``--png``), as asked."""
    from roofscope.render.registry import CHARTS, renderer

    if html:
        page = renderer("report", "html").render(report)
        write_atomically(Path(html), page, force=force, keep=keep)
    if svg or png:
        from roofscope.render.charts.hotspots import NO_TIME
        from roofscope.render.charts.roofline import absence
        from roofscope.render.charts.timeline import timeline_absence

        charts = {name: renderer("report", name).render(report) for name in CHARTS["report"]}
        why = {
            "hotspots": NO_TIME,
            "roofline": absence(report.roofline.result),
            "timeline": timeline_absence(report),
        }
        write_charts(charts, svg, png, force=force, keep=keep, why=why)


def report_view(report: Report, *, as_json: bool, top: int = 20) -> str:
    """The report as JSON, or as text for the terminal (colour only on one, NO_COLOR honoured)."""
    from roofscope.render.registry import Options, renderer

    if as_json:
        return renderer("report", "json").render(report)
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    return renderer("report", "text", Options(top=top, color=color)).render(report)
