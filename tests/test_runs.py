"""What is one run (issue 19): nested runs are left out and named, and runs are ranks of one
job only on evidence (recorded ranks, rank numbers or pids in their paths, one clock)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, DEMO, SHARED_CORPUS, run_json
from tests.test_compare import TRACE

FD = SHARED_CORPUS / "amd" / "hpctraining-rocprofv1-mi250x" / "finite-difference"
RTX5070 = SHARED_CORPUS / "nvidia" / "gpu-roofline-profiler-rtx5070"
V1 = DATA / "rocprofv1-mi250x"
corpus = pytest.mark.skipif(not FD.is_dir(), reason="../shared/corpus is not beside the repo")


def stats_total_ns(path: Path) -> int:
    """The kernel time rocprof itself wrote: the sum of TotalDurationNs in results.stats.csv."""
    with path.open(newline="", encoding="utf-8") as f:
        return sum(int(row["TotalDurationNs"]) for row in csv.DictReader(f))


def codes(doc: dict[str, object]) -> list[str]:
    return [w["code"] for w in doc["warnings"]]  # type: ignore[attr-defined]


@corpus
def test_nested_rerun_is_left_out_and_named(capsys: pytest.CaptureFixture[str]) -> None:
    """hpctraining's finite-difference folder holds its xr_laplacian_dp_kernel1/ re-run: the
    top-level run is read alone (its own stats file's 2,610,787,312 ns), the re-run named."""
    doc = run_json(capsys, str(FD))
    assert round(doc["summary"]["kernel_time_s"] * 1e9) == stats_total_ns(
        FD / "results.stats.csv"
    ) == 2_610_787_312  # fmt: skip
    assert doc["runs"] == {
        "read": [str(FD / "results.csv")],
        "nested": [str(FD / "xr_laplacian_dp_kernel1")],
        "job": None,
        "separate": False,
    }
    assert "nested-runs" in codes(doc) and "clocks-apart" not in codes(doc)
    assert doc["ranks"] is None


@corpus
def test_nested_run_is_named_in_the_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(FD)]) == 0
    out = capsys.readouterr().out
    nested = str(FD / "xr_laplacian_dp_kernel1")
    runs = [line for line in out.replace("\n", " ").split("input:") if "runs:" in line]
    assert runs and f"1 nested, left out: {nested}" in " ".join(runs[-1].split())
    assert f"roofscope analyze {nested}" in " ".join(out.split())


def test_nested_run_in_a_derived_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The laplacian set with the stencils set copied below it: the laplacian alone."""
    root = tmp_path / "laplacian"
    shutil.copytree(V1 / "laplacian", root)
    shutil.copytree(V1 / "stencils", root / "older" / "stencils")
    doc = run_json(capsys, str(root))
    assert round(doc["summary"]["kernel_time_s"] * 1e9) == stats_total_ns(
        V1 / "laplacian" / "results.stats.csv"
    )
    assert doc["runs"]["nested"] == [str(root / "older" / "stencils")]
    assert [f["path"] for f in doc["inputs"] if "older" in f["path"]] == []


def test_a_file_given_alone_is_read_whatever_lies_beside_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Only folders are split into runs: files the user names are read as named."""
    root = tmp_path / "laplacian"
    shutil.copytree(V1 / "laplacian", root)
    shutil.copytree(V1 / "stencils", root / "stencils")
    doc = run_json(capsys, str(root / "results.csv"), str(root / "stencils" / "results.csv"))
    assert doc["runs"]["nested"] == [] and doc["runs"]["separate"] is True


def test_pass_folders_are_one_run_not_nested(tmp_path: Path) -> None:
    """rocprofv3's pass_N folders below a run are its counter passes, not nested runs."""
    from roofscope.readers.load import load

    counters = DATA / "rocprofv3-counters" / "2025-08_counter_collection.csv"
    for n in (1, 2):
        (tmp_path / f"pass_{n}").mkdir()
        shutil.copy(counters, tmp_path / f"pass_{n}" / "123_counter_collection.csv")
    profile = load([str(tmp_path)])
    assert profile.runs.nested == ()
    assert "nested-runs" not in [w.code for w in profile.warnings]


# -- ranks of one job, or separate profiles ----------------------------------------------


@corpus
def test_unrelated_ncu_exports_are_separate_profiles(capsys: pytest.CaptureFixture[str]) -> None:
    """saxpy, gemm_naive and gemm_tiled: three programs, no rank view, no straggler."""
    doc = run_json(capsys, str(RTX5070))
    assert doc["ranks"] is None
    assert doc["runs"]["separate"] is True and doc["runs"]["job"] is None
    assert len(doc["runs"]["read"]) == 3 and "mixed-runs" in codes(doc)
    assert not [f for f in doc["findings"] if f["rule"] == "straggler"]


@corpus
def test_rocprofv3_documentation_samples_are_no_job(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(SHARED_CORPUS / "amd" / "rocprofiler-sdk-docs-2025-08"))
    assert doc["ranks"] is None and doc["runs"]["separate"] is True


def test_two_runs_of_different_names_and_times_are_separate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shutil.copytree(V1 / "laplacian", tmp_path / "before")
    shutil.copytree(V1 / "stencils", tmp_path / "after")
    doc = run_json(capsys, str(tmp_path))
    assert doc["ranks"] is None and "mixed-runs" in codes(doc)


@pytest.mark.parametrize(
    ("names", "evidence"),
    [
        (["rank0", "rank1", "rank2"], "their paths differ only in a rank number or process id"),
        (["node-3", "node-12"], "their paths differ only in a rank number or process id"),
        (["alpha", "beta"], "their dispatches run at the same time on one clock"),
    ],
)
def test_ranks_of_one_job_keep_their_view(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, names: list[str], evidence: str
) -> None:
    """Copies of one trace run at the same time: ranks by name, else by the shared clock."""
    for name in names:
        (tmp_path / name).mkdir()
        shutil.copy(TRACE, tmp_path / name / "results.csv")
    doc = run_json(capsys, str(tmp_path))
    assert doc["runs"]["job"] == evidence and doc["runs"]["separate"] is False
    assert len(doc["ranks"]["ranks"]) == len(names)
    assert "mixed-runs" not in codes(doc)


def test_layer_numbers_are_no_rank_numbers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """'layer1' and 'layer2' are runs of different layers, not ranks ('r' ends the word)."""
    shutil.copytree(V1 / "laplacian", tmp_path / "layer1")
    shutil.copytree(V1 / "stencils", tmp_path / "layer2")
    doc = run_json(capsys, str(tmp_path))
    assert doc["runs"]["job"] is None and doc["ranks"] is None


def test_one_run_has_no_runs_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(DEMO)]) == 0
    assert "runs:" not in capsys.readouterr().out


def test_a_workloads_own_sub_folders_are_no_nested_runs(tmp_path: Path) -> None:
    """A rocprof-compute workload reads its folder itself; a CSV below it (Omniperf's
    prev_analysis/, here a copy of its timestamps.csv) is the workload's, not a nested run."""
    from roofscope.readers.load import load

    root = tmp_path / "mi200"
    shutil.copytree(DATA / "rocprof-compute-mi200", root)
    (root / "prev_analysis").mkdir()
    shutil.copy(root / "timestamps.csv", root / "prev_analysis" / "1201.csv")
    profile = load([str(root)])
    assert profile.runs.nested == () and profile.runs.read == (str(root / "pmc_perf.csv"),)


@pytest.mark.parametrize(
    ("recorded", "evidence"),
    [
        (True, "each input records its rank"),
        (False, "their paths differ only in a rank number or process id"),
    ],
)
def test_rocpd_ranks_by_mpi_rank_or_pid(tmp_path: Path, recorded: bool, evidence: str) -> None:
    """rocpd databases of one job: the MPI rank each records, else the pid in each file name
    (``<host>/<pid>_results.db``, the pid of its own dispatches)."""
    from roofscope.readers.load import load
    from tests.test_ranks import rocpd_ranks

    profile = load([str(rocpd_ranks(tmp_path / "job", 3, recorded=recorded))])
    assert profile.runs.job == evidence and not profile.runs.separate


def test_the_html_report_names_the_runs(tmp_path: Path) -> None:
    root = tmp_path / "laplacian"
    shutil.copytree(V1 / "laplacian", root)
    shutil.copytree(V1 / "stencils", root / "older")
    assert main(["analyze", str(root), "--html", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert f"<p>Runs: 1 read ({root / 'results.csv'}); 1 nested, left out: {root / 'older'}" in page
