"""``roofscope analyze``: the check-up of one profile."""

from __future__ import annotations

import sys
from typing import Any

from msgspec.structs import replace

from roofscope.cli import options as o
from roofscope.cli.outputs import html_path, report_view, stem, write_report
from roofscope.cli.parse import Command, Opt, Pos


def analyze(
    paths: list[str],
    top: int | None = None,
    as_json: bool = False,
    **given: Any,
) -> None:
    """Baseline, hotspots and roofline of one profile (files of several processes merge)."""
    from roofscope.checkup.engine import prepare  # DuckDB, numpy
    from roofscope.cli.progress import run_checkup
    from roofscope.render.names import full_names

    written = o.files(given)
    options = o.checkup_options(given)
    html = html_path(written.html, written.out, stem(paths[0]))
    svg, png = written.svg, written.png
    drawn = bool(html or svg or png)  # the timeline chart's bins are made for them only
    report = run_checkup(paths, replace(prepare(options), lanes=drawn))
    keep = [*report.read, *options.files]
    with full_names(written.whole_names):
        write_report(report, html=html, svg=svg, png=png, force=written.force, keep=keep)
        text = report_view(report, as_json=as_json, top=20 if top is None else top)
    sys.stdout.write(text)


TOP = Opt(
    ("--top",),
    "top",
    "Kernels shown in the text table; the rest fold into 'other' (default 20).",
    "int",
    low=1,
)
ANALYZE = Command(
    "analyze",
    analyze,
    (
        Pos("paths", "Profiler output files or directories.", "+"),
        *o.SIDES,
        o.GRAPH_CAPTURE,
        o.SKIP_UNREADABLE,
        TOP,
        o.JSON,
        *o.FILES,
    ),
)
