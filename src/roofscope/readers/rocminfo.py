"""The GPU named in a rocminfo dump (rocprof v1 ``results.sysinfo.txt``)."""

from __future__ import annotations

import re
from pathlib import Path

from roofscope.model import RunInfo

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FIELD = re.compile(r"^\s*(Name|Marketing Name|Device Type|Compute Unit):\s*(.*?)\s*$")


def gpu_from_rocminfo(path: Path) -> RunInfo:
    """First GPU agent's marketing name, gfx arch and compute units; empty when none."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return RunInfo()
    agents: list[dict[str, str]] = [{}]
    for line in _ANSI.sub("", text).splitlines():
        m = _FIELD.match(line)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        if key == "Name" and "Device Type" in agents[-1]:
            agents.append({})
        agents[-1].setdefault(key, value)
    gpu = next((a for a in agents if a.get("Device Type") == "GPU"), None)
    if gpu is None:
        return RunInfo()
    units = gpu.get("Compute Unit", "")
    return RunInfo(
        gpu=gpu.get("Marketing Name") or None,
        arch=gpu.get("Name") or None,
        compute_units=int(units) if units.isdigit() else None,
    )
