"""``roofscope analyze``: the check-up of one profile."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from roofscope.cli import options as o
from roofscope.cli.outputs import html_path, report_view, stem, write_charts
from roofscope.errors import UsageError
from roofscope.outfile import write_atomically

SCHEDULER_ENV = "ROOFSCOPE_SCHEDULER"


def analyze(
    paths: Annotated[list[str], typer.Argument(help="Profiler output files or directories.")],
    fmt: o.Format = None,
    top: Annotated[
        int | None,
        typer.Option(
            "--top",
            min=1,
            help="Kernels shown in the text table; the rest fold into 'other' "
            "(default 20; 10 with --scheduler).",
        ),
    ] = None,
    kernel: o.Kernel = None,
    device: o.Device = None,
    gap_us: o.GapUs = o.DEFAULT_GAP_US,
    as_json: o.Json = False,
    gpu: o.Gpu = None,
    work: o.Work = None,
    ceilings: o.Ceilings = None,
    peak_flops: o.PeakFlops = None,
    peak_bw: o.PeakBw = None,
    html: o.Html = None,
    svg: o.Svg = None,
    png: o.Png = None,
    force: o.Force = False,
    out: o.OutDir = None,
    whole_names: o.FullNames = False,
    jobs: o.Jobs = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            envvar=SCHEDULER_ENV,
            help="Reduce each run (rank) on this Dask scheduler (tcp://HOST:PORT, or its "
            "--scheduler-file), or on this machine's worker processes ('local', with --jobs), "
            "and print the cluster summary: kernels, devices, ranks.",
        ),
    ] = None,
    skip_unreadable: Annotated[
        bool,
        typer.Option(
            "--skip-unreadable",
            help="With --scheduler: leave out the runs that cannot be read, and list them.",
        ),
    ] = False,
) -> None:
    """Baseline, hotspots and roofline of one profile (files of several processes merge)."""
    if scheduler:
        from roofscope.cli.cluster import Charts, cluster_summary, refuse_without_rows

        refuse_without_rows({
            "--kernel": kernel, "--device": device, "--html": html, "--out": out,
            "--gap-us": gap_us if gap_us != o.DEFAULT_GAP_US else None,
        })  # fmt: skip
        from roofscope.cli.checkup import CheckupOptions, prepare
        from roofscope.render.names import full_names

        given = CheckupOptions(
            gpu=gpu, work=tuple(work or ()), ceilings=ceilings, peak_flops=peak_flops,
            peak_bw=peak_bw,
        )  # fmt: skip
        with full_names(whole_names):
            summary = cluster_summary(
                paths, scheduler, jobs=jobs, fmt=fmt, skip_unreadable=skip_unreadable,
                as_json=as_json, top=top, roof=prepare(given).roof,
                charts=Charts(svg, png, force, tuple(given.files)),
            )  # fmt: skip
        sys.stdout.write(summary)
        return
    if skip_unreadable:
        raise UsageError("--skip-unreadable applies to --scheduler only; add --scheduler ADDR")
    from roofscope.cli.checkup import CheckupOptions, prepare, run_checkup  # DuckDB, numpy
    from roofscope.render.names import full_names
    from roofscope.render.registry import CHARTS, renderer
    from roofscope.report import with_lanes

    options = CheckupOptions(
        fmt=fmt, kernel=kernel, device=device, gap_us=gap_us, gpu=gpu, work=tuple(work or ()),
        ceilings=ceilings, peak_flops=peak_flops, peak_bw=peak_bw, jobs=jobs,
    )  # fmt: skip
    checkup = run_checkup(paths, prepare(options))
    report, keep = checkup.report, [*checkup.read, *options.files]
    html = html_path(html, out, stem(paths[0]))
    if html or svg or png:
        report = with_lanes(report, checkup.profile)
    with full_names(whole_names):
        if html:
            page = renderer("report", "html").render(report)
            write_atomically(Path(html), page, force=force, keep=keep)
        if svg or png:
            charts = {name: renderer("report", name).render(report) for name in CHARTS["report"]}
            write_charts(charts, svg, png, force=force, keep=keep)
        text = report_view(report, as_json=as_json, top=20 if top is None else top)
    sys.stdout.write(text)
