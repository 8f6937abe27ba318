"""``analyze`` and ``compare``: the check-up the commands run (``checkup/engine.py``), with
the options as keyword arguments (``kernel=`` is ``--kernel``, ``peak_flops=`` is
``--peak-flops``), checked where the command line's are (``checkup/options.py``); errors name
the argument (``gap_us=``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import TypeAlias

from msgspec.structs import replace

from roofscope.api.comparison import Comparison
from roofscope.api.report import Report
from roofscope.checkup.engine import check_up, compare_sides, prepare, side_captures, side_gpus
from roofscope.checkup.options import DEFAULT_GAP_US, CheckupOptions, Spelling
from roofscope.errors import UsageError

AnyPath: TypeAlias = str | os.PathLike[str]
Progress: TypeAlias = Callable[[str], None]  # hears the name of each file as it is read
PYTHON = Spelling.PYTHON


def analyze(
    *paths: AnyPath,
    gpu: str | None = None,
    fp32_matmul: str = "fp32",
    work: str | Sequence[str] = (),
    ceilings: AnyPath | None = None,
    graph_capture: AnyPath | Sequence[AnyPath] = (),
    peak_flops: float | None = None,
    peak_bw: float | None = None,
    kernel: str | None = None,
    device: int | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    skip_unreadable: bool = False,
    fmt: str | None = None,
    gap_us: float = DEFAULT_GAP_US,
    progress: Progress | None = None,
    full_names: bool = False,
    idle_gaps: bool = False,
    memory_limit: str | None = None,
) -> Report:
    """The check-up of one profile (``roofscope analyze PATHS``): files of several processes
    merge. ``work``: ``NAME=FLOPS:BYTES[@DTYPE]`` rules or work files (TOML), one or many.
    ``scheduler``: read the runs (ranks) on this Dask scheduler (``tcp://HOST:PORT`` or its
    scheduler file; ``pip install 'roofscope[dask]'``) or ``"local"`` (``jobs`` worker
    processes): the same Report, with its ``engine``. ``full_names``: the report's HTML and
    charts show kernel names whole (``--full-names``). ``graph_capture``: the torch.profiler
    trace(s) of the CUDA/HIP graphs' capture (``--graph-capture``): the replayed kernels get
    the operators and shapes of their captured launches. ``idle_gaps``: keep the 1,000 longest
    idle gaps with what filled them (``report.checkup.idle_gaps``; the MCP timeline tool's).
    ``memory_limit``: the most memory the profile's database holds (``"500MB"``, ``"2GiB"``),
    what is beyond it spilled to a temporary folder (``--memory-limit``)."""
    options = CheckupOptions(
        gpu=gpu, work=_work(work), ceilings=_path(ceilings), peak_flops=peak_flops,
        peak_bw=peak_bw, kernel=kernel, device=device, jobs=jobs, fmt=fmt, gap_us=gap_us,
        scheduler=scheduler, skip_unreadable=skip_unreadable, fp32_matmul=fp32_matmul,
        graph_capture=_paths(graph_capture), memory_limit=memory_limit,
    )  # fmt: skip
    names = paths_of(paths, "analyze")
    # the timeline chart's bins; the longest idle gaps and their causes only when asked
    settings = replace(prepare(options, PYTHON), lanes=True, gaps=idle_gaps)
    report = check_up(names, settings, progress=progress, spelling=PYTHON)
    return Report(report, read=(*report.read, *options.files), full_names=full_names)


def compare(
    base: AnyPath,
    new: AnyPath,
    *,
    base_runs: Sequence[AnyPath] = (),
    new_runs: Sequence[AnyPath] = (),
    gpu: str | None = None,
    base_gpu: str | None = None,
    new_gpu: str | None = None,
    base_graph_capture: AnyPath | Sequence[AnyPath] = (),
    new_graph_capture: AnyPath | Sequence[AnyPath] = (),
    fp32_matmul: str = "fp32",
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
    memory_limit: str | None = None,
) -> Comparison:
    """Baseline against candidate (``roofscope compare BASE NEW``); ``base_runs`` and
    ``new_runs``: more runs of a side (``--base-run``, ``--new-run``). The gate is
    ``Comparison.gate(...)``; ``full_names``: kernel names whole in the HTML and charts
    (``--full-names``); ``base_graph_capture``, ``new_graph_capture``: each side's CUDA/HIP
    graph capture traces (``analyze``'s ``graph_capture``); ``memory_limit``: ``analyze``'s, for
    each side."""
    options = CheckupOptions(
        gpu=gpu, work=_work(work), ceilings=_path(ceilings), peak_flops=peak_flops,
        peak_bw=peak_bw, kernel=kernel, device=device, jobs=jobs, fmt=fmt, gap_us=gap_us,
        scheduler=scheduler, fp32_matmul=fp32_matmul, memory_limit=memory_limit,
    )  # fmt: skip
    sides = side_gpus(gpu, base_gpu, new_gpu, PYTHON)
    settings = prepare(options, PYTHON)
    captures = side_captures(_paths(base_graph_capture), _paths(new_graph_capture), PYTHON)
    both = compare_sides(
        paths_of([base, *base_runs], "compare"), paths_of([new, *new_runs], "compare"), settings,
        sides, captures, watch=lambda paths: nullcontext(progress), spelling=PYTHON,
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


def _paths(paths: AnyPath | Sequence[AnyPath]) -> tuple[str, ...]:
    if isinstance(paths, str | os.PathLike):
        return (os.fspath(paths),)
    return tuple(os.fspath(p) for p in paths)


def _work(work: str | Sequence[str]) -> tuple[str, ...]:
    return (work,) if isinstance(work, str) else tuple(work)


def _path(path: AnyPath | None) -> str | None:
    return None if path is None else os.fspath(path)
