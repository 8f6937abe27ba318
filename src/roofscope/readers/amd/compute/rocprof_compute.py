"""Omniperf / rocprof-compute workload folders (docs/formats/rocprof-compute.md).

A workload folder (``workloads/<name>/<gpu>/``, recognised by the content of its
``sysinfo.csv``) is ONE run. Which of its files give the dispatches is decided in
:mod:`~roofscope.readers.amd.compute.rocprof_compute_folder`: ``pmc_perf.csv`` (``.gz``),
where the tool
merged every counter pass and put the timestamps of its timing run (that page, "How
pmc_perf.csv is merged"); else, from 3.6 on, the long per-pass ``results_pmc_perf_N.csv``
files, joined on the dispatch (:mod:`roofscope.readers.amd.compute.rocprof_compute_long`); else
``timestamps.csv`` or a wide per-pass ``pmc_perf_N.csv``. The raw ``out/<pass>`` folders of
the newest sources (rocpd databases and native counter CSVs) come before all of these and
are joined the same way (:mod:`roofscope.readers.amd.compute.rocprof_compute_raw`). Every counter
goes to the ``counters`` table under its native name (``TCC_EA_RDREQ_sum``, ``TCC_HIT[3]``).
The ``SQ_*.csv`` files are separate runs of the same dispatches: their counters are added to
the same dispatch rows, matched by dispatch index. ``sysinfo.csv`` names the GPU and
``roofline.csv`` holds measured peaks
(:mod:`~roofscope.readers.amd.compute.rocprof_compute_sysinfo`).

The columns of every generation map to the model in
:mod:`roofscope.readers.amd.compute.rocprof_compute_columns`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import msgspec

from roofscope.model import words
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.amd.compute.rocprof_compute_columns import (
    NAME,
    is_long,
    read_header,
    wide_layout,
)
from roofscope.readers.amd.compute.rocprof_compute_folder import workload_files
from roofscope.readers.amd.compute.rocprof_compute_long import Timing, load_long
from roofscope.readers.amd.compute.rocprof_compute_sysinfo import (
    ceiling_scope,
    read_roofline,
    read_sysinfo,
    sysinfo_run,
)
from roofscope.readers.io.csv_layout import CsvLayout
from roofscope.readers.io.dispatch_csv import read_dispatch_csv
from roofscope.readers.io.duck_sql import ident, read_csv
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

_SYSINFO_STARTS = (
    ["workload_name", "host_name", "host_cpu"],
    ["workload_name", "command", "ip_blocks"],
    ["workload_path", "command", "ip_blocks"],
)
_ids = itertools.count()


def read_dispatches(profile: Profile, path: Path, *, fmt: str, role: Role) -> set[str]:
    """Load one wide or long workload CSV as dispatches; the counter names it gave."""
    header = read_header(path)
    if is_long(header):
        return set(load_long(profile, [path], fmt=fmt, role=role, timing=Timing.MEDIAN))
    layout = wide_layout(path, header)
    read_dispatch_csv(profile, path, layout, fmt=fmt, role=role)  # timestamps a spreadsheet
    # rounded (1.62068E+14) are judged with every format's: analysis/rounding.py
    return set(layout.counters)


def attach_counter_run(
    profile: Profile, path: Path, *, source: int, present: set[str], fmt: str
) -> None:
    """Add the counters of ``path`` that ``source``'s dispatches lack, matched by dispatch id.

    Counters already given (by pmc_perf.csv or an earlier run) keep their first value. When
    the rows cannot be matched one to one, nothing is added and a warning says why.
    """
    header = read_header(path)
    if is_long(header):
        _skip(profile, path, "is a long counter table; only a wide one is matched by dispatch")
        return
    if not any(h.lower() in NAME for h in header):
        _skip(profile, path, "has no Kernel_Name column")
        return
    layout = wide_layout(path, header)
    if "dispatch_id" not in layout.mapping:
        _skip(profile, path, "has no Dispatch_ID (or Index) column to match dispatches by")
        return
    new = [c for c in dict.fromkeys(layout.counters) if c not in present]
    own = _own_clock(path, layout)
    if not new:
        return
    tag = f"run{next(_ids)}"
    values = [*(f"TRY_CAST({ident(c)} AS DOUBLE)" for c in new), *own.values()]
    new += list(own)
    con = profile.con
    con.execute(
        f"CREATE TEMP TABLE {tag} AS SELECT {layout.mapping['dispatch_id']} AS _id, "
        f"{ident(layout.name)} AS _name, [{', '.join(values)}] AS _values "
        f"FROM {read_csv(path, list(layout.columns))}"
    )
    try:
        rows, problem = _mismatch(profile, tag, source)
        if problem:
            _skip(profile, path, problem)
            return
        ids = profile.counter_ids(new)
        # in the dispatches' order, each row's counters in the run's column order; an empty
        # field is no value (as UNPIVOT leaves NULLs out)
        con.execute(
            f"""INSERT INTO counters SELECT row_id, counter_id, value FROM
            (SELECT row_id, unnest($1::INTEGER[]) AS counter_id, unnest(_values) AS value FROM
                (SELECT d.rowid AS row_id, r._values FROM {tag} r
                 JOIN dispatches d ON d.source = {source} AND d.dispatch_id = r._id
                 ORDER BY d.rowid))
            WHERE value IS NOT NULL""",
            [[ids[c] for c in new]],
        )
    finally:
        con.execute(f"DROP TABLE {tag}")
    present.update(new)
    profile.add_input(str(path), fmt, rows, Role.COUNTER_RUN)


class _Run(msgspec.Struct, frozen=True):
    """A counter run read with the others: its columns, the counters it adds, and how."""

    path: Path
    layout: CsvLayout
    new: tuple[str, ...]
    values: tuple[str, ...]  # the SQL of each new counter's value


def attach_counter_runs(
    profile: Profile, paths: Sequence[Path], *, source: int, present: set[str], fmt: str
) -> None:
    """:func:`attach_counter_run` for each of ``paths`` in order. Where every run is a wide
    table keyed by dispatch id whose rows match the dispatches, they are read in one
    statement and added in one (vcopy MI200's five SQ_*.csv: 25 statements -> 5); else, or
    at the first mismatch, one after another, each with its warning."""
    runs = _runs(paths, set(present))
    rows = _matched(profile, runs, source) if runs else None
    if runs is None or rows is None:
        for path in paths:
            attach_counter_run(profile, path, source=source, present=present, fmt=fmt)
        return
    ids = profile.counter_ids([c for r in runs for c in r.new])
    profile.con.execute(
        f"""INSERT INTO counters SELECT row_id, counter_id, value FROM
        (SELECT row_id, unnest(ids) AS counter_id, unnest(_values) AS value FROM
            (SELECT d.rowid AS row_id, r._values, $1[r._f + 1] AS ids FROM runs_{source} r
             JOIN dispatches d ON d.source = {source} AND d.dispatch_id = r._id
             ORDER BY r._f, d.rowid))
        WHERE value IS NOT NULL""",
        [[[ids[c] for c in r.new] for r in runs]],
    )
    profile.con.execute(f"DROP TABLE runs_{source}")
    for run, n in zip(runs, rows, strict=True):
        present.update(run.new)
        profile.add_input(str(run.path), fmt, n, Role.COUNTER_RUN)


def _runs(paths: Sequence[Path], present: set[str]) -> list[_Run] | None:
    """What each run adds, as :func:`attach_counter_run` finds it, runs that add nothing
    left out; None where one is read otherwise (long, no name, no dispatch id)."""
    runs = []
    for path in paths:
        header = read_header(path)
        if is_long(header) or not any(h.lower() in NAME for h in header):
            return None
        layout = wide_layout(path, header)
        if "dispatch_id" not in layout.mapping:
            return None
        new = [c for c in dict.fromkeys(layout.counters) if c not in present]
        if not new:
            continue
        own = _own_clock(path, layout)
        values = [*(f"TRY_CAST({ident(c)} AS DOUBLE)" for c in new), *own.values()]
        runs.append(_Run(path, layout, (*new, *own), tuple(values)))
        present.update(runs[-1].new)
    return runs


def _own_clock(path: Path, layout: CsvLayout) -> dict[str, str]:
    """The run's own clock: its busy cycles and duration, for ratios within this one run
    (Omniperf's Wave Occupancy and Instr Fetch BW), kept beside pmc_perf.csv's."""
    own = {}
    if "GRBM_GUI_ACTIVE" in layout.counters:
        own[f"GRBM_GUI_ACTIVE@{path.stem}"] = 'TRY_CAST("GRBM_GUI_ACTIVE" AS DOUBLE)'
    if "start_ns" in layout.mapping and "end_ns" in layout.mapping:
        own[f"duration_ns@{path.stem}"] = (
            f"({layout.mapping['end_ns']} - {layout.mapping['start_ns']})::DOUBLE"
        )
    return own


def _matched(profile: Profile, runs: list[_Run], source: int) -> list[int] | None:
    """Read every run into ``runs_<source>``; each one's rows, or None (the table dropped)
    where one does not match the dispatches one to one."""
    reads = " UNION ALL ".join(
        f"SELECT {i} AS _f, {r.layout.mapping['dispatch_id']} AS _id, "
        f"{ident(r.layout.name)} AS _name, [{', '.join(r.values)}]::DOUBLE[] AS _values "
        f"FROM {read_csv(r.path, list(r.layout.columns))}"
        for i, r in enumerate(runs)
    )
    con = profile.con
    con.execute(f"CREATE TEMP TABLE runs_{source} AS {reads}")
    found = con.execute(
        f"""SELECT r._f, count(*), count(d.dispatch_id), count(*) FILTER (
                d.dispatch_id IS NOT NULL AND n.raw_name IS DISTINCT FROM r._name)
        FROM runs_{source} r LEFT JOIN dispatches d ON d.source = {source} AND d.dispatch_id = r._id
        LEFT JOIN names n ON n.name_id = d.name_id GROUP BY r._f ORDER BY r._f"""
    ).fetchall()
    ((count, distinct),) = con.execute(
        f"SELECT count(*), count(DISTINCT dispatch_id) FROM dispatches WHERE source = {source}"
    ).fetchall()
    rows = {int(f): int(n) for f, n, matched, renamed in found
            if n == matched == count == distinct and not renamed}  # fmt: skip
    if len(rows) == len(runs):
        return [rows[i] for i in range(len(runs))]
    con.execute(f"DROP TABLE runs_{source}")
    return None


def _mismatch(profile: Profile, tag: str, source: int) -> tuple[int, str | None]:
    """The run's rows, and why they do not match the dispatches one to one (None when
    they do). The join's counts are read only once the dispatch ids are known distinct: a
    repeated one would count a run row once per dispatch it names."""
    base = Path(profile.inputs[source].path).name
    ((count, distinct, rows, matched, renamed),) = profile.con.execute(
        f"""SELECT (SELECT count(*) FROM dispatches WHERE source = {source}),
            (SELECT count(DISTINCT dispatch_id) FROM dispatches WHERE source = {source}),
            (SELECT count(*) FROM {tag}), count(d.dispatch_id), count(*) FILTER (
                d.dispatch_id IS NOT NULL AND n.raw_name IS DISTINCT FROM r._name)
        FROM {tag} r LEFT JOIN dispatches d ON d.source = {source} AND d.dispatch_id = r._id
        LEFT JOIN names n ON n.name_id = d.name_id"""
    ).fetchall()
    if rows != count:
        return rows, f"has {rows} dispatch rows where {base} has {count}"
    if distinct != count:
        return rows, f"cannot be matched: {base} repeats dispatch ids"
    if matched != rows:
        return rows, f"has {words.count(rows - matched, 'dispatch id')} that {base} does not"
    if renamed:
        return rows, f"names another kernel than {base} for {words.count(renamed, 'dispatch id')}"
    return rows, None


def _skip(profile: Profile, path: Path, why: str) -> None:
    profile.warn(
        "counter-run-skipped",
        f"{path} {why}; its counters are not added to the dispatches",
    )


class Workload(Reader):
    name = "rocprof-compute-workload"
    description = (
        "Omniperf / rocprof-compute workload folder, found by its sysinfo.csv "
        "(pmc_perf.csv or per-pass results_pmc_perf_N.csv or raw out/<pass> rocpd "
        "databases: dispatches and counters; SQ_*.csv counters, roofline.csv peaks)"
    )
    producer = "rocprof-compute"
    priority = 5

    def detect(self, head: Head) -> bool:
        return [f.strip() for f in head.fields()[:3]] in _SYSINFO_STARTS

    def role(self, head: Head) -> Role:
        return Role.WORKLOAD

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        folder = path.parent
        info = read_sysinfo(path)
        run = sysinfo_run(path, info)
        for key, value in info.items():
            profile.sysinfo.setdefault(key, value)
        files = workload_files(folder)
        source = profile.begin_input()
        if files.raw or files.long:
            stage = _raw().stage_raw if files.raw else None
            passes = load_long(
                profile,
                files.dispatches,
                fmt=self.name,
                role=role,
                timing=Timing.FIRST,
                stage=stage,
            )
            names = {c: files.dispatches[i].name for c, i in passes.items()}
            profile.counter_passes[source] = names
            present = set(passes)
        else:
            present = read_dispatches(profile, files.dispatches[0], fmt=self.name, role=role)
        attach_counter_runs(profile, files.runs, source=source, present=present, fmt=self.name)
        profile.add_input(str(path), "rocprof-compute-sysinfo", 1, Role.METADATA)
        roofline = folder / "roofline.csv"
        if roofline.is_file():
            read_roofline(roofline, profile, scope=ceiling_scope(run.partition))
        profile.set_run(run)
        if files.raw:  # what sysinfo.csv leaves out, from the first database's GPU agent
            profile.set_run(_raw().agent_run(files.dispatches))


def _raw() -> ModuleType:
    """The raw-pass reader (3.9+ out/ folders), loaded only for such a workload: it brings
    rocpd and numpy, which a check-up of any other CSV never needs."""
    from roofscope.readers.amd.compute import rocprof_compute_raw

    return rocprof_compute_raw


class WorkloadCsv(Reader):
    name = "rocprof-compute-csv"
    description = (
        "one CSV of a rocprof-compute / Omniperf 2.x+ workload (pmc_perf.csv wide or "
        "rocpd long, timestamps.csv, SQ_*.csv of the rocprof v1 path)"
    )
    producer = "rocprof-compute"
    priority = 20

    def detect(self, head: Head) -> bool:
        fields = [f.strip() for f in head.fields()]
        return (
            fields[:2] == ["Dispatch_ID", "Kernel_Name"]
            or fields[:4] == ["Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size"]
            or (fields[:1] == ["GPU_ID"] and "Dispatch_ID" in fields and is_long(fields))
        )

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def timed(self, head: Head) -> bool:
        fields = [f.strip() for f in head.fields()]
        return {"Start_Timestamp", "End_Timestamp"} <= set(fields)

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        read_dispatches(profile, path, fmt=self.name, role=role)
        profile.set_run(RunInfo(producer=self.producer))
        sysinfo = path.with_name("sysinfo.csv")
        if sysinfo.is_file() and not profile.has_input(sysinfo):
            _workload_metadata(profile, sysinfo)


def _workload_metadata(profile: Profile, sysinfo: Path) -> None:
    """The GPU (``sysinfo.csv``) and measured peaks (``roofline.csv``) of a workload folder,
    for one of its CSVs given alone."""
    info = read_sysinfo(sysinfo)
    run = sysinfo_run(sysinfo, info)
    for key, value in info.items():
        profile.sysinfo.setdefault(key, value)
    profile.add_input(str(sysinfo), "rocprof-compute-sysinfo", 1, Role.METADATA)
    roofline = sysinfo.with_name("roofline.csv")
    if roofline.is_file():
        read_roofline(roofline, profile, scope=ceiling_scope(run.partition))
    profile.set_run(run)
