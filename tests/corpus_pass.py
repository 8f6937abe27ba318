"""Every corpus profile (and demo) checked up once per test session, in worker processes, for
the corpus-wide tests: tests/test_api_corpus.py (the digests, the table, the engine both
ways), tests/test_verdicts_corpus.py (issue 38, points 2-3), tests/test_library_advice.py
(points 6-7) and tests/test_categories.py (issue 39, point 5). Each profile is analysed twice
(in this process's worker, and on two local worker processes for the engine check), where the
tests alone analysed it four times."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from tests.conftest import SHARED_CORPUS
from tests.test_json_unchanged import _tool

# roofscope's rules that prescribe a better access pattern or cache reuse
MEMORY_ACCESS = ("memory-far-below-roof", "low-l2-hit-rate")
BUSY_PCT = 60.0
# ncu's rule texts calling a grid too small (SOLBottleneck, LaunchConfiguration)
SMALL_GRID = re.compile(r"grid is too small to fill|less than the GPU's [\d,]+ multiprocessors")


@dataclass(frozen=True)
class Checked:
    """What the corpus-wide tests read of one profile."""

    key: str
    digest: str  # of to_dict(), or the refusal as the CLI words it
    bad: str | None = None  # a table row or the engine's report that differs, or None
    advice_wrong: list[str] = field(default_factory=list)  # issue 38, points 2-3
    small: int = 0  # kernels with a grid smaller than the device
    busy: int = 0  # kernels whose busiest unit is compute at BUSY_PCT or more
    library: list[tuple[str, str, str]] = field(default_factory=list)  # (kernel, rule, advice)
    uncategorised: list[str] = field(default_factory=list)  # issue 39 point 5: Kineto, NVIDIA


@cache
def corpus() -> tuple[Checked, ...]:
    """Every profile, checked once for the whole session (two processes, spawned)."""
    tool = _tool()
    paths = tool.profiles(SHARED_CORPUS) if SHARED_CORPUS.is_dir() else sorted(tool.DEMO.iterdir())
    with ProcessPoolExecutor(os.cpu_count() or 1, mp_context=get_context("spawn")) as pool:
        return tuple(pool.map(checked, paths))


def checked(path: Path) -> Checked:
    import roofscope
    from roofscope.checkup.options import worded
    from roofscope.errors import RoofscopeError

    tool = _tool()
    key = tool.key(path, SHARED_CORPUS)
    try:
        report = roofscope.analyze(path)
    except RoofscopeError as exc:
        line = tool._portable(f"roofscope: error: {worded(exc)}", SHARED_CORPUS).strip()
        return Checked(key, f"exit {exc.exit_code}: {line.splitlines()[0]}")
    doc = report.to_dict()
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    digest = hashlib.sha256(tool._portable(text, SHARED_CORPUS).encode()).hexdigest()
    bad = _on_local_workers(path, report) or _table_differs(path, report, doc)
    wrong, small, busy = _memory_advice(path, report.checkup)
    wrong += _matrix_advice(path, report.checkup)
    other = _uncategorised(doc)
    return Checked(key, digest, bad, wrong, small, busy, _library_verdicts(doc), other)


def _on_local_workers(path: Path, report: Any) -> str | None:
    """What differs when the runs are read on two local worker processes, or None."""
    import roofscope
    from roofscope.render.report.text import render_text

    apart = roofscope.analyze(path, scheduler="local", jobs=2)
    doc = apart.to_dict()
    if doc.pop("engine", None) is None:
        return f"{path}: no engine section"
    if doc != report.to_dict():
        return f"{path}: another document"
    lines = render_text(apart.checkup, width=100).splitlines(keepends=True)
    text = "".join(line for line in lines if not line.startswith("  engine: "))
    return None if text == render_text(report.checkup, width=100) else f"{path}: another text"


def _table_differs(path: Path, report: Any, doc: dict[str, Any]) -> str | None:
    """The first kernel whose row in ``to_pandas()`` differs from the document, or None."""
    if importlib.util.find_spec("pandas") is None:  # the digest alone: no roofscope[notebook]
        return None
    frame = report.to_pandas()
    rows = zip(frame["name"], frame["calls"], frame["total_s"], strict=True)
    table = [(name, int(calls), _cell(total)) for name, calls, total in rows]
    wanted = [(k["name"], k["calls"], k["total_s"]) for k in doc["kernels"]]
    if len(table) != len(wanted):
        return f"{path}: {len(table)} rows"
    return next((f"{path}: {t} != {w}" for t, w in zip(table, wanted, strict=True) if t != w), None)


def _cell(value: Any) -> Any:
    """A table cell as the JSON writes it: NaN (pandas' missing number) is null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _memory_advice(path: Path, report: Any) -> tuple[list[str], int, int]:
    """(what breaks issue 38's points 2-3, small-grid kernels seen, busy-compute kernels
    seen): memory-access advice for a grid smaller than the device or a busy compute unit."""
    units = report.metrics.machine.compute_units
    advised: dict[str, set[str]] = {}
    for f in report.findings:
        rule = str(f.evidence.get("roofscope_rule") or f.rule)
        if f.kernel is not None and rule in MEMORY_ACCESS:
            advised.setdefault(f.kernel, set()).add(rule)
    small = {k for k, s in report.launches.items() if units and s.blocks < units}
    small |= {
        k
        for k, rules in report.profiler_rules.items()
        if any(SMALL_GRID.search(r.text) for r in rules)
    }
    busy = {
        k
        for k, lim in report.limiters.items()
        if lim.busiest.side == "compute" and lim.busiest.pct_of_peak >= BUSY_PCT
    }
    bad = [f"{path}: {k}: small grid, told {sorted(advised[k])}" for k in small & set(advised)]
    bad += [f"{path}: {k}: compute busy, told {sorted(advised[k])}" for k in busy & set(advised)]
    return bad, len(small), len(busy)


def _matrix_advice(path: Path, report: Any) -> list[str]:
    """Issue 38 point 1: a kernel whose FLOPs already run on the matrix units (its roofline
    ceiling is a matrix one) told to put its math on the matrix cores."""
    on_matrix = {
        k.name for k in report.roofline.result.kernels if (k.ceiling or "").endswith("-matrix")
    }
    return [
        f"{path}: {f.kernel}: on {sorted(on_matrix)[:1]}, told {f.prescription[:60]}"
        for f in report.findings
        if f.kernel in on_matrix and "on the matrix cores (MFMA" in f.prescription
    ]


CATEGORISED_FORMATS = ("kineto", "ncu", "nsys")  # issue 39 point 5: Kineto, nsys and ncu


def _uncategorised(doc: dict[str, Any]) -> list[str]:
    """The kernels of a Kineto trace or an Nsight export that fall into no category."""
    formats = {i["format"].partition("-")[0] for i in doc["inputs"]}
    if not formats & set(CATEGORISED_FORMATS):
        return []
    return [k["name"] for k in doc["kernels"] if k["category"] == "other"]


def _library_verdicts(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kernel, rule, prescription) of every finding about a library or communication kernel."""
    from roofscope.model.libraries import library_of

    comm = {k["name"] for k in doc["kernels"] if k["communication"]}
    return [
        (f["kernel"], f["rule"], f["prescription"])
        for f in doc["findings"]
        if f["kernel"]
        and f["kind"] == "bottleneck"
        and (library_of(f["kernel"]) or f["kernel"] in comm)
    ]
