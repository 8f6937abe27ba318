"""Issue 38 across the corpus, points 2 and 3: no kernel whose grid holds fewer blocks than
the device has SMs (CUs), or that Nsight Compute calls too small to fill the device, is given
memory-access or coalescing advice; no kernel whose busiest measured unit is a compute unit at
BUSY_PCT (60 %) of its peak or more is given memory-access advice. Each corpus profile is
checked up once through ``roofscope.analyze``, in 2 worker processes."""

from __future__ import annotations

import re
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest

from tests.conftest import SHARED_CORPUS
from tests.test_json_unchanged import _tool

# roofscope's rules that prescribe a better access pattern or cache reuse
MEMORY_ACCESS = ("memory-far-below-roof", "low-l2-hit-rate")
BUSY_PCT = 60.0
# ncu's rule texts calling a grid too small (SOLBottleneck, LaunchConfiguration)
SMALL_GRID = re.compile(r"grid is too small to fill|less than the GPU's [\d,]+ multiprocessors")


def violations(path: Path) -> tuple[list[str], int, int]:
    """(what breaks the two rules, small-grid kernels seen, busy-compute kernels seen)."""
    import roofscope
    from roofscope.errors import RoofscopeError

    try:
        report = roofscope.analyze(path).checkup
    except RoofscopeError:
        return [], 0, 0
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


@pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="needs ../shared/corpus")
def test_no_memory_advice_for_small_grids_or_busy_compute() -> None:
    paths = _tool().profiles(SHARED_CORPUS)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(violations, paths))
    assert [b for bad, _, _ in results for b in bad] == []
    # the corpus holds both kinds, so the check is not vacuous
    assert sum(n for _, n, _ in results) > 0 and sum(n for _, _, n in results) > 0
