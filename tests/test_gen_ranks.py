"""bench/gen_ranks.py writes per-rank rocpd databases and Kineto traces that roofscope reads,
holding exactly the calls and durations the generator says it wrote.

The expected numbers are the generator's own arithmetic (bench/rank_plan.py), checked first
against the files themselves (SQL over rocpd's ``kernels`` view, ``json`` over the trace),
then against roofscope's report."""

from __future__ import annotations

import gzip
import json
import sqlite3
import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from bench.gen_ranks import Expected, generate
from bench.rank_plan import call_counts

from tests.conftest import run_json

RANKS, DISPATCHES, KERNELS, STRAGGLER, SLOW = 3, 1_500, 40, 1, 1.3


def test_call_counts_are_exact_and_skewed() -> None:
    counts = call_counts(1_000, 7)
    # Zipf weights 1/(i+1)^1.1, i = 0..6, sum 2.41005; shares of 1000: 414.938 193.576
    # 123.922 90.306 70.651 57.812 48.795; the floors sum to 995, so the five largest
    # remainders (.938 .922 .812 .795 .651) get one more; rounding each would give 1001
    assert counts.tolist() == [415, 193, 124, 90, 71, 58, 49]
    assert int(call_counts(20_000_000, 300).sum()) == 20_000_000


@pytest.fixture(scope="module", params=["rocpd", "kineto"])
def job(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Expected:
    out = tmp_path_factory.mktemp(request.param)
    return generate(
        out,
        fmt=request.param,
        ranks=RANKS,
        dispatches=DISPATCHES,
        kernels=KERNELS,
        straggler=STRAGGLER,
        slow=SLOW,
    )


def _from_files(exp: Expected) -> dict[str, list[int]]:
    """Per kernel name: [calls, total ns] over every file, read without roofscope."""
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in exp.paths:
        if path.suffix == ".db":
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            sql = 'SELECT name, count(*), sum("end" - start) FROM kernels GROUP BY name'
            rows = con.execute(sql).fetchall()
            con.close()
        else:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                events = json.load(f)["traceEvents"]
            per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for e in events:
                if e.get("cat") == "kernel":
                    per[e["name"]][0] += 1
                    per[e["name"]][1] += e["dur"] * 1000  # integer microseconds
            rows = [(n, c, t) for n, (c, t) in per.items()]
        for name, calls, total in rows:
            found[name][0] += calls
            found[name][1] += total
    return dict(found)


def _expected(exp: Expected) -> dict[str, list[int]]:
    calls, totals = exp.calls.sum(axis=0), exp.total_ns.sum(axis=0)
    return {n: [int(c), int(t)] for n, c, t in zip(exp.names, calls, totals, strict=True) if c}


def test_the_files_hold_what_the_generator_says(job: Expected) -> None:
    assert job.dispatches == RANKS * DISPATCHES == 4_500
    assert job.calls.sum(axis=1).tolist() == [DISPATCHES] * RANKS
    assert len(set(job.names)) == KERNELS
    assert _from_files(job) == _expected(job)


def test_the_straggler_is_slow_by_the_factor_asked(job: Expected) -> None:
    per_rank = job.total_ns.sum(axis=1)
    others = np.delete(per_rank, STRAGGLER)
    # same kernels, same call counts, durations drawn alike: the ratio is about SLOW
    assert 1.15 < per_rank[STRAGGLER] / statistics.median(others.tolist()) < 1.45


def test_roofscope_reads_the_calls_and_totals(
    job: Expected, capsys: pytest.CaptureFixture[str]
) -> None:
    root = job.paths[0].parent if job.paths[0].suffix != ".db" else job.paths[0].parents[1]
    doc = run_json(capsys, str(root), "--jobs", "1")
    want = _expected(job)
    got = {k["name"]: [k["calls"], round(k["total_s"] * 1e9)] for k in doc["kernels"]}
    assert got == want
    assert doc["summary"]["dispatches"] == 4_500
    ranks = doc["ranks"]
    assert ranks["ranks"] == [0, 1, 2]
    per_rank = [round(s * 1e9) for s in ranks["kernel_time_s"]]
    assert per_rank == job.total_ns.sum(axis=1).tolist()
    assert [s["rank"] for s in ranks["stragglers"]] == [STRAGGLER]


def test_an_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="format 'csv': expected one of rocpd, kineto"):
        generate(tmp_path, fmt="csv", ranks=1, dispatches=1)
