"""rocprofv3 ``agent_info.csv`` (docs/formats/rocprofv3.md, "agent_info.csv"): the CPU and
GPU agents of a run; it names the GPU for the report. Read alone, or beside any rocprofv3 file
of its run (:func:`agent_info_beside`), whose ``<pid>_`` prefix (:func:`pid_from_name`) it
shares.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head, read_head, read_text

_PID_PREFIX = re.compile(r"^(\d+)_")


def pid_from_name(path: Path) -> int | None:
    """The process id a rocprofv3 file's name starts with (``1234_kernel_trace.csv``)."""
    m = _PID_PREFIX.match(path.name)
    return int(m.group(1)) if m else None


class AgentInfo(Reader):
    name = "rocprofv3-agent-info"
    description = "rocprofv3 agent_info.csv (the GPU: product name, gfx arch, CUs, XCCs)"
    producer = "rocprofv3"
    priority = 90

    def detect(self, head: Head) -> bool:
        return [f.strip() for f in head.fields()[:3]] == [
            "Node_Id",
            "Logical_Node_Id",
            "Agent_Type",
        ]

    def role(self, head: Head) -> Role:
        return Role.METADATA

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        if profile.has_input(path):
            return  # read already, beside a file of its run (agent_info_beside)
        agents = list(csv.DictReader(io.StringIO(read_text(path))))
        if not agents:
            raise InputError(
                str(path),
                "has no agent rows under its header",
                "re-run rocprofv3; it writes agent_info.csv when the profiled program starts",
            )
        gpus = [(i + 2, a) for i, a in enumerate(agents) if _text(a, "Agent_Type") == "GPU"]
        profile.add_input(str(path), self.name, len(agents), role)
        if not gpus:
            profile.warn("no-gpu-agent", f"{path}: lists no agent with Agent_Type GPU")
            return
        line, agent = _named_agent(profile, gpus, pid_from_name(path))
        profile.set_run(agent_run(path, line, agent))


# the file kinds rocprofv3 writes as ``<prefix><kind>.csv``, ``agent_info.csv`` among them
_V3_KIND = re.compile(
    r"(?:^|(?<=_))(kernel_trace|kernel_stats|memory_copy_trace|memory_copy_stats|"
    r"[a-z][a-z_]*api_stats|[a-z][a-z_]*domain_stats|counter_collection)\.csv$"
)


def beside(path: Path, name: str) -> Path | None:
    """The file ``<prefix><name>`` of the run of the rocprofv3 CSV ``path`` (its ``<prefix>``,
    such as the process id); None when ``path`` is not named as rocprofv3 names its files."""
    kind = _V3_KIND.search(path.name)
    return None if kind is None else path.with_name(path.name[: kind.start()] + name)


def results_beside(path: Path) -> list[Path]:
    """The ``<prefix>results.json`` (or ``.json.gz``) files of the run of the rocprofv3 CSV
    ``path`` (rocprofv3 --output-format csv,json) that exist."""
    found = [beside(path, name) for name in ("results.json", "results.json.gz")]
    return [f for f in found if f is not None and f.is_file()]


def agent_info_beside(profile: Profile, path: Path) -> None:
    """The GPU of the ``<prefix>agent_info.csv`` beside the rocprofv3 file ``path`` (its run's
    ``<prefix>``, such as the process id), read once; nothing when there is none."""
    agent = beside(path, "agent_info.csv")
    if agent is None or not agent.is_file() or profile.has_input(agent):
        return
    head = read_head(agent)
    if head.kind == "text" and AgentInfo().detect(head):
        AgentInfo().read(agent, head, profile, role=Role.METADATA)


def _named_agent(
    profile: Profile, gpus: list[tuple[int, dict[str, str]]], pid: int | None
) -> tuple[int, dict[str, str]]:
    """The GPU whose Logical_Node_Id is the one device the dispatches name (rocprofv3's default
    ``Agent N`` numbering), else the first GPU."""
    mine = f"pid = {pid}" if pid is not None else "true"
    devices = profile.con.execute(
        f"""SELECT DISTINCT device FROM dispatches WHERE device IS NOT NULL AND (
        {mine} OR NOT EXISTS (SELECT 1 FROM dispatches WHERE {mine}))"""
    ).fetchall()
    if len(devices) == 1:
        wanted = str(devices[0][0])
        for line, agent in gpus:
            if _text(agent, "Logical_Node_Id") == wanted:
                return line, agent
    return gpus[0]


def agent_run(path: Path, line: int, agent: dict[str, str]) -> RunInfo:
    """What one agent row says: product name, gfx target, CUs and XCCs (0 read as unknown)."""
    return RunInfo(
        producer="rocprofv3",
        gpu=_text(agent, "Product_Name"),
        arch=_text(agent, "Name"),
        compute_units=_count(path, line, agent, "Cu_Count"),
        xcds=_count(path, line, agent, "Num_Xcc"),
    )


def _text(agent: dict[str, str], field: str) -> str | None:
    value = (agent.get(field) or "").strip()
    return value or None


def _count(path: Path, line: int, agent: dict[str, str], field: str) -> int | None:
    value = _text(agent, field)
    if value is None:
        return None
    if not value.isdigit():
        raise InputError(
            str(path),
            f"{field} is {value!r}, not a whole number",
            "pass agent_info.csv as rocprofv3 wrote it",
            line=line,
        )
    return int(value) or None
