"""Run a contender as a subprocess and measure it: wall time, the largest single process's
peak RSS (``os.wait4``) and the peak of the summed RSS of its whole process tree (sampled
from /proc every 10 ms, so worker processes count)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    name: str
    exit_code: int
    wall_s: float
    peak_rss_mb: float  # the largest single process
    tree_rss_mb: float  # the largest sum over the process and its descendants


def _tree_rss_kib(root: int) -> int:
    """Summed resident memory of ``root`` and every process below it. The tree is walked
    through ``/proc/PID/task/TID/children``: 0.1 ms a sample, where reading every process's
    status took 2.4 ms, a fifth of a core at one sample each 10 ms, taken from the processes
    measured on a 2-core machine."""
    page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page_kib
            for children in Path(f"/proc/{pid}/task").glob("*/children"):
                todo += [int(c) for c in children.read_text().split()]
        except (OSError, ValueError, IndexError):  # it ended meanwhile
            continue
    return total


def run_one(
    name: str, cmd: list[str], *, stdout: IO[bytes] | None = None, env: dict[str, str] | None = None
) -> Run:
    """Run ``cmd`` from the repository root; its output goes to ``stdout`` (else nowhere),
    ``env`` is added to this process's environment."""
    peak = [0]
    full_env = None if env is None else {**os.environ, **env}
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=stdout or subprocess.DEVNULL, stderr=err, cwd=ROOT, env=full_env
        )
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _tree_rss_kib(proc.pid))
                done.wait(0.01)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        sampler.join()
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            print(f"[{name}] failed (exit {code}): {err.read()[-300:]!r}", file=sys.stderr)
    return Run(name, code, wall, usage.ru_maxrss / 1024, peak[0] / 1024)


def take_turns(contenders: dict[str, list[str]], repeat: int) -> dict[str, list[Run]]:
    """Each contender ``repeat`` times, taking turns, so a noisy stretch hits them all."""
    runs: dict[str, list[Run]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, cmd in contenders.items():
            runs[name].append(run_one(name, cmd))
    return runs
