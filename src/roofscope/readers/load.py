"""Turn paths (files and directories) into one Profile.

Files are recognised by content. Files of one run (same folder, same name stem such as
``results`` or a rocprofv3 ``<pid>`` prefix) are grouped: the best dispatch source of the
group is read (trace CSV before JSON), a kernel stats file beside it becomes a cross-check,
and API/copy summaries are read as such. Counter-only CSVs (no timestamps) are counter
runs when a timed trace exists; otherwise they are the dispatches. A rocprofv3
counter_collection.csv is a counter run whenever a dispatch source (a kernel trace) is read
with it, beside it or not: counters are collected in runs of their own, so counting its
dispatches too would count the kernels twice. Without one it gives the dispatches, except that
of the ``pass_N/`` or ``pmc_N/`` folders of one run (each pass is a separate run of the
program) only the lowest pass does and the others are counter runs. rocprofv3's CSV kernel
trace, copies and stats in every pass folder of a run are counted from the lowest pass alone:
the later ones repeat them (``pass-repeat``). A folder that a reader
reads as one run (a rocprof-compute workload, found by its ``sysinfo.csv``) is read by that
reader alone: the other files in it and below it are its own and are not planned apart.
"""

from __future__ import annotations

import csv
import re
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers import nsys_sqlite, registry, rocpd, rocpd_schema, runs, shards
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head, is_folder, read_head

_CANDIDATE = re.compile(r"\.(csv|json|json\.gz|db|sqlite)$", re.IGNORECASE)
_V3_SUFFIX = re.compile(
    r"_(kernel_trace|kernel_stats|memory_copy_trace|memory_copy_stats|"
    r"[a-z_]*api_stats|[a-z_]*domain_stats|[a-z_]*_trace|agent_info|counter_collection|results)$"
)

_REPEATABLE = ("rocprofv3-kernel-trace", "rocprofv3-stats", "rocprofv3-memory-copy")
Progress = Callable[[str], None]
# below this many bytes of input, starting worker processes costs more than it saves
PARALLEL_MIN_BYTES = 16 << 20


@dataclass(frozen=True)
class Found:
    head: Head
    reader: Reader
    role: Role

    @property
    def group(self) -> tuple[str, str]:
        stem = self.head.path.name.split(".")[0]
        return str(self.head.path.parent), _V3_SUFFIX.sub("", stem)


def load(
    paths: Sequence[str],
    *,
    fmt: str | None = None,
    progress: Progress | None = None,
    jobs: int | None = None,
) -> Profile:
    """Read every path into one Profile; InputError when nothing usable is found.

    Runs that stand alone (one per process of a many-rank job) are read one after another,
    or by ``jobs`` worker processes (default: every core) when there are enough of them."""
    if not paths:
        raise InputError("roofscope", "no input path given", "pass a profile file or directory")
    forced = registry.by_name(fmt) if fmt else None
    found: list[Found] = []
    nested: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if is_folder(path):
            kept, below = runs.outside_nested(_scan_dir(path, forced))
            found += kept
            nested += [_shown(path, folder) for folder in below]
        else:
            found.append(_identify_file(read_head(path), forced))
    profile = _read(_plan(found), progress, jobs)
    runs.describe(profile, nested)
    _refuse_implausible_counters(profile)
    return profile


def _shown(root: Path, folder: Path) -> Path:
    """A nested run's folder as the user would type it: below the folder they named."""
    return root / folder.relative_to(root.resolve())


def _read(plan: list[tuple[Found, Role]], progress: Progress | None, jobs: int | None) -> Profile:
    """The plan read in this process, or its independent runs by worker processes."""
    units = shards.units(plan)
    jobs = shards.default_jobs() if jobs is None else jobs
    if units is None:
        return read_plan(plan, progress)
    if jobs < 2 or _bytes(plan) < PARALLEL_MIN_BYTES:
        return read_plan([item for unit in units for item in unit], progress)
    profile = Profile.empty()
    for shard in shards.read_parallel(shards.split(units, jobs), jobs, read_plan):
        shards.absorb(profile, shard)
        for f in shard.inputs:
            if progress and f.role == Role.DISPATCHES:
                progress(f.path)
    return profile


PLAUSIBLE_COUNT = 1e18  # a hardware counter of one dispatch: 10 years of cycles at 3 GHz


def _refuse_implausible_counters(profile: Profile) -> None:
    """A counter beyond :data:`PLAUSIBLE_COUNT` (or infinite) is damage, and every formula
    over it would overflow: refused in one line naming the file of its dispatch."""
    found = profile.con.execute(
        f"""SELECT c.counter, c.value, d.source FROM counters c
        JOIN dispatches d ON d.rowid = c.row_id
        WHERE NOT isnan(c.value) AND abs(c.value) > {PLAUSIBLE_COUNT} LIMIT 1"""
    ).fetchall()
    if found:
        counter, value, source = found[0]
        raise InputError(
            profile.inputs[int(source)].path,
            f"counter {counter} = {value:g} is beyond any GPU's count ({PLAUSIBLE_COUNT:g})",
            "the file (or a counter file read with it) is damaged; use the profiler's own output",
        )


def read_plan(plan: Sequence[tuple[Found, Role]], progress: Progress | None = None) -> Profile:
    """Read the planned files, in order, into a new Profile."""
    profile = Profile.empty()
    for item, role in plan:
        if progress:
            progress(str(item.head.path))
        before = profile.begin_input()
        try:
            item.reader.read(item.head.path, item.head, profile, role=role)
        except UNREADABLE as exc:
            raise unreadable(item.head.path, item.reader.name, exc) from None
        profile.tag_group(before, "/".join(item.group))
    return profile


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


def _bytes(plan: Sequence[tuple[Found, Role]]) -> int:
    return sum(f.head.size for f, _ in plan)


def _identify(head: Head, forced: Reader | None) -> Found | None:
    """The reader for a text file (None if no reader knows it); errors for what is no profile."""
    shown = str(head.path)
    if head.kind == "empty":
        raise InputError(shown, "is empty", "re-run the profiler; the file was never written")
    if head.kind == "sqlite":
        return _identify_sqlite(head, forced)
    if head.kind == "cr":
        raise InputError(
            shown,
            "ends its lines with a carriage return alone (as classic Mac OS spreadsheets save CSV)",
            "convert the line ends (tr '\\r' '\\n' < IN > OUT), or pass the file the profiler "
            "wrote",
        )
    if head.kind in ("binary", "gzip"):
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
            line=1,
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


def _identify_sqlite(head: Head, forced: Reader | None) -> Found:
    """A rocpd database or an Nsight Systems export; a one-line error naming any other SQLite
    file."""
    reader: Reader
    if nsys_sqlite.is_nsys(head.path):
        reader = nsys_sqlite.NsysSqlite()
    else:
        rocpd_schema.require_rocpd(head.path)
        reader = rocpd.Rocpd()
    if forced is not None and forced.name != reader.name:
        raise InputError(
            str(head.path),
            f"looks like {reader.name}, not {forced.name}",
            f"drop --format or pass --format {reader.name}",
        )
    return Found(head, reader, reader.role(head))


def _identify_file(head: Head, forced: Reader | None) -> Found:
    found = _identify(head, forced)
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
    if found is None:
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


_POINT = "point at the folder rocprof/rocprofv3 wrote (results.csv, *_kernel_trace.csv, ...)"


def _scan_dir(root: Path, forced: Reader | None) -> list[Found]:
    found: list[Found] = []
    unreadable: list[str] = []  # files named like profiler output that hold none
    for path in sorted(p for p in root.rglob("*") if p.is_file() and _CANDIDATE.search(p.name)):
        head = read_head(path)
        if head.kind in ("text", "cr") and (item := _identify(head, forced)) is not None:
            found.append(item)
        elif head.kind == "sqlite":
            try:  # a folder may hold other SQLite files: only profiler databases count
                found.append(_identify_sqlite(head, forced))
            except InputError:
                if nsys_sqlite.is_nsys(path) or rocpd_schema.is_rocpd(path):
                    raise
        elif head.kind in ("empty", "binary"):
            unreadable.append(f"{path.relative_to(root)} is {head.kind}")
    if not found:
        seen = f" ({'; '.join(unreadable[:3])})" if unreadable else ""
        raise InputError(
            str(root),
            f"holds no profiler output that roofscope reads{seen}",
            "re-run the profiler; its output here is empty or damaged" if unreadable else _POINT,
        )
    return found


def _plan(found: list[Found]) -> list[tuple[Found, Role]]:
    """Which file is read in which role, in a stable order."""
    unique = {f.head.path.resolve(): f for f in found}
    items = _outside_workloads(sorted(unique.values(), key=lambda f: str(f.head.path)))
    timed = [f for f in items if f.role in (Role.DISPATCHES, Role.WORKLOAD) and _timed(f)]
    counting = _counting_counter_files(items)
    repeats = _repeated_passes(items)
    groups: dict[tuple[str, str], list[Found]] = {}
    for f in items:
        groups.setdefault(f.group, []).append(f)
    plan: list[tuple[Found, Role]] = []
    for members in groups.values():
        sources = sorted(
            (f for f in members if f.role == Role.DISPATCHES),
            key=lambda f: (not _timed(f), f.reader.priority),
        )
        best = sources[0] if sources else None
        counted = best is not None or any(f.head.path in counting for f in members)
        for f in members:
            if f.head.path in repeats:
                plan.append((f, Role.PASS_REPEAT))
            elif f.role == Role.WORKLOAD:
                plan.append((f, Role.DISPATCHES))
            elif f.role == Role.DISPATCHES:
                if f is best and (_timed(f) or not timed):
                    plan.append((f, Role.DISPATCHES))
                elif not _timed(f) and timed:
                    plan.append((f, Role.COUNTER_RUN))
            elif f.role == Role.COUNTER_COLLECTION:
                plan.append((f, Role.DISPATCHES if f.head.path in counting else Role.COUNTER_RUN))
            elif f.role == Role.KERNEL_SUMMARY:
                plan.append((f, Role.CROSS_CHECK if counted else Role.KERNEL_SUMMARY))
            else:
                plan.append((f, f.role))
    order = {Role.DISPATCHES: 0, Role.COUNTER_RUN: 1, Role.KERNEL_SUMMARY: 2}
    plan.sort(key=lambda p: (order.get(p[1], 3), str(p[0].head.path)))
    return plan


def _counting_counter_files(items: list[Found]) -> set[Path]:
    """The counter_collection files whose dispatches are counted: none when a dispatch source
    is read; else those outside any pass folder and those of the lowest pass of each run."""
    if any(f.role in (Role.DISPATCHES, Role.WORKLOAD) for f in items):
        return set()
    passes = {
        f.head.path: runs.pass_of(f.head.path) for f in items if f.role == Role.COUNTER_COLLECTION
    }
    lowest: dict[Path, int] = {}
    for found in passes.values():
        if found is not None:
            run, n = found
            lowest[run] = min(n, lowest.get(run, n))
    return {p for p, found in passes.items() if found is None or lowest[found[0]] == found[1]}


def _repeated_passes(items: list[Found]) -> set[Path]:
    """The rocprofv3 CSV traces and stats (kernels, copies, APIs) of the ``pass_N``/``pmc_N``
    folders of a run but the lowest one that holds a kernel trace: each pass reran the
    program, so they repeat the first pass's and are read as ``Role.PASS_REPEAT``, not counted
    again. (Counter files and rocpd databases, which hold counters, are not among them.)"""
    mine = [
        (f, p)
        for f in items
        if f.reader.name in _REPEATABLE and (p := runs.pass_of(f.head.path)) is not None
    ]
    lowest: dict[Path, int] = {}
    for f, (run, n) in mine:
        if f.role == Role.DISPATCHES and _timed(f):
            lowest[run] = min(n, lowest.get(run, n))
    return {f.head.path for f, (run, n) in mine if n > lowest.get(run, n)}


def _outside_workloads(items: list[Found]) -> list[Found]:
    """The items without the files of a workload folder (which its reader reads itself)."""
    folders = {f.head.path.resolve().parent for f in items if f.role == Role.WORKLOAD}
    if not folders:
        return items
    return [
        f
        for f in items
        if f.role == Role.WORKLOAD or folders.isdisjoint(f.head.path.resolve().parents)
    ]


def _timed(f: Found) -> bool:
    return f.reader.timed(f.head)
