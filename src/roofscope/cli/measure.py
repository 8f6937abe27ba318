"""``roofscope profile`` and ``roofscope peaks``: the commands that run on the GPU's machine."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from roofscope.cli import options as o
from roofscope.cli.outputs import report_view
from roofscope.errors import InputError, UsageError
from roofscope.outfile import make_folder, refuse_existing


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
    as_json: o.Json = False,
    force: o.Force = False,
) -> None:
    """Run COMMAND under a profiler with the counters the check-up needs (in as many passes
    as the hardware allows), keep every output and a manifest in DIR, then analyse DIR."""
    from roofscope.measure import profiling

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
    from roofscope.cli.progress import run_checkup  # DuckDB, numpy

    report = run_checkup([str(folder)])  # the check-up of what was just recorded
    sys.stdout.write(report_view(report, as_json=as_json))


def peaks(
    out: Annotated[
        str,
        typer.Option("-o", "--out", help="The ceilings file to write (read by --ceilings)."),
    ] = "roofscope-ceilings.toml",
    device: Annotated[int, typer.Option("--device", min=0, help="The GPU index.")] = 0,
    warmups: Annotated[int, typer.Option("--warmups", min=0, help="Untimed runs first.")] = 3,
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="Timed runs (median).")] = 10,
    force: o.Force = False,
) -> None:
    """Measure this GPU's achievable ceilings with PyTorch (HBM and L2 bandwidth, matrix
    FLOP/s per data type, vector FP32/FP64) and write them as a --ceilings file."""
    from datetime import UTC, datetime

    from roofscope.measure import peaks as measure
    from roofscope.measure import peaks_file

    if (reason := measure.no_gpu_reason()) is not None:
        raise InputError("roofscope peaks", reason, "run it on a machine with a GPU")
    refuse_existing(Path(out), force=force)
    from roofscope.measure.peaks_torch import TorchBackend

    backend = TorchBackend()
    results = measure.measure(backend, device=device, warmups=warmups, repeats=repeats)
    info = backend.info()
    when = datetime.now(UTC).isoformat(timespec="seconds")
    provenance = peaks_file.Provenance(device, info, when, warmups, repeats)
    scope = peaks_file.scope_of(info)
    peaks_file.write_ceilings(results, provenance, Path(out), scope=scope, force=force)
    for r in results:
        shown = r.reason if isinstance(r, measure.Skipped) else peaks_file.human(r)
        sys.stderr.write(f"{r.name}: {shown}\n")
    sys.stdout.write(f"{out}\n")
