"""Many processes as one profile: the per-rank view and the straggler finding."""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import DEMO, run_json
from tests.test_compare import TRACE, rewrite, scale, totals


def ranks(tmp_path: Path, slow: float = 1.0) -> Path:
    """Eight copies of the demo trace as eight ranks; rank 5's laplacian scaled by ``slow``."""
    root = tmp_path / "job"
    for r in range(8):
        folder = root / f"rank{r}"
        folder.mkdir(parents=True)
        if r == 5 and slow != 1.0:
            rewrite(TRACE, folder / "results.csv", scale({"laplacian_kernel": slow}))
        else:
            shutil.copy(TRACE, folder / "results.csv")
    return root


def test_identical_ranks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = run_json(capsys, str(ranks(tmp_path)))
    single = totals(TRACE)
    kernels = {k["name"]: k for k in doc["kernels"]}
    for name, total in single.items():
        assert round(kernels[name]["total_s"] * 1e9) == 8 * total
    view = doc["ranks"]
    assert len(view["labels"]) == 8 and view["stragglers"] == []
    assert all(k["cv"] == 0 for k in view["kernels"])
    assert not [f for f in doc["findings"] if f["rule"] == "straggler"]


def test_one_slow_rank_is_the_straggler(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = run_json(capsys, str(ranks(tmp_path, slow=1.3)))
    view = doc["ranks"]
    (s,) = view["stragglers"]
    assert s["rank"] == 5 and s["kernels"] == [k for k in totals(TRACE) if "laplacian" in k]
    lap = next(k for k in view["kernels"] if "laplacian" in k["name"])
    assert lap["slowest_rank"] == 5 and lap["cv"] > 0
    (f,) = [f for f in doc["findings"] if f["rule"] == "straggler"]
    base = sum(totals(TRACE).values())
    slowed = sum(totals(tmp_path / "job" / "rank5" / "results.csv").values())
    assert f["evidence"]["kernel_s"] == pytest.approx(slowed / 1e9)
    assert f["evidence"]["median_s"] == pytest.approx(base / 1e9)
    assert "rank 5" in f["summary"] and "laplacian_kernel" in f["summary"]


def test_one_process_has_no_rank_view(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(capsys, str(DEMO))["ranks"] is None


@settings(max_examples=15, deadline=None)
@given(cuts=st.lists(st.integers(1, 1003), max_size=4, unique=True))
def test_statistics_merged_over_files_equal_one_file(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int]
) -> None:
    """The demo trace split into consecutive pieces, one file (rank) each: every kernel's
    calls, total, min, max, mean, median and standard deviation equal the whole file's."""
    from roofscope.analysis.hotspots import hotspots
    from roofscope.readers.load import load

    lines = TRACE.read_text(encoding="utf-8").splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    root = tmp_path_factory.mktemp("split")
    bounds = [0, *sorted(cuts), len(rows)]
    for i, (a, b) in enumerate(pairwise(bounds)):
        if a < b:
            (root / f"r{i}").mkdir()
            (root / f"r{i}" / "results.csv").write_text(header + "".join(rows[a:b]), "utf-8")
    whole = {k.name: k for k in hotspots(load([str(TRACE)])).kernels}
    split = {k.name: k for k in hotspots(load([str(root)])).kernels}
    assert whole.keys() == split.keys()
    for name, k in whole.items():
        s = split[name]
        assert (s.calls, s.total_ns, s.min_ns, s.max_ns, s.median_ns) == (
            k.calls, k.total_ns, k.min_ns, k.max_ns, k.median_ns,
        )  # fmt: skip
        assert s.mean_ns == pytest.approx(k.mean_ns, rel=1e-12)
        assert (s.std_ns is None) == (k.std_ns is None)
        if k.std_ns is not None:
            assert s.std_ns == pytest.approx(k.std_ns, rel=1e-9)
