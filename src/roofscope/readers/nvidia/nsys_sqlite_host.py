"""The host side of an Nsight Systems SQLite export: blocking and compiling runtime calls
(``CUPTI_ACTIVITY_KIND_RUNTIME``) and compilers' ``NVTX_EVENTS`` ranges -> ``host_ranges``;
graph launches -> ``graph_launches``; NVTX push/pop ranges and the launches inside them ->
``user_ranges``, ``range_launches``
(docs/formats/nsight-systems.md, "Host side of the SQLite export").

Names are classified once per distinct name (``readers/io/host_calls.py``), then only the rows
of those names are fetched, a batch at a time: a run of millions of launches costs one scan.
Kernels whose ``graphNodeId`` (or ``graphId``) is set were replayed by a graph: their
correlation id is a graph launch even where the runtime rows are absent.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.readers.io.batches import GRAPH_LAUNCH_COLUMNS, HOST_RANGE_COLUMNS, insert_rows
from roofscope.readers.io.host_calls import (
    AFTER_LAUNCH_KIND,
    DEVICE_SYNC,
    LAUNCH,
    call_kind,
    is_query,
    range_kind,
)
from roofscope.readers.io.stats_csv import insert_activity
from roofscope.readers.io.user_ranges import UserRange, around, insert

RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
GRAPH = "graph"  # the pseudo-kind of a graph launch call, never a host_ranges kind
# a runtime/driver call that replays a captured graph: its kernels carry its correlation id
GRAPH_LAUNCH = re.compile(r"^(?:cuda|cu)GraphLaunch(?:_v\d+)?$")
GRAPH_COLUMNS = ("graphNodeId", "graphId")
PUSH_POP = 59  # NVTX_EVENTS.eventType of a push/pop range (NvtxPushPopRange)
_CHUNK = 100_000
_IN = 500  # names per IN (...) list: far under SQLite's limit on parameters
_REMEDY = "export the report again with nsys export --type sqlite"


def columns(con: sqlite3.Connection, table: str) -> dict[str, str]:
    """The table's columns by lower-case name -> the name as declared."""
    return {str(r[1]).lower(): str(r[1]) for r in con.execute(f'PRAGMA table_info("{table}")')}


def read_host(con: sqlite3.Connection, profile: Profile, path: Path, source: int) -> None:
    """The host ranges and graph launches of the export, under the kernels' ``source``."""
    present = {str(n) for (n,) in con.execute("SELECT name FROM sqlite_master")}
    if "StringIds" not in present:
        return
    if RUNTIME in present:
        _read_runtime(con, profile, path, source)
        _read_sequence(con, profile, source)
    if NVTX in present:
        _read_nvtx(con, profile, path, source)
    if KERNEL in present:
        _graph_kernels(con, profile, source)
    if {NVTX, RUNTIME, KERNEL} <= present:
        _user_ranges(con, profile, path, source)


# -- runtime calls -------------------------------------------------------------------------


def _runtime_kinds(con: sqlite3.Connection, cols: dict[str, str]) -> dict[int, tuple[str, str]]:
    """nameId -> (kind, name) of the calls that block, compile or launch a graph."""
    rows = con.execute(
        f"""SELECT s.id, s.value FROM StringIds s WHERE s.id IN
        (SELECT DISTINCT "{cols["nameid"]}" FROM {RUNTIME})"""
    )
    kinds = {}
    for i, name in rows:
        text = str(name)
        kind = GRAPH if GRAPH_LAUNCH.match(text) else call_kind(text)
        if kind is not None and isinstance(i, int):
            kinds[i] = (kind, text)
    return kinds


def _read_runtime(con: sqlite3.Connection, profile: Profile, path: Path, source: int) -> None:
    cols = columns(con, RUNTIME)
    if not {"start", "end", "nameid"} <= cols.keys():
        return
    kinds = _runtime_kinds(con, cols)
    corr = f'"{cols["correlationid"]}"' if "correlationid" in cols else "NULL"
    select = f'SELECT rowid, "{cols["start"]}", "{cols["end"]}", {corr}, "{cols["nameid"]}"'
    for batch in _rows_of(con, f"{select} FROM {RUNTIME} WHERE", cols["nameid"], list(kinds)):
        ranges, graphs = [], []
        for _, start, end, correlation, name_id in batch:
            kind, name = kinds[int(str(name_id))]  # one of the keys the rows were chosen by
            if kind == GRAPH:
                graphs.append((source, correlation, start, end))
            else:
                ranges.append((source, kind, name[:200], start, end))
        try:
            _insert(profile, ranges, graphs)
        except (ValueError, TypeError, OverflowError):
            for rowid, start, end, correlation, _ in batch:
                _check(path, RUNTIME, rowid, start=start, end=end, correlationId=correlation)
            raise


def _read_sequence(con: sqlite3.Connection, profile: Profile, source: int) -> None:
    """The runtime calls per name (an "api" activity summary: what ``nsys stats``'
    cuda_api_sum gives, and the launch count) and the device/stream synchronisations that
    are the next call of their thread after a kernel launch (error queries between them
    skipped: ``host_calls.syncs_after_launch``, here by SQLite's LAG over each thread's calls
    in time order; only the matching rows are fetched)."""
    cols = columns(con, RUNTIME)
    if not {"start", "end", "nameid"} <= cols.keys():
        return
    start, end, name_id = (f'"{cols[c]}"' for c in ("start", "end", "nameid"))
    names = _names(con, name_id)
    totals = con.execute(
        f"SELECT {name_id}, count(*), sum({end} - {start}) FROM {RUNTIME} GROUP BY {name_id}"
    ).fetchall()
    summary = sorted((names.get(i, str(i)), int(n), float(t or 0)) for i, n, t in totals)
    insert_activity(profile, source, "api", summary)
    syncs = [i for i, n in names.items() if DEVICE_SYNC.match(n)]
    launches = [i for i, n in names.items() if LAUNCH.match(n)]
    if "globaltid" not in cols or not syncs or not launches:
        return
    queries = ", ".join(str(i) for i, n in names.items() if is_query(n))
    skip = f"WHERE {name_id} NOT IN ({queries})" if queries else ""  # NOT IN (NULL) keeps none
    rows = con.execute(
        f"""SELECT start, finish, id FROM (SELECT {start} AS start, {end} AS finish,
        {name_id} AS id, LAG({name_id}) OVER (PARTITION BY "{cols["globaltid"]}"
        ORDER BY {start}) AS prev FROM {RUNTIME} {skip})
        WHERE id IN ({", ".join(map(str, syncs))}) AND prev IN ({", ".join(map(str, launches))})"""
    ).fetchall()
    after = [(source, AFTER_LAUNCH_KIND, names[i][:200], a, b) for a, b, i in rows]
    insert_rows(profile, "host_ranges", HOST_RANGE_COLUMNS, after)


def _names(con: sqlite3.Connection, name_id: str) -> dict[int, str]:
    """The names of the runtime calls the export holds, by their StringIds id."""
    rows = con.execute(
        f"SELECT id, value FROM StringIds WHERE id IN (SELECT DISTINCT {name_id} FROM {RUNTIME})"
    )
    return {int(i): str(v) for i, v in rows if isinstance(i, int)}


def _rows_of(
    con: sqlite3.Connection, select: str, column: str, keys: Sequence[object]
) -> Iterator[list[tuple[object, ...]]]:
    """Batches of the rows whose ``column`` is one of ``keys``, ``_IN`` keys a query."""
    for at in range(0, len(keys), _IN):
        part = keys[at : at + _IN]
        cursor = con.execute(f'{select} "{column}" IN ({", ".join("?" * len(part))})', tuple(part))
        while batch := cursor.fetchmany(_CHUNK):
            yield batch


def _check(path: Path, table: str, rowid: object, **values: object) -> None:
    """An InputError where a time or correlation id is not a whole number (NULL allowed only
    for the correlation id)."""
    for label, value in values.items():
        if isinstance(value, int) and not isinstance(value, bool) and -(2**63) < value < 2**63:
            continue
        if value is None and label == "correlationId":
            continue
        raise InputError(
            str(path),
            f"{table} rowid {rowid}: {label} is {value!r:.40}, not a whole number within 64 bits",
            _REMEDY,
        )


def _insert(
    profile: Profile, ranges: Sequence[Sequence[object]], graphs: Sequence[Sequence[object]]
) -> None:
    insert_rows(profile, "host_ranges", HOST_RANGE_COLUMNS, ranges)
    insert_rows(profile, "graph_launches", GRAPH_LAUNCH_COLUMNS, graphs)


# -- NVTX ranges ---------------------------------------------------------------------------


def _read_nvtx(con: sqlite3.Connection, profile: Profile, path: Path, source: int) -> None:
    """The NVTX ranges a compiler names itself (nvFuser, TorchDynamo/Inductor) -> "compile"."""
    cols = columns(con, NVTX)
    if not {"start", "end"} <= cols.keys() or not {"text", "textid"} & cols.keys():
        return
    text = f't."{cols["text"]}"' if "text" in cols else "NULL"
    joined = f'LEFT JOIN StringIds s ON s.id = t."{cols["textid"]}"' if "textid" in cols else ""
    name = f"coalesce({text}, {'s.value' if joined else 'NULL'})"
    body = f'FROM {NVTX} t {joined} WHERE t."{cols["end"]}" IS NOT NULL'
    names = [str(n) for (n,) in con.execute(f"SELECT DISTINCT {name} {body}") if n is not None]
    wanted = [n for n in names if range_kind(n) is not None]
    select = f'SELECT * FROM (SELECT t.rowid, t."{cols["start"]}", t."{cols["end"]}", {name} AS n'
    for batch in _rows_of(con, f"{select} {body}) WHERE", "n", wanted):
        ranges = [(source, range_kind(str(n)), str(n)[:200], a, b) for _, a, b, n in batch]
        try:
            _insert(profile, ranges, [])
        except (ValueError, TypeError, OverflowError):
            for rowid, start, end, _ in batch:
                _check(path, NVTX, rowid, start=start, end=end)
            raise


# -- NVTX push/pop ranges as the user's ranges ---------------------------------------------


def _user_ranges(con: sqlite3.Connection, profile: Profile, path: Path, source: int) -> None:
    """Each NVTX push/pop range and the kernel launches (runtime calls whose correlation id a
    kernel carries) its thread made inside it -> ``user_ranges``, ``range_launches``."""
    nv, rt, kc = columns(con, NVTX), columns(con, RUNTIME), columns(con, KERNEL)
    needs = {"start", "end", "eventtype", "globaltid"}
    if not needs <= nv.keys() or not {"start", "globaltid", "correlationid"} <= rt.keys():
        return
    if "correlationid" not in kc or not {"text", "textid"} & nv.keys():
        return
    user: dict[int, list[UserRange]] = {}
    for rowid, start, end, name, tid in con.execute(_nvtx_sql(nv)):
        _check(path, NVTX, rowid, start=start, end=end, globalTid=tid)
        user.setdefault(tid, []).append((start, end, str(name), tid))
    ids: dict[UserRange, int] = {}
    held: list[tuple[int, int]] = []
    for tid, launches in _launches(con, rt, kc, list(user)).items():
        around(user[tid], sorted(launches), ids, held)
    insert(profile, source, ids, held)


def _nvtx_sql(nv: dict[str, str]) -> str:
    text = f't."{nv["text"]}"' if "text" in nv else "NULL"
    joined = f'LEFT JOIN StringIds s ON s.id = t."{nv["textid"]}"' if "textid" in nv else ""
    name = f"coalesce({text}, {'s.value' if joined else 'NULL'}, '')"
    return f"""SELECT t.rowid, t."{nv["start"]}", t."{nv["end"]}", {name}, t."{nv["globaltid"]}"
        FROM {NVTX} t {joined} WHERE t."{nv["eventtype"]}" = {PUSH_POP}
        AND t."{nv["end"]}" IS NOT NULL AND t."{nv["globaltid"]}" IS NOT NULL"""


def _launches(
    con: sqlite3.Connection, rt: dict[str, str], kc: dict[str, str], tids: list[int]
) -> dict[int, list[tuple[int, int]]]:
    """Per thread of ``tids``: (start, correlation id) of its calls that launched a kernel."""
    out: dict[int, list[tuple[int, int]]] = {}
    select = f"""SELECT "{rt["globaltid"]}", "{rt["start"]}", "{rt["correlationid"]}"
        FROM {RUNTIME} WHERE "{rt["correlationid"]}" IN
        (SELECT "{kc["correlationid"]}" FROM {KERNEL}) AND"""
    for batch in _rows_of(con, select, rt["globaltid"], tids):
        for tid, start, correlation in batch:
            if isinstance(start, int) and isinstance(correlation, int):
                out.setdefault(int(str(tid)), []).append((start, correlation))
    return out


# -- kernels replayed by graphs ------------------------------------------------------------


def _graph_kernels(con: sqlite3.Connection, profile: Profile, source: int) -> None:
    """The correlation ids of kernels a graph replayed (``graphNodeId`` or ``graphId`` set)
    that no graph launch call names: graph launches of unknown host times."""
    cols = columns(con, KERNEL)
    marks = [f'"{cols[c.lower()]}"' for c in GRAPH_COLUMNS if c.lower() in cols]
    if not marks or "correlationid" not in cols:
        return
    replayed = " OR ".join(f"coalesce({m}, 0) != 0" for m in marks)
    rows = con.execute(
        f'SELECT DISTINCT "{cols["correlationid"]}" FROM {KERNEL} WHERE {replayed}'
    ).fetchall()
    known = {
        int(c)
        for (c,) in profile.con.execute(
            "SELECT correlation FROM graph_launches WHERE source = ? AND correlation IS NOT NULL",
            [source],
        ).fetchall()
    }
    extra = [(source, c, None, None) for (c,) in rows if isinstance(c, int) and c not in known]
    _insert(profile, [], extra)
