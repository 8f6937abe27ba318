"""The raw per-pass files of a rocprof-compute workload (docs/formats/rocprof-compute.md,
"Raw pass folders"): ``out/<pass>/<host or pid>/<pid>.db``, one rocpd database per pass and
process, with ``out/<pass>/<pid>_native_counter_collection.csv(.gz)`` beside it when
rocprof-compute's own counter tool counted (``dispatch_id, gpu_id, kernel_id,
lds_per_workgroup, counter_id, counter_name, counter_value``).

They are turned into the long rows that
:mod:`~roofscope.readers.amd.compute.rocprof_compute_long` pivots,
the way rocprofiler-compute's analyze builds its ``pmc_perf`` from them:

- passes in folder-name order, each pass's databases in path order;
- a process's counters from its native CSV when there is one, summed per dispatch and
  counter name (the CSV has a row per hardware instance; rocpd's ``counters_collection``
  sums them the same way), put on the database's dispatch of that ``dispatch_id`` and pid;
  else from the database's ``counters_collection`` view;
- within each pass, dispatch ids renumbered 0, 1, ... in the order the dispatches come
  (database, then rocprofiler's dispatch id), one id per (pid, kernel name, grid,
  workgroup, LDS, start, end): the ids the per-pass CSVs of 3.6-3.9 carry, on which the
  passes are joined. A dispatch without counters gets no id, as in the tool.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model import words
from roofscope.model.profile import Profile, RunInfo
from roofscope.readers.amd.compute.rocprof_compute_columns import read_header, require_columns
from roofscope.readers.amd.compute.rocprof_compute_folder import databases
from roofscope.readers.amd.rocpd import run_info
from roofscope.readers.amd.rocpd_schema import check_schema, require_views
from roofscope.readers.io.batches import Kind, column, registered
from roofscope.readers.io.duck_sql import read_csv
from roofscope.readers.io.sqlite_file import opened

NATIVE_SUFFIX = "_native_counter_collection.csv"
_NATIVE_COLUMNS = ("dispatch_id", "gpu_id", "counter_name", "counter_value")
# kernel columns of one database: name -> (expression, kind)
_KERNEL: dict[str, tuple[str, Kind]] = {
    "dispatch_id": ("K.dispatch_id", "int"),
    "device": ("K.agent_id", "int"),
    "pid": ("P.pid", "int"),
    "grid_size": ("K.grid_size_x * K.grid_size_y * K.grid_size_z", "int"),
    "workgroup_size": ("K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z", "int"),
    "lds_bytes": ("K.group_segment_size", "int"),
    "scratch_bytes": ("K.private_segment_size", "int"),
    "arch_vgpr": ("S.arch_vgpr_count", "int"),
    "accum_vgpr": ("S.accum_vgpr_count", "int"),
    "sgpr": ("S.sgpr_count", "int"),
    "raw": ("S.display_name", "text"),
    "start_ns": ("K.start", "int"),
    "end_ns": ('K."end"', "int"),
}
_KERNEL_FROM = """FROM rocpd_kernel_dispatch K
    JOIN rocpd_event E ON E.id = K.event_id AND E.guid = K.guid
    JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid
    JOIN rocpd_info_process P ON P.id = K.pid AND P.guid = K.guid"""
_COLLECTED: dict[str, tuple[str, Kind]] = {
    "dispatch_id": ("dispatch_id", "int"),
    "device": ("agent_id", "int"),
    "counter": ("counter_name", "text"),
    "value": ("value", "float"),
}
# a native CSV's counters name no device: they are the process's; a view's name the agent
_SAME_DEVICE = "(c.device IS NULL OR c.device = k.device)"
_KEY = "pid, raw, grid_size, workgroup_size, lds_bytes, start_ns, end_ns"


def native_csv(db: Path) -> Path | None:
    """The native counter CSV of the database's process (its pid: the name before ``_``), in
    the pass folder (where the tool looks) or else beside the database (where one pull
    request's text put it)."""
    pid = db.stem.split("_")[0]
    for folder in (db.parent.parent, db.parent):
        for suffix in (".gz", ""):
            path = folder / f"{pid}{NATIVE_SUFFIX}{suffix}"
            if path.is_file():
                return path
    return None


def stage_raw(profile: Profile, passes: list[Path], tag: str) -> None:
    """Fill ``<tag>_rows`` (:func:`~roofscope.readers.amd.compute.rocprof_compute_long.create_rows`)
    from the pass folders ``passes``, pass ``i`` being ``passes[i]``."""
    dispatches = 0
    for index, pass_dir in enumerate(passes):
        try:
            dispatches += _stage_pass(profile, pass_dir, index, tag)
        finally:
            profile.con.execute(f"DROP TABLE IF EXISTS {tag}_k; DROP TABLE IF EXISTS {tag}_c")
    if not profile.count(f"{tag}_rows"):
        raise InputError(
            str(passes[0].parent.parent),
            f"is a rocprof-compute workload whose raw pass folders ({len(passes)} under out/) "
            f"hold no counter value for any of their {words.count(dispatches, 'dispatch')}: "
            "no native counter CSV beside the databases, and none in them",
            "copy each out/<pass>/<pid>_native_counter_collection.csv.gz with the databases",
        )


def agent_run(passes: list[Path]) -> RunInfo:
    """The GPU that the first database's dispatches ran on, from its agent table."""
    db = databases(passes[0])[0]
    with opened(db) as con:
        agents = {
            int(a)
            for (a,) in con.execute(
                f"""SELECT DISTINCT A.absolute_index {_KERNEL_FROM}
                JOIN rocpd_info_agent A ON A.id = K.agent_id AND A.guid = K.guid"""
            )
            if a is not None
        }
        return run_info(con, agents)


def _stage_pass(profile: Profile, pass_dir: Path, index: int, tag: str) -> int:
    """Stage one pass; the number of dispatches its databases hold."""
    con = profile.con
    fields = ", ".join(
        f"{c} {'VARCHAR' if k == 'text' else 'BIGINT'}" for c, (_, k) in _KERNEL.items()
    )
    con.execute(f"CREATE TEMP TABLE {tag}_k (db INTEGER, {fields})")
    con.execute(
        f"""CREATE TEMP TABLE {tag}_c (db INTEGER, dispatch_id BIGINT, device BIGINT,
        counter VARCHAR, value DOUBLE)"""
    )
    for number, db in enumerate(databases(pass_dir)):
        _stage_database(profile, db, number, tag)
    _orphans(profile, pass_dir, tag)
    _renumber(profile, index, tag)
    dispatches, counted = profile.count(f"{tag}_k"), profile.count(f"{tag}_c")
    if dispatches and not counted:
        profile.warn(
            "raw-pass-without-counters",
            f"{pass_dir}: none of its {words.count(dispatches, 'dispatch')} has a counter "
            "value (no native counter CSV beside its databases, and none in them); the "
            "counters of this pass are missing",
        )
    return dispatches


def _stage_database(profile: Profile, db: Path, number: int, tag: str) -> None:
    counters = native_csv(db)
    pid = None if counters is None else db.stem.split("_")[0]
    with opened(db) as con:
        require_views(db, con)
        check_schema(db, con)
        _copy(profile, db, con, _kernel_query(pid), _KERNEL, number, f"{tag}_k")
        if counters is None:
            select = ", ".join(e for e, _ in _COLLECTED.values())
            query = f"SELECT {select} FROM counters_collection"
            _copy(profile, db, con, query, _COLLECTED, number, f"{tag}_c")
    if counters is not None:
        _stage_native(profile, counters, number, tag)


def _kernel_query(pid: str | None) -> str:
    select = ", ".join(e for e, _ in _KERNEL.values())
    where = f" WHERE P.pid = {int(pid)}" if pid is not None and pid.isdigit() else ""
    return f"SELECT {select} {_KERNEL_FROM}{where} ORDER BY K.dispatch_id"


def _copy(
    profile: Profile,
    db: Path,
    con: sqlite3.Connection,
    query: str,
    columns: dict[str, tuple[str, Kind]],
    number: int,
    table: str,
) -> None:
    """The rows of ``query`` (one column per entry of ``columns``) into ``table``."""
    rows = con.execute(query).fetchall()
    if not rows:
        return
    try:
        arrays = {
            c: column(v, k)
            for (c, (_, k)), v in zip(columns.items(), zip(*rows, strict=True), strict=True)
        }
    except (OverflowError, ValueError, TypeError) as exc:
        raise InputError(
            str(db),
            f"holds a value that is no {'number' if 'value' in columns else 'integer'} where "
            f"rocpd writes one ({exc})",
            "pass the database rocprofv3 wrote, unedited",
        ) from None
    arrays["db"] = column([number] * len(rows), "int")
    with registered(profile, "raw_batch", arrays) as duck:
        names = ", ".join(["db", *columns])
        duck.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM raw_batch").fetchall()


def _stage_native(profile: Profile, path: Path, number: int, tag: str) -> None:
    header = read_header(path)  # a damaged gzip file is named here
    remedy = "pass the workload folder as rocprof-compute profile wrote it"
    require_columns(path, header, _NATIVE_COLUMNS, "a native counter CSV", remedy)
    columns = [(c, "VARCHAR") for c in header]
    con = profile.con
    # trim() keeps DuckDB from pushing the casts into the scan, where a value that does not
    # convert drops its row (ignore_errors) instead of giving NULL
    con.execute(
        f"""CREATE TEMP TABLE {tag}_s AS SELECT
        TRY_CAST(trim(dispatch_id) AS BIGINT) AS dispatch_id, counter_name AS counter,
        sum(v) AS value, count(*) FILTER (v IS NULL) AS bad, count(*) AS n
        FROM (SELECT *, TRY_CAST(trim(counter_value) AS DOUBLE) AS v
        FROM {read_csv(path, columns)}) GROUP BY 1, 2"""
    )
    try:
        con.execute(
            f"""INSERT INTO {tag}_c SELECT {number}, dispatch_id, NULL, counter, value
            FROM {tag}_s WHERE bad = 0 AND dispatch_id IS NOT NULL AND counter IS NOT NULL"""
        )
        _malformed(profile, path, tag)
    finally:
        con.execute(f"DROP TABLE {tag}_s")


def _malformed(profile: Profile, path: Path, tag: str) -> None:
    """Warn of the (dispatch, counter) values left out for a row that does not parse: a sum
    over the instance rows without it would be wrong."""
    ((rows, values),) = profile.con.execute(
        f"""SELECT sum(CASE WHEN dispatch_id IS NULL OR counter IS NULL THEN n ELSE bad END),
        count(*) FROM {tag}_s WHERE bad > 0 OR dispatch_id IS NULL OR counter IS NULL"""
    ).fetchall()
    if values:
        profile.warn(
            "malformed-row",
            f"{path}: {words.count(int(rows), 'row')} without a numeric dispatch_id or "
            "counter_value, or a counter_name; the "
            f"{words.count(int(values), '(dispatch, counter) value')} they belong to are left out",
            count=int(rows),
        )


def _orphans(profile: Profile, pass_dir: Path, tag: str) -> None:
    """Warn of counter values whose dispatch the database does not hold."""
    orphans = profile.count(
        f"""{tag}_c c WHERE NOT EXISTS (SELECT 1 FROM {tag}_k k WHERE k.db = c.db
        AND k.dispatch_id = c.dispatch_id AND {_SAME_DEVICE})"""
    )
    if orphans:
        profile.warn(
            "rocpd-orphan-counters",
            f"{pass_dir}: {words.count(orphans, 'counter value')} "
            f"{words.plural(orphans, 'names', 'name')} a dispatch that no database of the "
            "pass holds; they are left out",
            orphans,
        )


def _renumber(profile: Profile, index: int, tag: str) -> None:
    """The pass's counter rows into ``<tag>_rows``, each dispatch under its new id. Row
    order within the pass does not matter: a (dispatch, counter) has one row per pass."""
    match = f"k.db = c.db AND k.dispatch_id = c.dispatch_id AND {_SAME_DEVICE}"
    profile.con.execute(
        f"""CREATE TEMP TABLE {tag}_n AS
        WITH seen AS (SELECT * FROM {tag}_k k WHERE EXISTS (SELECT 1 FROM {tag}_c c WHERE {match})),
        ordered AS (SELECT *, row_number() OVER (ORDER BY db, dispatch_id) AS o FROM seen),
        firsts AS (SELECT *, min(o) OVER (PARTITION BY {_KEY}) AS f FROM ordered)
        SELECT *, dense_rank() OVER (ORDER BY f) - 1 AS id FROM firsts"""
    )
    try:
        profile.con.execute(
            f"""INSERT INTO {tag}_rows SELECT {index}, k.id, k.device, k.grid_size,
            k.workgroup_size, k.lds_bytes, k.scratch_bytes, k.arch_vgpr, k.accum_vgpr, k.sgpr,
            k.start_ns, k.end_ns, k.raw, c.counter, c.value
            FROM {tag}_c c JOIN {tag}_n k ON {match}"""
        )
    finally:
        profile.con.execute(f"DROP TABLE {tag}_n")
