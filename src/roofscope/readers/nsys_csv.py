"""Nsight Systems ``nsys stats --format csv`` reports (formats-nvidia-torch.md section 2.1).

Each report is recognised by its header, never by its file name. Columns are matched by the
name before the parentheses (``Total Time (ns)`` -> ``Total Time``, older ``Time(%)`` ->
``Time``; ``Avg``/``Average``, ``Min``/``Minimum``, ``Max``/``Maximum``), and the unit inside
them scales the values (``ns``, ``us``, ``ms``, ``s``; ``B``, ``KB``, ``MB``, ``GB`` with
MB = 10^6 bytes). A column without a unit is in ns, the nsys default ("All time values given
in nanoseconds by default"). Headers may be quoted or not; CRLF or LF; a BOM is dropped; the
``Processing [...] with [...]...`` / ``Generating ...`` lines nsys prints before a report on
stdout are skipped.

``cuda_gpu_kern_sum`` (older ``gpukernsum``) -> ``kernel_summary`` (role KERNEL_SUMMARY)
    ``Name`` -> name, ``Instances`` -> calls, ``Total Time`` -> total_ns, ``Avg`` -> mean_ns,
    ``Min`` -> min_ns, ``Max`` -> max_ns, ``StdDev`` -> std_ns. ``Time (%)`` is derived and
    ``Med`` has no column in the model: both are checked as numbers and not kept.
``cuda_gpu_trace`` -> ``dispatches`` + ``launches`` (role DISPATCHES), memory rows -> ``copies``
    Kernel rows: start_ns = ``Start``, end_ns = ``Start`` + ``Duration``, dispatch_id =
    ``CorrId``, device = the index in ``Device`` (``NVIDIA GeForce RTX 5090 (0)`` -> 0), pid =
    ``Pid`` where a report has it, else NULL. Launches: stream = ``Strm``, grid_size =
    ``GrdX*GrdY*GrdZ * BlkX*BlkY*BlkZ`` (total threads, as AMD's grid counts work-items),
    workgroup_size = ``BlkX*BlkY*BlkZ``, arch_vgpr = ``Reg/Trd``, lds_bytes = ``StcSMem`` +
    ``DymSMem`` (MB -> bytes; the CSV rounds to 1 kB, the SQLite export is exact), wave_size 32.
    Rows with empty grid columns or a ``[CUDA mem...`` name (memcpy, memset) are never kernel
    time: they go to ``copies`` (direction = ``Name``, src_agent = ``SrcMemKd``, dst_agent =
    ``DstMemKd``: memory kinds, as nsys names no agents). The GPU name is ``Device`` without
    its index.
``cuda_gpu_mem_time_sum`` (older ``gpumemtimesum``) -> ``activity_summary`` kind ``copy``
    ``Operation`` -> name, ``Count`` (older ``Operations``) -> calls, ``Total Time`` -> total_ns.
``cuda_api_sum`` (older ``cudaapisum``) -> ``activity_summary`` kind ``api``
    ``Name`` -> name, ``Num Calls`` -> calls, ``Total Time`` -> total_ns.

The two activity headers are taken from nsys's report scripts as pasted in public issues and
test files (nsys 2024.5 ``cuda_gpu_mem_time_sum``); no such file is in the corpus, so they are
unverified against a real file. ``cuda_gpu_mem_size_sum`` (bytes) is not read: the model's
``activity_summary`` has no byte column. A malformed row is an error naming its line.

The header matching (name before the parentheses, the unit's scale, summary roles by prefix)
is in :mod:`~roofscope.readers.nsys_columns`; this module holds the readers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from roofscope.errors import InputError
from roofscope.model import Profile, RunInfo
from roofscope.readers.duck_sql import read_csv
from roofscope.readers.nsys_columns import (
    REQUIRED,
    Column,
    Header,
    find_header,
    number,
    parse_field,
    summary_columns,
)
from roofscope.readers.registry import ACTIVITY, DISPATCHES, KERNEL_SUMMARY, Reader
from roofscope.readers.sniff import Head, read_text
from roofscope.readers.stats_csv import insert_activity, insert_kernel_summary

PRODUCER = "nsys"
# (raw name, calls, total_ns, mean_ns, min_ns, max_ns, std_ns) as insert_kernel_summary takes it
SummaryTuple = tuple[str, int, float, float | None, float | None, float | None, float | None]


@dataclass(frozen=True)
class SummaryRow:
    line: int
    name: str
    values: dict[str, float | None]  # scaled to ns


def summary_rows(path: Path, header: Header, columns: dict[str, Column]) -> Iterator[SummaryRow]:
    """The data rows after ``header``; an InputError naming the line for a malformed one."""
    reader = csv.reader(io.StringIO(read_text(path)))
    width = len(header.fields)
    try:
        for row in reader:
            line = reader.line_num
            if line <= header.line or not any(f.strip() for f in row):
                continue
            if len(row) != width:
                raise InputError(
                    str(path),
                    f"has {len(row)} fields where the header has {width}",
                    "pass the report as nsys stats wrote it",
                    line=line,
                )
            yield _summary_row(path, line, row, columns)
    except csv.Error as exc:
        raise InputError(
            str(path), f"is not valid CSV ({exc})", "pass the report as nsys wrote it"
        ) from None


def _summary_row(path: Path, line: int, row: list[str], columns: dict[str, Column]) -> SummaryRow:
    values: dict[str, float | None] = {}
    for key, col in columns.items():
        if key == "name":
            continue
        values[key] = number(path, line, col, row[col.index], required=key in REQUIRED)
    return SummaryRow(line, row[columns["name"].index], values)


class _Summary(Reader):
    """An nsys summary report: a header of summary columns with these calls/name columns."""

    producer = PRODUCER
    calls_columns: ClassVar[tuple[str, ...]]
    name_column: ClassVar[str]

    def columns(self, head: Head) -> tuple[Header, dict[str, Column]] | None:
        if head.kind != "text":
            return None
        header = find_header(head)
        columns = None if header is None else summary_columns(header)
        if header is None or columns is None:
            return None
        if columns["calls"].base not in self.calls_columns:
            return None
        return (header, columns) if columns["name"].base == self.name_column else None

    def detect(self, head: Head) -> bool:
        return self.columns(head) is not None

    def rows(self, path: Path, head: Head) -> list[SummaryRow]:
        found = self.columns(head)
        if found is None:
            raise InputError(
                str(path),
                f"does not have the header of {self.description}",
                "pass the CSV that nsys stats wrote for this report",
            )
        rows = list(summary_rows(path, *found))
        if not rows:
            raise InputError(str(path), "has no rows", "check that the profiled program ran")
        return rows


def _kernel_row(row: SummaryRow) -> SummaryTuple:
    v = row.values
    calls, total = int(v["calls"] or 0), float(v["total"] or 0.0)
    return (row.name, calls, total, v.get("mean"), v.get("min"), v.get("max"), v.get("std"))


class KernSum(_Summary):
    name = "nsys-kern-sum"
    description = "Nsight Systems cuda_gpu_kern_sum / gpukernsum CSV (per-kernel summary)"
    priority = 80
    calls_columns = ("Instances",)
    name_column = "Name"

    def role(self, head: Head) -> str:
        return KERNEL_SUMMARY

    def read(self, path: Path, head: Head, profile: Profile, *, role: str) -> None:
        rows = self.rows(path, head)
        source = len(profile.inputs)
        summary = [_kernel_row(r) for r in rows]
        insert_kernel_summary(profile, source, summary)
        profile.add_input(str(path), self.name, len(rows), role)
        profile.set_run(RunInfo(producer=self.producer))


class _Activity(_Summary):
    priority = 85
    kind: ClassVar[str]

    def role(self, head: Head) -> str:
        return ACTIVITY

    def read(self, path: Path, head: Head, profile: Profile, *, role: str) -> None:
        rows = self.rows(path, head)
        source = len(profile.inputs)
        activity = [
            (r.name, int(r.values["calls"] or 0), float(r.values["total"] or 0.0)) for r in rows
        ]
        insert_activity(profile, source, self.kind, activity)
        profile.add_input(str(path), self.name, len(rows), f"{self.kind}-summary")
        profile.set_run(RunInfo(producer=self.producer))


class MemTimeSum(_Activity):
    name = "nsys-mem-time-sum"
    description = "Nsight Systems cuda_gpu_mem_time_sum CSV (memory operations by time)"
    calls_columns = ("Count", "Operations")
    name_column = "Operation"
    kind = "copy"


class ApiSum(_Activity):
    name = "nsys-api-sum"
    description = "Nsight Systems cuda_api_sum CSV (CUDA API calls by time)"
    calls_columns = ("Num Calls",)
    name_column = "Name"
    kind = "api"


# -- cuda_gpu_trace ------------------------------------------------------------------------

_GRID = ("GrdX", "GrdY", "GrdZ")
_BLOCK = ("BlkX", "BlkY", "BlkZ")
_TRACE_REQUIRED = ("Start", "Duration", "Name", "Device", "Strm", *_GRID, *_BLOCK)
_INTEGER = {"CorrId", "CorrID", "Reg/Trd", "Ctx", "Strm", "Pid", "PID", *_GRID, *_BLOCK}
_DOUBLE = {"StcSMem", "DymSMem"}
_TRACE_STAGE = "nsys_trace"


@dataclass(frozen=True)
class TraceLayout:
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


def _check_rejects(profile: Profile, path: Path, tag: str, skip: int) -> None:
    """An InputError naming the first line read_csv could not take."""
    row = profile.con.execute(
        f"SELECT line, error_type, error_message FROM {tag}_errors ORDER BY line LIMIT 1"
    ).fetchone()
    if row is None:
        return
    line, kind, message = int(row[0]) + skip, str(row[1]), " ".join(str(row[2]).split())
    what = {
        "MISSING COLUMNS": "has too few fields",
        "TOO MANY COLUMNS": "has too many fields",
        "CAST": "has a field that is not a number",
    }.get(kind, "cannot be read as CSV")
    raise InputError(
        str(path), f"{what} ({message})", "pass the report as nsys stats wrote it", line=line
    )


def read_gpu_trace(
    profile: Profile, path: Path, header_line: int, layout: TraceLayout, *, fmt: str, role: str
) -> str | None:
    """Kernel rows into dispatches and launches, memory rows into copies; the GPU's name."""
    con, tag = profile.con, _TRACE_STAGE
    skip = header_line - 1
    try:
        con.execute(f"CREATE TEMP TABLE {tag} AS {_stage_sql(path, skip, layout, tag)}")
        _check_rejects(profile, path, tag, skip)
        _insert_kernels(profile, path, fmt, role)
        _insert_trace_copies(profile, path, fmt)
        return _gpu_name(profile, path)
    finally:
        for suffix in ("", "_errors", "_scans"):
            con.execute(f"DROP TABLE IF EXISTS {tag}{suffix}")


def _insert_kernels(profile: Profile, path: Path, fmt: str, role: str) -> None:
    con, tag, source = profile.con, _TRACE_STAGE, len(profile.inputs)
    names = con.execute(f"SELECT DISTINCT raw FROM {tag} WHERE NOT memop AND raw IS NOT NULL")
    kernels = sorted(str(r[0]) for r in names.fetchall())
    if not kernels:
        raise InputError(
            str(path),
            "has no kernel rows (header only, or memory operations only)",
            "check that the profiled program launched kernels (nsys profile --trace=cuda)",
        )
    profile.name_ids(kernels)
    nameless = profile.count(f"{tag} WHERE NOT memop AND raw IS NULL")
    if nameless:
        profile.warn("nsys-nameless", f"{path}: {nameless} kernel row(s) without a Name skipped")
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


def _insert_trace_copies(profile: Profile, path: Path, fmt: str) -> None:
    tag, source = _TRACE_STAGE, len(profile.inputs)
    profile.con.execute(
        f"""INSERT INTO copies SELECT {source}, pid, raw, src, dst, start_ns, end_ns
        FROM {tag} WHERE memop ORDER BY rowid"""
    )
    rows = profile.count(f"copies WHERE source = {source}")
    if rows:
        profile.add_input(str(path), fmt, rows, "copies")


def _gpu_name(profile: Profile, path: Path) -> str | None:
    """The GPU most kernel rows ran on (a warning when they name several)."""
    rows = profile.con.execute(
        f"""SELECT gpu, count(*) FROM {_TRACE_STAGE} WHERE NOT memop AND gpu <> ''
        GROUP BY gpu ORDER BY 2 DESC, 1"""
    ).fetchall()
    if len(rows) > 1:
        shown = ", ".join(f"{g} ({n} kernels)" for g, n in rows)
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

    def role(self, head: Head) -> str:
        return DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: str) -> None:
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
