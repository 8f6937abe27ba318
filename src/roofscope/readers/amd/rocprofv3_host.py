"""rocprofv3 API traces (docs/formats/rocprofv3.md, "API traces"): ``hip_api_trace.csv`` and
its kin (``hip_runtime_trace``, ``hip_compile_trace``, ``hsa_api_trace``,
``marker_api_trace``), one row per call: ``Domain, Function, Process_Id, Thread_Id,
Correlation_Id, Start_Timestamp, End_Timestamp`` (ns, the kernel trace's clock).

Blocking HIP calls become ``host_ranges`` of kind "sync", module loads and HIPRTC compiles
"compile", a device/stream synchronisation that is the next call after a launch on its thread
"sync-after-launch", the calls per name an "api" activity summary (readers/io/host_calls.py);
a roctx marker range a compiler names is "compile".
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from roofscope.errors import EmptyInput, InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.io import host_calls
from roofscope.readers.io.stats_csv import insert_activity
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head, read_text

HEADER = ("Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id")
TIMES = ("Start_Timestamp", "End_Timestamp")
FIX = "pass the API trace as rocprofv3 wrote it"


def _number(path: Path, line: int, field: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise InputError(
            str(path),
            f"column {field!r} holds {text.strip()[:40]!r}, not a whole number",
            FIX,
            line=line,
        ) from None


def calls(path: Path, header: list[str]) -> Iterator[tuple[str, host_calls.Call]]:
    """(domain, (thread id, start_ns, end_ns, function)) of each row."""
    at = {name: i for i, name in enumerate(header)}
    reader = csv.reader(io.StringIO(read_text(path)))
    try:
        for row in reader:
            line = reader.line_num
            if line == 1 or not any(f.strip() for f in row):
                continue
            if len(row) != len(header):
                raise InputError(
                    str(path),
                    f"has {len(row)} fields where the header has {len(header)}",
                    FIX,
                    line=line,
                )
            tid, start, end = (_number(path, line, f, row[at[f]]) for f in ("Thread_Id", *TIMES))
            yield row[at["Domain"]], (tid, start, end, row[at["Function"]])
    except csv.Error as exc:
        raise InputError(str(path), f"is not valid CSV ({exc})", FIX) from None


class ApiTrace(Reader):
    name = "rocprofv3-api-trace"
    description = "rocprofv3 hip_api_trace.csv and kin (API calls: syncs, compiles, launches)"
    producer = "rocprofv3"
    priority = 90

    def detect(self, head: Head) -> bool:
        fields = head.fields()
        return tuple(fields[: len(HEADER)]) == HEADER and all(t in fields for t in TIMES)

    def role(self, head: Head) -> Role:
        return Role.HOST_CALLS

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        rows = list(calls(path, head.fields()))
        if not rows:
            raise EmptyInput(str(path), "has no rows", "check that the profiled program ran")
        api = [c for domain, c in rows if "MARKER" not in domain]
        marks = [c for domain, c in rows if "MARKER" in domain]
        ranges = host_calls.call_ranges(api) + [
            (k, n, a, b) for _, a, b, n in marks if (k := host_calls.range_kind(n)) is not None
        ]
        source = profile.begin_input()
        host_calls.insert_ranges(profile, source, ranges)
        insert_activity(profile, source, "api", host_calls.per_name(api))
        profile.add_input(str(path), self.name, len(rows), Role.HOST_CALLS)
        profile.set_run(RunInfo(producer=self.producer))
