"""Ratios across counter passes.

rocprof-compute 3.6 and later leave one file per counter pass (``results_pmc_perf_N.csv``),
each a separate replay of the same dispatches; roofscope joins them on the dispatch
(readers/amd/compute/rocprof_compute_long.py) and keeps which pass counted each counter
(``Profile.counter_passes``). A ratio whose counters come from two passes divides counts of
two different runs of the dispatch: ``GRBM_GUI_ACTIVE`` (busy cycles, one pass) over
``GRBM_COUNT`` (all cycles, another pass) gives a "GPU busy" of 101 % where the second replay
ran a little faster. Such a ratio is marked, never passed off as a plain percentage.
"""

from __future__ import annotations

from collections.abc import Mapping

from roofscope.analysis.counters import Array, Counters, Reads
from roofscope.analysis.metrics.formula import Metric, Parts
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.metrics.value import CrossPass


def cross_passes(
    found: Mapping[str, tuple[Metric, Parts]],
    c: Counters,
    m: Machine,
    duration_ns: Array,
    passes: Mapping[str, str],
) -> dict[str, CrossPass]:
    """Each ratio of ``found`` whose counters were counted in more than one pass."""
    if not passes:
        return {}
    out: dict[str, CrossPass] = {}
    for name, (metric, _) in found.items():
        if metric.kind != "ratio":
            continue
        reads = Reads(c)
        metric.parts(reads, m, duration_ns)
        counted = {n: passes[n] for n in sorted(reads.read) if n in passes}
        if len(set(counted.values())) > 1:
            out[name] = CrossPass(tuple(counted.items()))
    return out
