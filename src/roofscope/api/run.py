"""``analyze`` and ``compare``: the check-up the commands run (``cli/checkup.py``), with the
options as keyword arguments (``kernel=`` is ``--kernel``, ``peak_flops=`` is
``--peak-flops``). Errors name the command-line option that matches the argument."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import TypeAlias

from roofscope.analysis.timeline import DEFAULT_GAP_NS
from roofscope.api.comparison import Comparison
from roofscope.api.report import Report
from roofscope.cli.checkup import (
    CheckupOptions,
    check_up,
    compare_sides,
    prepare,
    side_gpus,
)
from roofscope.errors import UsageError
from roofscope.model import words
from roofscope.report import with_lanes

AnyPath: TypeAlias = str | os.PathLike[str]
Progress: TypeAlias = Callable[[str], None]  # hears the name of each file as it is read
DEFAULT_GAP_US = DEFAULT_GAP_NS / 1000
MAX_GAP_US = 1e12  # as --gap-us


def analyze(
    *paths: AnyPath,
    gpu: str | None = None,
    work: str | Sequence[str] = (),
    ceilings: AnyPath | None = None,
    peak_flops: float | None = None,
    peak_bw: float | None = None,
    kernel: str | None = None,
    device: int | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    fmt: str | None = None,
    gap_us: float = DEFAULT_GAP_US,
    progress: Progress | None = None,
    full_names: bool = False,
) -> Report:
    """The check-up of one profile (``roofscope analyze PATHS``): files of several processes
    merge. ``work``: ``NAME=FLOPS:BYTES[@DTYPE]`` rules or work files (TOML), one or many.
    ``full_names``: the report's HTML and charts show kernel names whole (``--full-names``).

    ``scheduler`` is refused: the cluster summary (``analyze --scheduler``) has no dispatch
    rows, so no Report's counter metrics; ``roofscope.cluster_summary`` gives it."""
    if scheduler is not None:
        raise UsageError(
            f"scheduler={scheduler!r}: the cluster summary has kernels, devices, ranks, a "
            "roofline and findings but no counter metrics, so it is no Report; call "
            "roofscope.cluster_summary(*paths, scheduler=...) for it, or drop scheduler="
        )
    options = options_of(
        gpu=gpu, work=work, ceilings=ceilings, peak_flops=peak_flops, peak_bw=peak_bw,
        kernel=kernel, device=device, jobs=jobs, fmt=fmt, gap_us=gap_us,
    )  # fmt: skip
    checkup = check_up(paths_of(paths, "analyze"), prepare(options), progress=progress)
    report = with_lanes(checkup.report, checkup.profile)  # the timeline chart's bins
    return Report(report, read=(*checkup.read, *options.files), full_names=full_names)


def compare(
    base: AnyPath,
    new: AnyPath,
    *,
    base_runs: Sequence[AnyPath] = (),
    new_runs: Sequence[AnyPath] = (),
    gpu: str | None = None,
    base_gpu: str | None = None,
    new_gpu: str | None = None,
    work: str | Sequence[str] = (),
    ceilings: AnyPath | None = None,
    peak_flops: float | None = None,
    peak_bw: float | None = None,
    kernel: str | None = None,
    device: int | None = None,
    jobs: int | None = None,
    fmt: str | None = None,
    gap_us: float = DEFAULT_GAP_US,
    progress: Progress | None = None,
    full_names: bool = False,
) -> Comparison:
    """Baseline against candidate (``roofscope compare BASE NEW``); ``base_runs`` and
    ``new_runs``: more runs of a side (``--base-run``, ``--new-run``). The gate is
    ``Comparison.gate(...)``; ``full_names``: kernel names whole in the HTML and charts
    (``--full-names``)."""
    options = options_of(
        gpu=gpu, work=work, ceilings=ceilings, peak_flops=peak_flops, peak_bw=peak_bw,
        kernel=kernel, device=device, jobs=jobs, fmt=fmt, gap_us=gap_us,
    )  # fmt: skip
    sides = side_gpus(gpu, base_gpu, new_gpu)
    settings = prepare(options)
    both = compare_sides(
        paths_of([base, *base_runs], "compare"), paths_of([new, *new_runs], "compare"), settings,
        sides, check=lambda paths, s, label: check_up(paths, s, label=label, progress=progress),
    )  # fmt: skip
    return Comparison.of(both, full_names=full_names)


def paths_of(paths: Sequence[AnyPath], function: str) -> list[str]:
    """The paths as strings; none, or one that is no path, is a UsageError."""
    if not paths:
        raise UsageError(f"{function}(): no profile given; pass a file or directory")
    bad = next((p for p in paths if not isinstance(p, str | os.PathLike)), None)
    if bad is not None:
        raise UsageError(f"{function}(): {bad!r} is not a path; pass a str or pathlib.Path")
    return [os.fspath(p) for p in paths]


def options_of(
    *,
    gpu: str | None,
    work: str | Sequence[str],
    ceilings: AnyPath | None,
    peak_flops: float | None,
    peak_bw: float | None,
    kernel: str | None,
    device: int | None,
    jobs: int | None,
    fmt: str | None,
    gap_us: float,
) -> CheckupOptions:
    """The options as the command line checks them (its ``min=``/``max=``)."""
    for name, value, low, high in (
        ("peak_flops", peak_flops, 0, math.inf), ("peak_bw", peak_bw, 0, math.inf),
        ("jobs", jobs, 1, math.inf), ("gap_us", gap_us, 0, MAX_GAP_US),
    ):  # fmt: skip
        if value is not None and not low <= value <= high:
            raise UsageError(f"{name}={value!r}: expected a number from {low} to {words.sig(high)}")
    return CheckupOptions(
        fmt=fmt, kernel=kernel, device=device, gap_us=gap_us, gpu=gpu,
        work=(work,) if isinstance(work, str) else tuple(work),
        ceilings=None if ceilings is None else os.fspath(ceilings),
        peak_flops=peak_flops, peak_bw=peak_bw, jobs=jobs,
    )  # fmt: skip
