"""The plain-Python columns the counter formulas compute over (analysis/metrics/column.py):
numpy's float64 results to the last bit, numpy itself the oracle here; and the counter table
fetching only the columns its formulas read (analysis/counters.py)."""

from __future__ import annotations

import csv
import math
import random

import numpy as np
import pytest

from roofscope.analysis.counters import dispatch_counters
from roofscope.analysis.metrics.column import Column, everything, greatest, stacked_sum, total
from roofscope.analysis.metrics.derived import metrics
from roofscope.analysis.metrics.machine import machine_for
from roofscope.analysis.work.counters import counter_work
from roofscope.readers.load import load
from tests.conftest import DATA


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 16, 127, 128, 129, 301, 1004, 5000])
def test_sums_and_means_are_numpys(size: int) -> None:
    rng = random.Random(size)
    values = [rng.uniform(-1, 1) * 10 ** rng.randint(-9, 9) for _ in range(size)]
    assert total(values) == float(np.asarray(values, dtype=np.float64).sum())
    if size:
        assert Column(values).mean() == float(np.asarray(values).mean())


def test_division_is_ieee_as_numpys() -> None:
    num, den = [1.0, -1.0, 0.0, math.inf, 3.0], [0.0, 0.0, 0.0, 0.0, 4.0]
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (np.array(num) / np.array(den)).tolist()
    got = (Column(num) / Column(den)).tolist()
    assert got[:2] == [math.inf, -math.inf] and math.isnan(got[2])
    assert got[3:] == expected[3:] == [math.inf, 0.75]
    assert (1.0 / Column([0.0, 2.0])).tolist() == [math.inf, 0.5]


def test_masks_select_and_count() -> None:
    c = Column([1.0, math.nan, -2.0, 4.0])
    ok = c.finite() & (c > 0)
    assert ok.tolist() == [True, False, False, True] and ok.count() == 2
    assert c[ok].tolist() == [1.0, 4.0] and c[everything(4)].size == 4
    assert Column([math.nan, 2.0]).nansum() == 2.0


def test_stacks_of_one_dispatch_sum_pairwise() -> None:
    """numpy sums a stack of one-value columns as one contiguous array (pairwise), a stack of
    wider ones row after row: rocprof v1's ``sum(X,16)``."""
    rng = random.Random(16)
    for width in (1, 3):
        rows = [[rng.uniform(0, 1e6) * 10 ** rng.randint(-6, 6) for _ in range(width)]
                for _ in range(16)]  # fmt: skip
        expected = np.vstack([np.array(r) for r in rows]).sum(axis=0).tolist()
        assert stacked_sum([Column(r) for r in rows]).tolist() == expected
    got = greatest([Column([1.0, 5.0]), Column([math.nan, 2.0])]).tolist()
    assert math.isnan(got[0]) and got[1] == 5.0


def test_the_table_fetches_only_what_the_formulas_read() -> None:
    """vcopy MI200 (trimmed) counts 989 counters on every dispatch; the work and the metrics
    read a tenth of them, and only those are turned into Python floats."""
    profile = load([str(DATA / "rocprof-compute-mi200")])
    sources = profile.sources("dispatches")
    table = dispatch_counters(profile, sources)
    assert table is not None
    columns = table.counters._columns
    assert len(columns) > 900 and len(columns._loaded) == 0  # type: ignore[attr-defined]
    counter_work(profile, sources)
    metrics(profile, sources, machine_for(profile, None))
    loaded = set(columns._loaded)  # type: ignore[attr-defined]
    assert 20 < len(loaded) < len(columns) / 4
    assert {"GRBM_GUI_ACTIVE", "SQ_WAVES", "TCC_EA_RDREQ_sum"} <= loaded
    with (DATA / "rocprof-compute-mi200" / "pmc_perf.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    waves = [float(r[rows[0].index("SQ_WAVES")]) for r in rows[1:]]
    assert table.counters["SQ_WAVES"].tolist() == waves
