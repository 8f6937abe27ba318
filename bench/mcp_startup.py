"""Start-up of ``roofscope mcp`` to its first tool answer (issue 42: under 1 s on the 2-core
machine for a small profile).

    python bench/mcp_startup.py [--runs 5] [PROFILE]

Each run spawns the server over stdio with the MCP SDK's client, initialises, calls
``analyze`` on PROFILE (default: tests/data/kineto/h100_qwen1.5_0.5b_chat.json.gz, 1,465
kernel launches) and times the answer from the spawn; beside it, ``roofscope analyze --json``
of the same file as the baseline, alternated run by run. Prints the median of each (wall
seconds, and the CPU seconds, user + sys, of the child processes: the server's worker
included) and the load average before and after.

Both run as an installed roofscope does, from compiled bytecode: the children write theirs
to a temporary folder (``PYTHONPYCACHEPREFIX``, whatever ``PYTHONDONTWRITEBYTECODE`` says),
filled by one run of each that is not counted.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "data" / "kineto" / "h100_qwen1.5_0.5b_chat.json.gz"
CACHE = tempfile.mkdtemp(prefix="roofscope-bench-pyc-")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV |= {"PYTHONPATH": str(ROOT / "src"), "PYTHONPYCACHEPREFIX": CACHE}


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


async def first_answer(profile: Path) -> float:
    """Seconds from the spawn to analyze's answer."""
    args = ["-m", "roofscope", "mcp", "--root", str(profile.parent)]
    params = StdioServerParameters(command=sys.executable, args=args, env=ENV)
    start = time.perf_counter()
    async with Client(params) as client:
        result = await client.call_tool("analyze", {"path": str(profile), "limit": 5})
        took = time.perf_counter() - start
    assert not result.is_error, result.content
    return took


def command(profile: Path) -> float:
    start = time.perf_counter()
    args = [sys.executable, "-m", "roofscope", "analyze", str(profile), "--json"]
    subprocess.run(args, env=ENV, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def timed(run: object) -> tuple[float, float]:
    """(wall, child CPU) of one run; the server's CPU is counted once it has exited."""
    cpu = children_cpu()
    wall = run() if callable(run) else 0.0
    return wall, children_cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", nargs="?", type=Path, default=SMALL)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    profile = args.profile.resolve()
    anyio.run(first_answer, profile)  # fills the bytecode cache
    command(profile)
    load = os.getloadavg()
    served, cli = [], []
    for _ in range(args.runs):  # alternated: a busy machine slows both alike
        served.append(timed(lambda: anyio.run(first_answer, profile)))
        cli.append(timed(lambda: command(profile)))
    for name, runs in (("roofscope mcp: first answer", served), ("roofscope analyze --json", cli)):
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{name:30} median of {args.runs}: {wall:.2f} s wall, {cpu:.2f} s CPU")
    after = os.getloadavg()
    print(f"load average (1, 5, 15 min): {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} before, "
          f"{after[0]:.1f} {after[1]:.1f} {after[2]:.1f} after")  # fmt: skip
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(CACHE, ignore_errors=True)
