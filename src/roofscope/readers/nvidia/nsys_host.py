"""Nsight Systems ``nsys stats --format csv`` traces of what the host did
(docs/formats/nsight-systems.md, "Host traces"): ``cuda_api_trace`` (one row per CUDA
runtime/driver call) and ``nvtx_pushpop_trace`` (one row per NVTX push/pop range).

Blocking calls become ``host_ranges`` of kind "sync", module loads and runtime compiles of
kind "compile" (readers/io/host_calls.py), the device/stream synchronisations that directly
follow a launch on the same thread of kind "sync-after-launch", and the calls per name an
"api" activity summary; compiler NVTX ranges (nvFuser, Dynamo/Inductor) become "compile"
ranges. Times share the ``cuda_gpu_trace``'s clock (one session); the files of one export
are one run (readers/runs.py groups them by their prefix).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import msgspec

from roofscope.errors import EmptyInput, InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.io import host_calls
from roofscope.readers.io.stats_csv import insert_activity
from roofscope.readers.nvidia.nsys_columns import Column, Header, find_header, parse_field
from roofscope.readers.nvidia.nsys_csv import PRODUCER
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head, read_text

Range = tuple[str, str, int, int]  # kind, name, start_ns, end_ns


class Row(msgspec.Struct, frozen=True):
    line: int
    name: str
    start_ns: int
    end_ns: int
    tid: int


def _columns(header: Header) -> dict[str, Column]:
    return {c.base: c for i, f in enumerate(header.fields) if (c := parse_field(i, f))}


class _HostTrace(Reader):
    """An nsys host trace: a header holding ``needs`` and none of ``lacks``."""

    producer = PRODUCER
    priority = 90
    needs: ClassVar[tuple[str, ...]]
    lacks: ClassVar[tuple[str, ...]] = ("GrdX",)
    ends: ClassVar[str]  # the column the end comes from: "Duration" or "End"

    def layout(self, head: Head) -> tuple[Header, dict[str, Column]] | None:
        header = find_header(head) if head.kind == "text" else None
        columns = None if header is None else _columns(header)
        if header is None or columns is None:
            return None
        if any(b not in columns for b in self.needs) or any(b in columns for b in self.lacks):
            return None
        timed = (columns["Start"], columns[self.ends])
        return (header, columns) if all(c.scale is not None for c in timed) else None

    def detect(self, head: Head) -> bool:
        return self.layout(head) is not None

    def role(self, head: Head) -> Role:
        return Role.HOST_CALLS

    def rows(self, path: Path, head: Head) -> list[Row]:
        found = self.layout(head)
        if found is None:
            raise InputError(
                str(path),
                f"does not have the header of {self.description}",
                "pass the CSV that nsys stats wrote for this report",
            )
        rows = list(self._rows(path, *found))
        if not rows:
            raise EmptyInput(str(path), "has no rows", "check that the profiled program ran")
        return rows

    def _rows(self, path: Path, header: Header, columns: dict[str, Column]) -> Iterator[Row]:
        reader = csv.reader(io.StringIO(read_text(path)))
        try:
            for row in reader:
                if reader.line_num > header.line and any(f.strip() for f in row):
                    yield self._row(path, reader.line_num, row, header, columns)
        except csv.Error as exc:
            raise InputError(
                str(path), f"is not valid CSV ({exc})", "pass the report as nsys wrote it"
            ) from None

    def _row(
        self, path: Path, line: int, row: list[str], header: Header, cols: dict[str, Column]
    ) -> Row:
        if len(row) != len(header.fields):
            raise InputError(
                str(path),
                f"has {len(row)} fields where the header has {len(header.fields)}",
                "pass the report as nsys stats wrote it",
                line=line,
            )
        start = _ns(path, line, cols["Start"], row)
        end = _ns(path, line, cols[self.ends], row)
        tid = cols.get("Tid") or cols.get("TID")
        return Row(
            line,
            row[cols["Name"].index],
            start,
            end + start if self.ends == "Duration" else end,
            0 if tid is None else int(_ns(path, line, tid, row)),
        )

    def store(self, path: Path, profile: Profile, ranges: list[Range], rows: int) -> int:
        source = profile.begin_input()
        host_calls.insert_ranges(profile, source, ranges)
        profile.add_input(str(path), self.name, rows, Role.HOST_CALLS)
        profile.set_run(RunInfo(producer=self.producer))
        return source


def _ns(path: Path, line: int, col: Column, row: list[str]) -> int:
    text = row[col.index].strip()
    try:
        return round(float(text) * (col.scale or 1.0))
    except (ValueError, OverflowError):
        raise InputError(
            str(path),
            f"column {col.field!r} holds {text[:40]!r}, not a number",
            "pass the report as nsys stats wrote it",
            line=line,
        ) from None


class ApiTrace(_HostTrace):
    name = "nsys-api-trace"
    description = "Nsight Systems cuda_api_trace CSV (CUDA API calls: syncs, compiles, launches)"
    needs = ("Start", "Duration", "Name", "Result", "CorrID")
    ends = "Duration"

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        rows = self.rows(path, head)
        calls = [(r.tid, r.start_ns, r.end_ns, r.name) for r in rows]
        source = self.store(path, profile, host_calls.call_ranges(calls), len(rows))
        insert_activity(profile, source, "api", host_calls.per_name(calls))


class NvtxTrace(_HostTrace):
    name = "nsys-nvtx-trace"
    description = "Nsight Systems nvtx_pushpop_trace CSV (NVTX ranges: compiler ranges)"
    needs = ("Start", "End", "Name", "Lvl", "NumChild")
    ends = "End"

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        rows = self.rows(path, head)
        ranges = [
            (kind, r.name, r.start_ns, r.end_ns)
            for r in rows
            if (kind := host_calls.range_kind(r.name)) is not None
        ]
        self.store(path, profile, ranges, len(rows))
