"""Nsight Systems ``nsys stats --report cuda_gpu_trace --format csv``
(docs/formats/nsight-systems.md, "cuda_gpu_trace"): one row per kernel launch, memcpy and
memset, read by DuckDB's CSV scanner.

Kernel rows become dispatches and launches; rows with empty grid columns or a
``[CUDA mem...`` name are copies, never kernel time. Units and header matching are those of
the summary reports (:mod:`~roofscope.readers.nvidia.nsys_columns`). A row DuckDB cannot parse is an
error naming its line and header field; a value no launch can have makes the derived columns
overflow, and the file is then scanned again in Python to name that line and field.
"""

from __future__ import annotations

import csv
import math
import re
from itertools import islice
from pathlib import Path

import msgspec

from roofscope.errors import InputError
from roofscope.model import words
from roofscope.model.duck import duckdb
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.io.batches import fits
from roofscope.readers.io.duck_sql import read_csv
from roofscope.readers.io.no_kernels import NSYS_WIDEN, held, no_kernel_ran
from roofscope.readers.io.stats_csv import PLAUSIBLE
from roofscope.readers.nvidia.nsys_columns import Column, find_header, parse_field
from roofscope.readers.nvidia.nsys_csv import PRODUCER
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

_GRID = ("GrdX", "GrdY", "GrdZ")
_BLOCK = ("BlkX", "BlkY", "BlkZ")
_TRACE_REQUIRED = ("Start", "Duration", "Name", "Device", "Strm", *_GRID, *_BLOCK)
_INTEGER = {"CorrId", "CorrID", "Reg/Trd", "Ctx", "Strm", "Pid", "PID", *_GRID, *_BLOCK}
_DOUBLE = {"StcSMem", "DymSMem"}
_TRACE_STAGE = "nsys_trace"


class TraceLayout(msgspec.Struct, frozen=True):
    """The cuda_gpu_trace columns by name (without unit), in file order."""

    columns: list[Column]

    def col(self, base: str) -> Column | None:
        return next((c for c in self.columns if c.base == base), None)

    def ref(self, *bases: str) -> str:
        """The staged column for the first of ``bases`` present, else NULL."""
        col = next((c for b in bases if (c := self.col(b)) is not None), None)
        return "NULL" if col is None else f"c{col.index}"

    def scaled(self, base: str) -> str:
        """A time column in whole ns."""
        col = self.col(base)
        if col is None:
            return "NULL"
        if col.scale == 1.0:
            return f"c{col.index}"
        return f"CAST(round(c{col.index} * {col.scale!r}) AS BIGINT)"

    def duck_type(self, col: Column) -> str:
        if col.base in ("Start", "Duration"):
            return "BIGINT" if col.scale == 1.0 else "DOUBLE"
        return "BIGINT" if col.base in _INTEGER else "DOUBLE" if col.base in _DOUBLE else "VARCHAR"


def trace_layout(fields: list[str]) -> TraceLayout | None:
    """The layout when ``fields`` are a cuda_gpu_trace header (units known where used)."""
    columns = [parse_field(i, f) for i, f in enumerate(fields)]
    layout = TraceLayout(columns)
    if any(layout.col(b) is None for b in _TRACE_REQUIRED):
        return None
    timed = [layout.col(b) for b in ("Start", "Duration", *_DOUBLE)]
    return layout if all(c is None or c.scale is not None for c in timed) else None


def _lds(layout: TraceLayout) -> str:
    parts = [
        f"coalesce(c{c.index}, 0) * {c.scale!r}"
        for b in ("StcSMem", "DymSMem")
        if (c := layout.col(b)) is not None
    ]
    return f"CAST(round({' + '.join(parts)}) AS BIGINT)" if parts else "NULL"


def _stage_sql(path: Path, skip: int, layout: TraceLayout, tag: str) -> str:
    """SELECT the model's view of every row of the trace from read_csv."""
    columns = [(f"c{c.index}", layout.duck_type(c)) for c in layout.columns]
    device = layout.ref("Device")
    grid = " * ".join(layout.ref(b) for b in (*_GRID, *_BLOCK))
    block = " * ".join(layout.ref(b) for b in _BLOCK)
    name = layout.ref("Name")
    start, duration = layout.scaled("Start"), layout.scaled("Duration")
    return f"""SELECT {name} AS raw, {start} AS start_ns, {start} + {duration} AS end_ns,
        {layout.ref("CorrId", "CorrID")} AS dispatch_id, {layout.ref("Pid", "PID")} AS pid,
        TRY_CAST(regexp_extract({device}, '\\((\\d+)\\)\\s*$', 1) AS INTEGER) AS device,
        trim(regexp_replace({device}, '\\s*\\(\\d+\\)\\s*$', '')) AS gpu,
        {layout.ref("Strm")} AS stream, {grid} AS grid_size, {block} AS workgroup_size,
        {layout.ref("Reg/Trd")} AS arch_vgpr, {_lds(layout)} AS lds_bytes,
        ({layout.ref("GrdX")} IS NULL OR starts_with({name}, '[CUDA mem')) AS memop,
        {layout.ref("SrcMemKd")} AS src, {layout.ref("DstMemKd")} AS dst
        FROM {read_csv(path, columns, skip=skip, nulls=("",), rejects=tag)}"""


def _check_rejects(profile: Profile, path: Path, tag: str, skip: int, layout: TraceLayout) -> None:
    """An InputError naming the first line read_csv could not take (and its header field)."""
    row = profile.con.execute(
        f"SELECT line, error_type, error_message FROM {tag}_errors ORDER BY line LIMIT 1"
    ).fetchone()
    if row is None:
        return
    line, kind, message = int(row[0]) + skip, str(row[1]), " ".join(str(row[2]).split())
    fields = {f"c{c.index}": c.field for c in layout.columns}
    message = _STAGED.sub(lambda m: f'column "{fields.get(m[1], m[1])}"', message)
    what = {
        "MISSING COLUMNS": "has too few fields",
        "TOO MANY COLUMNS": "has too many fields",
        "CAST": "has a field that is not a number",
    }.get(kind, "cannot be read as CSV")
    raise InputError(
        str(path), f"{what} ({message})", "pass the report as nsys stats wrote it", line=line
    )


_STAGED = re.compile(r'column "(c\d+)"')


def _locate_overflow(path: Path, header_line: int, layout: TraceLayout) -> None:
    """An InputError naming the first row whose value no launch can have (DuckDB's overflow
    message names neither line nor field); returns when no row has one."""
    checked = [c for c in layout.columns if c.base in _DOUBLE or c.base in ("Start", "Duration")]
    threads = [c for b in (*_GRID, *_BLOCK) if (c := layout.col(b)) is not None]
    with path.open(encoding="utf-8", errors="replace", newline="") as file:
        rows = csv.reader(islice(file, header_line, None))
        for row in rows:
            line = header_line + rows.line_num
            for col in checked:
                value = _field(row, col)
                if not abs(value * (col.scale or 1.0)) <= PLAUSIBLE:
                    _refuse(
                        path,
                        line,
                        col,
                        row,
                        f"beyond any time or size nsys writes ({words.sig(PLAUSIBLE)})",
                    )
            product = math.prod(_field(row, c) for c in threads)
            if not fits(product):
                col = max(threads, key=lambda c: abs(_field(row, c)))
                _refuse(path, line, col, row, "making more threads than one launch can hold (2^63)")


def _field(row: list[str], col: Column) -> float:
    text = row[col.index].strip() if col.index < len(row) else ""
    try:
        return float(text) if text else 0.0
    except ValueError:
        return 0.0  # DuckDB's own check names a field that is not a number


def _refuse(path: Path, line: int, col: Column, row: list[str], what: str) -> None:
    raise InputError(
        str(path),
        f"column {col.field!r} holds {row[col.index].strip()[:40]!r}, {what}",
        "pass the report as nsys stats wrote it",
        line=line,
    )


def read_gpu_trace(
    profile: Profile, path: Path, header_line: int, layout: TraceLayout, *, fmt: str, role: Role
) -> str | None:
    """Kernel rows into dispatches and launches, memory rows into copies; the GPU's name."""
    con, tag = profile.con, _TRACE_STAGE
    skip = header_line - 1
    try:
        try:
            con.execute(f"CREATE TEMP TABLE {tag} AS {_stage_sql(path, skip, layout, tag)}")
        except (duckdb.ConversionException, duckdb.OutOfRangeException):
            _locate_overflow(path, header_line, layout)
            raise
        _check_rejects(profile, path, tag, skip, layout)
        _insert_kernels(profile, path, fmt, role)
        _insert_trace_copies(profile, path, fmt)
        return _gpu_name(profile, path)
    finally:
        for suffix in ("", "_errors", "_scans"):
            con.execute(f"DROP TABLE IF EXISTS {tag}{suffix}")


def _insert_kernels(profile: Profile, path: Path, fmt: str, role: Role) -> None:
    con, tag, source = profile.con, _TRACE_STAGE, profile.begin_input()
    names = con.execute(f"SELECT DISTINCT raw FROM {tag} WHERE NOT memop AND raw IS NOT NULL")
    kernels = sorted(str(r[0]) for r in names.fetchall())
    if not kernels and (memops := profile.count(f"{tag} WHERE memop")):
        raise no_kernel_ran(str(path), held([(memops, "memory operations")]), NSYS_WIDEN)
    if not kernels:
        raise InputError(
            str(path),
            "has no kernel rows (header only)",
            "check that the profiled program launched kernels (nsys profile --trace=cuda)",
        )
    profile.name_ids(kernels)
    nameless = profile.count(f"{tag} WHERE NOT memop AND raw IS NULL")
    if nameless:
        profile.warn(
            "nsys-nameless", f"{path}: {words.count(nameless, 'kernel row')} without a Name skipped"
        )
    con.execute(
        f"""INSERT INTO dispatches (source, name_id, pid, device, dispatch_id, start_ns, end_ns)
        SELECT {source}, n.name_id, t.pid, t.device, t.dispatch_id, t.start_ns, t.end_ns
        FROM {tag} t JOIN names n ON n.raw_name = t.raw WHERE NOT t.memop ORDER BY t.rowid"""
    )
    shape = "stream, grid_size, workgroup_size, lds_bytes, arch_vgpr"
    con.execute(
        f"""INSERT INTO launches (source, name_id, {shape}, wave_size, dispatches)
        SELECT {source}, n.name_id, {", ".join(f"t.{c}" for c in shape.split(", "))}, 32,
        count(*) FROM {tag} t JOIN names n ON n.raw_name = t.raw WHERE NOT t.memop
        GROUP BY ALL"""
    )
    rows = profile.count(f"dispatches WHERE source = {source}")
    profile.add_input(str(path), fmt, rows, role)
    profile.warn_deviceless(path, source, "their Device does not end in a number in brackets")


def _insert_trace_copies(profile: Profile, path: Path, fmt: str) -> None:
    tag, source = _TRACE_STAGE, profile.begin_input()
    profile.con.execute(
        f"""INSERT INTO copies SELECT {source}, pid, raw, src, dst, start_ns, end_ns
        FROM {tag} WHERE memop ORDER BY rowid"""
    )
    rows = profile.count(f"copies WHERE source = {source}")
    if rows:
        profile.add_input(str(path), fmt, rows, Role.COPIES)


def _gpu_name(profile: Profile, path: Path) -> str | None:
    """The GPU most kernel rows ran on (a warning when they name several)."""
    rows = profile.con.execute(
        f"""SELECT gpu, count(*) FROM {_TRACE_STAGE} WHERE NOT memop AND gpu <> ''
        GROUP BY gpu ORDER BY 2 DESC, 1"""
    ).fetchall()
    if len(rows) > 1:
        shown = ", ".join(f"{g} ({words.count(n, 'kernel')})" for g, n in rows)
        profile.warn("nsys-several-gpus", f"{path}: kernels ran on several GPU models: {shown}")
    return str(rows[0][0]) if rows else None


class GpuTrace(Reader):
    name = "nsys-gpu-trace"
    description = "Nsight Systems cuda_gpu_trace CSV (kernel launches; memcpy/memset as copies)"
    producer = PRODUCER
    priority = 15

    def detect(self, head: Head) -> bool:
        header = find_header(head) if head.kind == "text" else None
        return header is not None and trace_layout(header.fields) is not None

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        header = find_header(head)
        layout = None if header is None else trace_layout(header.fields)
        if header is None or layout is None:
            raise InputError(
                str(path),
                "does not have the header of an nsys cuda_gpu_trace report",
                "pass the CSV that `nsys stats --report cuda_gpu_trace` wrote",
            )
        gpu = read_gpu_trace(profile, path, header.line, layout, fmt=self.name, role=role)
        profile.set_run(RunInfo(producer=self.producer, gpu=gpu))
