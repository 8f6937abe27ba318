"""STAND-IN for part A's module (issue 24): the signatures of the contract, kernels only.

The engine (``engine.py``) and its tests need ``reduce_run``, ``merge`` and ``summary`` to
exist; part A's module replaces this file whole at the merge. Only what the engine's tests
assert on is real here: per kernel the calls and the total time, the runs read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from roofscope.analysis.hotspots import hotspots
from roofscope.readers.load import load


@dataclass
class Partial:
    """One run (or a merge of runs) reduced: per kernel (calls, total ns)."""

    kernels: dict[str, tuple[int, float]] = field(default_factory=dict)
    runs: int = 0


def reduce_run(paths: list[str], fmt: str | None = None) -> Partial:
    """Read one run and reduce it; its rows never leave this function."""
    found = hotspots(load(paths, fmt=fmt, jobs=1))
    return Partial({k.name: (k.calls, k.total_ns or 0.0) for k in found.kernels}, runs=1)


def merge(parts: Iterable[Partial]) -> Partial:
    out = Partial()
    for p in parts:
        out.runs += p.runs
        for name, (calls, total) in p.kernels.items():
            c, t = out.kernels.get(name, (0, 0.0))
            out.kernels[name] = (c + calls, t + total)
    return out


def summary(p: Partial) -> dict[str, Any]:
    rows = sorted(p.kernels.items(), key=lambda kv: (-kv[1][1], kv[0]))
    grand = sum(t for _, (_, t) in rows)
    return {
        "kernels": [
            {"name": n, "calls": c, "total_ns": t, "share": t / grand if grand else None}
            for n, (c, t) in rows
        ],
        "devices": {"busy_ns": 0, "span_ns": 0, "idle_share": 0.0, "devices": []},
        "ranks": None,
        "runs": {"read": [[] for _ in range(p.runs)]},
        "warnings": [],
    }
