"""Nsight Systems ``nsys stats --format csv`` summary reports (docs/formats/nsight-systems.md,
"Stats reports").

Each report is recognised by its header, never by its file name: ``cuda_gpu_kern_sum``
(older ``gpukernsum``) is the kernel summary, ``cuda_gpu_mem_time_sum`` a copy summary and
``cuda_api_sum`` an API summary. Columns are matched by the name before the parentheses and
scaled by the unit inside them (ns when there is none). A malformed row is an error naming
its line.

The header matching (name before the parentheses, the unit's scale, summary roles by prefix)
is in :mod:`~roofscope.readers.nvidia.nsys_columns`; this module holds the summary readers, and
:mod:`~roofscope.readers.nvidia.nsys_trace` the ``cuda_gpu_trace`` reader.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import msgspec

from roofscope.errors import EmptyInput, InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role, summary_role
from roofscope.readers.io.stats_csv import insert_activity, insert_kernel_summary
from roofscope.readers.nvidia.nsys_columns import (
    REQUIRED,
    Column,
    Header,
    find_header,
    is_preamble,
    number,
    summary_columns,
)
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head, read_text

PRODUCER = "nsys"
# (raw name, calls, total_ns, mean_ns, min_ns, max_ns, std_ns) as insert_kernel_summary takes it
SummaryTuple = tuple[str, int, float, float | None, float | None, float | None, float | None]


class SummaryRow(msgspec.Struct, frozen=True):
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
            raise EmptyInput(str(path), "has no rows", "check that the profiled program ran")
        return rows


def _kernel_row(row: SummaryRow) -> SummaryTuple:
    v = row.values
    calls, total = int(v["calls"] or 0), float(v["total"] or 0.0)
    return (row.name, calls, total, v.get("mean"), v.get("min"), v.get("max"), v.get("std"))


_SKIPPED = re.compile(r"^SKIPPED: .* does not contain CUDA kernel data\.?\s*$")


def skipped(head: Head) -> str | None:
    """nsys's message when a cuda_gpu_kern_sum report found no kernels (``SKIPPED: ... does
    not contain CUDA kernel data.``), where a file holds it and nothing but progress lines."""
    if head.kind != "text" or head.size > 4096:  # a message, not a report: a few lines
        return None
    lines = [line for line in head.text.splitlines() if not is_preamble(line)]
    return lines[0] if len(lines) == 1 and _SKIPPED.match(lines[0]) else None


class KernSum(_Summary):
    name = "nsys-kern-sum"
    description = "Nsight Systems cuda_gpu_kern_sum / gpukernsum CSV (per-kernel summary)"
    priority = 80
    calls_columns = ("Instances",)
    name_column = "Name"

    def detect(self, head: Head) -> bool:
        return super().detect(head) or skipped(head) is not None

    def role(self, head: Head) -> Role:
        return Role.KERNEL_SUMMARY

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        if message := skipped(head):
            raise EmptyInput(
                str(path),
                f"holds nsys's message and no kernel summary: {message.strip()!r}",
                "re-run nsys profile with --trace=cuda over a range that launches kernels",
            )
        rows = self.rows(path, head)
        source = profile.begin_input()
        summary = [_kernel_row(r) for r in rows]
        medians = [r.values.get("med") for r in rows]
        insert_kernel_summary(profile, source, summary, medians=medians)
        profile.add_input(str(path), self.name, len(rows), role)
        profile.set_run(RunInfo(producer=self.producer))


class _Activity(_Summary):
    priority = 85
    kind: ClassVar[str]

    def role(self, head: Head) -> Role:
        return Role.ACTIVITY

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        rows = self.rows(path, head)
        source = profile.begin_input()
        activity = [
            (r.name, int(r.values["calls"] or 0), float(r.values["total"] or 0.0)) for r in rows
        ]
        insert_activity(profile, source, self.kind, activity)
        profile.add_input(str(path), self.name, len(rows), summary_role(self.kind))
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
