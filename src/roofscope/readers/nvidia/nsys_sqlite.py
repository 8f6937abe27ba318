"""Nsight Systems SQLite export (``nsys export --type sqlite``;
docs/formats/nsight-systems.md, "SQLite export").

The file is opened read-only (``mode=ro``) and never changed; every column is found by name
with ``PRAGMA table_info`` (case-insensitively), never by position, because the schema
changes between nsys versions. ``CUPTI_ACTIVITY_KIND_KERNEL`` gives the dispatches and
launches, ``CUPTI_ACTIVITY_KIND_MEMCPY``/``_MEMSET`` copies (never kernel time),
``TARGET_INFO_GPU`` the GPU and ``EXPORT_META_DATA`` the nsys version; the page lists every
column's mapping. The host side (runtime calls, NVTX ranges, graph launches): ``nsys_sqlite_host``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from roofscope.errors import InputError
from roofscope.model.duck import duckdb
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.model.words import count
from roofscope.readers.io.batches import column, registered
from roofscope.readers.io.no_kernels import (
    NSYS_CUDA_TABLES,
    NSYS_LOST,
    NSYS_WIDEN,
    kernels_not_recorded,
    no_kernel_ran,
    nsys_held,
    nsys_launches,
)
from roofscope.readers.io.sqlite_file import Value, opened, refuse_bad_value
from roofscope.readers.nvidia.nsys_sqlite_host import read_host
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

if TYPE_CHECKING:
    from roofscope.readers.io.batches import Column

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
META_TABLES = ("EXPORT_META_DATA", "META_DATA_EXPORT")
PRODUCT = "NVIDIA Nsight Systems"
_CHUNK = 100_000
_STAGE = "nsys_k"
_PID = "/ 16777216 % 16777216"  # globalPid / 0x1000000 % 0x1000000

# CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind, for exports without ENUM tables
MEMCPY_KINDS = {
    0: "Unknown",
    1: "Host-to-Device",
    2: "Device-to-Host",
    3: "Host-to-Array",
    4: "Array-to-Host",
    5: "Array-to-Array",
    6: "Array-to-Device",
    7: "Device-to-Array",
    8: "Device-to-Device",
    9: "Host-to-Host",
    10: "Peer-to-Peer",
}
MEMORY_KINDS = {
    0: "Unknown",
    1: "Pageable",
    2: "Pinned",
    3: "Device",
    4: "Array",
    5: "Managed",
    6: "Device Static",
    7: "Managed Static",
}
_NAMES = ("demangledName", "shortName", "mangledName")
_SHAPE = ("stream", "grid_size", "workgroup_size", "lds_bytes", "arch_vgpr")


# -- schema by name ----------------------------------------------------------------------


def tables(con: sqlite3.Connection) -> set[str]:
    rows = con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    return {str(n) for (n,) in rows}


class Table(msgspec.Struct, frozen=True):
    """A table's columns by lower-case name -> the name as declared."""

    name: str
    columns: dict[str, str]

    @classmethod
    def of(cls, con: sqlite3.Connection, name: str) -> Table:
        info = con.execute(f'PRAGMA table_info("{name}")').fetchall()
        return cls(name, {str(r[1]).lower(): str(r[1]) for r in info})

    def has(self, *names: str) -> bool:
        return all(n.lower() in self.columns for n in names)

    def q(self, name: str, alias: str = "t") -> str:
        """``alias."Declared"`` for a column, NULL when the table lacks it."""
        found = self.columns.get(name.lower())
        return f'{alias}."{found}"' if found else "NULL"

    def product(self, names: Iterable[str]) -> str:
        return " * ".join(self.q(n) for n in names)


def meta(con: sqlite3.Connection, present: set[str]) -> dict[str, str]:
    """The export's metadata rows (name -> value), from whichever table this version has."""
    for name in META_TABLES:
        if name in present:
            table = Table.of(con, name)
            if table.has("name", "value"):
                rows = con.execute(f"SELECT {table.q('name')}, {table.q('value')} FROM {name} t")
                return {str(k): str(v) for k, v in rows}
    return {}


def is_nsys(path: Path) -> bool:
    """Whether ``path`` is an nsys export: metadata naming Nsight Systems, or the kernel
    table with its string table."""
    try:
        with opened(path) as con:
            present = tables(con)
            if PRODUCT in meta(con, present).values():
                return True
            return {KERNEL, "StringIds"} <= present
    except InputError:
        return False


# -- kernels -------------------------------------------------------------------------------


def _kernel_sql(table: Table) -> str:
    names = [n for n in _NAMES if table.has(n)]
    joins = " ".join(
        f"LEFT JOIN StringIds s{i} ON s{i}.id = {table.q(n)}" for i, n in enumerate(names)
    )
    name = f"coalesce({', '.join(f's{i}.value' for i in range(len(names)))})"
    lds = f"coalesce({table.q('staticSharedMemory')}, 0) + "
    lds += f"coalesce({table.q('dynamicSharedMemory')}, 0)"
    return f"""SELECT {name}, {table.q("start")}, {table.q("end")}, {table.q("deviceId")},
        {table.q("correlationId")}, {table.q("globalPid")} {_PID}, {table.q("streamId")},
        {table.product(("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"))},
        {table.product(("blockX", "blockY", "blockZ"))}, {lds},
        {table.q("registersPerThread")}
        FROM {KERNEL} t {joins} ORDER BY {table.q("start")}"""


_KERNEL_COLUMNS = (
    "name_id",
    "start_ns",
    "end_ns",
    "device",
    "dispatch_id",
    "pid",
    *_SHAPE,
)


def _require_kernels(con: sqlite3.Connection, path: Path, present: set[str]) -> Table:
    """The kernel table; an error telling a capture of no kernel from one without CUDA."""
    if KERNEL not in present and not present & set(NSYS_CUDA_TABLES):
        raise InputError(
            str(path),
            f"is an Nsight Systems export without the {KERNEL} table, nor any other that "
            "CUDA tracing writes: CUDA was not traced",
            "re-run nsys profile with --trace=cuda so that kernels are recorded",
        )
    if KERNEL not in present or not con.execute(f"SELECT 1 FROM {KERNEL} LIMIT 1").fetchall():
        if launches := nsys_launches(con, present):
            raise kernels_not_recorded(
                str(path), f"its CUDA API trace holds {count(launches, 'kernel launch')}", NSYS_LOST
            )
        raise no_kernel_ran(str(path), nsys_held(con, present), NSYS_WIDEN)
    table = Table.of(con, KERNEL)
    missing = [c for c in ("start", "end") if not table.has(c)]
    if not any(table.has(n) for n in _NAMES):
        missing.append("demangledName|shortName|mangledName")
    if "StringIds" not in present:
        missing.append("StringIds table")
    if missing:
        raise InputError(
            str(path),
            f"has a {KERNEL} table without {', '.join(missing)}",
            "export the report again with nsys export --type sqlite",
        )
    return table


_KERNEL_NUMBERS = (
    "start", "end", "deviceId", "correlationId", "globalPid", "streamId", "registersPerThread",
    "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
    "staticSharedMemory", "dynamicSharedMemory",
)  # fmt: skip
_COPY_NUMBERS = ("start", "end", "globalPid", "copyKind", "srcKind", "dstKind", "memKind")
_REEXPORT = "export the report again with nsys export --type sqlite"


def _numbers(table: Table, names: Iterable[str]) -> list[Value]:
    """The columns among ``names`` that ``table`` has, as values that must be whole numbers;
    for the kernel table also the thread count and shared memory summed from them."""
    values: list[Value] = [(n, table.q(n), "int") for n in names if table.has(n)]
    if table.name == KERNEL:
        threads = ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")
        lds = f"{table.q('staticSharedMemory')} + {table.q('dynamicSharedMemory')}"
        values += [
            ("*".join(threads), table.product(threads), "int"),
            ("staticSharedMemory+dynamicSharedMemory", lds, "int"),
        ]
    return values


def _kernel_batch(profile: Profile, batch: list[tuple[object, ...]]) -> dict[str, Column]:
    named = [r for r in batch if r[0] is not None]
    ids = profile.name_ids(sorted({str(r[0]) for r in named}))
    cols: list[tuple[object, ...]] = (
        list(zip(*named, strict=True)) if named else [() for _ in _KERNEL_COLUMNS]
    )
    cols[0] = tuple(ids[str(v)] for v in cols[0])
    return {c: column(v, "int") for c, v in zip(_KERNEL_COLUMNS, cols, strict=True)}


def read_kernels(
    con: sqlite3.Connection, profile: Profile, path: Path, table: Table, role: Role
) -> dict[int, int]:
    """Kernel rows into dispatches and launches; kernels per device id."""
    duck, source = profile.con, profile.begin_input()
    duck.execute(f"CREATE TEMP TABLE {_STAGE} (name_id INTEGER, {' BIGINT, '.join(_SHAPE)} BIGINT)")
    cursor = con.execute(_kernel_sql(table))
    rows, nameless, devices = 0, 0, dict[int, int]()
    while batch := cursor.fetchmany(_CHUNK):
        arrays = _kernel_batch(profile, batch)
        nameless += len(batch) - len(arrays["name_id"])
        rows += len(arrays["name_id"])
        for d in np.ma.compressed(arrays["device"]).tolist():
            devices[int(d)] = devices.get(int(d), 0) + 1
        _insert_batch(profile, source, arrays)
    if nameless:
        profile.warn("nsys-nameless", f"{path}: {count(nameless, 'kernel')} without a name skipped")
    if not rows:
        raise InputError(
            str(path),
            f"has no kernel rows in {KERNEL}",
            "check that the profiled program launched kernels while nsys traced CUDA",
        )
    shape = ", ".join(_SHAPE)
    duck.execute(
        f"""INSERT INTO launches (source, name_id, {shape}, wave_size, dispatches)
        SELECT {source}, name_id, {shape}, 32, count(*) FROM {_STAGE} GROUP BY ALL"""
    )
    profile.add_input(str(path), NsysSqlite.name, rows, role)
    profile.warn_deviceless(path, source, "their deviceId is empty")
    return devices


def _insert_batch(profile: Profile, source: int, arrays: dict[str, Column]) -> None:
    with registered(profile, "nsys_batch", arrays) as duck:
        duck.execute(
            f"""INSERT INTO dispatches (source, name_id, pid, device, dispatch_id, start_ns,
            end_ns) SELECT {source}, name_id, pid, device, dispatch_id, start_ns, end_ns
            FROM nsys_batch"""
        ).fetchall()
        duck.execute(
            f"INSERT INTO {_STAGE} SELECT name_id, {', '.join(_SHAPE)} FROM nsys_batch"
        ).fetchall()


# -- copies --------------------------------------------------------------------------------


def _labels(con: sqlite3.Connection, present: set[str], enum: str) -> dict[int, str] | None:
    if enum not in present:
        return None
    table = Table.of(con, enum)
    label = "label" if table.has("label") else "name"
    if not table.has("id", label):
        return None
    rows = con.execute(f"SELECT {table.q('id')}, {table.q(label)} FROM {enum} t")
    return {int(i): str(v) for i, v in rows if i is not None}


def _label(labels: dict[int, str], code: object) -> str | None:
    if code is None:
        return None
    return labels.get(int(str(code)), f"kind {code}")


def _copy_rows(con: sqlite3.Connection, present: set[str], source: int) -> list[tuple[object, ...]]:
    """(source, pid, direction, src, dst, start, end) of every memcpy and memset."""
    memory = _labels(con, present, "ENUM_CUDA_MEM_KIND") or MEMORY_KINDS
    operations = _labels(con, present, "ENUM_CUDA_MEMCPY_OPER") or MEMCPY_KINDS
    out: list[tuple[object, ...]] = []
    for name, kind, src, dst in (
        (MEMCPY, "copyKind", "srcKind", "dstKind"),
        (MEMSET, None, "memKind", None),
    ):
        if name not in present:
            continue
        t = Table.of(con, name)
        select = f"""SELECT {t.q("globalPid")} {_PID}, {t.q(kind) if kind else "NULL"},
            {t.q(src)}, {t.q(dst) if dst else "NULL"}, {t.q("start")}, {t.q("end")}
            FROM {name} t ORDER BY {t.q("start")}"""
        for pid, op, s, d, start, end in con.execute(select):
            direction = f"[CUDA memcpy {_label(operations, op)}]" if kind else "[CUDA memset]"
            out.append((source, pid, direction, _label(memory, s), _label(memory, d), start, end))
    return out


def read_copies(con: sqlite3.Connection, profile: Profile, path: Path, present: set[str]) -> None:
    source = profile.begin_input()
    rows = _copy_rows(con, present, source)
    if rows:
        profile.con.executemany("INSERT INTO copies VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        profile.add_input(str(path), NsysSqlite.name, len(rows), Role.COPIES)


# -- the run -------------------------------------------------------------------------------


def run_info(con: sqlite3.Connection, present: set[str], devices: dict[int, int]) -> RunInfo:
    """The GPU most kernels ran on, and the nsys version that wrote the export."""
    version = meta(con, present).get("EXPORT_PRODUCT_VERSION")
    run = RunInfo(producer=NsysSqlite.producer, producer_version=version)
    if "TARGET_INFO_GPU" not in present:
        return run
    t = Table.of(con, "TARGET_INFO_GPU")
    gpus = con.execute(
        f"""SELECT {t.q("id")}, {t.q("name")}, {t.q("computeMajor")}, {t.q("computeMinor")},
        {t.q("smCount")} FROM TARGET_INFO_GPU t ORDER BY 1"""
    ).fetchall()
    busiest = sorted(devices, key=lambda d: (-devices[d], d))
    mine = [g for d in busiest for g in gpus if g[0] == d] or gpus
    if not mine:
        return run
    _, name, major, minor, sms = mine[0]
    arch = f"sm_{major}{minor}" if major is not None and minor is not None else None
    count = sms if isinstance(sms, int) and sms > 0 else None
    return RunInfo(
        producer=run.producer,
        producer_version=version,
        gpu=str(name) if name else None,
        arch=arch,
        compute_units=count,
    )


class NsysSqlite(Reader):
    name = "nsys-sqlite"
    description = (
        "Nsight Systems SQLite export (CUDA kernels, memcpy/memset as copies, GPUs, "
        "blocking and compiling host calls, graph launches)"
    )
    producer = "nsys"
    priority = 20
    kinds = ("sqlite",)

    def detect(self, head: Head) -> bool:
        return head.kind == "sqlite" and is_nsys(head.path)

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        with opened(path) as con:
            present = tables(con)
            table = _require_kernels(con, path, present)
            source = profile.begin_input()  # the kernels' input: host rows are filed under it
            try:
                devices = read_kernels(con, profile, path, table, role)
            except (OverflowError, ValueError, TypeError):
                values = _numbers(table, _KERNEL_NUMBERS)
                refuse_bad_value(con, path, KERNEL, values, key="rowid", remedy=_REEXPORT)
                raise
            finally:
                profile.con.execute(f"DROP TABLE IF EXISTS {_STAGE}")
            read_host(con, profile, path, source)
            try:
                read_copies(con, profile, path, present)
            except (duckdb.Error, OverflowError, ValueError, TypeError):
                for name in sorted(present & {MEMCPY, MEMSET}):
                    values = _numbers(Table.of(con, name), _COPY_NUMBERS)
                    refuse_bad_value(con, path, name, values, key="rowid", remedy=_REEXPORT)
                raise
            profile.set_run(run_info(con, present, devices))
