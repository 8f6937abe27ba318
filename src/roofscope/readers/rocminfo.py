"""The GPU named in a rocminfo dump (rocprof v1 ``results.sysinfo.txt``)."""

from __future__ import annotations

import re
from pathlib import Path

from roofscope.model import RunInfo

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FIELD = re.compile(r"^\s*(Name|Marketing Name|Device Type):\s*(.*?)\s*$")


def gpu_from_rocminfo(path: Path) -> RunInfo:
    """First GPU agent's marketing name and gfx arch; empty RunInfo when none is found."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return RunInfo()
    agent: dict[str, str] = {}
    for line in _ANSI.sub("", text).splitlines():
        m = _FIELD.match(line)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        if key == "Name" and "Device Type" in agent:
            agent = {}
        agent.setdefault(key, value)
        if agent.get("Device Type") == "GPU":
            return RunInfo(gpu=agent.get("Marketing Name") or None, arch=agent.get("Name") or None)
    return RunInfo()
