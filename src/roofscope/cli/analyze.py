"""``roofscope analyze``: the check-up of one profile."""

from __future__ import annotations

import sys

from msgspec.structs import replace

from roofscope.cli import options as o
from roofscope.cli.outputs import html_path, report_view, stem, write_report
from roofscope.cli.parse import Command, Opt, Pos


def analyze(
    paths: list[str],
    fmt: str | None = None,
    top: int | None = None,
    kernel: str | None = None,
    device: int | None = None,
    gap_us: float = o.DEFAULT_GAP_US,
    as_json: bool = False,
    gpu: str | None = None,
    fp32_matmul: str = "fp32",
    work: list[str] | None = None,
    ceilings: str | None = None,
    graph_capture: list[str] | None = None,
    peak_flops: float | None = None,
    peak_bw: float | None = None,
    html: str | None = None,
    svg: str | None = None,
    png: str | None = None,
    force: bool = False,
    out: str | None = None,
    whole_names: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    skip_unreadable: bool = False,
    memory_limit: str | None = None,
) -> None:
    """Baseline, hotspots and roofline of one profile (files of several processes merge)."""
    from roofscope.checkup.engine import prepare  # DuckDB, numpy
    from roofscope.checkup.options import CheckupOptions
    from roofscope.cli.progress import run_checkup
    from roofscope.render.names import full_names

    options = CheckupOptions(
        fmt=fmt, kernel=kernel, device=device, gap_us=gap_us, gpu=gpu, work=tuple(work or ()),
        ceilings=ceilings, peak_flops=peak_flops, peak_bw=peak_bw, jobs=jobs,
        scheduler=scheduler, skip_unreadable=skip_unreadable, fp32_matmul=fp32_matmul,
        graph_capture=tuple(graph_capture or ()), memory_limit=memory_limit,
    )  # fmt: skip
    html = html_path(html, out, stem(paths[0]))
    drawn = bool(html or svg or png)  # the timeline chart's bins are made for them only
    report = run_checkup(paths, replace(prepare(options), lanes=drawn))
    keep = [*report.read, *options.files]
    with full_names(whole_names):
        write_report(report, html=html, svg=svg, png=png, force=force, keep=keep)
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
