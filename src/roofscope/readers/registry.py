"""The one registry of input formats: each reader says what it recognises and what it gives.

A new format is one new module with a :class:`Reader` subclass and one line in ``READERS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from roofscope.errors import UsageError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.sniff import Head


class Reader:
    """One input format. Subclasses set the class variables and implement two methods."""

    name: ClassVar[str]
    description: ClassVar[str]
    producer: ClassVar[str]
    # Lower wins when two files of one run both give dispatches (trace CSV before JSON).
    priority: ClassVar[int] = 50
    # Whether it reads gzip-compressed files itself (``head.gzip``; head.text is what is inside)
    compressed: ClassVar[bool] = False

    def detect(self, head: Head) -> bool:
        raise NotImplementedError

    def role(self, head: Head) -> Role:
        """What this file offers the planner (readers/load.py), which decides which file wins
        when several describe the same run: DISPATCHES, KERNEL_SUMMARY, ACTIVITY, COPIES,
        WORKLOAD, COUNTER_COLLECTION or METADATA."""
        raise NotImplementedError

    def timed(self, head: Head) -> bool:
        """Whether its dispatches carry start and end times (else they are a counter run)."""
        return True

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        """Add the file's content to ``profile`` in the given role."""
        raise NotImplementedError


def readers() -> list[Reader]:
    from roofscope.readers import (
        kineto,
        ncu_csv,
        nsys_csv,
        nsys_sqlite,
        nsys_trace,
        rocpd,
        rocprof_compute,
        rocprof_v1_csv,
        rocprof_v1_json,
        rocprof_v1_stats,
        rocprofv3,
        rocprofv3_counters,
        summary_csv,
    )

    return [
        rocprof_v1_csv.RocprofV1Csv(),
        rocprof_v1_stats.RocprofV1Stats(),
        rocprof_v1_json.RocprofV1Json(),
        rocprofv3.KernelTrace(),
        rocprofv3.Stats(),
        rocprofv3.MemoryCopyTrace(),
        rocprofv3_counters.CounterCollection(),
        rocprofv3_counters.AgentInfo(),
        summary_csv.SummaryCsv(),
        rocprof_compute.Workload(),
        rocprof_compute.WorkloadCsv(),
        rocpd.Rocpd(),
        kineto.KinetoTrace(),
        nsys_csv.KernSum(),
        nsys_trace.GpuTrace(),
        nsys_csv.MemTimeSum(),
        nsys_csv.ApiSum(),
        nsys_sqlite.NsysSqlite(),
        ncu_csv.Ncu(),
    ]


def detect(head: Head) -> Reader | None:
    """The reader that recognises this file's content, if any."""
    if head.kind != "text":
        return None
    for reader in readers():
        if (reader.compressed or not head.gzip) and reader.detect(head):
            return reader
    return None


def by_name(name: str) -> Reader:
    for reader in readers():
        if reader.name == name:
            return reader
    known = ", ".join(r.name for r in readers())
    raise UsageError(f"--format {name}: unknown format; use one of {known}")
