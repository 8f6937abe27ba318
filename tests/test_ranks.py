"""Many processes as one profile: the per-rank view and the straggler finding."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofscope.analysis.hotspots import Hotspots
from tests.conftest import DATA, DEMO, NAMED_COUNTERS, rocpd_table, run_json
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

    root = split_trace(tmp_path_factory.mktemp("split"), cuts)
    assert_same_statistics(hotspots(load([str(TRACE)])), hotspots(load([str(root)])))


def split_trace(root: Path, cuts: list[int]) -> Path:
    """The demo trace cut at ``cuts`` (row indices) into consecutive files, one folder each."""
    lines = TRACE.read_text(encoding="utf-8").splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    bounds = [0, *sorted(cuts), len(rows)]
    for i, (a, b) in enumerate(pairwise(bounds)):
        if a < b:
            (root / f"r{i}").mkdir()
            (root / f"r{i}" / "results.csv").write_text(header + "".join(rows[a:b]), "utf-8")
    return root


def assert_same_statistics(whole: Hotspots, split: Hotspots) -> None:
    """Every kernel's calls, total, min, max, median exactly; mean and std to rounding."""
    one = {k.name: k for k in whole.kernels}
    other = {k.name: k for k in split.kernels}
    assert one.keys() == other.keys()
    for name, k in one.items():
        s = other[name]
        assert (s.calls, s.total_ns, s.min_ns, s.max_ns, s.median_ns) == (
            k.calls, k.total_ns, k.min_ns, k.max_ns, k.median_ns,
        )  # fmt: skip
        assert s.mean_ns == pytest.approx(k.mean_ns, rel=1e-12)
        assert (s.std_ns is None) == (k.std_ns is None)
        if k.std_ns is not None:
            assert s.std_ns == pytest.approx(k.std_ns, rel=1e-9)


# -- many files read in parallel ------------------------------------------------------------


def rocpd_ranks(root: Path, n: int, *, slow_rank: int = -1, recorded: bool = True) -> Path:
    """``n`` rocpd databases (bench/gen_rocpd.py: pid 10000 + i); the recorded MPI rank is
    reversed against the pid order (n - 1 - i), or removed when not ``recorded``."""
    from bench.gen_rocpd import make_rank

    for i in range(n):
        path = make_rank(root, i, 1, 1.3 if i == slow_rank else 1.0)
        with sqlite3.connect(path) as con:
            table = rocpd_table(con, "info_process")
            (env,) = con.execute(f"SELECT environment FROM {table}").fetchone()
            environment = json.loads(env)
            environment.pop("OMPI_COMM_WORLD_RANK")
            if recorded:
                environment["PMI_RANK"] = str(n - 1 - i)
            con.execute(f"UPDATE {table} SET environment = ?", (json.dumps(environment),))
        con.close()
    return root


def test_rank_numbers_come_from_the_recorded_mpi_rank(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = rocpd_ranks(tmp_path / "job", 4, slow_rank=1)  # pid 10001 is MPI rank 2
    view = run_json(capsys, str(root))["ranks"]
    assert view["ranks"] == [0, 1, 2, 3]
    assert [lbl.split("/")[-1] for lbl in view["labels"]] == [
        f"{10000 + i}_results.db (pid {10000 + i})" for i in (3, 2, 1, 0)
    ]
    (s,) = view["stragglers"]
    assert s["rank"] == 2
    lap = next(k for k in view["kernels"] if "laplacian" in k["name"])
    assert lap["slowest_rank"] == 2


def test_without_recorded_ranks_they_follow_the_pids(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = rocpd_ranks(tmp_path / "job", 3, slow_rank=1, recorded=False)
    view = run_json(capsys, str(root))["ranks"]
    assert view["ranks"] == [0, 1, 2]
    assert [lbl.split("(pid ")[1] for lbl in view["labels"]] == ["10000)", "10001)", "10002)"]
    assert view["stragglers"][0]["rank"] == 1


def test_each_process_keeps_its_own_devices(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Eight copies of one trace: eight (process, device) timelines, each the single trace's."""
    single = run_json(capsys, str(TRACE))["devices"]
    doc = run_json(capsys, str(ranks(tmp_path)))
    devices = doc["devices"]
    assert len(devices) == 8 * len(single)
    assert sorted({d["input"] for d in devices}) == sorted(
        str(tmp_path / "job" / f"rank{r}" / "results.csv") for r in range(8)
    )
    for d in devices:
        assert (d["busy_s"], d["span_s"], d["gaps"]) == (
            single[0]["busy_s"], single[0]["span_s"], single[0]["gaps"],
        )  # fmt: skip
    assert single[0]["input"] is None


@pytest.mark.parametrize("layout", ["rocpd", "csv"])
def test_parallel_read_equals_one_after_another(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    layout: str,
) -> None:
    """Worker processes (``--jobs 2``) give the same check-up, number for number, as reading
    the processes' files one after another (``--jobs 1``)."""
    import roofscope.readers.load as loader

    monkeypatch.setattr(loader, "PARALLEL_MIN_BYTES", 0)
    root = rocpd_ranks(tmp_path / "job", 6, slow_rank=4) if layout == "rocpd" else ranks(tmp_path)
    calls: list[int] = []
    real = loader.shards.read_parallel

    def spy(*args: Any) -> Any:
        calls.append(args[1])
        return real(*args)

    monkeypatch.setattr(loader.shards, "read_parallel", spy)
    one = run_json(capsys, str(root), "--jobs", "1")
    assert calls == []
    two = run_json(capsys, str(root), "--jobs", "2")
    assert calls == [2]
    assert two == one
    assert len(one["ranks"]["ranks"]) == (6 if layout == "rocpd" else 8)


def test_parallel_read_keeps_counter_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker numbers the counter names it meets from 0 (rank1's SQ_WAVES is its second
    name, the profile's first); the merge gives every name the profile's one id, so each
    value keeps its name, as one process reading the ranks in turn gives them."""
    import roofscope.readers.load as loader
    from roofscope.readers.load import load

    monkeypatch.setattr(loader, "PARALLEL_MIN_BYTES", 0)
    with (DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv").open(newline="") as f:
        header, *rows = list(csv.reader(f))
    given = {"rank0": {"SQ_WAVES": 3, "GRBM_COUNT": 5}, "rank1": {"TA_BUSY": 7, "SQ_WAVES": 11}}
    for rank, counters in given.items():
        (tmp_path / rank).mkdir()
        with (tmp_path / rank / "results.csv").open("w", newline="") as f:
            csv.writer(f).writerows(
                [header + list(counters), *(r + [str(v) for v in counters.values()] for r in rows)]
            )
    want = Counter(
        {
            (rank, c, float(v)): len(rows)
            for rank, counters in given.items()
            for c, v in counters.items()
        }
    )
    for jobs in (1, 2):
        profile = load([str(tmp_path)], jobs=jobs)
        got = Counter(
            (Path(profile.inputs[int(s)].path).parent.name, str(c), float(v))
            for s, c, v in profile.con.execute(
                f"""SELECT d.source, c.counter, c.value FROM {NAMED_COUNTERS} c
                JOIN dispatches d ON d.rowid = c.row_id"""
            ).fetchall()
        )
        assert got == want, jobs


def test_parallel_statistics_over_random_splits(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The split-file property of test_statistics_merged_over_files_equal_one_file, read by
    two worker processes and merged from their shards."""
    import roofscope.readers.load as loader
    from roofscope.analysis.hotspots import hotspots
    from roofscope.readers.load import load

    monkeypatch.setattr(loader, "PARALLEL_MIN_BYTES", 0)
    whole = hotspots(load([str(TRACE)]))
    for cuts in ([500], [1, 2, 3, 1003], [17, 400, 401, 999]):
        root = split_trace(tmp_path_factory.mktemp("split"), cuts)
        assert_same_statistics(whole, hotspots(load([str(root)], jobs=2)))
