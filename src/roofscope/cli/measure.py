"""``roofscope profile`` and ``roofscope peaks``: the commands that run on the GPU's machine."""

from __future__ import annotations

import sys
from pathlib import Path

from roofscope.cli import options as o
from roofscope.cli.outputs import report_view
from roofscope.cli.parse import Command, Opt, Pos
from roofscope.errors import InputError, UsageError
from roofscope.outfile import make_folder, refuse_existing


def profile(
    command: list[str],
    with_: str | None = None,
    counter_set: str = "roofline",
    out: str | None = None,
    kernel: str | None = None,
    as_json: bool = False,
    force: bool = False,
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
    out: str = "roofscope-ceilings.toml",
    device: int = 0,
    warmups: int = 3,
    repeats: int = 10,
    force: bool = False,
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


PROFILE = Command(
    "profile",
    profile,
    (
        Pos("command", "The program to profile and its arguments, after --.", "..."),
        Opt(("--with",), "with_", "rocprofv3, rocprof, ncu or nsys (default: the first found)."),
        Opt(
            ("--set",),
            "counter_set",
            "hotspots (timing), roofline (+ the counters the roofline needs), full (+ those of "
            "every metric). Default: roofline.",
        ),
        Opt(
            ("-o", "--out"),
            "out",
            "Folder for every output (default roofscope-profile).",
            metavar="DIR",
        ),
        Opt(("--kernel",), "kernel", "Profile only kernels matching this regex."),
        o.JSON,
        o.FORCE,
    ),
)
PEAKS = Command(
    "peaks",
    peaks,
    (
        Opt(
            ("-o", "--out"),
            "out",
            "The ceilings file to write (read by --ceilings; default roofscope-ceilings.toml).",
            metavar="FILE",
        ),
        Opt(("--device",), "device", "The GPU index.", "int", low=0),
        Opt(("--warmups",), "warmups", "Untimed runs first (default 3).", "int", low=0),
        Opt(("--repeats",), "repeats", "Timed runs (median; default 10).", "int", low=1),
        o.FORCE,
    ),
)
