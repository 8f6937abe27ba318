"""Per-run partial results, merged: the cluster summary against `analyze --json` of the same
inputs, and merging over random splits and orders (roofscope.cluster)."""

from __future__ import annotations

import pickle
import random
import shutil
import sqlite3
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ddsketch import DDSketch
from hypothesis import given, settings
from hypothesis import strategies as st

from roofscope.cluster import sketch
from roofscope.cluster.partial import Partial, merge, reduce_run, summary
from roofscope.errors import InputError
from tests.conftest import DATA, SHARED_CORPUS, run_json
from tests.test_compare import TRACE, totals
from tests.test_ranks import ranks, rocpd_ranks, split_trace

ROCPD = DATA / "rocpd-mi250x" / "finite-difference_results.db"
HTA_RANKS = SHARED_CORPUS / "torch" / "hta-tests-data" / "trace_filter"
ALPHA = sketch.RELATIVE_ACCURACY


def runs_of(root: Path) -> list[list[str]]:
    """One run per folder (or file) directly below ``root``, as part B splits a job."""
    return [[str(p)] for p in sorted(root.iterdir())]


def cluster(root: Path) -> dict[str, Any]:
    return summary(merge(reduce_run(run) for run in runs_of(root)))


def ns(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1e9)


def assert_kernels_match(doc: dict[str, Any], got: dict[str, Any]) -> None:
    """Calls, totals, min, max exact; the median within the sketch's error of the exact one
    (exactly equal where the kernel kept its durations)."""
    want = {k["name"]: k for k in doc["kernels"]}
    have = {k["name"]: k for k in got["kernels"]}
    assert list(have) == list(want)  # the same kernels in the same order
    for name, k in want.items():
        h = have[name]
        assert h["calls"] == k["calls"]
        assert h["total_ns"] == ns(k["total_s"])
        assert (h["min_ns"], h["max_ns"]) == (ns(k["min_s"]), ns(k["max_s"]))
        if k["median_s"] is None:  # no timed dispatch (a counter-collection run)
            assert h["median_ns"] is None and h["share"] is None
            continue
        median = k["median_s"] * 1e9
        if h["median_exact"]:
            assert h["median_ns"] == pytest.approx(median, rel=1e-12)
        else:
            assert abs(h["median_ns"] - median) <= ALPHA * median
        if k["share"] is None:  # some kernel has no timed dispatch: no grand total
            assert h["share"] is None and got["total_ns"] is None
        else:
            assert h["share"] == pytest.approx(k["share"], rel=1e-12)


def test_one_rocpd_run_equals_analyze(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(ROCPD))
    got = summary(reduce_run([str(ROCPD)]))
    assert_kernels_match(doc, got)
    assert got["dispatches"] == 1004  # rocprofv3's kernel_dispatch rows of this database
    lap = got["kernels"][0]
    assert lap["calls"] == 1001 and not lap["median_exact"]  # past 1,000: the sketch
    (device,) = got["devices"]["devices"]
    with sqlite3.connect(ROCPD) as con:  # the database's own rows, unioned here
        spans = sorted(con.execute("SELECT start, end FROM kernels").fetchall())
    con.close()
    busy, reach = 0, spans[0][0]
    for start, end in spans:
        busy += max(0, end - max(start, reach))
        reach = max(reach, end)
    assert device["busy_ns"] == busy
    assert (device["first_ns"], device["last_ns"]) == (spans[0][0], reach)
    assert device["span_ns"] == reach - spans[0][0] and device["dispatches"] == len(spans)
    assert got["ranks"] is None and doc["ranks"] is None


ONE_RUN = [
    DATA / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    DATA / "rocprofv3-counters",  # a counter-collection run: no timed dispatch
    SHARED_CORPUS / "amd" / "hpctraining-rocprofv1-mi250x" / "seismic-stencils"
    / "xr_stencils_R4_64_64_1",  # results.csv beside its .json, .db and stats
    SHARED_CORPUS / "amd" / "rocprofv3-kernel-trace-mi300a",
    SHARED_CORPUS / "nvidia" / "zisk-zorch-nsys-rtx5090",
]  # fmt: skip


@pytest.mark.parametrize("path", ONE_RUN, ids=lambda p: p.name)
def test_one_run_of_each_producer_equals_analyze(
    capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    if not path.exists():
        pytest.skip("shared corpus not present")
    assert_kernels_match(run_json(capsys, str(path)), summary(reduce_run([str(path)])))


def test_eight_rocprof_v1_ranks_and_their_straggler(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = ranks(tmp_path, slow=1.3)  # the demo trace 8 times; rank 5's laplacian 1.3x
    doc = run_json(capsys, str(root))
    got = cluster(root)
    assert_kernels_match(doc, got)
    single = totals(TRACE)
    lap = next(k for k in single if "laplacian" in k)
    slowed = totals(root / "rank5" / "results.csv")[lap]
    have = {k["name"]: k["total_ns"] for k in got["kernels"]}
    assert have[lap] == 7 * single[lap] + slowed  # summed from the CSVs, not from roofscope
    view, want = got["ranks"], doc["ranks"]
    assert view["ranks"] == want["ranks"] == list(range(8))
    assert view["labels"] == want["labels"]
    (s,) = view["stragglers"]
    assert s["rank"] == 5 == want["stragglers"][0]["rank"]
    assert s["kernels"] == want["stragglers"][0]["kernels"] == [lap]
    assert s["kernel_ns"] == sum(totals(root / "rank5" / "results.csv").values())
    assert [round(t * 1e9) for t in want["kernel_time_s"]] == view["kernel_ns"]


def test_rocpd_ranks_numbered_by_recorded_rank(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = rocpd_ranks(tmp_path / "job", 4, slow_rank=1)  # recorded rank = 3 - i
    doc = run_json(capsys, str(root))
    runs = [[str(p)] for p in sorted(root.rglob("*.db"))]
    got = summary(merge(reduce_run(r) for r in runs))
    assert_kernels_match(doc, got)
    assert got["ranks"]["ranks"] == doc["ranks"]["ranks"] == [0, 1, 2, 3]
    (s,) = got["ranks"]["stragglers"]
    assert s["rank"] == 2 == doc["ranks"]["stragglers"][0]["rank"]  # the 2nd pid: rank 3 - 1


@pytest.mark.skipif(not HTA_RANKS.is_dir(), reason="shared corpus not present")
def test_kineto_ranks_from_hta(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "job"
    root.mkdir()
    for f in HTA_RANKS.glob("*.json.gz"):
        shutil.copy(f, root / f.name)
    doc = run_json(capsys, str(root))
    got = cluster(root)
    assert_kernels_match(doc, got)
    view, want = got["ranks"], doc["ranks"]
    assert view["ranks"] == want["ranks"] == [0, 1]  # Kineto's distributedInfo ranks
    assert view["kernel_ns"] == [round(t * 1e9) for t in want["kernel_time_s"]]
    assert view["stragglers"] == want["stragglers"] == []
    assert got["runs"]["job"] == doc["runs"]["job"]


def test_summary_only_run_is_refused() -> None:
    """A stats file has no dispatches: refused in one line naming it, never an empty run."""
    stats = DATA / "summary" / "kernels.csv"
    with pytest.raises(InputError) as caught:
        reduce_run([str(stats)])
    (line,) = str(caught.value).splitlines()
    assert line.startswith(f"{stats}: holds kernel summaries only (no dispatches)")
    assert "without --scheduler" in line


# -- merging: associative, commutative ------------------------------------------------------


def shuffled_merge(parts: list[Partial], rng: random.Random) -> Partial:
    """The parts merged in a random order and a random grouping."""
    parts = parts[:]
    rng.shuffle(parts)
    while len(parts) > 1:
        i = rng.randrange(len(parts) - 1)
        parts[i : i + 2] = [merge([parts[i], parts[i + 1]])]
    return parts[0]


QS = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)


def kernel_numbers(p: Partial) -> dict[str, tuple[Any, ...]]:
    return {
        name: (
            k.calls, k.timed, k.total_ns, k.sumsq_ns2, k.min_ns, k.max_ns, k.raw_names,
            k.durations.count, tuple(k.durations.quantile(q) for q in QS),
        )
        for name, k in p.kernels.items()
    }  # fmt: skip


@settings(max_examples=8, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 1003), min_size=1, max_size=4, unique=True),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_splits_merged_in_random_orders(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], seed: int
) -> None:
    """The demo trace cut into consecutive files, each reduced alone and merged in a random
    order and grouping: counts, sums, min, max and every sketch quantile equal the whole's."""
    whole = reduce_run([str(TRACE)])
    root = split_trace(tmp_path_factory.mktemp("split"), cuts)
    parts = [reduce_run(run) for run in runs_of(root)]
    rng = random.Random(seed)
    one, two = shuffled_merge(parts, rng), shuffled_merge(parts, rng)
    assert kernel_numbers(one) == kernel_numbers(two) == kernel_numbers(whole)
    assert summary(one) == summary(two)  # devices, ranks, runs too


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(st.integers(0, 10**10), min_size=1, max_size=3000),
    pieces=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_durations_merge_in_any_order(values: list[int], pieces: int, seed: int) -> None:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(len(values) + 1), min(pieces, len(values) + 1)))
    bounds = [0, *cuts, len(values)]
    parts = [sketch.exact(values[a:b]) for a, b in pairwise(bounds)]
    rng.shuffle(parts)
    got = parts[0]
    for p in parts[1:]:
        got = sketch.merged(got, p) if rng.random() < 0.5 else sketch.merged(p, got)
    whole = sketch.exact(values)
    assert got.count == whole.count == len(values)
    assert [got.quantile(q) for q in QS] == [whole.quantile(q) for q in QS]
    if len(values) <= sketch.EXACT_LIMIT:
        assert got.quantile(0.5) == float(np.median(values))


def test_sketch_bins_are_the_librarys() -> None:
    """The bins computed in SQL give the sketch the library builds value by value, and its
    quantiles are within the stated 1 % of the exact value at their rank (5,003 durations
    drawn log-normally over six decades, with zeros)."""
    rng = np.random.default_rng(7)
    values = [int(v) for v in rng.lognormal(12, 2, 5000)] + [0, 0, 1]
    ours = sketch.exact(values)
    theirs = DDSketch(ALPHA)
    for v in values:
        theirs.add(v)
    assert ours.sketch is not None
    exact = np.sort(values)
    for q in QS:
        assert ours.quantile(q) == pytest.approx(theirs.get_quantile_value(q), rel=1e-12)
        at_rank = exact[int(q * (len(values) - 1))]
        assert abs(ours.quantile(q) - at_rank) <= ALPHA * at_rank


def test_partial_pickles_and_empty_merge() -> None:
    part = reduce_run([str(ROCPD)])
    again = pickle.loads(pickle.dumps(part))
    assert kernel_numbers(again) == kernel_numbers(part)
    assert summary(merge([]))["kernels"] == []
    with pytest.raises(ValueError, match="two partials"):
        merge([part, part])
