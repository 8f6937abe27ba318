"""The check-up every analysing command runs: load the files, check the selection, analyse.

``analyze`` runs it once, ``compare`` once per run of each side, ``profile`` on what it
recorded. The options are checked and their files (``--work``, ``--ceilings``) read once, by
``prepare``, before any profile is read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from roofscope.analysis.timeline import DEFAULT_GAP_NS
from roofscope.analysis.work.spec import Rule, parse_inline, read_work_file
from roofscope.catalogue import devices
from roofscope.catalogue.ceilings import read_ceilings_file, user_ceilings
from roofscope.cli.options import DEFAULT_GAP_US
from roofscope.cli.words import worded
from roofscope.errors import UsageError
from roofscope.model.profile import Profile
from roofscope.model.selection import EVERYTHING, EmptySelection, Selection, require_some
from roofscope.readers.load import load
from roofscope.readers.sniff import size_if_file
from roofscope.report import DEFAULTS, Report, RooflineOptions, analyse

if TYPE_CHECKING:
    from roofscope.verify.compare import Comparison, Run

PROGRESS_BYTES = 64 << 20


@dataclass(frozen=True, kw_only=True)
class CheckupOptions:
    """The analysis options, as given (``cli/options.py`` declares each)."""

    fmt: str | None = None
    kernel: str | None = None
    device: int | None = None
    gap_us: float = DEFAULT_GAP_US
    gpu: str | None = None
    work: tuple[str, ...] = ()
    ceilings: str | None = None
    peak_flops: float | None = None
    peak_bw: float | None = None
    jobs: int | None = None

    @property
    def files(self) -> list[str]:
        """The paths the options name (work and ceilings files): inputs, never outputs."""
        return [*self.work, *([self.ceilings] if self.ceilings else [])]


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The options checked and their files read: what each check-up applies."""

    fmt: str | None = None
    jobs: int | None = None
    selection: Selection = EVERYTHING
    gap_ns: int = DEFAULT_GAP_NS
    roof: RooflineOptions = DEFAULTS

    def on_gpu(self, gpu: str | None) -> Settings:
        """The same settings on another GPU (compare's ``--base-gpu``/``--new-gpu``)."""
        return self if gpu is None else replace(self, roof=replace(self.roof, gpu=gpu))


@dataclass(frozen=True)
class Checkup:
    profile: Profile
    report: Report
    read: tuple[str, ...]  # the paths named and every file read from a folder


def prepare(options: CheckupOptions) -> Settings:
    """A bad regex, work rule or ceilings file is an error before any profile is read."""
    selection = Selection(kernel=options.kernel, device=options.device)
    selection.pattern()
    rules = tuple(work_rules(options.work))
    ceilings = [
        *user_ceilings(options.peak_flops, options.peak_bw),
        *(read_ceilings_file(Path(options.ceilings)) if options.ceilings else []),
    ]
    return Settings(
        fmt=options.fmt,
        jobs=options.jobs,
        selection=selection,
        gap_ns=round(options.gap_us * 1000),
        roof=RooflineOptions(gpu=options.gpu, rules=rules, ceilings=tuple(ceilings)),
    )


def run_checkup(
    paths: Sequence[str], settings: Settings = Settings(), *, label: str | None = None
) -> Checkup:
    """``check_up``, with a spinner on stderr while a big input is read (a terminal only)."""
    with _progress(paths) as tick:
        return check_up(paths, settings, label=label, progress=tick)


def check_up(
    paths: Sequence[str],
    settings: Settings = Settings(),
    *,
    label: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Checkup:
    """Read ``paths`` as one profile (files of several processes merge) and analyse it;
    ``progress`` hears the name of each file as it is read. ``label`` (compare's ``baseline``,
    ``candidate``) and the first path lead the error of a selection that keeps nothing of
    this profile. Prints nothing: the commands and the Python API both call it."""
    profile = load(paths, fmt=settings.fmt, progress=progress, jobs=settings.jobs)
    try:
        require_some(profile, settings.selection)
    except EmptySelection as exc:
        if label is None:
            raise
        raise UsageError(f"{label} {paths[0]}: {worded(exc)}") from None
    report = analyse(
        profile, selection=settings.selection, gap_threshold_ns=settings.gap_ns, roof=settings.roof
    )
    return Checkup(profile, report, (*paths, *(f.path for f in profile.inputs)))


CheckUp = Callable[[Sequence[str], Settings, str], Checkup]  # paths, settings, side's label


@dataclass(frozen=True)
class Compared:
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
    *,
    check: CheckUp | None = None,
) -> Compared:
    """Each run (path) of each side checked up by ``check`` (default ``check_up``), on its
    side's GPU (``side_gpus``), then compared; labelled by each side's first path."""
    from roofscope.verify.compare import compare, run_of  # analyze never compares

    check = check or (lambda paths, s, label: check_up(paths, s, label=label))
    read: list[str] = []
    sides = []
    for label, paths, gpu in (("baseline", base, gpus[0]), ("candidate", new, gpus[1])):
        runs = []
        for path in paths:
            checkup = check([path], settings.on_gpu(gpu), label)
            read.extend(checkup.read)
            runs.append(run_of(checkup.profile, checkup.report))
        sides.append(tuple(runs))
    cmp = compare(sides[0], sides[1], (base[0], new[0]))
    return Compared(cmp, sides[0], sides[1], tuple(read))


def side_gpus(
    gpu: str | None, base_gpu: str | None, new_gpu: str | None
) -> tuple[str | None, str | None]:
    """Each side's ``--gpu`` override; a name the catalogue lacks is an error before reading."""
    if gpu is not None and base_gpu is not None and new_gpu is not None:
        raise UsageError(
            f"--gpu {gpu!r} with both --base-gpu and --new-gpu: it would apply to neither side; "
            "drop --gpu, or keep it for one side and drop that side's option"
        )
    for option, name in (("--base-gpu", base_gpu), ("--new-gpu", new_gpu)):
        if name is not None and not devices.resolve(name):
            raise UsageError(f"{option} {devices.not_found(name)}")
    return base_gpu, new_gpu


def work_rules(values: Sequence[str]) -> list[Rule]:
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
