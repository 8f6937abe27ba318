"""The one check-up engine: read each run of a profile into its partial (where the options
say: ``workers.py``), merge the partials in the runs' order into one Profile, analyse it.
``analyze`` runs it once, ``compare`` once per run of each side, ``profile`` on what it
recorded, the Python API as the commands do. The options are checked and their files
(``--work``, ``--ceilings``, ``--graph-capture``) read once, by :func:`prepare`, before any
profile is read.

The partial of a run is its rows (``readers.io.shards.Shard``): merging keeps every number
exact (medians, idle gaps, counters per dispatch), so the report of a job read on a Dask
cluster is the report of the same files read in this process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from roofscope.analysis.timeline import DEFAULT_GAP_NS
from roofscope.analysis.work.spec import Rule, parse_inline, read_work_file
from roofscope.catalogue import devices
from roofscope.catalogue.ceilings import read_ceilings_file, user_ceilings
from roofscope.checkup.options import (
    LOCAL,
    OPTIONS,
    CheckupOptions,
    Spelling,
    size_bytes,
    worded,
)
from roofscope.checkup.work_names import require_work_names
from roofscope.errors import UsageError
from roofscope.model.duck import duckdb
from roofscope.model.profile import Profile
from roofscope.model.selection import EVERYTHING, EmptySelection, Selection, require_some
from roofscope.readers.io.shards import LocalWorkers, RunOn, default_jobs
from roofscope.readers.load import load
from roofscope.readers.sniff import size_if_file
from roofscope.report import DEFAULTS, Engine, Report, RooflineOptions, analyse, with_lanes

if TYPE_CHECKING:
    from roofscope.readers.torch.graph_capture import Capture
    from roofscope.verify.compare import Comparison, Run

Progress = Callable[[str], None]  # hears the name of each file as it is read
Captures = tuple["Capture", ...]  # the capture traces of a profile's CUDA/HIP graphs


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """The options checked and their files read: what each check-up applies."""

    fmt: str | None = None
    jobs: int | None = None
    scheduler: str | None = None
    skip_unreadable: bool = False
    selection: Selection = EVERYTHING
    gap_ns: int = DEFAULT_GAP_NS
    roof: RooflineOptions = DEFAULTS
    lanes: bool = False  # the timeline chart's bins too (for the HTML and the charts)
    gaps: bool = False  # with the lanes, the longest idle gaps and their causes (MCP timeline)
    captures: Captures = ()  # --graph-capture: the graphs' capture traces, read
    memory: int | None = None  # --memory-limit, in bytes

    def on_gpu(self, gpu: str | None) -> Settings:
        """The same settings on another GPU (compare's ``--base-gpu``/``--new-gpu``)."""
        return self if gpu is None else replace(self, roof=replace(self.roof, gpu=gpu))


AS_GIVEN = Settings()  # no option given
Watch = Callable[[Sequence[str]], AbstractContextManager[Progress | None]]  # a run's progress


def prepare(options: CheckupOptions, spelling: Spelling = Spelling.CLI) -> Settings:
    """A value out of range, a bad regex, work rule or ceilings file is an error before any
    profile is read."""
    options = options.checked(spelling)
    spelt = OPTIONS["graph_capture"].spelt(spelling)
    selection = Selection(kernel=options.kernel, device=options.device)
    try:
        selection.pattern()
    except UsageError as exc:
        raise UsageError(worded(exc, spelling)) from None
    ceilings = [
        *user_ceilings(options.peak_flops, options.peak_bw),
        *(read_ceilings_file(Path(options.ceilings)) if options.ceilings else []),
    ]
    return Settings(
        fmt=options.fmt,
        jobs=options.jobs,
        scheduler=options.scheduler,
        skip_unreadable=options.skip_unreadable,
        selection=selection,
        gap_ns=round(options.gap_us * 1000),
        captures=_captures(options.graph_capture, spelt),
        memory=_memory(options.memory_limit, spelling),
        roof=RooflineOptions(
            gpu=options.gpu, rules=tuple(work_rules(options.work, spelling)),
            fp32_matmul=options.fp32_matmul,
            ceilings=tuple(ceilings),
        ),
    )  # fmt: skip


def _memory(limit: str | None, spelling: Spelling) -> int | None:
    """``--memory-limit`` in bytes, or a UsageError for a value that is no size or too small."""
    spelt = OPTIONS["memory_limit"].spelt(spelling)
    return None if limit is None else size_bytes(limit, spelt, spelling)


def check_up(
    paths: Sequence[str],
    settings: Settings = AS_GIVEN,
    *,
    label: str | None = None,
    progress: Progress | None = None,
    spelling: Spelling = Spelling.CLI,
) -> Report:
    """Read ``paths`` as one profile (the runs of several processes merge) and analyse it;
    ``progress`` hears the name of each file as it is read. ``label`` (compare's ``baseline``,
    ``candidate``) and the first path lead the error of a selection that keeps nothing of
    this profile. Prints nothing: the commands and the Python API both call it."""
    with _within_limit(settings, paths, spelling):
        return _read_and_analyse(paths, settings, label, progress, spelling)[1]


@contextmanager
def _within_limit(settings: Settings, paths: Sequence[str], spelling: Spelling) -> Iterator[None]:
    """DuckDB's out-of-memory error under ``--memory-limit`` as the option's one line."""
    try:
        yield
    except duckdb.OutOfMemoryException:
        if settings.memory is None:
            raise
        raise UsageError(
            f"{OPTIONS['memory_limit'].spelt(spelling)}: {paths[0]} needs more than "
            f"{settings.memory / 2**20:,.0f} MiB of memory even with what DuckDB can spill to "
            "disk; raise the limit"
        ) from None


def _read_and_analyse(
    paths: Sequence[str],
    settings: Settings,
    label: str | None,
    progress: Progress | None,
    spelling: Spelling,
) -> tuple[Profile, Report]:
    """The merged profile and its report (compare matches launches on the profile)."""
    with _runs_on(settings) as run_on:
        profile = load(
            paths, fmt=settings.fmt, progress=progress, jobs=settings.jobs, run_on=run_on,
            skip_unreadable=settings.skip_unreadable, shapes=_shapes_wanted(settings),
            memory=settings.memory,
        )  # fmt: skip
        engine = _engine(settings, run_on)
    if settings.captures:
        from roofscope.readers.torch.graph_merge import merge  # msgspec: with a capture only

        merge(profile, settings.captures)
    try:
        require_some(profile, settings.selection)
    except EmptySelection as exc:
        where = "" if label is None else f"{label} {paths[0]}: "
        raise UsageError(f"{where}{worded(exc, spelling)}") from None
    require_work_names(profile, settings.roof.rules, spelling)
    report = analyse(
        profile, selection=settings.selection, gap_threshold_ns=settings.gap_ns, roof=settings.roof
    )
    read = (*paths, *(f.path for f in profile.inputs))
    report = replace(report, engine=engine, read=read)
    lanes = with_lanes(report, profile, gaps=settings.gaps) if settings.lanes else report
    return profile, lanes


@contextmanager
def _runs_on(settings: Settings) -> Iterator[RunOn | None]:
    """Where the runs are read: None (``readers.load`` decides: this process, or every core
    for big jobs), this machine's workers (``--scheduler local``), or a Dask cluster."""
    if settings.scheduler is None:
        yield None
    elif settings.scheduler == LOCAL:
        yield LocalWorkers(default_jobs() if settings.jobs is None else settings.jobs)
    else:
        from roofscope.checkup.workers import on_dask  # distributed: only for a cluster

        with on_dask(settings.scheduler) as dask:
            yield dask


def _engine(settings: Settings, run_on: RunOn | None) -> Engine | None:
    """What the report says of where its runs were read: only when ``--scheduler`` chose."""
    if settings.scheduler is None or run_on is None:
        return None
    return Engine(settings.scheduler, run_on.workers, max(run_on.runs, 1))


class Compared(msgspec.Struct, frozen=True):
    """Both sides checked up and compared: what ``compare`` renders and gates."""

    comparison: Comparison
    base: tuple[Run, ...]
    new: tuple[Run, ...]
    read: tuple[str, ...]  # every file read, both sides


def compare_sides(
    base: Sequence[str],
    new: Sequence[str],
    settings: Settings,
    gpus: tuple[str | None, str | None] = (None, None),
    captures: tuple[Captures, Captures] = ((), ()),
    *,
    watch: Watch = lambda paths: nullcontext(),
    spelling: Spelling = Spelling.CLI,
) -> Compared:
    """Each run (path) of each side checked up on its side's GPU (``side_gpus``), then
    compared; labelled by each side's first path. ``watch`` gives each run's progress;
    ``captures``: each side's graph capture traces (:func:`side_captures`), else the
    settings' own."""
    from roofscope.verify.compare import compare, run_of  # analyze never compares

    read: list[str] = []
    sides = []
    named = (("baseline", base, gpus[0], captures[0]), ("candidate", new, gpus[1], captures[1]))
    for label, paths, gpu, graphs in named:
        side = (
            settings.on_gpu(gpu) if not graphs else replace(settings.on_gpu(gpu), captures=graphs)
        )
        runs = []
        for path in paths:
            with watch([path]) as tick, _within_limit(settings, [path], spelling):
                profile, report = _read_and_analyse([path], side, label, tick, spelling)
            read.extend(report.read)
            runs.append(run_of(profile, report))
        sides.append(tuple(runs))
    cmp = compare(sides[0], sides[1], (base[0], new[0]))
    return Compared(cmp, sides[0], sides[1], tuple(read))


def side_gpus(
    gpu: str | None,
    base_gpu: str | None,
    new_gpu: str | None,
    spelling: Spelling = Spelling.CLI,
) -> tuple[str | None, str | None]:
    """Each side's ``--gpu`` override; a name the catalogue lacks is an error before reading."""
    names = {"gpu": "--gpu", "base_gpu": "--base-gpu", "new_gpu": "--new-gpu"}
    if spelling is Spelling.PYTHON:
        names = {k: f"{k}=" for k in names}
    if gpu is not None and base_gpu is not None and new_gpu is not None:
        one, both = names["gpu"], f"{names['base_gpu']} and {names['new_gpu']}"
        raise UsageError(
            f"{one} {gpu!r} with both {both}: it would apply to neither side; "
            f"drop {one}, or keep it for one side and drop that side's option"
        )
    for option, name in (("base_gpu", base_gpu), ("new_gpu", new_gpu)):
        if name is not None and not devices.resolve(name):
            raise UsageError(f"{names[option]} {devices.not_found(name)}")
    return base_gpu, new_gpu


def _shapes_wanted(settings: Settings) -> bool:
    """Whether the check-up will ask for launch shapes before a byte is read: the GPU given
    has known compute units (report.py's ``_shape_read``), so a rocprof CSV reads its shapes
    in its one scan, not in a second (2 s of CPU at 2 M dispatches). Only a guess of cost:
    a wrong one reads the same shapes either way."""
    gpu = settings.roof.gpu
    return gpu is not None and any(d.compute_units for d in devices.resolve(gpu))


def side_captures(
    base: Sequence[str], new: Sequence[str], spelling: Spelling = Spelling.CLI
) -> tuple[Captures, Captures]:
    """Each side's graph capture traces (``--base-graph-capture``, ``--new-graph-capture``),
    read before any profile is."""
    flags = ("--base-graph-capture", "--new-graph-capture")
    if spelling is Spelling.PYTHON:
        flags = ("base_graph_capture=", "new_graph_capture=")
    return _captures(base, flags[0]), _captures(new, flags[1])


def _captures(paths: Sequence[str], flag: str) -> Captures:
    """The capture traces of ``paths``; the Kineto machinery (and msgspec, 15 ms of imports)
    loaded only when a capture is given."""
    if not paths:
        return ()
    from roofscope.readers.torch.graph_capture import read_capture

    return tuple(read_capture(p, flag) for p in paths)


def work_rules(values: Sequence[str], spelling: Spelling = Spelling.CLI) -> list[Rule]:
    """Inline rules first (in order), then the rules of each work file."""
    inline, files = [], []
    for v in values:
        if size_if_file(Path(v)) is not None:
            files.extend(read_work_file(Path(v)))
        elif "=" in v:
            inline.append(parse_inline(v))
        else:
            raise UsageError(
                f"{OPTIONS['work'].spelt(spelling)} {v!r}: neither NAME=FLOPS:BYTES[@DTYPE] "
                "nor a work file that exists"
            )
    return [*inline, *files]
