"""The cluster summary's findings: the check-up's own checks and rules on the merged partials
(``cluster/diagnosis.py``), equal to ``analyze``'s where the partials hold what they read."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, SHARED_CORPUS, run_json
from tests.test_cluster_counters import FETCH, OP2, split
from tests.test_ranks import ranks

# the kernel rules and limiter verdicts that read counter metrics, occupancy or the limiter,
# which the partials do not hold (cluster/diagnosis.py): analyze's alone
NEEDS_METRICS = {
    "occupancy-limited", "low-achieved-occupancy", "low-l2-hit-rate", "lds-bank-conflicts",
    "low-active-threads", "compute-near-roof",
}  # fmt: skip


def findings(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (f["rule"], f["kernel"], f["kind"], f["severity"], f["summary"], f["prescription"])
        for f in doc["findings"]
        if f["rule"] not in NEEDS_METRICS
    ]


def both(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    one = run_json(capsys, str(root))
    many = run_json(capsys, str(root), "--scheduler", "local", "--jobs", "1")
    return one, many


def test_a_straggler_rank_is_found_as_analyze_finds_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Eight ranks of the demo trace, rank 5's laplacian 1.3x slower."""
    one, many = both(capsys, ranks(tmp_path, slow=1.3))
    assert findings(many) == findings(one)
    assert [f["rule"] for f in many["findings"]] == ["straggler"]
    straggler = many["findings"][0]
    assert "rank 5" in straggler["summary"]
    assert straggler["gain_share"] == pytest.approx(one["findings"][0]["gain_share"], rel=1e-12)


HTA = SHARED_CORPUS / "torch" / "hta-tests-data"
CORPUS_RUNS = [HTA / "trace_filter", HTA / "amd_trace", HTA / "critical_path"]


@pytest.mark.parametrize(
    "path",
    [
        *sorted((DATA / "kineto").glob("*.json.gz")),
        *(
            pytest.param(p, marks=pytest.mark.skipif(not p.is_dir(), reason="no shared corpus"))
            for p in CORPUS_RUNS
        ),
    ],
    ids=lambda p: p.name,
)
def test_one_run_gives_analyzes_findings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path
) -> None:
    """Real traces without counters (a folder of two ranks: trace_filter): the same findings,
    word for word (idle gaps, copies, short kernels, communication, warm-up, single
    dispatches)."""
    root = tmp_path / "job"
    if path.is_dir():
        shutil.copytree(path, root)
    else:
        root.mkdir()
        shutil.copy(path, root / path.name)
    one, many = both(capsys, root)
    assert one["findings"], "a trace with nothing to find tests nothing"
    assert findings(many) == findings(one)
    for a, b in zip(one["findings"], many["findings"], strict=True):
        if a["gain_share"] is None:
            assert b["gain_share"] is None
        else:
            assert b["gain_share"] == pytest.approx(a["gain_share"], rel=1e-9)


@pytest.mark.parametrize(
    ("path", "key", "keep"),
    [
        (FETCH, "Dispatch_Id", ()),
        (OP2 / "pmc_perf.csv", "Dispatch_ID", ("sysinfo.csv",)),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_counter_runs_split_into_ranks_give_analyzes_validity_and_roofline_findings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path, key: str, keep: tuple[str, ...]
) -> None:
    """Real counter collections cut into three ranks: each kernel's counter coverage summed
    over the ranks (no counters-missing where analyze sees counters), the warm-up and
    roofline verdicts as analyze's; only the rules that read metrics are analyze's alone."""
    root = split(path, key, tmp_path / "job", [7, 19], keep)
    one, many = both(capsys, root)
    assert findings(many) == findings(one)
    assert "counters-missing" not in {f["rule"] for f in many["findings"]}
