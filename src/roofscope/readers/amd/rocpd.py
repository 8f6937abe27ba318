"""rocprofv3's rocpd SQLite database (``--output-format rocpd``;
docs/formats/rocprofv3.md, "rocpd database").

The physical tables carry a uuid suffix; only the un-suffixed views are queried, and the file
is opened read-only (``mode=ro``) and never changed. ``kernels`` gives the dispatches and
launches, ``counters_collection`` the counters (already summed over instances),
``memory_copies`` copies, ``top_kernels`` (in MICROseconds) a cross-check, or the kernel
summary with ``role=KERNEL_SUMMARY``, ``rocpd_info_agent`` the GPU, ``rocpd_region`` the
blocking and compiling host calls (``rocpd_host``); a ``schema_version`` other
than :data:`~roofscope.readers.amd.rocpd_schema.SUPPORTED_SCHEMAS` is refused.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from roofscope.errors import InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.model.words import count, plural
from roofscope.readers.amd.rocminfo import positive_int
from roofscope.readers.amd.rocpd_host import read_host
from roofscope.readers.amd.rocpd_schema import check_schema, is_rocpd, require_rocpd, require_views
from roofscope.readers.io.batches import SQL_TYPES, Kind, column, name_ids, registered
from roofscope.readers.io.no_kernels import rocpd_no_kernels
from roofscope.readers.io.sqlite_file import Value, opened, refuse_bad_value
from roofscope.readers.io.stats_csv import insert_kernel_summary
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

if TYPE_CHECKING:
    from roofscope.readers.io.batches import Column

_CHUNK = 100_000
_STAGE = "rocpd_k"

# column -> expression over the view; every column is a 64-bit integer except those in _TEXT
_KERNEL_COLUMNS = {
    "guid": "guid",
    "id": "id",
    "raw": "name",
    "pid": "pid",
    "tid": "tid",
    "agent": "agent_abs_index",
    "device": "agent_log_index",
    "dispatch_id": "dispatch_id",
    "queue": "queue_id",
    "stream": "stream_id",
    "start_ns": "start",
    "end_ns": '"end"',
    "grid_size": "grid_x * grid_y * grid_z",
    "workgroup_size": "workgroup_x * workgroup_y * workgroup_z",
    "lds_bytes": "lds_size",
    "scratch_bytes": "scratch_size",
    "arch_vgpr": "vgpr_count",
    "accum_vgpr": "accum_vgpr_count",
    "sgpr": "sgpr_count",
}
_COUNTER_COLUMNS = {
    "guid": "guid",
    "dispatch_id": "dispatch_id",
    "agent": "agent_abs_index",
    "counter": "counter_name",
    "value": "value",
}
_COPY_COLUMNS = {
    "pid": "pid",
    "direction": "name",
    "src_agent": "'Agent ' || src_agent_log_index",
    "dst_agent": "'Agent ' || dst_agent_log_index",
    "start_ns": "start",
    "end_ns": '"end"',
}
_TEXT = {"guid", "raw", "counter", "direction", "src_agent", "dst_agent"}
_FLOAT = {"value"}
_SHAPE = "tid, queue, stream, grid_size, workgroup_size, lds_bytes, scratch_bytes, arch_vgpr, "
_SHAPE += "accum_vgpr, sgpr"


# -- copying rows -------------------------------------------------------------------------


def _stage(
    con: sqlite3.Connection, profile: Profile, view: str, columns: dict[str, str], table: str
) -> None:
    """Copy the view's rows into the DuckDB temp table ``table``, a chunk at a time."""
    duck = profile.con
    duck.execute(
        f"CREATE TEMP TABLE {table} ({', '.join(f'{_name(c)} {_type(c)}' for c in columns)})"
    )
    cursor = con.execute(f"SELECT {', '.join(columns.values())} FROM {view}")
    while batch := cursor.fetchmany(_CHUNK):
        with registered(profile, "rocpd_batch", _arrays(profile, columns, batch)) as batch_con:
            batch_con.execute(f"INSERT INTO {table} SELECT * FROM rocpd_batch").fetchall()


def _arrays(
    profile: Profile, columns: dict[str, str], batch: list[tuple[object, ...]]
) -> dict[str, Column]:
    """A batch of rows as numpy columns (kernel names become name ids on the way)."""
    values = zip(*batch, strict=True)
    return {_name(c): _column(profile, c, v) for c, v in zip(columns, values, strict=True)}


def _name(column: str) -> str:
    return "name_id" if column == "raw" else column


def _kind(column: str) -> Kind:
    return "text" if column in _TEXT else "float" if column in _FLOAT else "int"


def _type(column: str) -> str:
    if column == "raw":  # staged as name ids
        return "BIGINT"
    return SQL_TYPES[_kind(column)]


def _column(profile: Profile, name: str, values: tuple[object, ...]) -> Column:
    return name_ids(profile, values) if name == "raw" else column(values, _kind(name))


def _read_kernels(
    con: sqlite3.Connection, profile: Profile, path: Path, role: Role, *, keys: bool
) -> tuple[int, set[int]]:
    """The kernels view into ``dispatches`` and ``launches``, in (guid, id) order, a chunk at
    a time; with ``keys`` the (guid, dispatch_id, agent) of each row into ``{_STAGE}_n`` for
    the counters. Returns the first new dispatch row and the agents the dispatches ran on."""
    duck = profile.con
    source, first = profile.begin_input(), profile.count("dispatches")
    shape = _SHAPE.split(", ")
    duck.execute(
        f"CREATE TEMP TABLE {_STAGE} (name_id INTEGER, {', '.join(f'{c} BIGINT' for c in shape)})"
    )
    duck.execute(
        f"CREATE TEMP TABLE {_STAGE}_n (k BIGINT, guid VARCHAR, dispatch_id BIGINT, agent BIGINT)"
    )
    select = ", ".join(_KERNEL_COLUMNS.values())
    cursor = con.execute(f"SELECT {select} FROM kernels ORDER BY guid, id")
    rows, nameless, agents = 0, 0, set[int]()
    while batch := cursor.fetchmany(_CHUNK):
        arrays = _arrays(profile, _KERNEL_COLUMNS, batch)
        named = ~np.ma.getmaskarray(arrays["name_id"])
        if not named.all():
            nameless += int((~named).sum())
            arrays = {c: a[named] for c, a in arrays.items()}
        arrays["k"] = np.arange(rows, rows + len(arrays["id"]), dtype=np.int64)
        rows += len(arrays["k"])
        agents.update(int(a) for a in np.unique(np.ma.compressed(arrays["agent"])))
        with registered(profile, "rocpd_batch", arrays) as batch_con:
            batch_con.execute(
                f"""INSERT INTO dispatches (source, name_id, pid, device, dispatch_id, start_ns,
                end_ns) SELECT {source}, name_id, pid, device, dispatch_id, start_ns, end_ns
                FROM rocpd_batch"""
            ).fetchall()
            batch_con.execute(
                f"INSERT INTO {_STAGE} SELECT name_id, {_SHAPE} FROM rocpd_batch"
            ).fetchall()
            if keys:
                batch_con.execute(
                    f"INSERT INTO {_STAGE}_n SELECT k, guid, dispatch_id, agent FROM rocpd_batch"
                ).fetchall()
    if nameless:
        profile.warn(
            "rocpd-nameless", f"{path}: {count(nameless, 'dispatch')} without a kernel name"
        )
    if not rows and not nameless:
        raise rocpd_no_kernels(con, str(path))
    if not rows:
        raise InputError(
            str(path),
            "has no kernel dispatches with a name in its kernels view",
            "pass the database as rocprofv3 wrote it",
        )
    duck.execute(
        f"""INSERT INTO launches (source, name_id, {_SHAPE}, wave_size, dispatches)
        SELECT {source}, name_id, {_SHAPE}, NULL, count(*) FROM {_STAGE} GROUP BY ALL"""
    )
    profile.add_input(str(path), Rocpd.name, rows, role, rank=_rank(con))
    profile.warn_deviceless(path, source, "their agent has no log index")
    return first, agents


def _refuse_bad_values(con: sqlite3.Connection, path: Path) -> None:
    """After a failed conversion, the error naming the view, row and value that caused it."""
    for view, columns in (
        ("kernels", _KERNEL_COLUMNS),
        ("counters_collection", _COUNTER_COLUMNS),
        ("memory_copies", _COPY_COLUMNS),
    ):
        values: list[Value] = [(e, e, _kind(c)) for c, e in columns.items()]
        values += [(f, f, "int") for _, e, _ in values if " * " in e for f in e.split(" * ")]
        remedy = "pass the database rocprofv3 wrote, unedited"
        refuse_bad_value(con, path, view, values, key="id", remedy=remedy)


def _has_counters(con: sqlite3.Connection) -> bool:
    """Whether any counter value was recorded (the counters_collection view costs a join of
    every dispatch even when there are none)."""
    return bool(con.execute("SELECT EXISTS (SELECT 1 FROM rocpd_pmc_event)").fetchone()[0])


def _insert_counters(con: sqlite3.Connection, profile: Profile, path: Path, first: int) -> None:
    _stage(con, profile, "counters_collection", _COUNTER_COLUMNS, f"{_STAGE}_c")
    duck = profile.con
    found = duck.execute(f"SELECT DISTINCT counter FROM {_STAGE}_c WHERE counter IS NOT NULL")
    profile.insert_counters(
        f"""SELECT {first} + d.k AS row_id, c.counter, c.value
        FROM {_STAGE}_c c JOIN {_STAGE}_n d USING (guid, dispatch_id, agent)
        WHERE c.counter IS NOT NULL AND c.value IS NOT NULL ORDER BY 1, 2""",
        sorted(str(r[0]) for r in found.fetchall()),
    )
    orphans = profile.count(
        f"""{_STAGE}_c c WHERE NOT EXISTS (SELECT 1 FROM {_STAGE}_n d
        WHERE d.guid = c.guid AND d.dispatch_id = c.dispatch_id AND d.agent = c.agent)"""
    )
    if orphans:
        profile.warn(
            "rocpd-orphan-counters",
            f"{path}: {count(orphans, 'counter value')} {plural(orphans, 'names', 'name')} a "
            f"dispatch that the kernels view lacks; {plural(orphans, 'it is', 'they are')} "
            "left out",
            orphans,
        )


def _insert_copies(con: sqlite3.Connection, profile: Profile, path: Path, fmt: str) -> None:
    _stage(con, profile, "memory_copies", _COPY_COLUMNS, f"{_STAGE}_m")
    rows = profile.count(f"{_STAGE}_m")
    if rows:
        source = profile.begin_input()
        profile.con.execute(f"INSERT INTO copies SELECT {source}, * FROM {_STAGE}_m")
        profile.add_input(str(path), fmt, rows, Role.COPIES)


def read_top_kernels(con: sqlite3.Connection, profile: Profile, path: Path, *, role: Role) -> int:
    """The ``top_kernels`` view as ``kernel_summary`` rows (its microseconds turned into ns:
    the view divides whole nanoseconds by 1000, so rounding recovers them exactly)."""
    rows = con.execute("SELECT name, total_calls, total_duration, average FROM top_kernels")
    summary = [
        (str(name), int(calls), float(round(total * 1000)), float(round(mean * 1000)))
        for name, calls, total, mean in rows
        if name is not None and calls is not None and total is not None and mean is not None
    ]
    source = profile.begin_input()
    insert_kernel_summary(profile, source, [(*r, None, None, None) for r in summary])
    profile.add_input(str(path), Rocpd.name, len(summary), role)
    return len(summary)


# -- the run ------------------------------------------------------------------------------


def run_info(con: sqlite3.Connection, used: set[int]) -> RunInfo:
    """The GPU the dispatches ran on (when they name one), else the first GPU agent."""
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
        compute_units=positive_int(extra.get("cu_count")),
        xcds=positive_int(extra.get("num_xcc")),
    )


# environment variables that hold the process's rank, by launcher (Open MPI, MPICH/Intel MPI,
# PMIx, Slurm, MVAPICH2, Cray PALS, torchrun)
RANK_VARIABLES = (
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
    "MV2_COMM_WORLD_RANK",
    "PALS_RANKID",
    "RANK",
)


def _rank(con: sqlite3.Connection) -> int | None:
    """The rank of the one process in the database, from its recorded environment."""
    rows = con.execute("SELECT environment FROM rocpd_info_process").fetchall()
    if len(rows) != 1:
        return None
    environment = _json(rows[0][0])
    for name in RANK_VARIABLES:
        value = environment.get(name)
        if isinstance(value, str | int) and str(value).isdigit():
            return int(value)
    return None


def _json(text: object) -> dict[str, object]:
    try:
        value = json.loads(str(text)) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class Rocpd(Reader):
    name = "rocpd"
    description = (
        "rocprofv3 rocpd SQLite database (kernels, counters, copies, agents; "
        "top_kernels as a cross-check)"
    )
    producer = "rocprofv3"
    priority = 20
    kinds = ("sqlite",)

    def detect(self, head: Head) -> bool:
        return head.kind == "sqlite" and is_rocpd(head.path)

    def explain_unknown(self, head: Head) -> None:
        require_rocpd(head.path)  # what any other SQLite file is (a rocprof v1 results.db, ...)

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        with opened(path) as con:
            require_views(path, con)
            check_schema(path, con)
            if role == Role.KERNEL_SUMMARY:
                read_top_kernels(con, profile, path, role=role)
                profile.set_run(RunInfo(producer=self.producer))
                return
            try:
                self._read_all(con, profile, path, role)
            except (OverflowError, ValueError, TypeError):
                _refuse_bad_values(con, path)
                raise
            finally:
                for suffix in ("", "_n", "_c", "_m"):
                    profile.con.execute(f"DROP TABLE IF EXISTS {_STAGE}{suffix}")

    def _read_all(self, con: sqlite3.Connection, profile: Profile, path: Path, role: Role) -> None:
        counted = _has_counters(con)
        source = profile.begin_input()  # the kernels' input: host regions are filed under it
        first, agents = _read_kernels(con, profile, path, role, keys=counted)
        read_host(con, profile, path, source)
        if counted:
            _insert_counters(con, profile, path, first)
        read_top_kernels(con, profile, path, role=Role.CROSS_CHECK)
        _insert_copies(con, profile, path, self.name)
        profile.set_run(run_info(con, agents))
