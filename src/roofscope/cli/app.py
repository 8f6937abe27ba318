"""Command line: with ``cli_compare``, ``cli_measure`` and ``cli_common``, the only place that
touches argv, stdout/stderr and exit codes.

Exit codes: 0 ok, 1 analysis or input error, 2 usage error, 3 the compare gate failed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from roofscope import __version__
from roofscope.analysis.timeline import DEFAULT_GAP_NS
from roofscope.catalogue.ceilings import read_ceilings_file, user_ceilings
from roofscope.cli.common import (
    Force,
    OutDir,
    inputs_of,
    stem,
    work_rules,
    write_charts,
)
from roofscope.cli.compare import compare
from roofscope.cli.measure import peaks, profile
from roofscope.cli.words import worded
from roofscope.errors import RoofscopeError, UsageError
from roofscope.model.selection import Selection, require_some
from roofscope.outfile import make_folder, write_atomically
from roofscope.readers import registry
from roofscope.readers.load import load
from roofscope.readers.sniff import size_if_file
from roofscope.render.json import render_json
from roofscope.report import Report, RooflineOptions, analyse

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="A full check-up of GPU programs from the files their profiler already wrote.",
    pretty_exceptions_enable=False,
)

PROGRESS_BYTES = 64 << 20
MAX_GAP_US = 1e12  # 11.6 days; beyond it the threshold overflowed the integer nanoseconds


def _version(value: bool) -> None:
    if value:
        typer.echo(f"roofscope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """roofscope reads rocprof/rocprofv3 output and reports the baseline and the hotspots."""


@app.command()
def analyze(
    paths: Annotated[list[str], typer.Argument(help="Profiler output files or directories.")],
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="Read every file as this format (see `roofscope formats`)."),
    ] = None,
    top: Annotated[
        int,
        typer.Option(
            "--top", min=1, help="Kernels shown in the text table; the rest fold into 'other'."
        ),
    ] = 20,
    kernel: Annotated[
        str | None,
        typer.Option("--kernel", help="Only kernels whose normalised name matches this regex."),
    ] = None,
    device: Annotated[
        int | None, typer.Option("--device", help="Only dispatches on this device (agent) id.")
    ] = None,
    gap_us: Annotated[
        float,
        typer.Option(
            "--gap-us", min=0, max=MAX_GAP_US, help="Count idle gaps at least this long (µs)."
        ),
    ] = DEFAULT_GAP_NS / 1000,
    as_json: Annotated[
        bool, typer.Option("--json", help="JSON (schema v1, SI units) on stdout.")
    ] = False,
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu",
            help="The GPU it ran on, when the profile does not say (see `roofscope devices`).",
        ),
    ] = None,
    work: Annotated[
        list[str] | None,
        typer.Option(
            "--work",
            help="Work of a kernel: NAME=FLOPS:BYTES[@DTYPE] (totals), or a work file (TOML). "
            "Repeatable.",
        ),
    ] = None,
    ceilings: Annotated[
        str | None,
        typer.Option(
            "--ceilings",
            help="Ceilings file (TOML): your peaks override measured and catalogue ones.",
        ),
    ] = None,
    peak_flops: Annotated[
        float | None,
        typer.Option("--peak-flops", min=0, help="FP32 vector peak, FLOP/s (e.g. 22.6e12)."),
    ] = None,
    peak_bw: Annotated[
        float | None,
        typer.Option("--peak-bw", min=0, help="HBM bandwidth peak, B/s (e.g. 1.6e12)."),
    ] = None,
    html: Annotated[
        str | None, typer.Option("--html", help="Also write the report as one offline HTML file.")
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
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", min=1, help="Worker processes reading many ranks' files (default: all cores)."
        ),
    ] = None,
) -> None:
    """Baseline, hotspots and roofline of one profile (files of several processes merge)."""
    selection = Selection(kernel=kernel, device=device)
    selection.pattern()  # a bad regex is a usage error before any reading
    roof = RooflineOptions(
        gpu=gpu,
        rules=tuple(work_rules(work or [])),
        ceilings=tuple(
            [
                *user_ceilings(peak_flops, peak_bw),
                *(read_ceilings_file(Path(ceilings)) if ceilings else []),
            ]
        ),
    )
    with _progress(paths) as tick:
        profile = load(paths, fmt=fmt, progress=tick, jobs=jobs)
    require_some(profile, selection)
    keep = inputs_of(profile, [*paths, *(work or []), *([ceilings] if ceilings else [])])
    report = analyse(profile, selection=selection, gap_threshold_ns=round(gap_us * 1000), roof=roof)
    if out and not html:
        html = str(Path(out) / f"{stem(paths[0])}.roofscope.html")
        make_folder(Path(out))
    if html:
        from roofscope.render.html import render_html

        write_atomically(Path(html), render_html(report), force=force, keep=keep)
    if svg or png:
        from roofscope.render.charts import hotspot_svg, roofline_svg, timeline_svg

        charts = {"hotspots": hotspot_svg(report), "roofline": roofline_svg(report),
                  "timeline": timeline_svg(report)}  # fmt: skip
        write_charts(charts, svg, png, force=force, keep=keep)
    sys.stdout.write(render_json(report) if as_json else _text(report, top=top))


app.command()(profile)
app.command()(peaks)


@app.command()
def demo(
    which: Annotated[
        str,
        typer.Argument(
            help="trace: a rocprof v1 trace of a finite-difference code on one MI250 GCD; "
            "counters: an Omniperf workload of an OpenMP offload exercise on an MI300A "
            "(counters, roofline, findings)."
        ),
    ] = "trace",
    as_json: Annotated[bool, typer.Option("--json", help="JSON instead of text.")] = False,
) -> None:
    """Run analyze on a real profile shipped with roofscope (AMD HPC training, MIT licence)."""
    folders = {"trace": "finite-difference", "counters": "openmp-collapse-mi300a"}
    if which not in folders:
        raise UsageError(f"demo {which!r}: choose one of {', '.join(folders)}")
    root = resources.files("roofscope") / "data" / "demo" / folders[which]
    with resources.as_file(root) as folder:
        report = analyse(load([str(Path(folder))]))
    sys.stdout.write(render_json(report) if as_json else _text(report))


app.command()(compare)


@app.command()
def devices(
    name: Annotated[
        str | None, typer.Argument(help="Show this GPU with the source of every value.")
    ] = None,
) -> None:
    """List the GPUs in the catalogue, or show one with its ceilings and their sources."""
    from roofscope.catalogue import devices as catalogue

    if name is None:
        for d in catalogue.catalogue():
            typer.echo(f"{d.key:14} {d.arch:8} {d.model}")
        return
    found = catalogue.find(name)
    if found is None:
        near = ", ".join(catalogue.closest(name)) or "none"
        raise UsageError(f"{name!r}: not in the catalogue (closest: {near})")
    sys.stdout.write(catalogue.describe(found))


@app.command()
def formats() -> None:
    """List the input formats roofscope recognises."""
    for reader in registry.readers():
        typer.echo(f"{reader.name:24} {reader.description}")


def _text(report: Report, *, top: int = 20) -> str:
    from roofscope.render.text import render_text  # rich loads only for the terminal view

    return render_text(report, top=top, color=sys.stdout.isatty() and "NO_COLOR" not in os.environ)


@contextmanager
def _progress(paths: Sequence[str]) -> Iterator[Callable[[str], None] | None]:
    """A spinner on stderr for big inputs, only when stderr is a terminal."""
    size = sum(size_if_file(Path(p)) or 0 for p in paths)
    if not sys.stderr.isatty() or size < PROGRESS_BYTES:
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("reading…") as status:
        yield lambda name: status.update(f"reading {name}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code instead of raising."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # without standalone mode, click returns the code of a typer.Exit (the gate's 3)
        code = app(args=args, prog_name="roofscope", standalone_mode=False)
    except RoofscopeError as exc:
        sys.stderr.write(f"roofscope: error: {worded(exc)}\n")
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("roofscope: aborted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if not _is_usage_error(exc):
            raise
        sys.stderr.write(f"roofscope: error: {exc.format_message()}\n")  # type: ignore[attr-defined]
        return 2
    return code if isinstance(code, int) else 0


def _is_usage_error(exc: Exception) -> bool:
    """Click's (or Typer's vendored click's) usage errors, whichever Typer is installed."""
    return hasattr(exc, "format_message") and hasattr(exc, "exit_code")
