"""Turn paths (files and directories) into one Profile: the entry point of the read stage.

Each file is recognised by content through the reader registry (registry.py); what is no
profile is refused in one line. The planner (plan.py) decides which recognised file is read
in which role; the plan is then read in this process, or its independent runs by worker
processes (shards.py).
"""

from __future__ import annotations

import csv
import re
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

from msgspec.structs import replace

from roofscope.errors import EmptyInput, InputError
from roofscope.model import words
from roofscope.model.access import has_counters
from roofscope.model.duck import duckdb
from roofscope.model.profile import ONE_THREAD_BYTES, Profile
from roofscope.model.schema import Role
from roofscope.readers import other_outputs, registry, runs
from roofscope.readers.io import shards
from roofscope.readers.io.json_keys import damage
from roofscope.readers.plan import plan
from roofscope.readers.registry import Reader
from roofscope.readers.runs import Found, Planned
from roofscope.readers.sniff import Head, is_folder, read_head

_CANDIDATE = re.compile(r"\.(csv|json|json\.gz|db|sqlite)$", re.IGNORECASE)
Progress = Callable[[str], None]
# below this many bytes of input, starting worker processes costs more than it saves
PARALLEL_MIN_BYTES = 16 << 20
# from this many bytes of input up, the merged runs' tables live in a database file
ON_DISK_BYTES = 256 << 20


class Reading(NamedTuple):
    """How the profile is read: with its launch shapes, within a memory limit (bytes)."""

    shapes: bool
    memory: int | None


def load(
    paths: Sequence[str],
    *,
    fmt: str | None = None,
    progress: Progress | None = None,
    jobs: int | None = None,
    run_on: shards.RunOn | None = None,
    skip_unreadable: bool = False,
    shapes: bool = False,
    memory: int | None = None,
) -> Profile:
    """Read every path into one Profile; InputError when nothing usable is found.

    Runs that stand alone (one per process of a many-rank job) are read one after another,
    or by ``jobs`` worker processes (default: every core) when there are enough of them, or
    by ``run_on`` (a Dask cluster: ``checkup/workers.py``), each into its partial, merged in
    their order. A run found in a folder that cannot be read is left out with a warning
    (``skip_unreadable``: a run named too). ``shapes``: the check-up will ask for launch
    shapes (:attr:`Profile.shapes_wanted`). ``memory``: the bytes the profile's database may
    hold, beyond them spilled (``--memory-limit``; a worker process's own are its own)."""
    damaged: list[Path] = []
    found, nested = _find(paths, fmt, damaged)
    profile = _read(plan(found), progress, jobs, run_on, skip_unreadable, Reading(shapes, memory))
    for path in damaged:
        kind = read_head(path).kind
        profile.warn(
            "empty-export",
            f"{path}: is {kind}, no profiler output; left out, the other files are read "
            "(re-run the profiler for it, or delete it)",
        )
    runs.describe(profile, nested)
    _warn_workload_parts(profile)
    _refuse_implausible_counters(profile)
    return profile


def _warn_workload_parts(profile: Profile) -> None:
    """Name the pass databases of a rocprof-compute workload read apart from it (its reader
    lists its pass folders, never these files)."""
    dbs = {Path(f.path) for f in profile.inputs if f.path.endswith(".db")}
    if not dbs:
        return
    from roofscope.readers.amd.compute.rocprof_compute_folder import (
        workload_of,  # only for databases
    )

    parts = sorted((w, db) for db in dbs if (w := workload_of(db)) is not None)
    for folder in sorted({w for w, _ in parts}):
        mine = [db for w, db in parts if w == folder]
        profile.warn(
            "workload-pass-alone",
            f"{mine[0]}: is one pass of the rocprof-compute workload {folder} ({len(mine)} "
            "read): each pass replays the program, so read apart they add up replays and "
            f"lose the counters of the other passes; pass {folder} to read it as one workload",
            len(mine),
        )


def run_paths(paths: Sequence[str], *, fmt: str | None = None) -> list[list[str]]:
    """The runs under ``paths`` as ``load`` reads them, each as the files to ``load`` it alone:
    one list per independent run (rank), in the order of their paths; ``paths`` as one run
    when they are one run or their runs depend on each other (a counter run). A file in a
    folder that is empty or binary (a rank that died before writing) is a run of its own,
    which ``load`` refuses: ``load`` of the folder would leave it out unnamed. Runs nested
    below another run's folder are left out, as ``load`` leaves them out."""
    damaged: list[Path] = []
    found, _ = _find(paths, fmt, damaged)
    units = shards.units(plan(found))
    whole = [list(paths)] if units is None else [[str(f.head.path) for f, _ in u] for u in units]
    return sorted([*whole, *([str(p)] for p in damaged)], key=lambda run: run[0])


def _find(
    paths: Sequence[str], fmt: str | None, damaged: list[Path] | None = None
) -> tuple[list[Found], list[Path]]:
    """The files recognised under ``paths``, and the folders of the nested runs left out;
    the empty or binary files in its folders go to ``damaged``."""
    if not paths:
        raise InputError("roofscope", "no input path given", "pass a profile file or directory")
    forced = registry.by_name(fmt) if fmt else None
    found: list[Found] = []
    nested: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if is_folder(path):
            kept, below = runs.outside_nested(_scan_dir(path, forced, damaged))
            found += kept
            nested += [_shown(path, folder) for folder in below]
        else:
            found.append(_identify_file(read_head(path), forced))
    return found, nested


def _shown(root: Path, folder: Path) -> Path:
    """A nested run's folder as the user would type it: below the folder they named."""
    return root / folder.relative_to(root.resolve())


def _read(
    plan: list[Planned],
    progress: Progress | None,
    jobs: int | None,
    run_on: shards.RunOn | None,
    skip_unreadable: bool,
    reading: Reading,
) -> Profile:
    """The plan read in this process, or its independent runs by worker processes."""
    units = shards.units(plan)
    shapes, memory = reading
    if units is None:
        return read_plan(plan, progress, shapes=shapes, memory=memory)
    # runs found in a folder: one that cannot be read is left out with a warning
    tolerant = skip_unreadable or all(f.scanned for f, _ in plan)
    if run_on is None:
        jobs = shards.default_jobs() if jobs is None else jobs
        if jobs < 2 or _bytes(plan) < PARALLEL_MIN_BYTES:
            flat = [item for unit in units for item in unit]
            flat_read = read_plan(flat, progress, tolerant=tolerant, shapes=shapes, memory=memory)
            return _some_run_read(flat_read, plan)
        run_on = shards.LocalWorkers(jobs)
    # a big job's merged rows in a database file: compressed, a tenth of the memory
    profile = Profile.empty(on_disk=_bytes(plan) >= ON_DISK_BYTES, memory=memory)
    # a worker may read only a failed export: 16 MiB of input hold data elsewhere
    read = partial(read_plan, tolerant=tolerant, empty_ok=True, shapes=shapes)
    for shard in run_on(units, read):
        shards.absorb(profile, shard)
        for f in shard.inputs:
            if progress and f.role == Role.DISPATCHES:
                progress(f.path)
    return _some_run_read(profile, plan)


LEFT_OUT = "run-unreadable"


def _some_run_read(profile: Profile, plan: list[Planned]) -> Profile:
    """The profile, unless every run was left out: then the first one's own error, from the
    plan read again without leaving any out (it fails at that run)."""
    if profile.sources(Role.DISPATCHES) or not any(w.code == LEFT_OUT for w in profile.warnings):
        return profile
    return read_plan(plan)


PLAUSIBLE_COUNT = 1e18  # a hardware counter of one dispatch: 10 years of cycles at 3 GHz


def _refuse_implausible_counters(profile: Profile) -> None:
    """A counter beyond :data:`PLAUSIBLE_COUNT` (or infinite) is damage, and every formula
    over it would overflow: refused in one line naming the file of its dispatch."""
    if not has_counters(profile):  # a trace: asked once, and kept for the analyses
        return
    found = profile.con.execute(
        f"""SELECT n.counter, f.value, f.source FROM (SELECT c.counter_id, c.value, d.source
            FROM counters c JOIN dispatches d ON d.rowid = c.row_id
            WHERE NOT isnan(c.value) AND abs(c.value) > {PLAUSIBLE_COUNT} LIMIT 1) f
        JOIN counter_names n USING (counter_id)"""
    ).fetchall()
    if found:
        counter, value, source = found[0]
        raise InputError(
            profile.inputs[int(source)].path,
            f"counter {counter} = {words.sized(value)} is beyond any GPU's count "
            f"({words.sig(PLAUSIBLE_COUNT)})",
            "the file (or a counter file read with it) is damaged; use the profiler's own output",
        )


def read_plan(
    plan: Sequence[Planned],
    progress: Progress | None = None,
    *,
    tolerant: bool = False,
    empty_ok: bool = False,
    shapes: bool = False,
    memory: int | None = None,
) -> Profile:
    """Read the planned files, in order, into a new Profile (``shapes``: its
    :attr:`Profile.shapes_wanted`; ``memory``: its database's limit, :meth:`Profile.empty`).

    ``tolerant``: the plan is independent runs (consecutive files of one group), and a run
    whose reader fails before it inserts anything (a CPU-only trace, a damaged one) is left
    out with a warning. A file that holds no data (a failed export, :class:`EmptyInput`) is
    named in an ``empty-export`` warning when another file gives data (or ``empty_ok``: a
    worker's share of the runs), else it is the error."""
    profile = Profile.empty(one_thread=_bytes(plan) < ONE_THREAD_BYTES, memory=memory)
    profile.shapes_wanted = shapes
    empty: list[EmptyInput] = []
    for unit in _by_group(plan) if tolerant else [plan]:
        start = profile.begin_input()
        try:
            for item, role in unit:
                _read_one(profile, item, role, progress, empty)
        except InputError as exc:
            if not tolerant or profile.begin_input() != start or shards.rows_from(profile, start):
                raise
            profile.warn(LEFT_OUT, f"{exc} (this run is left out; the others are read)")
    _name_empty(profile, empty, empty_ok)
    return profile


def _name_empty(profile: Profile, empty: list[EmptyInput], empty_ok: bool) -> None:
    """Each failed export named in a warning; the first one the error when nothing else
    gave data."""
    if empty and not empty_ok and all(f.role == Role.METADATA for f in profile.inputs):
        raise empty[0]
    for skipped in empty:
        path, problem, remedy = skipped.parts
        where = path if skipped.line is None else f"{path}:{skipped.line}"
        profile.warn(
            "empty-export",
            f"{where}: {problem}; left out, the other files are read ({remedy})",
        )


def _by_group(plan: Sequence[Planned]) -> list[list[Planned]]:
    units: list[list[Planned]] = []
    for item in plan:
        if units and units[-1][0][0].group == item[0].group:
            units[-1].append(item)
        else:
            units.append([item])
    return units


def _read_one(
    profile: Profile, item: Found, role: Role, progress: Progress | None, empty: list[EmptyInput]
) -> None:
    if progress:
        progress(str(item.head.path))
    before = profile.begin_input()
    try:
        item.reader.read(item.head.path, item.head, profile, role=role)
    except EmptyInput as exc:
        empty.append(exc)
    except UNREADABLE as exc:
        raise unreadable(item.head.path, item.reader.name, exc) from None
    profile.tag_group(before, "/".join(item.group))


# What a damaged file makes the parsers beneath the readers raise (DuckDB's CSV sniffer and
# binder, the csv module, SQLite, text decoding, number conversion): each becomes one line
# naming the file, never a traceback.
UNREADABLE = (
    duckdb.Error,
    csv.Error,
    sqlite3.Error,
    UnicodeError,
    ValueError,
    OverflowError,
    zlib.error,
    EOFError,
)


def unreadable(path: Path, fmt: str, exc: BaseException) -> InputError:
    why = " ".join(str(exc).split())[:160] or type(exc).__name__
    return InputError(
        str(path),
        f"could not be read as {fmt} ({why})",
        "the file is damaged or edited; pass the profiler's own output, or name its format "
        "with --format",
    )


def _bytes(plan: Sequence[Planned]) -> int:
    return sum(f.head.size for f, _ in plan)


def _identify(head: Head, forced: Reader | None) -> Found | None:
    """The reader for a file (None if no reader knows it); errors for what is no profile."""
    shown = str(head.path)
    if head.kind == "empty":
        raise InputError(shown, "is empty", "re-run the profiler; the file was never written")
    if head.kind == "cr":
        raise InputError(
            shown,
            "ends its lines with a carriage return alone (as classic Mac OS spreadsheets save CSV)",
            "convert the line ends (tr '\\r' '\\n' < IN > OUT), or pass the file the profiler "
            "wrote",
        )
    if head.kind in ("binary", "gzip"):
        other_outputs.explain(head)  # a Perfetto trace or OTF2 archive: what to pass instead
        what = {"binary": "binary data", "gzip": "a gzip file"}
        raise InputError(
            shown,
            f"is {what[head.kind]}, not a profiler CSV or JSON file",
            "pass rocprof/rocprofv3 CSV or JSON output (see `roofscope formats`)",
        )
    detected = registry.detect(head)
    if forced is not None and detected is not None and detected.name != forced.name:
        raise InputError(
            shown,
            f"looks like {detected.name}, not {forced.name}",
            f"drop --format or pass --format {detected.name}",
            line=1 if head.kind == "text" else None,
        )
    return None if detected is None else Found(head, detected, detected.role(head))


def _other_separator(line: str) -> str | None:
    """'semicolons' (a spreadsheet in a locale of decimal commas) or 'tabs' (TSV) when a
    first line has no comma but those between its fields."""
    if "," in line:
        return None
    for char, name in ((";", "semicolons"), ("\t", "tabs")):
        if line.count(char) >= 2:
            return name
    return None


def _identify_file(head: Head, forced: Reader | None) -> Found:
    found = _identify(head, forced)
    if found is None and head.kind != "text":
        registry.explain_unknown(head)  # an SQLite file no reader knows: what it is
        raise InputError(
            str(head.path),
            f"is a {head.kind} file that no reader recognises",
            "pass the profiler's own output (see `roofscope formats`)",
        )
    if found is None and forced is not None and (why := forced.mismatch(head)):
        raise InputError(
            str(head.path),
            f"cannot be read as {forced.name}: {why}",
            f"pass the {forced.name} file itself, or drop --format",
        )
    if found is None and head.kind == "text" and (why := damage(head.text)):
        raise InputError(
            str(head.path),
            f"is a JSON object that breaks at its top level ({why})",
            "the file is damaged; export it again",
        )
    if found is None and head.gzip:
        raise InputError(
            str(head.path),
            "is gzip-compressed, and what is inside is no format roofscope reads compressed "
            f"(first line: {head.first_line[:60]!r})",
            "decompress it (gunzip) and pass the file inside",
        )
    if found is None and (sep := _other_separator(head.first_line)):
        raise InputError(
            str(head.path),
            f"separates its fields with {sep}, not commas",
            "pass the CSV the profiler wrote (nsys stats: --format csv), or export the sheet "
            "again as CSV with commas",
            line=1,
        )
    if found is None and head.first_line.startswith(ROCMINFO_FIRST_LINE):
        raise _metadata_alone(head.path)
    if found is None:
        other_outputs.explain(head)
        first = head.first_line[:80]
        remedy = (
            f"check the file; it does not look like {forced.name} either"
            if forced
            else "pass rocprof/rocprofv3 output, or name the format with --format"
        )
        raise InputError(
            str(head.path),
            f"is not a recognised profiler file (first line: {first!r})",
            remedy,
            line=1,
        )
    return found


ROCMINFO_FIRST_LINE = "CMD: rocminfo"  # rocprof v1's <stem>.sysinfo.txt


def _metadata_alone(path: Path) -> InputError:
    """A rocprof v1 ``<stem>.sysinfo.txt`` given alone: it names the GPU, it holds no kernel;
    the run's files beside it that roofscope reads with it."""
    stem = path.name.split(".")[0]
    beside = sorted(
        p.name
        for p in path.parent.glob(f"{stem}.*")
        if p.suffix in (".csv", ".json") and p.is_file()
    )
    names = beside or [f"{stem}.csv", f"{stem}.json", f"{stem}.stats.csv"]
    give = " or ".join(filter(None, (", ".join(names[:-1]), names[-1])))
    return InputError(
        str(path),
        "is rocminfo's record of the machine (rocprof v1 writes it beside its results): it "
        "names the GPU and holds no kernel",
        f"pass the run's {give}; roofscope reads this file beside it",
        line=1,
    )


_POINT = "point at the folder rocprof/rocprofv3 wrote (results.csv, *_kernel_trace.csv, ...)"


def _scan_dir(root: Path, forced: Reader | None, damaged: list[Path] | None = None) -> list[Found]:
    found: list[Found] = []
    unreadable: list[str] = []  # files named like profiler output that hold none
    for path in sorted(p for p in root.rglob("*") if p.is_file() and _CANDIDATE.search(p.name)):
        head = read_head(path)
        # a folder may hold other SQLite files: only those a reader recognises count
        if head.kind in ("text", "cr", "sqlite") and (item := _identify(head, forced)):
            found.append(replace(item, scanned=True))
        elif head.kind in ("empty", "binary"):
            unreadable.append(f"{path.relative_to(root)} is {head.kind}")
            if damaged is not None:
                damaged.append(path)
    if not found:
        seen = f" ({'; '.join(unreadable[:3])})" if unreadable else ""
        raise InputError(
            str(root),
            f"holds no profiler output that roofscope reads{seen}",
            "re-run the profiler; its output here is empty or damaged" if unreadable else _POINT,
        )
    return found
