"""rocprofv3 CSV output (docs/formats/rocprofv3.md: "Folders and passes" to "Stats files").

``kernel_trace.csv`` in its four header layouts (2024-07, 2024-08, 2025-03, 2025-06 on),
``*_stats.csv`` (kernel, API and domain summaries share one header) and
``memory_copy_trace.csv`` (copies, kept apart from kernels). Files are named
``<pid>_<what>.csv`` inside ``<host>/<pid>/``; the pid is taken from that prefix.
"""

from __future__ import annotations

from pathlib import Path

from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.amd.rocprof_v1_stats import RocprofV1Stats, activity_kind
from roofscope.readers.amd.rocprofv3_agent_info import (
    agent_info_beside,
    pid_from_name,
    results_beside,
)
from roofscope.readers.io.csv_layout import CsvLayout, header_name
from roofscope.readers.io.dispatch_csv import read_dispatch_csv
from roofscope.readers.io.duck_sql import product, read_csv
from roofscope.readers.io.stats_csv import StatsRow, SummaryRow
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

_TEXT = {"Kind", "Agent_Id", "Kernel_Name"}
_AGENT = "TRY_CAST(regexp_extract(\"Agent_Id\", '(\\d+)\\s*$', 1) AS INTEGER)"

# file column -> model column (plain copies)
_COPY = {
    "Queue_Id": "queue",
    "Stream_Id": "stream",
    "Thread_Id": "tid",
    "Dispatch_Id": "dispatch_id",
    "Start_Timestamp": "start_ns",
    "End_Timestamp": "end_ns",
    "LDS_Block_Size": "lds_bytes",
    "Group_Segment_Size": "lds_bytes",
    "Scratch_Size": "scratch_bytes",
    "Private_Segment_Size": "scratch_bytes",
    "VGPR_Count": "arch_vgpr",
    "Accum_VGPR_Count": "accum_vgpr",
    "SGPR_Count": "sgpr",
}
STATS_HEADER = [
    "Name",
    "Calls",
    "TotalDurationNs",
    "AverageNs",
    "Percentage",
    "MinNs",
    "MaxNs",
    "StdDev",
]


def kernel_trace_layout(header: list[str], pid: int | None) -> CsvLayout:
    cols = [header_name(h, i) for i, h in enumerate(header)]
    columns = [(c, "VARCHAR" if c in _TEXT else "BIGINT") for c in cols]
    mapping = {model: f'"{col}"' for col, model in _COPY.items() if col in cols}
    mapping["device"] = _AGENT
    mapping["pid"] = "NULL" if pid is None else str(pid)
    for axis, model in (("Grid_Size", "grid_size"), ("Workgroup_Size", "workgroup_size")):
        if all(f"{axis}_{d}" in cols for d in "XYZ"):
            mapping[model] = product([f'"{axis}_{d}"' for d in "XYZ"])
    return CsvLayout(columns=columns, mapping=mapping, name="Kernel_Name")


class KernelTrace(Reader):
    name = "rocprofv3-kernel-trace"
    description = "rocprofv3 kernel_trace.csv (kernel dispatches; all four header layouts)"
    producer = "rocprofv3"
    priority = 10

    def detect(self, head: Head) -> bool:
        return (
            head.fields()[:3] == ["Kind", "Agent_Id", "Queue_Id"] and "Kernel_Name" in head.fields()
        )

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        layout = kernel_trace_layout(head.fields(), pid_from_name(path))
        read_dispatch_csv(profile, path, layout, fmt=self.name, role=role)
        profile.set_run(RunInfo(producer=self.producer))
        _agent_info_beside(profile, path)


class Stats(RocprofV1Stats):
    name = "rocprofv3-stats"
    description = "rocprofv3 *_stats.csv (kernel_stats: kernel summary; hip/hsa/domain: API)"
    producer = "rocprofv3"
    header = tuple(STATS_HEADER)

    def kind(self, path: Path, names: list[str]) -> str | None:
        if path.name.lower().endswith("domain_stats.csv"):
            return "domain"
        if path.name.lower().endswith("memory_copy_stats.csv"):
            return "copy"
        return activity_kind(path, names)

    def summary_row(self, row: StatsRow) -> SummaryRow:
        calls, total, mean, _, lo, hi, std = row.values  # a missing total stays unknown
        return (
            row.name,
            int(calls or 0),
            total,
            mean,
            lo,
            hi,
            std,
        )  # a missing total stays unknown

    def pid(self, path: Path) -> int | None:
        return pid_from_name(path)

    def read_beside(self, profile: Profile, path: Path) -> None:
        _agent_info_beside(profile, path)


class MemoryCopyTrace(Reader):
    name = "rocprofv3-memory-copy"
    description = "rocprofv3 memory_copy_trace.csv (copies, reported apart from kernels)"
    producer = "rocprofv3"
    priority = 90

    def detect(self, head: Head) -> bool:
        return head.fields()[:2] == ["Kind", "Direction"]

    def role(self, head: Head) -> Role:
        return Role.COPIES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        cols = [header_name(h, i) for i, h in enumerate(head.fields())]
        types = {
            c: (
                "BIGINT"
                if c.endswith("Timestamp") or (c.endswith("_Id") and "Agent" not in c)
                else "VARCHAR"
            )
            for c in cols
        }
        source = profile.begin_input()
        pid = pid_from_name(path)
        before = profile.count("copies")
        scan = read_csv(path, types.items(), nulls=("",))
        profile.con.execute(
            f"INSERT INTO copies SELECT {source}, {'NULL' if pid is None else pid}, "
            f'"Direction", "Source_Agent_Id"::VARCHAR, "Destination_Agent_Id"::VARCHAR, '
            f'"Start_Timestamp", "End_Timestamp" FROM {scan}'
        )
        rows = profile.count("copies") - before
        profile.add_input(str(path), self.name, rows, role)
        profile.set_run(RunInfo(producer=self.producer))
        _agent_info_beside(profile, path)


def _agent_info_beside(profile: Profile, path: Path) -> None:
    """The GPU from the run's agent_info.csv, else from the agents of its results.json."""
    agent_info_beside(profile, path)
    if results_beside(path):
        # imported only then: the JSON reader's module loads gzip and the stream decoder
        from roofscope.readers.amd.rocprofv3_json import agents_beside

        agents_beside(profile, path)
