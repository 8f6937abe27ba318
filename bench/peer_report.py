"""The pure half of bench/peer_bench.py: each tool's answer (top kernel, its calls and time,
the total kernel time) read from its output, the check that two answers agree, and the markdown
table and docs section of the results. No processes, no files."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# HTA 0.5.0's kernel breakdown lists Memcpy/Memset (roofscope: copies) and CUDA sync events
# (cat cuda_sync, e.g. "Stream Wait Event": no kernel ran) among the kernels
HTA_NOT_KERNEL = re.compile(r"Memcpy|Memset|Stream Wait Event|Event Sync|Context Sync|Stream Sync")
SECTION = "## Against the peers"


@dataclass(frozen=True)
class Answer:
    """What a tool says about a workload: its top kernel (by total time), that kernel's calls
    and nanoseconds, and the total kernel nanoseconds. ``total_rel_tol``: how far the total
    may be from the truth because the tool printed it rounded (0 when exact)."""

    top: tuple[str, ...]  # the top kernel's raw name(s)
    calls: int
    top_ns: int
    total_ns: int
    total_rel_tol: float = 0.0


@dataclass(frozen=True)
class Result:
    """One workload's runs: median wall seconds and peak process-tree RSS, both tools."""

    workload: str
    peer: str
    ours_s: list[float]
    ours_mib: list[float]
    peer_s: list[float]
    peer_mib: list[float]
    goal: float  # largest roofscope / peer time ratio the issue accepts
    rss_goal: float | None  # largest RSS ratio the issue accepts, where it names one
    agree: str  # "yes", or what differs


@dataclass(frozen=True)
class Floor:
    """The least a workload can cost: a bare script that reads the same input and does the
    one aggregation a check-up cannot skip (issue 41: DuckDB's own group-by of a CSV, a
    compiled gunzip and typed decode of a Kineto trace). ``command`` gives its command line
    for the workload's inputs; where ``answers``, it prints the per-kernel rows
    :func:`from_floor` reads, and its answer is checked against roofscope's."""

    label: str  # how the table's peer column names it
    command: Callable[[list[Path]], list[str]]
    goal: float  # largest roofscope / floor time ratio the issue accepts
    rss_goal: float | None = None
    answers: bool = True


def _key(name: str) -> str:
    """A kernel name with all white space dropped (rocprof-compute wraps names in its table)."""
    return re.sub(r"\s+", "", name)


def from_roofscope(text: str) -> Answer:
    """The answer in ``roofscope analyze --json`` output."""
    doc = json.loads(text)
    top = doc["kernels"][0]
    return Answer(
        tuple(top["raw_names"]),
        int(top["calls"]),
        round(top["total_s"] * 1e9),
        round(doc["summary"]["kernel_time_s"] * 1e9),
    )


def from_rocprof_compute(text: str) -> Answer:
    """The first row of the "0.1 Top Kernels" table of ``rocprof-compute analyze``; the total
    is the row's Sum(ns) over its Pct (printed to 0.01 %, hence the tolerance)."""
    table = text.split("0.1 Top Kernels", 1)[1].split("╞", 1)[1]
    cells: list[list[str]] = []
    for line in table.splitlines()[1:]:
        row = [c.strip() for c in line.strip().strip("│").split("│")]
        if not line.startswith("│") or (row[0] and cells):
            break
        cells.append(row)
    name = "".join(r[1] for r in cells)
    count, total, pct = (float(cells[0][i]) for i in (2, 3, 6))
    return Answer((name,), round(count), round(total), round(total * 100 / pct), 0.005 / pct)


def from_hta(text: str) -> Answer:
    """HTA's kernel breakdown as bench/peer_bench.py's HTA code prints it: a JSON list of
    [name, calls, total µs] per kernel and rank; ranks are summed, copies and syncs left out."""
    per_name: dict[str, list[float]] = {}
    for name, calls, total_us in json.loads(text):
        if not HTA_NOT_KERNEL.match(name):
            entry = per_name.setdefault(name, [0, 0.0])
            entry[0] += calls
            entry[1] += total_us
    name, (calls, top_us) = max(per_name.items(), key=lambda kv: kv[1][1])
    total_us = sum(t for _, t in per_name.values())
    return Answer((name,), int(calls), round(top_us * 1000), round(total_us * 1000))


def from_floor(text: str) -> Answer:
    """A floor's per-kernel rows, a JSON list of [raw name, calls, total ns]."""
    rows = [(str(n), int(c), int(t)) for n, c, t in json.loads(text)]
    name, calls, top_ns = max(rows, key=lambda r: r[2])
    return Answer((name,), calls, top_ns, sum(r[2] for r in rows))


def differences(ours: Answer, peer: Answer) -> list[str]:
    """What differs between two answers; empty when they agree (names compared without white
    space, times to the ns or within the peer's printed rounding)."""
    found = []
    if not {_key(n) for n in ours.top} & {_key(n) for n in peer.top}:
        found.append(f"top kernel {ours.top[0][:40]!r} vs {peer.top[0][:40]!r}")
    if ours.calls != peer.calls:
        found.append(f"calls {ours.calls} vs {peer.calls}")
    if ours.top_ns != peer.top_ns:
        found.append(f"top kernel {ours.top_ns} ns vs {peer.top_ns} ns")
    tol = max(ours.total_rel_tol, peer.total_rel_tol) * max(ours.total_ns, peer.total_ns)
    if abs(ours.total_ns - peer.total_ns) > tol:
        found.append(f"total {ours.total_ns} ns vs {peer.total_ns} ns")
    return found


def _ratio(result: Result) -> tuple[float, float]:
    time = statistics.median(result.ours_s) / statistics.median(result.peer_s)
    return time, max(result.ours_mib) / max(result.peer_mib)


def met(result: Result) -> bool:
    time, rss = _ratio(result)
    return time <= result.goal and (result.rss_goal is None or rss <= result.rss_goal)


def table(results: list[Result]) -> str:
    """The markdown table: median wall seconds and peak process-tree MiB of each tool, the
    ratios, the goal, whether it is met and whether the answers agree."""
    lines = [
        "| workload | peer | roofscope s | MiB | peer s | MiB | time ratio | RSS ratio | goal "
        "| met | answers agree |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in results:
        time, rss = _ratio(r)
        goal = f"<= {r.goal:.2f}" + ("" if r.rss_goal is None else f", RSS <= {r.rss_goal:.1f}x")
        lines.append(
            f"| {r.workload} | {r.peer} | {statistics.median(r.ours_s):.2f} | "
            f"{max(r.ours_mib):.0f} | {statistics.median(r.peer_s):.2f} | "
            f"{max(r.peer_mib):.0f} | {time:.2f} | {rss:.2f} | {goal} | "
            f"{'yes' if met(r) else 'no'} | {r.agree} |"
        )
    return "\n".join(lines) + "\n"


def with_section(doc: str, section: str) -> str:
    """``doc`` with its "Against the peers" section replaced by ``section`` (appended when
    absent); the section runs to the next level-2 heading."""
    start = doc.find(f"\n{SECTION}\n")
    if start < 0:
        return doc.rstrip("\n") + "\n\n" + section
    end = doc.find("\n## ", start + 1)
    rest = "" if end < 0 else "\n" + doc[end + 1 :]
    return doc[: start + 1] + section + rest
