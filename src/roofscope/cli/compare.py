"""``roofscope compare``: baseline against candidate, and the gate for CI.

Every analysis option applies to both sides, as ``analyze`` applies it to one profile;
``--base-gpu`` and ``--new-gpu`` name the GPU of one side where the two ran on different GPUs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roofscope.cli import options as o
from roofscope.cli.outputs import html_path, stem, write_charts
from roofscope.outfile import write_atomically

if TYPE_CHECKING:
    from roofscope.catalogue.ceilings import Ceiling
    from roofscope.verify.compare import Comparison
    from roofscope.verify.gate import Verdict

EXIT_GATE_FAILED = 3
MAX_SLOWER_PCT = 1e6  # 10,000 times slower; inf reached the JSON gate thresholds


def compare(
    base: Annotated[str, typer.Argument(help="The baseline profile (file or directory).")],
    new: Annotated[str, typer.Argument(help="The candidate profile (file or directory).")],
    base_run: Annotated[
        list[str] | None, typer.Option("--base-run", help="Another run of the baseline.")
    ] = None,
    new_run: Annotated[
        list[str] | None, typer.Option("--new-run", help="Another run of the candidate.")
    ] = None,
    fail_if_slower: Annotated[
        float | None,
        typer.Option(
            "--fail-if-slower",
            min=0,
            max=MAX_SLOWER_PCT,
            help="Fail (exit 3) if the total kernel time is this many % slower, beyond noise.",
        ),
    ] = None,
    fail_if_kernel_slower: Annotated[
        float | None,
        typer.Option(
            "--fail-if-kernel-slower",
            min=0,
            max=MAX_SLOWER_PCT,
            help="Fail (exit 3) if a kernel above --min-share is this many % slower, beyond noise.",
        ),
    ] = None,
    min_share: Annotated[
        float,
        typer.Option(
            "--min-share",
            min=0,
            max=1,
            help="Kernels the gate checks: at least this share of the baseline's kernel time.",
        ),
    ] = 0.01,
    junit_out: Annotated[
        str | None, typer.Option("--junit", help="Write a JUnit XML file.")
    ] = None,
    markdown_out: Annotated[
        str | None, typer.Option("--markdown", help="Write a Markdown summary (CI step).")
    ] = None,
    fmt: o.Format = None,
    kernel: o.Kernel = None,
    device: o.Device = None,
    gap_us: o.GapUs = o.DEFAULT_GAP_US,
    gpu: o.Gpu = None,
    base_gpu: Annotated[
        str | None,
        typer.Option("--base-gpu", help="The baseline's GPU, where it differs: overrides --gpu."),
    ] = None,
    new_gpu: Annotated[
        str | None,
        typer.Option("--new-gpu", help="The candidate's GPU, where it differs: overrides --gpu."),
    ] = None,
    work: o.Work = None,
    ceilings: o.Ceilings = None,
    peak_flops: o.PeakFlops = None,
    peak_bw: o.PeakBw = None,
    jobs: o.Jobs = None,
    as_json: o.Json = False,
    html: o.Html = None,
    svg: o.Svg = None,
    png: o.Png = None,
    force: o.Force = False,
    out: o.OutDir = None,
    whole_names: o.FullNames = False,
) -> None:
    """Baseline against candidate: per-kernel and end-to-end speedup, and a gate for CI."""
    from roofscope.cli.checkup import (  # DuckDB, numpy
        CheckupOptions,
        compare_sides,
        prepare,
        run_checkup,
        side_gpus,
    )
    from roofscope.render.compare.out import render_compare_json, render_compare_text
    from roofscope.render.names import full_names
    from roofscope.verify.gate import gate

    options = CheckupOptions(
        fmt=fmt, kernel=kernel, device=device, gap_us=gap_us, gpu=gpu, work=tuple(work or ()),
        ceilings=ceilings, peak_flops=peak_flops, peak_bw=peak_bw, jobs=jobs,
    )  # fmt: skip
    sides = side_gpus(gpu, base_gpu, new_gpu)
    settings = prepare(options)
    both = compare_sides(
        [base, *(base_run or [])], [new, *(new_run or [])], settings, sides,
        check=lambda paths, s, label: run_checkup(paths, s, label=label),
    )  # fmt: skip
    cmp, keep = both.comparison, [*options.files, *both.read]
    verdict = gate(
        cmp,
        fail_if_slower=fail_if_slower,
        fail_if_kernel_slower=fail_if_kernel_slower,
        min_share=min_share,
    )
    base_roof, new_roof = both.base[0].report.roofline, both.new[0].report.roofline
    with full_names(whole_names):
        _write_files(
            cmp, verdict, base_roof.result.ceilings, new_roof.result.ceilings,
            (base_roof.choice.name or "baseline", new_roof.choice.name or "candidate"),
            junit_out=junit_out, markdown_out=markdown_out, force=force, keep=keep,
            html=html, out=out, name=f"{stem(base)}-vs-{stem(new)}", svg=svg, png=png,
        )  # fmt: skip
        text = render_compare_json(cmp, verdict) if as_json else render_compare_text(cmp, verdict)
    sys.stdout.write(text)
    if not verdict.passed:
        raise typer.Exit(EXIT_GATE_FAILED)


def _write_files(
    cmp: Comparison,
    verdict: Verdict,
    ceilings: tuple[Ceiling, ...],
    new_ceilings: tuple[Ceiling, ...],
    gpus: tuple[str, str],
    *,
    junit_out: str | None,
    markdown_out: str | None,
    html: str | None,
    out: str | None,
    name: str,
    svg: str | None,
    png: str | None,
    force: bool,
    keep: list[str],
) -> None:
    """The CI reports, the HTML page (``--html``, or ``-o DIR``'s ``NAME.roofscope.html``) and
    the charts asked for, drawn on each side's ceilings."""
    from roofscope.render.compare.gate import junit, markdown

    if junit_out:
        write_atomically(Path(junit_out), junit(cmp, verdict), force=force, keep=keep)
    if markdown_out:
        write_atomically(Path(markdown_out), markdown(cmp, verdict), force=force, keep=keep)
    html = html_path(html, out, name)
    if html:
        from roofscope.render.report.html import render_compare_html

        page = render_compare_html(cmp, verdict, ceilings, new_ceilings, gpus)
        write_atomically(Path(html), page, force=force, keep=keep)
    if svg or png:
        from roofscope.render.charts.movement import movement_svg
        from roofscope.render.charts.waterfall import waterfall_svg

        movement = movement_svg(cmp, ceilings, new_ceilings, gpus)
        charts = {"waterfall": waterfall_svg(cmp), "movement": movement}
        write_charts(charts, svg, png, force=force, keep=keep)
