"""Many processes' outputs read in parallel and merged into one Profile.

A job of many ranks leaves one output per process (a rocpd database, a rocprofv3 CSV folder,
a rocprof v1 set). When every run in the plan stands alone (one dispatch source each, no
counter run that attaches to another run's dispatches), each run is a *unit*: worker processes
read batches of units, each batch into a Profile of its own with the same readers, and send it
back as a :class:`Shard` (its tables as numpy columns). The main process appends the shards in
the plan's order, renumbering sources, name ids and dispatch row ids, so the merged Profile is
the one that reading the units one after another gives (a test holds the two equal).

Workers are forked from a fork server started before any DuckDB connection exists, so no
DuckDB thread state is copied into them. Per-kernel statistics are merged from per-source
aggregates downstream (hotspots, the rank view); what crosses the process boundary is each
batch's tables, which a Profile would hold anyway.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from roofscope.catalogue.ceilings import Ceiling
from roofscope.model.profile import InputFile, Profile, RunInfo, Warning
from roofscope.model.schema import Role
from roofscope.readers.runs import Planned

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Columns = dict[str, npt.NDArray[Any]]

ReadPlan = Callable[[Sequence[Planned]], Profile]  # a batch of runs read into a new Profile

# tables a shard carries, with the columns renumbered on the way in
_TABLES = (
    "dispatches",
    "launches",
    "counters",
    "kernel_summary",
    "activity_summary",
    "copies",
    "producer_rules",
    "host_ranges",
    "graph_launches",
    "operators",
    "op_launches",
    "kernel_annotations",
    "user_ranges",
    "range_launches",
)
_SOURCED = {"dispatches", "launches", "kernel_summary", "activity_summary", "copies",
            "host_ranges", "graph_launches", "operators", "op_launches",
            "kernel_annotations", "user_ranges", "range_launches"}  # fmt: skip
_NAMED = {"dispatches", "launches", "kernel_summary"}


def rows_from(profile: Profile, source: int) -> int:
    """The rows of the tables that carry a source whose source is ``source`` or later: what a
    reader that failed may have left (0 when it failed before inserting)."""
    con = profile.con
    found = (con.execute(f"SELECT count(*) FROM {t} WHERE source >= ?", [source]) for t in _SOURCED)
    return sum(int(row[0]) for q in found if (row := q.fetchone()) is not None)


BATCHES_PER_WORKER = 4  # batches per worker: balances uneven files, few shards to merge


class Shard(msgspec.Struct):
    """What a worker read: its tables and what it learnt, in the Profile's own terms."""

    names: Columns
    counter_names: Columns
    tables: dict[str, Columns]
    inputs: list[InputFile]
    run: RunInfo
    warnings: list[Warning]
    ceilings: list[Ceiling] = msgspec.field(default_factory=list)
    sysinfo: dict[str, str] = msgspec.field(default_factory=dict)
    # by shard source
    counter_passes: dict[int, dict[str, str]] = msgspec.field(default_factory=dict)


def units(plan: Sequence[Planned]) -> list[list[Planned]] | None:
    """The plan as independent runs, in the order of their dispatch source's path; None when
    there are fewer than two or when a run depends on another (a counter run, or two exports
    of a reader whose exports may be one run's, :attr:`Reader.exports`)."""
    groups: dict[tuple[str, str], list[Planned]] = {}
    for item in plan:
        groups.setdefault(item[0].group, []).append(item)
    if len(groups) < 2 or any(role == Role.COUNTER_RUN for _, role in plan):
        return None
    if sum(f.reader.exports and role == Role.DISPATCHES for f, role in plan) > 1:
        return None  # exports that may hold the same launches: read in one process
    sources = {}
    for key, members in groups.items():
        primary = [f for f, role in members if role == Role.DISPATCHES]
        if len(primary) != 1:
            return None
        sources[key] = str(primary[0].head.path)
    return [groups[key] for key in sorted(groups, key=lambda k: sources[k])]


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class RunOn(Protocol):
    """The map step of a check-up: each run (a batch of planned files) read by ``read`` into
    its partial, the partials yielded in the runs' order, wherever they are read."""

    runs: int  # how many runs it was given, once called

    @property
    def workers(self) -> int: ...

    def __call__(self, units: Sequence[Sequence[Planned]], read: ReadPlan) -> Iterator[Shard]: ...


class LocalWorkers(msgspec.Struct):
    """The map step on this machine: batches of runs read by ``jobs`` worker processes, the
    partials yielded in the runs' order (``checkup/workers.py`` has the Dask one)."""

    jobs: int
    runs: int = 0  # how many it was given, once called

    @property
    def workers(self) -> int:
        return self.jobs

    def __call__(self, units: Sequence[Sequence[Planned]], read: ReadPlan) -> Iterator[Shard]:
        self.runs = len(units)
        jobs = min(self.jobs, len(units))
        if jobs < 2:
            yield from (export(read(list(unit))) for unit in units)
            return
        yield from read_parallel(split([list(u) for u in units], jobs), jobs, read)


def read_parallel(
    batches: Sequence[Sequence[Planned]], jobs: int, read: ReadPlan
) -> Iterator[Shard]:
    """Each batch read by ``read`` in a worker and exported, yielded in order."""
    import multiprocessing  # with the pool: a profile read in one process loads neither
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["roofscope.readers.load"])
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        yield from pool.map(_export_batch, [(read, list(b)) for b in batches])


def _export_batch(job: tuple[ReadPlan, list[Planned]]) -> Shard:
    read, batch = job
    return export(read(batch))


def split(items: Sequence[list[Planned]], jobs: int) -> list[list[Planned]]:
    """Consecutive batches of units, about ``BATCHES_PER_WORKER`` per worker."""
    n = max(1, min(len(items), jobs * BATCHES_PER_WORKER))
    size = -(-len(items) // n)
    return [[p for unit in items[i : i + size] for p in unit] for i in range(0, len(items), size)]


def export(profile: Profile) -> Shard:
    profile.launches()  # fill what a reader deferred: the shard must be complete
    con = profile.con
    return Shard(
        names=con.execute("SELECT name_id, raw_name FROM names").fetchnumpy(),
        counter_names=con.execute("SELECT counter_id, counter FROM counter_names").fetchnumpy(),
        tables={t: con.execute(f"SELECT * FROM {t}").fetchnumpy() for t in _TABLES},
        inputs=list(profile.inputs),
        run=profile.run,
        warnings=list(profile.warnings),
        ceilings=list(profile.ceilings),
        sysinfo=dict(profile.sysinfo),
        counter_passes=dict(profile.counter_passes),
    )


def _remap(old: npt.NDArray[Any], names: list[str], ids: dict[str, int]) -> npt.NDArray[np.int64]:
    """The profile's id of each of a shard's ids (indexed by the shard's id)."""
    import numpy as np  # worker processes only: one process reads without numpy

    before = np.asarray(old, dtype=np.int64)
    remap = np.zeros(int(before.max()) + 1 if before.size else 1, dtype=np.int64)
    remap[before] = [ids[n] for n in names]
    return remap


def absorb(profile: Profile, shard: Shard) -> None:
    """Append a shard to ``profile``: sources after the profile's, names by raw name (and
    counter names by name),
    counter rows after its dispatches."""
    con = profile.con
    source_base, row_base = profile.begin_input(), profile.count("dispatches")
    raw = [str(r) for r in shard.names["raw_name"]]
    remap = _remap(shard.names["name_id"], raw, profile.name_ids(raw))
    counters = [str(c) for c in shard.counter_names["counter"]]
    recount = _remap(shard.counter_names["counter_id"], counters, profile.counter_ids(counters))
    for table, columns in shard.tables.items():
        if not len(next(iter(columns.values()))):
            continue
        fixed = dict(columns)
        if table in _SOURCED:
            fixed["source"] = fixed["source"] + source_base
        if table in _NAMED:
            fixed["name_id"] = remap[fixed["name_id"]]
        if table == "counters":
            fixed["counter_id"] = recount[fixed["counter_id"]]
        if table in ("counters", "producer_rules"):
            fixed["row_id"] = fixed["row_id"] + row_base
        con.register("shard_rows", fixed)
        try:
            con.execute(f"INSERT INTO {table} SELECT * FROM shard_rows").fetchall()
        finally:
            con.unregister("shard_rows")
    profile.inputs.extend(shard.inputs)
    profile.warnings.extend(shard.warnings)
    profile.set_run(shard.run)
    profile.ceilings.extend(c for c in shard.ceilings if c not in profile.ceilings)
    for key, value in shard.sysinfo.items():
        profile.sysinfo.setdefault(key, value)
    for source, passes in shard.counter_passes.items():
        profile.counter_passes[source + source_base] = passes
