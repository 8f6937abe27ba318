"""``roofscope demo``: the check-up of a real profile shipped with roofscope."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from msgspec.structs import replace

from roofscope.cli import options as o
from roofscope.cli.outputs import report_view, write_report
from roofscope.cli.parse import Command, Pos
from roofscope.errors import UsageError

FOLDERS = {"trace": "finite-difference", "counters": "openmp-collapse-mi300a"}


def demo(
    which: str = "trace",
    as_json: bool = False,
    html: str | None = None,
    svg: str | None = None,
    png: str | None = None,
    force: bool = False,
) -> None:
    """Run analyze on a real profile shipped with roofscope (AMD HPC training, MIT licence),
    writing the same HTML page and charts as analyze does."""
    if which not in FOLDERS:
        raise UsageError(f"demo {which!r}: choose one of {', '.join(FOLDERS)}")
    from roofscope.checkup.engine import AS_GIVEN  # DuckDB, numpy
    from roofscope.cli.progress import run_checkup

    drawn = bool(html or svg or png)  # the timeline chart's bins are made for them only
    root = resources.files("roofscope") / "data" / "demo" / FOLDERS[which]
    with resources.as_file(root) as folder:
        report = run_checkup([str(Path(folder))], replace(AS_GIVEN, lanes=drawn))
        write_report(report, html=html, svg=svg, png=png, force=force, keep=[str(folder)])
    sys.stdout.write(report_view(report, as_json=as_json))


WHICH = Pos(
    "which",
    "trace: a rocprof v1 trace of a finite-difference code on one MI250 GCD; counters: an "
    "Omniperf workload of an OpenMP offload exercise on an MI300A (counters, roofline, "
    "findings). Default: trace.",
    "?",
)
DEMO = Command("demo", demo, (WHICH, o.JSON, o.HTML, o.SVG, o.PNG, o.FORCE))
