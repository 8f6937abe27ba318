"""Command line: the only place that touches argv, stdout/stderr and exit codes.

Exit codes: 0 ok, 1 analysis or input error, 2 usage error.
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
from roofscope.analysis.selection import Selection, require_some
from roofscope.analysis.timeline import DEFAULT_GAP_NS
from roofscope.ceilings import read_ceilings_file, user_ceilings
from roofscope.errors import InputError, RoofscopeError, UsageError
from roofscope.model import Profile
from roofscope.outfile import make_folder, refuse_existing, write_atomically
from roofscope.readers import registry
from roofscope.readers.load import load
from roofscope.readers.sniff import size_if_file
from roofscope.render.json import render_json
from roofscope.report import Report, RooflineOptions, analyse
from roofscope.work.spec import Rule, parse_inline, read_work_file

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="A full check-up of GPU programs from the files their profiler already wrote.",
    pretty_exceptions_enable=False,
)

PROGRESS_BYTES = 64 << 20
MAX_SLOWER_PCT = 1e6  # 10,000 times slower; inf reached the JSON gate thresholds
MAX_GAP_US = 1e12  # 11.6 days; beyond it the threshold overflowed the integer nanoseconds

Force = Annotated[bool, typer.Option("--force", help="Overwrite existing output files.")]
OutDir = Annotated[
    str | None,
    typer.Option("-o", "--out", help="Write the HTML report into DIR, named after the input(s)."),
]


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
        rules=tuple(_work_rules(work or [])),
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
    keep = _inputs(profile, [*paths, *(work or []), *([ceilings] if ceilings else [])])
    report = analyse(profile, selection=selection, gap_threshold_ns=round(gap_us * 1000), roof=roof)
    if out and not html:
        html = str(Path(out) / f"{_stem(paths[0])}.roofscope.html")
        make_folder(Path(out))
    if html:
        from roofscope.render.html import render_html

        _write(Path(html), render_html(report), force=force, keep=keep)
    if svg or png:
        from roofscope.render.charts import hotspot_svg, roofline_svg, timeline_svg

        charts = {"hotspots": hotspot_svg(report), "roofline": roofline_svg(report),
                  "timeline": timeline_svg(report)}  # fmt: skip
        _write_charts(charts, svg, png, force=force, keep=keep)
    sys.stdout.write(render_json(report) if as_json else _text(report, top=top))


def _write_charts(
    charts: dict[str, str], svg: str | None, png: str | None, *, force: bool, keep: list[str]
) -> None:
    """Each chart that has something to show as ``DIR/NAME.svg`` and/or ``DIR/NAME.png``."""
    charts = {name: chart for name, chart in charts.items() if chart}
    if svg:
        make_folder(Path(svg))
        for name, chart in charts.items():
            _write(Path(svg) / f"{name}.svg", chart, force=force, keep=keep)
    if png:
        from roofscope.render.png import write_pngs

        write_pngs(charts, Path(png), force=force, keep=keep)


@app.command()
def profile(
    command: Annotated[
        list[str], typer.Argument(help="The program to profile and its arguments, after --.")
    ],
    with_: Annotated[
        str | None,
        typer.Option("--with", help="rocprofv3, rocprof, ncu or nsys (default: the first found)."),
    ] = None,
    counter_set: Annotated[
        str,
        typer.Option(
            "--set",
            help="hotspots (timing), roofline (+ the counters the roofline needs), "
            "full (+ those of every metric).",
        ),
    ] = "roofline",
    out: Annotated[
        str | None,
        typer.Option("-o", "--out", help="Folder for every output (default roofscope-profile)."),
    ] = None,
    kernel: Annotated[
        str | None, typer.Option("--kernel", help="Profile only kernels matching this regex.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON (schema v1) on stdout.")] = False,
    force: Force = False,
) -> None:
    """Run COMMAND under a profiler with the counters the check-up needs (in as many passes
    as the hardware allows), keep every output and a manifest in DIR, then analyse DIR."""
    from roofscope import profiling

    if counter_set not in profiling.SETS:
        raise UsageError(f"--set {counter_set}: use one of {', '.join(profiling.SETS)}")
    folder = Path(out or "roofscope-profile")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise UsageError(f"{folder}: exists and is not empty; pass --force or another -o DIR")
    profiler = profiling.pick(with_)
    counters = profiling.counters_for(profiler, counter_set)
    if counter_set != "hotspots" and not counters:
        raise InputError(
            profiler,
            f"lists none of the counters the {counter_set} set needs on this GPU",
            "check the GPU and driver, or use --set hotspots",
        )
    passes = profiling.plan(profiler, counter_set, counters, command, kernel=kernel)
    make_folder(folder)
    manifest = profiling.Manifest(
        command=list(command),
        cwd=str(Path.cwd()),
        profiler=profiler,
        profiler_version=profiling.version(profiler),
        counter_set=counter_set,
        counters=counters,
    )
    runs = profiling.run(passes, folder.resolve(), Path.cwd(), manifest)
    for number, done in enumerate(runs, start=1):
        if not profiling.wrote_dispatches(folder / done.folder, done):
            raise InputError(
                f"pass {number} ({' '.join(done.argv[:2])} ...)",
                "recorded no kernel dispatches",
                f"check that the program launches GPU kernels (and --kernel matches); "
                f"the output is kept in {folder}",
            )
    analyze([str(folder)], as_json=as_json, force=force)


@app.command()
def peaks(
    out: Annotated[
        str,
        typer.Option("-o", "--out", help="The ceilings file to write (read by --ceilings)."),
    ] = "roofscope-ceilings.toml",
    device: Annotated[int, typer.Option("--device", min=0, help="The GPU index.")] = 0,
    warmups: Annotated[int, typer.Option("--warmups", min=0, help="Untimed runs first.")] = 3,
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="Timed runs (median).")] = 10,
    force: Force = False,
) -> None:
    """Measure this GPU's achievable ceilings with PyTorch (HBM and L2 bandwidth, matrix
    FLOP/s per data type, vector FP32/FP64) and write them as a --ceilings file."""
    from datetime import UTC, datetime

    from roofscope import peaks as measure

    if (reason := measure.no_gpu_reason()) is not None:
        raise InputError("roofscope peaks", reason, "run it on a machine with a GPU")
    refuse_existing(Path(out), force=force)
    from roofscope.peaks_torch import TorchBackend

    backend = TorchBackend()
    results = measure.measure(backend, device=device, warmups=warmups, repeats=repeats)
    info = backend.info()
    when = datetime.now(UTC).isoformat(timespec="seconds")
    provenance = measure.Provenance(device, info, when, warmups, repeats)
    scope = measure.scope_of(info)
    measure.write_ceilings(results, provenance, Path(out), scope=scope, force=force)
    for r in results:
        shown = r.reason if isinstance(r, measure.Skipped) else measure.human(r)
        sys.stderr.write(f"{r.name}: {shown}\n")
    sys.stdout.write(f"{out}\n")


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


@app.command()
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
    from roofscope.compare.gate import EXIT_GATE_FAILED, gate, junit, markdown
    from roofscope.render.compare_out import render_compare_json, render_compare_text

    roof = RooflineOptions(gpu=gpu, rules=tuple(_work_rules(work or [])))

    keep = [*(work or [])]

    def runs(first: str, more: list[str] | None) -> list[Run]:
        out = []
        for path in [first, *(more or [])]:
            profile = load([path], fmt=fmt)
            keep.extend(_inputs(profile, [path]))
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
        _write(Path(junit_out), junit(verdict), force=force, keep=keep)
    if markdown_out:
        _write(Path(markdown_out), markdown(cmp, verdict), force=force, keep=keep)
    if out and not html:
        html = str(Path(out) / f"{_stem(base)}-vs-{_stem(new)}.roofscope.html")
        make_folder(Path(out))
    ceilings = base_runs[0].report.roofline.result.ceilings
    if html:
        from roofscope.render.html import render_compare_html

        _write(Path(html), render_compare_html(cmp, verdict, ceilings), force=force, keep=keep)
    if svg or png:
        from roofscope.render.compare_charts import movement_svg, waterfall_svg

        charts = {"waterfall": waterfall_svg(cmp), "movement": movement_svg(cmp, ceilings)}
        _write_charts(charts, svg, png, force=force, keep=keep)
    sys.stdout.write(
        render_compare_json(cmp, verdict) if as_json else render_compare_text(cmp, verdict)
    )
    if not verdict.passed:
        raise typer.Exit(EXIT_GATE_FAILED)


@app.command()
def devices(
    name: Annotated[
        str | None, typer.Argument(help="Show this GPU with the source of every value.")
    ] = None,
) -> None:
    """List the GPUs in the catalogue, or show one with its ceilings and their sources."""
    from roofscope import devices as catalogue

    if name is None:
        for d in catalogue.catalogue():
            typer.echo(f"{d.key:14} {d.arch:8} {d.model}")
        return
    found = catalogue.find(name)
    if found is None:
        near = ", ".join(catalogue.closest(name)) or "none"
        raise UsageError(f"{name!r}: not in the catalogue (closest: {near})")
    sys.stdout.write(catalogue.describe(found))


def _stem(path: str) -> str:
    """A file-name-safe name for an input: its file or folder name without suffix."""
    name = Path(path).resolve().name
    stem = name.split(".")[0] or "profile"
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in stem)


def _write(path: Path, text: str, *, force: bool, keep: list[str]) -> None:
    """Write an output file whole (temporary file and rename); an existing one only with
    --force, and never one of ``keep``."""
    write_atomically(path, text, force=force, keep=keep)


def _inputs(profile: Profile, named: list[str]) -> list[str]:
    """Every file the run read: the paths named and the files read from folders."""
    return [*named, *(f.path for f in profile.inputs)]


def _work_rules(values: Sequence[str]) -> list[Rule]:
    """Inline rules first (in order), then the rules of each work file."""
    inline, files = [], []
    for v in values:
        if size_if_file(Path(v)) is not None:
            files.extend(read_work_file(Path(v)))
        elif "=" in v:
            inline.append(parse_inline(v))
        else:
            raise UsageError(
                f"--work {v!r}: neither NAME=FLOPS:BYTES[@DTYPE] nor a work file that exists"
            )
    return [*inline, *files]


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
        sys.stderr.write(f"roofscope: error: {exc}\n")
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
