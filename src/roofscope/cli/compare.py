"""``roofscope compare``: baseline against candidate, and the gate for CI."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from roofscope.cli.common import (
    Force,
    OutDir,
    inputs_of,
    stem,
    work_rules,
    write_charts,
)
from roofscope.outfile import make_folder, write_atomically
from roofscope.readers.load import load
from roofscope.report import RooflineOptions, analyse

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
    fmt: Annotated[
        str | None, typer.Option("--format", help="Read every file as this format.")
    ] = None,
    gpu: Annotated[
        str | None, typer.Option("--gpu", help="The GPU, when the profiles do not say.")
    ] = None,
    work: Annotated[
        list[str] | None, typer.Option("--work", help="Work of kernels (as analyze).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    html: Annotated[
        str | None, typer.Option("--html", help="Also write the comparison as an HTML file.")
    ] = None,
    svg: Annotated[
        str | None, typer.Option("--svg", help="Also write each chart as an SVG file into DIR.")
    ] = None,
    png: Annotated[
        str | None,
        typer.Option("--png", help="Also write each chart as a PNG file into DIR (Chromium)."),
    ] = None,
    force: Force = False,
    out: OutDir = None,
) -> None:
    """Baseline against candidate: per-kernel and end-to-end speedup, and a gate for CI."""
    from roofscope.compare.compare import Run, run_of
    from roofscope.compare.compare import compare as compare_runs
    from roofscope.compare.gate import gate
    from roofscope.render.compare_gate import junit, markdown
    from roofscope.render.compare_out import render_compare_json, render_compare_text

    roof = RooflineOptions(gpu=gpu, rules=tuple(work_rules(work or [])))

    keep = [*(work or [])]

    def runs(first: str, more: list[str] | None) -> list[Run]:
        out = []
        for path in [first, *(more or [])]:
            profile = load([path], fmt=fmt)
            keep.extend(inputs_of(profile, [path]))
            out.append(run_of(profile, analyse(profile, roof=roof)))
        return out

    base_runs, new_runs = runs(base, base_run), runs(new, new_run)
    cmp = compare_runs(base_runs, new_runs, (base, new))
    verdict = gate(
        cmp,
        fail_if_slower=fail_if_slower,
        fail_if_kernel_slower=fail_if_kernel_slower,
        min_share=min_share,
    )
    if junit_out:
        write_atomically(Path(junit_out), junit(cmp, verdict), force=force, keep=keep)
    if markdown_out:
        write_atomically(Path(markdown_out), markdown(cmp, verdict), force=force, keep=keep)
    if out and not html:
        html = str(Path(out) / f"{stem(base)}-vs-{stem(new)}.roofscope.html")
        make_folder(Path(out))
    ceilings = base_runs[0].report.roofline.result.ceilings
    if html:
        from roofscope.render.html import render_compare_html

        page = render_compare_html(cmp, verdict, ceilings)
        write_atomically(Path(html), page, force=force, keep=keep)
    if svg or png:
        from roofscope.render.compare_charts import movement_svg, waterfall_svg

        charts = {"waterfall": waterfall_svg(cmp), "movement": movement_svg(cmp, ceilings)}
        write_charts(charts, svg, png, force=force, keep=keep)
    sys.stdout.write(
        render_compare_json(cmp, verdict) if as_json else render_compare_text(cmp, verdict)
    )
    if not verdict.passed:
        raise typer.Exit(EXIT_GATE_FAILED)
