"""``roofscope analyze``: the check-up of one profile."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from msgspec.structs import replace

from roofscope.cli import options as o
from roofscope.cli.outputs import html_path, report_view, stem, write_report


def analyze(
    paths: Annotated[list[str], typer.Argument(help="Profiler output files or directories.")],
    fmt: o.Format = None,
    top: Annotated[
        int | None,
        typer.Option(
            "--top",
            min=1,
            help="Kernels shown in the text table; the rest fold into 'other' (default 20).",
        ),
    ] = None,
    kernel: o.Kernel = None,
    device: o.Device = None,
    gap_us: o.GapUs = o.DEFAULT_GAP_US,
    as_json: o.Json = False,
    gpu: o.Gpu = None,
    fp32_matmul: o.Fp32Matmul = "fp32",
    work: o.Work = None,
    ceilings: o.Ceilings = None,
    graph_capture: o.GraphCapture = None,
    peak_flops: o.PeakFlops = None,
    peak_bw: o.PeakBw = None,
    html: o.Html = None,
    svg: o.Svg = None,
    png: o.Png = None,
    force: o.Force = False,
    out: o.OutDir = None,
    whole_names: o.FullNames = False,
    jobs: o.Jobs = None,
    scheduler: o.Scheduler = None,
    skip_unreadable: o.SkipUnreadable = False,
    memory_limit: o.MemoryLimit = None,
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
