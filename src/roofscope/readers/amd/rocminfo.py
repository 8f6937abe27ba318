"""The GPU named in a rocminfo dump (rocprof v1 ``results.sysinfo.txt``), read beside whatever
file of the run is given: ``results.csv``, ``results.json``, ``results.stats.csv``,
``results.hip_stats.csv``, ...)."""

from __future__ import annotations

import re
from pathlib import Path

from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.sniff import read_text

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FIELD = re.compile(
    r"^\s*(Name|Marketing Name|Device Type|Compute Unit|Max Clock Freq\. \(MHz\)):\s*(.*?)\s*$"
)
MAX_CLOCK_MHZ = 100_000  # beyond any GPU's clock: the field is damage


def positive_int(value: object) -> int | None:
    """An agent's count (CUs, XCCs, bytes) as a ROCm tool writes it: a whole number above
    zero, else unknown."""
    return value if isinstance(value, int) and value > 0 else None


def gpu_from_rocminfo(path: Path) -> RunInfo:
    """First GPU agent's marketing name, gfx arch, compute units and maximum engine clock;
    empty when none. rocminfo gives no memory clock or bus width."""
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
    units, clock = gpu.get("Compute Unit", ""), gpu.get("Max Clock Freq. (MHz)", "")
    return RunInfo(
        gpu=gpu.get("Marketing Name") or None,
        arch=gpu.get("Name") or None,
        compute_units=int(units) if units.isdigit() else None,
        clock_mhz=float(clock) if clock.isdigit() and 0 < int(clock) <= MAX_CLOCK_MHZ else None,
    )


def rocminfo_beside(profile: Profile, path: Path) -> None:
    """The GPU of the ``<stem>.sysinfo.txt`` beside ``path`` (``results.*``), read once."""
    sysinfo = path.with_name(path.name.split(".")[0] + ".sysinfo.txt")
    if sysinfo.is_file() and not profile.has_input(sysinfo):
        profile.set_run(gpu_from_rocminfo(sysinfo))
        lines = len(read_text(sysinfo).splitlines())
        profile.add_input(str(sysinfo), "rocminfo", lines, Role.METADATA)
