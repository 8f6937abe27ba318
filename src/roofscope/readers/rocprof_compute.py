"""Omniperf / rocprof-compute workload folders (docs/formats/rocprof-compute.md).

A workload folder (``workloads/<name>/<gpu>/``, recognised by the content of its
``sysinfo.csv``) is ONE run. Its dispatches come once from ``pmc_perf.csv``, where the tool
merged every counter pass and put the timestamps of its timing run (that page, "How
pmc_perf.csv is merged"); every counter column goes to the ``counters`` table under its native
name (``TCC_EA_RDREQ_sum``, ``TCC_HIT[3]``). The ``SQ_*.csv`` files are separate runs of the
same dispatches: their counters are added to the same dispatch rows, matched by dispatch
index. ``timestamps.csv`` and ``pmc_dispatch_info.csv`` repeat the dispatches and are not read,
except that ``timestamps.csv`` (then a per-pass ``pmc_perf_N.csv``) gives the dispatches when
``pmc_perf.csv`` is absent or empty. ``sysinfo.csv`` names the GPU and ``roofline.csv`` holds
measured peaks (:mod:`roofscope.readers.sysinfo_csv`).

The columns of every generation map to the model in
:mod:`roofscope.readers.rocprof_compute_columns`.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.model.words import count
from roofscope.readers.csvload import register_names
from roofscope.readers.dispatch_csv import read_dispatch_csv
from roofscope.readers.duck_sql import ident, read_csv
from roofscope.readers.registry import Reader
from roofscope.readers.rocprof_compute_columns import (
    MODEL,
    NAME,
    is_long,
    read_header,
    wide_layout,
)
from roofscope.readers.sniff import Head
from roofscope.readers.sysinfo_csv import ceiling_scope, read_roofline, read_sysinfo, sysinfo_run

_PER_PASS = re.compile(r"^(?:results_)?pmc_perf_(\d+)\.csv$")
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
        return load_long(profile, path, header, fmt=fmt, role=role)
    layout = wide_layout(path, header)
    read_dispatch_csv(profile, path, layout, fmt=fmt, role=role)  # timestamps a spreadsheet
    # rounded (1.62068E+14) are judged with every format's: analysis/rounding.py
    return set(layout.counters)


def load_long(profile: Profile, path: Path, header: list[str], *, fmt: str, role: Role) -> set[str]:
    """Pivot a long ``pmc_perf.csv`` (rocpd path): one dispatch per (Dispatch_ID, Kernel_Name,
    Grid_Size, Workgroup_Size, LDS_Per_Workgroup), the key rocprof-compute groups by.

    Every pass replays the dispatch, so it appears once per pass with other timestamps. Its
    duration is the one rocprof-compute 3.2-3.3 computes (``rocpd_data.process_rocpd_csv``):
    the median of End - Start over all the dispatch's counter rows (so passes with more
    counters weigh more; the mean of the two middle values for an even count), rounded to
    whole ns. rocprof-compute then sets the start to 0; here it is the earliest pass's start,
    so the dispatches keep their order and gaps. A counter written twice keeps its last value.
    """
    need = ["Dispatch_ID", "Kernel_Name", "Start_Timestamp", "End_Timestamp"]
    missing = [c for c in need if c not in header]
    if missing:
        raise InputError(
            str(path),
            f"is a long counter table without {', '.join(missing)}",
            "pass the pmc_perf.csv rocprof-compute wrote",
            line=1,
        )
    tag = f"long{next(_ids)}"
    try:
        _stage_long(profile, path, header, tag)
        return _insert_long(profile, path, tag, fmt=fmt, role=role)
    finally:
        profile.con.execute(f"DROP TABLE IF EXISTS {tag}_rows; DROP TABLE IF EXISTS {tag}_d")


_LONG_INTS = (
    *("dispatch_id", "device", "grid_size", "workgroup_size", "lds_bytes", "scratch_bytes"),
    *("arch_vgpr", "accum_vgpr", "sgpr", "start_ns", "end_ns"),
)
_LONG_KEY = ("dispatch_id", "raw", "grid_size", "workgroup_size", "lds_bytes")


def _stage_long(profile: Profile, path: Path, header: list[str], tag: str) -> None:
    given: dict[str, str] = {}
    for col in header:
        given.setdefault(MODEL.get(col.lower(), ""), f"TRY_CAST({ident(col)} AS BIGINT)")
    fields = ", ".join(f"{given.get(m, 'NULL::BIGINT')} AS {m}" for m in _LONG_INTS)
    profile.con.execute(
        f"""CREATE TEMP TABLE {tag}_rows AS SELECT {fields}, "Kernel_Name" AS raw,
        "Counter_Name" AS counter, TRY_CAST("Counter_Value" AS DOUBLE) AS value
        FROM {read_csv(path, [(c, "VARCHAR") for c in header])}"""
    )
    key = ", ".join(_LONG_KEY)
    profile.con.execute(
        f"""CREATE TEMP TABLE {tag}_d AS SELECT row_number() OVER (ORDER BY {key}) - 1 AS k,
        {key}, min(device) AS device, min(scratch_bytes) AS scratch_bytes,
        min(arch_vgpr) AS arch_vgpr, min(accum_vgpr) AS accum_vgpr, min(sgpr) AS sgpr,
        min(start_ns) AS start_ns, quantile_cont(end_ns - start_ns, 0.5) AS duration,
        count(DISTINCT start_ns) AS passes
        FROM {tag}_rows WHERE dispatch_id IS NOT NULL AND raw IS NOT NULL GROUP BY {key}"""
    )


def _insert_long(profile: Profile, path: Path, tag: str, *, fmt: str, role: Role) -> set[str]:
    con = profile.con
    source, first = profile.begin_input(), profile.count("dispatches")
    register_names(profile, path, f"{tag}_d")
    con.execute(
        f"""INSERT INTO dispatches (source, name_id, device, dispatch_id, start_ns, end_ns)
        SELECT {source}, n.name_id, d.device, d.dispatch_id, d.start_ns,
        d.start_ns + CAST(round(d.duration) AS BIGINT)
        FROM {tag}_d d JOIN names n ON n.raw_name = d.raw ORDER BY d.k"""
    )
    joined = " AND ".join(f"r.{c} IS NOT DISTINCT FROM d.{c}" for c in _LONG_KEY)
    found = con.execute(f"SELECT DISTINCT counter FROM {tag}_rows WHERE counter IS NOT NULL")
    counters = sorted(str(r[0]) for r in found.fetchall())
    profile.insert_counters(
        f"""SELECT {first} + d.k AS row_id, r.counter, arg_max(r.value, r.rowid) AS value
        FROM {tag}_rows r JOIN {tag}_d d ON {joined}
        WHERE r.counter IS NOT NULL AND r.value IS NOT NULL
        GROUP BY d.k, r.counter ORDER BY 1, 2""",
        counters,
    )
    shape = "grid_size, workgroup_size, lds_bytes, scratch_bytes, arch_vgpr, accum_vgpr, sgpr"
    con.execute(
        f"""INSERT INTO launches (source, name_id, {shape}, dispatches)
        SELECT {source}, n.name_id, {shape}, count(*)
        FROM {tag}_d d JOIN names n ON n.raw_name = d.raw GROUP BY ALL"""
    )
    _report_long(profile, path, tag, fmt=fmt, role=role)
    return set(counters)


def _report_long(profile: Profile, path: Path, tag: str, *, fmt: str, role: Role) -> None:
    rows, replayed, passes, dropped = profile.con.execute(
        f"""SELECT count(*), count(*) FILTER (passes > 1), max(passes),
        (SELECT count(*) FROM {tag}_rows WHERE dispatch_id IS NULL OR raw IS NULL)
        FROM {tag}_d"""
    ).fetchone() or (0, 0, 0, 0)
    if replayed:
        profile.warn(
            "pass-timestamps-differ",
            f"{path}: {count(replayed, 'dispatch')} recorded once per pass (up to {passes} "
            "passes) with different timestamps; each is kept once, its duration the median of "
            "End - Start over its counter rows (as rocprof-compute computes it), its start the "
            "earliest",
        )
    if dropped:
        profile.warn(
            "malformed-row",
            f"{path}: {dropped} row(s) without a dispatch id or kernel name skipped",
            count=int(dropped),
        )
    profile.add_input(str(path), fmt, int(rows), role)


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
    # The run's own clock: its busy cycles and duration, for ratios within this one run
    # (Omniperf's Wave Occupancy and Instr Fetch BW), kept beside pmc_perf.csv's.
    own = {}
    if "GRBM_GUI_ACTIVE" in layout.counters:
        own[f"GRBM_GUI_ACTIVE@{path.stem}"] = 'TRY_CAST("GRBM_GUI_ACTIVE" AS DOUBLE)'
    if "start_ns" in layout.mapping and "end_ns" in layout.mapping:
        own[f"duration_ns@{path.stem}"] = (
            f"({layout.mapping['end_ns']} - {layout.mapping['start_ns']})::DOUBLE"
        )
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
        return rows, f"has {rows - matched} dispatch id(s) that {base} does not"
    if renamed:
        return rows, f"names another kernel than {base} for {renamed} dispatch id(s)"
    return rows, None


def _skip(profile: Profile, path: Path, why: str) -> None:
    profile.warn(
        "counter-run-skipped",
        f"{path} {why}; its counters are not added to the dispatches",
    )


def _per_pass(folder: Path) -> list[Path]:
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _PER_PASS.match(p.name))]
    return [p for _, p in sorted(found)]


def _has_rows(path: Path) -> bool:
    with path.open("rb") as f:
        f.readline()
        return any(line.strip() for line in f)


def dispatch_source(folder: Path) -> Path:
    """pmc_perf.csv, else timestamps.csv, else the first per-pass file that holds rows."""
    candidates = [folder / "pmc_perf.csv", folder / "timestamps.csv", *_per_pass(folder)]
    there = [p for p in candidates if p.is_file()]
    for path in there:
        if _has_rows(path):
            return path
    if not there:
        raise InputError(
            str(folder),
            "is a rocprof-compute workload (sysinfo.csv) without pmc_perf.csv or timestamps.csv",
            "copy the whole workload folder that rocprof-compute profile wrote",
        )
    absent = "" if there[0] == candidates[0] else "no pmc_perf.csv; "
    raise InputError(
        str(folder),
        "is a rocprof-compute workload without dispatch rows "
        f"({absent}header only: {', '.join(p.name for p in there)})",
        "the profiled run launched no kernel that its --kernel/--dispatch filter kept; re-run "
        "rocprof-compute profile with a filter that matches",
    )


class Workload(Reader):
    name = "rocprof-compute-workload"
    description = (
        "Omniperf / rocprof-compute workload folder, found by its sysinfo.csv "
        "(pmc_perf.csv dispatches and counters, SQ_*.csv counters, roofline.csv peaks)"
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
        source_path = dispatch_source(folder)
        source = profile.begin_input()
        present = read_dispatches(profile, source_path, fmt=self.name, role=role)
        runs = sorted(folder.glob("SQ_*.csv"))
        if source_path.name != "pmc_perf.csv":
            runs += [p for p in _per_pass(folder) if p != source_path]
        for run_path in runs:
            attach_counter_run(profile, run_path, source=source, present=present, fmt=self.name)
        profile.add_input(str(path), "rocprof-compute-sysinfo", 1, Role.METADATA)
        roofline = folder / "roofline.csv"
        if roofline.is_file():
            read_roofline(roofline, profile, scope=ceiling_scope(run.partition))
        profile.set_run(run)


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
