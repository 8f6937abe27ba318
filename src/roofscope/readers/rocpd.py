"""rocprofv3's rocpd SQLite database (``--output-format rocpd``; formats-amd.md section 4.9).

The physical tables carry a uuid suffix; only the un-suffixed views are queried, and the file
is opened read-only (``mode=ro``) and never changed. What maps to what:

``kernels``
    one row per dispatch -> ``dispatches`` (``start``/``end`` ns, ``dispatch_id``, ``pid``,
    device = ``agent_log_index``, the number rocprofv3's CSVs write as ``Agent N``) and
    ``launches`` (``tid``, ``queue_id``, ``stream_id``, grid and workgroup as x*y*z products,
    ``lds_size``, ``scratch_size``, registers). The kernel name is the ``name`` column
    (the symbol's demangled display name).
``counters_collection``
    one row per counter per dispatch, already summed over instances -> ``counters``,
    attached to the dispatch of the same (guid, dispatch_id, agent).
``memory_copies``
    -> ``copies`` (direction = the operation name), never kernel time.
``top_kernels``
    per-kernel totals in MICROseconds -> ``kernel_summary`` in ns: a cross-check of the
    dispatches by default, or the kernel summary itself with ``role=KERNEL_SUMMARY``.
``rocpd_info_agent``
    the GPU the dispatches ran on (product name, gfx target, CUs and XCCs from ``extdata``).
``rocpd_metadata``
    ``schema_version``; versions other than :data:`SUPPORTED_SCHEMAS` are refused.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model import Profile, RunInfo
from roofscope.readers.csvload import register_names
from roofscope.readers.registry import DISPATCHES, KERNEL_SUMMARY, Reader
from roofscope.readers.sniff import Head
from roofscope.readers.stats_csv import insert_kernel_summary

SUPPORTED_SCHEMAS = ("3",)
BUSY_TIMEOUT_S = 2.0  # how long to wait for a writer's lock before giving up
_CHUNK = 100_000
_VIEWS = ("rocpd_metadata", "kernels")
_STAGE = "rocpd_k"

# column in the staging table -> (DuckDB type, expression over the ``kernels`` view)
_KERNEL_COLUMNS = {
    "guid": ("VARCHAR", "guid"),
    "id": ("BIGINT", "id"),
    "raw": ("VARCHAR", "name"),
    "pid": ("BIGINT", "pid"),
    "tid": ("BIGINT", "tid"),
    "agent": ("BIGINT", "agent_abs_index"),
    "device": ("BIGINT", "agent_log_index"),
    "dispatch_id": ("BIGINT", "dispatch_id"),
    "queue": ("BIGINT", "queue_id"),
    "stream": ("BIGINT", "stream_id"),
    "start_ns": ("BIGINT", "start"),
    "end_ns": ("BIGINT", '"end"'),
    "grid_size": ("BIGINT", "grid_x * grid_y * grid_z"),
    "workgroup_size": ("BIGINT", "workgroup_x * workgroup_y * workgroup_z"),
    "lds_bytes": ("BIGINT", "lds_size"),
    "scratch_bytes": ("BIGINT", "scratch_size"),
    "arch_vgpr": ("BIGINT", "vgpr_count"),
    "accum_vgpr": ("BIGINT", "accum_vgpr_count"),
    "sgpr": ("BIGINT", "sgpr_count"),
}
_COUNTER_COLUMNS = {
    "guid": ("VARCHAR", "guid"),
    "dispatch_id": ("BIGINT", "dispatch_id"),
    "agent": ("BIGINT", "agent_abs_index"),
    "counter": ("VARCHAR", "counter_name"),
    "value": ("DOUBLE", "value"),
}
_COPY_COLUMNS = {
    "pid": ("BIGINT", "pid"),
    "direction": ("VARCHAR", "name"),
    "src_agent": ("VARCHAR", "'Agent ' || src_agent_log_index"),
    "dst_agent": ("VARCHAR", "'Agent ' || dst_agent_log_index"),
    "start_ns": ("BIGINT", "start"),
    "end_ns": ("BIGINT", '"end"'),
}
_SHAPE = "tid, queue, stream, grid_size, workgroup_size, lds_bytes, scratch_bytes, arch_vgpr, "
_SHAPE += "accum_vgpr, sgpr"


# -- opening and recognising --------------------------------------------------------------


@contextmanager
def opened(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection; any SQLite error inside becomes a one-line InputError."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)) as con:
            yield con
    except sqlite3.Error as exc:
        raise _failure(path, exc) from None


def _failure(path: Path, exc: sqlite3.Error) -> InputError:
    why = " ".join(str(exc).split())
    if "locked" in why or "busy" in why:
        return InputError(
            str(path),
            f"is locked by another process ({why})",
            "wait for the profiler to finish writing it, or pass a copy",
        )
    if "malformed" in why or "not a database" in why or "corrupt" in why:
        return InputError(
            str(path),
            f"is a damaged SQLite database ({why})",
            "re-run the profiler; the file was cut short or overwritten",
        )
    return InputError(str(path), f"cannot be read as SQLite ({why})", "check the file")


def _objects(con: sqlite3.Connection) -> dict[str, str]:
    return {str(n): str(t) for n, t in con.execute("SELECT name, type FROM sqlite_master")}


def require_rocpd(path: Path) -> None:
    """Nothing for a rocpd database; a one-line InputError naming what any other SQLite
    file is (a rocprof v1 ``results.db``, ...) or why it cannot be read."""
    with opened(path) as con:
        objects = _objects(con)
    missing = [v for v in _VIEWS if v not in objects]
    if not missing:
        return
    if any(n.startswith("rocpd_") for n in objects):
        raise InputError(
            str(path),
            f"is a rocpd database without the {', '.join(missing)} view(s)",
            "pass the database as rocprofv3 wrote it (its views query the uuid tables)",
        )
    if "KERN" in objects:
        what, remedy = (
            "a rocprof v1 results.db",
            "pass the results.csv that rocprof wrote beside it",
        )
    elif any(n.startswith("compute_") for n in objects):
        what, remedy = "a rocprof-compute analysis database", "pass its workload folder"
    else:
        what = f"tables: {', '.join(sorted(objects)[:5]) or 'none'}"
        remedy = "pass rocprofv3 rocpd, CSV or JSON output (see `roofscope formats`)"
    raise InputError(str(path), f"is an SQLite database without rocpd's views ({what})", remedy)


def is_rocpd(path: Path) -> bool:
    try:
        require_rocpd(path)
    except InputError:
        return False
    return True


def _check_schema(path: Path, con: sqlite3.Connection) -> None:
    seen = sorted(
        {
            str(v)
            for (v,) in con.execute("SELECT value FROM rocpd_metadata WHERE tag = 'schema_version'")
        }
    )
    unknown = [v for v in seen if v not in SUPPORTED_SCHEMAS]
    if unknown or not seen:
        found = ", ".join(unknown) if unknown else "none"
        raise InputError(
            str(path),
            f"has rocpd schema_version {found}; roofscope reads schema_version "
            f"{', '.join(SUPPORTED_SCHEMAS)}",
            "convert it with a matching rocprofv3 (rocpd2csv) and pass the CSV files",
        )


# -- copying rows -------------------------------------------------------------------------


def _stage(
    con: sqlite3.Connection,
    profile: Profile,
    view: str,
    columns: dict[str, tuple[str, str]],
    table: str,
) -> None:
    """Copy the view's rows into the DuckDB temp table ``table``, a chunk of columns at a time."""
    duck = profile.con
    duck.execute(
        f"CREATE TEMP TABLE {table} ({', '.join(f'{c} {t}' for c, (t, _) in columns.items())})"
    )
    select = ", ".join(expr for _, expr in columns.values())
    cursor = con.execute(f"SELECT {select} FROM {view}")
    unnest = ", ".join(f"unnest(${i + 1})" for i in range(len(columns)))
    while batch := cursor.fetchmany(_CHUNK):
        columns_of_batch = [list(c) for c in zip(*batch, strict=True)]
        duck.execute(f"INSERT INTO {table} SELECT {unnest}", columns_of_batch)


def _insert_dispatches(profile: Profile, path: Path, role: str, fmt: str) -> int:
    duck = profile.con
    source, first = len(profile.inputs), profile.count("dispatches")
    nameless = profile.count(f"{_STAGE} WHERE raw IS NULL")
    if nameless:
        profile.warn("rocpd-nameless", f"{path}: {nameless} dispatch(es) without a kernel name")
    duck.execute(f"DELETE FROM {_STAGE} WHERE raw IS NULL")
    if not profile.count(_STAGE):
        raise InputError(
            str(path),
            "has no kernel dispatches in its kernels view",
            "re-run rocprofv3 with --kernel-trace (or --pmc) so that dispatches are recorded",
        )
    register_names(profile, path, _STAGE)
    duck.execute(
        f"""CREATE TEMP TABLE {_STAGE}_n AS SELECT row_number() OVER (ORDER BY guid, id) - 1
        AS k, n.name_id, s.* FROM {_STAGE} s JOIN names n ON n.raw_name = s.raw"""
    )
    duck.execute(
        f"""INSERT INTO dispatches (source, name_id, pid, device, dispatch_id, start_ns, end_ns)
        SELECT {source}, name_id, pid, device, dispatch_id, start_ns, end_ns
        FROM {_STAGE}_n ORDER BY k"""
    )
    duck.execute(
        f"""INSERT INTO launches (source, name_id, {_SHAPE}, wave_size, dispatches)
        SELECT {source}, name_id, {_SHAPE}, NULL, count(*) FROM {_STAGE}_n GROUP BY ALL"""
    )
    rows = profile.count("dispatches") - first
    profile.add_input(str(path), fmt, rows, role)
    return first


def _insert_counters(con: sqlite3.Connection, profile: Profile, path: Path, first: int) -> None:
    _stage(con, profile, "counters_collection", _COUNTER_COLUMNS, f"{_STAGE}_c")
    duck = profile.con
    duck.execute(
        f"""INSERT INTO counters SELECT {first} + d.k, c.counter, c.value
        FROM {_STAGE}_c c JOIN {_STAGE}_n d USING (guid, dispatch_id, agent)
        WHERE c.counter IS NOT NULL AND c.value IS NOT NULL ORDER BY 1, 2"""
    )
    orphans = profile.count(
        f"""{_STAGE}_c c WHERE NOT EXISTS (SELECT 1 FROM {_STAGE}_n d
        WHERE d.guid = c.guid AND d.dispatch_id = c.dispatch_id AND d.agent = c.agent)"""
    )
    if orphans:
        profile.warn(
            "rocpd-orphan-counters",
            f"{path}: {orphans} counter value(s) name a dispatch that the kernels view lacks; "
            "they are left out",
            orphans,
        )


def _insert_copies(con: sqlite3.Connection, profile: Profile, path: Path, fmt: str) -> None:
    _stage(con, profile, "memory_copies", _COPY_COLUMNS, f"{_STAGE}_m")
    rows = profile.count(f"{_STAGE}_m")
    if rows:
        source = len(profile.inputs)
        profile.con.execute(f"INSERT INTO copies SELECT {source}, * FROM {_STAGE}_m")
        profile.add_input(str(path), fmt, rows, "copies")


def read_top_kernels(con: sqlite3.Connection, profile: Profile, path: Path, *, role: str) -> int:
    """The ``top_kernels`` view as ``kernel_summary`` rows (its microseconds turned into ns:
    the view divides whole nanoseconds by 1000, so rounding recovers them exactly)."""
    rows = con.execute("SELECT name, total_calls, total_duration, average FROM top_kernels")
    summary = [
        (str(name), int(calls), float(round(total * 1000)), float(round(mean * 1000)))
        for name, calls, total, mean in rows
        if name is not None and calls is not None and total is not None and mean is not None
    ]
    source = len(profile.inputs)
    insert_kernel_summary(profile, source, [(*r, None, None, None) for r in summary])
    profile.add_input(str(path), Rocpd.name, len(summary), role)
    return len(summary)


# -- the run ------------------------------------------------------------------------------


def _run_info(con: sqlite3.Connection, profile: Profile) -> RunInfo:
    """The GPU the dispatches ran on (when they name one), else the first GPU agent."""
    used = {a for (a,) in profile.con.execute(f"SELECT DISTINCT agent FROM {_STAGE}_n").fetchall()}
    gpus = con.execute(
        """SELECT absolute_index, name, product_name, extdata FROM rocpd_info_agent
        WHERE type = 'GPU' ORDER BY absolute_index"""
    ).fetchall()
    if not gpus:
        return RunInfo(producer=Rocpd.producer)
    mine = [g for g in gpus if g[0] in used]
    _, arch, product, extdata = mine[0] if len(mine) == 1 else gpus[0]
    extra = _json(extdata)
    return RunInfo(
        producer=Rocpd.producer,
        gpu=product or None,
        arch=arch or None,
        compute_units=_count(extra.get("cu_count")),
        xcds=_count(extra.get("num_xcc")),
    )


def _json(text: object) -> dict[str, object]:
    try:
        value = json.loads(str(text)) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and value > 0 else None


class Rocpd(Reader):
    name = "rocpd"
    description = (
        "rocprofv3 rocpd SQLite database (kernels, counters, copies, agents; "
        "top_kernels as a cross-check)"
    )
    producer = "rocprofv3"
    priority = 20

    def detect(self, head: Head) -> bool:
        return head.kind == "sqlite" and is_rocpd(head.path)

    def role(self, head: Head) -> str:
        return DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: str) -> None:
        require_rocpd(path)
        with opened(path) as con:
            _check_schema(path, con)
            if role == KERNEL_SUMMARY:
                read_top_kernels(con, profile, path, role=role)
                profile.set_run(RunInfo(producer=self.producer))
                return
            try:
                self._read_all(con, profile, path, role)
            finally:
                for suffix in ("", "_n", "_c", "_m"):
                    profile.con.execute(f"DROP TABLE IF EXISTS {_STAGE}{suffix}")

    def _read_all(self, con: sqlite3.Connection, profile: Profile, path: Path, role: str) -> None:
        _stage(con, profile, "kernels", _KERNEL_COLUMNS, _STAGE)
        first = _insert_dispatches(profile, path, role, self.name)
        _insert_counters(con, profile, path, first)
        read_top_kernels(con, profile, path, role="cross-check")
        _insert_copies(con, profile, path, self.name)
        profile.set_run(_run_info(con, profile))
