"""A file given alone uses the metadata its profiler wrote beside it, whatever the file's role
(issue 19): rocprof v1 ``results.sysinfo.txt`` (rocminfo), rocprofv3 ``<pid>_agent_info.csv``,
rocprof-compute ``sysinfo.csv`` and ``roofline.csv``.

Real files: rocprofv1-mi250x/stencils and the shared corpus's finite-difference run (their
rocminfo: 8 x "AMD Instinct MI250X/MI250", gfx90a, 104 CUs), rocprof-compute-mi200. Derived in
``tmp_path``: a valid results.json written from the stencils results.csv rows (as
test_rocprof_v1_json does: the corpus results.json files are 80-byte fragments); rocprofv3 files
of tests/data copied under one process prefix ``238_`` beside the real ``238_agent_info.csv``
(gfx900, "Radeon RX Vega", 64 CUs; the corpus has no rocprofv3 run with its agent_info.csv, so
the pairing is made here and the GPU is the agent file's, not the traced one's).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, SHARED_CORPUS, run_json
from tests.test_rocprof_v1_json import write_json

STENCILS = DATA / "rocprofv1-mi250x" / "stencils"
FINITE_DIFFERENCE = SHARED_CORPUS / "amd" / "hpctraining-rocprofv1-mi250x" / "finite-difference"
AGENT_INFO = DATA / "rocprofv3-counters" / "238_agent_info.csv"
V3 = DATA / "rocprofv3-layouts"
MI250X = {"producer": "rocprof", "gpu": "AMD Instinct MI250X/MI250", "arch": "gfx90a"}
VEGA = {"producer": "rocprofv3", "gpu": "Radeon RX Vega", "arch": "gfx900"}


def run_of(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: doc["run"][k] for k in ("producer", "gpu", "arch")}


def roles(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(Path(i["path"]).name, i["role"]) for i in doc["inputs"]]


def test_v1_stats_alone_finds_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(STENCILS / "results.stats.csv"))
    assert run_of(doc) == MI250X
    assert roles(doc) == [
        ("results.stats.csv", "kernel-summary"),
        ("results.sysinfo.txt", "metadata"),
    ]


@pytest.mark.skipif(not FINITE_DIFFERENCE.is_dir(), reason="shared corpus not present")
def test_v1_stats_alone_in_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(FINITE_DIFFERENCE / "results.stats.csv"))
    assert run_of(doc) == MI250X


def test_v1_json_alone_finds_the_gpu(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with (STENCILS / "results.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    write_json(tmp_path / "results.json", rows, quoted_ids=False)
    shutil.copy(STENCILS / "results.sysinfo.txt", tmp_path)
    doc = run_json(capsys, str(tmp_path / "results.json"))
    assert run_of(doc) == MI250X
    assert roles(doc) == [("results.json", "dispatches"), ("results.sysinfo.txt", "metadata")]


def test_v1_folder_reads_the_rocminfo_once(capsys: pytest.CaptureFixture[str]) -> None:
    """results.csv and the stats file beside it (a cross-check) share one rocminfo."""
    doc = run_json(capsys, str(STENCILS))
    assert [r for r in roles(doc) if r[0] == "results.sysinfo.txt"] == [
        ("results.sysinfo.txt", "metadata")
    ]


@pytest.mark.parametrize(
    ("source", "name", "role"),
    [
        (V3 / "2025-08_kernel_trace.csv", "238_kernel_trace.csv", "dispatches"),
        (V3 / "hip_api_stats.csv", "238_hip_api_stats.csv", "api-summary"),
        (V3 / "memory_copy_trace.csv", "238_memory_copy_trace.csv", "copies"),
        (
            DATA / "rocprofv3-counters" / "2025-08_counter_collection.csv",
            "238_counter_collection.csv",
            "dispatches",
        ),
    ],
    ids=["kernel_trace", "api_stats", "memory_copy_trace", "counter_collection"],
)
def test_v3_file_alone_finds_its_agent_info(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path, name: str, role: str
) -> None:
    shutil.copy(source, tmp_path / name)
    shutil.copy(AGENT_INFO, tmp_path)
    if role == "copies":  # a copy trace alone gives no kernel: read it beside a kernel trace
        shutil.copy(V3 / "2025-08_kernel_trace.csv", tmp_path / "kernels.csv")
        doc = run_json(capsys, str(tmp_path / "kernels.csv"), str(tmp_path / name))
    else:
        doc = run_json(capsys, str(tmp_path / name))
    assert run_of(doc) == VEGA
    assert (name, role) in roles(doc)
    assert roles(doc).count(("238_agent_info.csv", "metadata")) == 1


def test_v3_folder_reads_the_agent_info_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shutil.copy(V3 / "2025-08_kernel_trace.csv", tmp_path / "238_kernel_trace.csv")
    shutil.copy(AGENT_INFO, tmp_path)
    for args in (
        [str(tmp_path)],
        [str(tmp_path / "238_kernel_trace.csv"), str(tmp_path / AGENT_INFO.name)],
    ):
        doc = run_json(capsys, *args)
        assert run_of(doc) == VEGA
        assert roles(doc) == [
            ("238_kernel_trace.csv", "dispatches"),
            ("238_agent_info.csv", "metadata"),
        ]


@pytest.mark.parametrize("name", ["pmc_perf.csv", "timestamps.csv"])
def test_rocprof_compute_csv_alone_finds_sysinfo(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """sysinfo.csv names gpu_model MI200, gpu_arch gfx90a; roofline.csv holds measured peaks."""
    folder = DATA / "rocprof-compute-mi200"
    doc = run_json(capsys, str(folder / name))
    assert (doc["run"]["gpu"], doc["run"]["arch"]) == ("MI200", "gfx90a")
    assert roles(doc) == [
        (name, "dispatches"),
        ("sysinfo.csv", "metadata"),
        ("roofline.csv", "metadata"),
    ]
    assert roles(run_json(capsys, str(folder))).count(("sysinfo.csv", "metadata")) == 1


def test_v1_sysinfo_alone_says_it_is_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    """Class 101 of docs/bad-inputs.md: one line naming the run's files beside it."""
    path = STENCILS / "results.sysinfo.txt"
    assert main(["analyze", str(path)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"roofscope: error: {path}:1: is rocminfo's record of the machine (rocprof v1 writes "
        "it beside its results): it names the GPU and holds no kernel; pass the run's "
        "results.csv or results.stats.csv; roofscope reads this file beside it\n"
    )


def test_v1_stats_beside_a_gfx950_rocminfo_is_that_gpu(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A gfx950 that an older libdrm does not list is "AMD Radeon Graphics" in rocminfo: the
    stencils run's rocminfo with its GPU agents made such a gfx950 of 256 CUs (an MI350X or
    MI355X, told apart by their clocks only), and its stats file beside it."""
    shutil.copy(STENCILS / "results.stats.csv", tmp_path)
    text = (STENCILS / "results.sysinfo.txt").read_text(encoding="utf-8")
    text = text.replace("gfx90a", "gfx950").replace("AMD Instinct MI250X/MI250", GENERIC)
    text = text.replace("Compute Unit:            104", "Compute Unit:            256")
    (tmp_path / "results.sysinfo.txt").write_text(text, encoding="utf-8")
    doc = run_json(capsys, str(tmp_path / "results.stats.csv"))
    assert run_of(doc) == {"producer": "rocprof", "gpu": GENERIC, "arch": "gfx950"}
    device = doc["device"]
    assert (device["key"], device["alternatives"]) == ("mi350x", ["mi355x"])
    assert [c["name"] for c in device["ceilings"]] == ["hbm"]


GENERIC = "AMD Radeon Graphics"
