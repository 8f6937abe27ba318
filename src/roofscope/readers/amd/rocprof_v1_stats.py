"""rocprof v1 ``results.stats.csv`` and its API/copy siblings (docs/formats/rocprof-v1.md,
"Stats files").

All four files share the header ``"Name","Calls","TotalDurationNs","AverageNs","Percentage"``.
Kernel stats become the kernel summary; ``hip_stats``/``hsa_stats`` are API summaries and
``copy_stats`` a copy summary, reported apart and never mixed into kernel time. The
``<barrier packet>`` rows of a kernel stats file (see barriers.py) are a barrier summary,
apart too; beside a trace (a cross-check) they are left to the trace's own barrier rows.
"""

from __future__ import annotations

import re
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role, summary_role
from roofscope.readers.amd.rocminfo import rocminfo_beside
from roofscope.readers.io.barriers import is_barrier
from roofscope.readers.io.dispatch_csv import report_rows
from roofscope.readers.io.stats_csv import (
    StatsRow,
    SummaryRow,
    insert_activity,
    insert_kernel_summary,
    parse_stats,
)
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

HEADER = ["Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage"]
_API = re.compile(r"^(hip|hsa_|hipblas|rocblas|roctx)", re.IGNORECASE)
_COPY = re.compile(r"^(Copy[A-Z]|FillBuffer|MEMORY_COPY)")


def activity_kind(path: Path, names: list[str]) -> str | None:
    """'api', 'copy' or None (kernels), from the file name, else from the names inside."""
    lower = path.name.lower()
    if lower.endswith(("hip_stats.csv", "hsa_stats.csv", "api_stats.csv")):
        return "api"
    if lower.endswith("copy_stats.csv"):
        return "copy"
    if lower.endswith(("kernel_stats.csv", ".stats.csv")):
        return None
    if names and all(_API.match(n) for n in names):
        return "api"
    if names and all(_COPY.match(n) for n in names):
        return "copy"
    return None


class RocprofV1Stats(Reader):
    name = "rocprof-v1-stats"
    description = "rocprof v1 results.stats.csv (kernels), hip_stats/hsa_stats (API), copy_stats"
    producer = "rocprof"
    priority = 80
    header: tuple[str, ...] = tuple(HEADER)

    def detect(self, head: Head) -> bool:
        return tuple(head.names()) == self.header

    def role(self, head: Head) -> Role:
        return Role.KERNEL_SUMMARY if self.kind(head.path, []) is None else Role.ACTIVITY

    def kind(self, path: Path, names: list[str]) -> str | None:
        """'api', 'copy', 'domain' or None for kernels."""
        return activity_kind(path, names)

    def summary_row(self, row: StatsRow) -> SummaryRow:
        calls, total = int(row.values[0] or 0), row.values[1]  # a missing total stays unknown
        mean = total / calls if calls and total is not None else None
        return (row.name, calls, total, mean, None, None, None)

    def pid(self, path: Path) -> int | None:
        return None

    def read_beside(self, profile: Profile, path: Path) -> None:
        """The metadata the profiler wrote beside the file (the GPU)."""
        rocminfo_beside(profile, path)

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        rows, bad = parse_stats(path, len(self.header) - 1)
        report_rows(profile, path, bad)
        if not rows:
            raise InputError(str(path), "has no rows", "check that the profiled program ran")
        source = profile.begin_input()
        kind = self.kind(path, [r.name for r in rows])
        if kind is None:
            kernels = [r for r in rows if not is_barrier(r.name)]
            summary = [self.summary_row(r) for r in kernels]
            insert_kernel_summary(profile, source, summary, pid=self.pid(path))
            if (
                role == Role.KERNEL_SUMMARY
            ):  # a cross-check's barriers are the trace's, counted there
                insert_activity(profile, source, "barrier", _activity(rows, barrier=True))
            profile.add_input(str(path), self.name, len(kernels), role)
        else:
            insert_activity(profile, source, kind, _activity(rows))
            planned = role if role == Role.PASS_REPEAT else summary_role(kind)
            profile.add_input(str(path), self.name, len(rows), planned)
        profile.set_run(RunInfo(producer=self.producer))
        self.read_beside(profile, path)


def _activity(rows: list[StatsRow], *, barrier: bool = False) -> list[tuple[str, int, float]]:
    """(name, calls, total ns) of the rows, or of their barrier packets alone."""
    return [
        (r.name, int(r.values[0] or 0), float(r.values[1] or 0.0))
        for r in rows
        if not barrier or is_barrier(r.name)
    ]
