"""The run planner: which file found under the paths is read, in which role, in what order.

Files of one run (same folder, same name stem such as ``results`` or a rocprofv3 ``<pid>``
prefix) are grouped: the best dispatch source of the group is read (trace CSV before JSON;
of a reader whose runs are exported in several files, ncu's pages, every one: the reader
counts the same launches once), a kernel stats file beside it becomes a cross-check, and
API/copy summaries are read as such. Counter-only CSVs (no timestamps) are counter runs when
a timed trace exists; otherwise they are the dispatches. A rocprofv3 counter_collection.csv
is a counter run whenever a dispatch source (a kernel trace) is read with it, beside it or
not: counters are collected in runs of their own, so counting its dispatches too would count
the kernels twice. Without one
it gives the dispatches, except that of the ``pass_N/`` or ``pmc_N/`` folders of one run (each
pass is a separate run of the program) only the lowest pass does and the others are counter
runs. rocprofv3's CSV kernel trace, copies and stats in every pass folder of a run are counted
from the lowest pass alone: the later ones repeat them (``pass-repeat``). A folder that a
reader reads as one run (a rocprof-compute workload, found by its ``sysinfo.csv``) is read by
that reader alone: the other files in it and below it are its own and are not planned apart.

The planner reads no file: it decides from what each reader said of a file's head (its role
and whether its dispatches are timed) and from the paths. docs/formats/ says, per producer,
which files a run leaves.
"""

from __future__ import annotations

from pathlib import Path

from roofscope.model.schema import Role
from roofscope.readers import runs
from roofscope.readers.runs import Found, Planned

# the role of a later pass's kernel trace or stats: read, listed, not counted
_REPEATABLE = ("rocprofv3-kernel-trace", "rocprofv3-stats", "rocprofv3-memory-copy")


def plan(found: list[Found]) -> list[Planned]:
    """Which file is read in which role, in a stable order."""
    unique = {f.head.path.resolve(): f for f in found}
    items = _outside_workloads(sorted(unique.values(), key=lambda f: str(f.head.path)))
    timed = any(f.role in (Role.DISPATCHES, Role.WORKLOAD) and _timed(f) for f in items)
    counting = _counting_counter_files(items)
    repeats = _repeated_passes(items)
    groups: dict[tuple[str, str], list[Found]] = {}
    for f in items:
        groups.setdefault(f.group, []).append(f)
    planned: list[Planned] = []
    for members in groups.values():
        planned += _plan_group(members, timed=timed, counting=counting, repeats=repeats)
    order = {Role.DISPATCHES: 0, Role.COUNTER_RUN: 1, Role.KERNEL_SUMMARY: 2}
    planned.sort(key=lambda p: (order.get(p[1], 3), str(p[0].head.path)))
    return planned


def _plan_group(
    members: list[Found], *, timed: bool, counting: set[Path], repeats: set[Path]
) -> list[Planned]:
    """The roles of the files of one run (one folder, one name stem)."""
    sources = sorted(
        (f for f in members if f.role == Role.DISPATCHES),
        key=lambda f: (not _timed(f), f.reader.priority),
    )
    best = sources[0] if sources else None
    counted = best is not None or any(f.head.path in counting for f in members)
    planned: list[Planned] = []
    for f in members:
        if f.head.path in repeats:
            planned.append((f, Role.PASS_REPEAT))
        elif f.role == Role.WORKLOAD:
            planned.append((f, Role.DISPATCHES))
        elif f.role == Role.DISPATCHES:
            if (f is best or f.reader.exports) and (_timed(f) or not timed):
                planned.append((f, Role.DISPATCHES))
            elif not _timed(f) and timed:
                planned.append((f, Role.COUNTER_RUN))
        elif f.role == Role.COUNTER_COLLECTION:
            planned.append((f, Role.DISPATCHES if f.head.path in counting else Role.COUNTER_RUN))
        elif f.role == Role.KERNEL_SUMMARY:
            planned.append((f, Role.CROSS_CHECK if counted else Role.KERNEL_SUMMARY))
        else:
            planned.append((f, f.role))
    return planned


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
