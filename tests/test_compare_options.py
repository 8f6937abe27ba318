"""compare takes every analysis option analyze takes, declared once, applied to both sides;
``--base-gpu``/``--new-gpu`` name one side's GPU.

The numbers are from the inputs' own files: rocprof v1's results.stats.csv (its per-kernel
TotalDurationNs and Calls), the trace's grd column, a ceilings file written here, and the
GPU catalogue's data file (src/roofscope/data/devices.toml).
"""

from __future__ import annotations

import csv
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from roofscope.cli.commands import COMMANDS
from roofscope.cli.parse import Opt
from tests.conftest import DATA, DEMO, SUMMARY, SUMMARY_WORK
from tests.test_compare import compare_json, rewrite

Cap = pytest.CaptureFixture[str]
RERUN = DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv"  # the demo's laplacian re-run
ANALYSIS = ("--gpu", "--work", "--ceilings", "--peak-flops", "--peak-bw", "--jobs", "--kernel")
ANALYSIS += ("--device", "--format", "--gap-us")


def options_of(command: str) -> set[str]:
    params = COMMANDS[command].params
    return {f for p in params if isinstance(p, Opt) for f in p.flags if f.startswith("--")}


def test_compare_help_lists_every_analysis_option(capsys: Cap) -> None:
    assert main(["compare", "--help"]) == 0
    shown = capsys.readouterr().out
    for option in (*ANALYSIS, "--base-gpu", "--new-gpu"):
        assert f" {option} " in shown, option
    # every option of analyze under the same name but the text table's length and leaving
    # out unreadable runs (a side of a comparison is read whole, or not compared)
    # (a capture trace belongs to one side: compare takes --base-/--new-graph-capture)
    assert options_of("analyze") - options_of("compare") == {
        "--top",
        "--skip-unreadable",
        "--graph-capture",
    }


def stats(path: Path, kernel: str) -> tuple[int, int]:
    """(Calls, TotalDurationNs) of the kernel in a rocprof v1 results.stats.csv."""
    with path.open(newline="") as f:
        row = next(r for r in csv.DictReader(f) if kernel in r["Name"])
    return int(row["Calls"]), int(row["TotalDurationNs"])


def grid(path: Path, kernel: str) -> int:
    """The one grid size of every dispatch of the kernel in a rocprof v1 trace."""
    with path.open(newline="") as f:
        sizes = {int(r["grd"]) for r in csv.DictReader(f) if kernel in r["KernelName"]}
    assert len(sizes) == 1
    return sizes.pop()


def test_kernel_ceilings_and_jobs_on_both_sides(capsys: Cap, tmp_path: Path) -> None:
    """The finite-difference demo against its laplacian_dp_kernel1 re-run (same code, same
    MI250X, two runs), laplacian_kernel alone, on measured ceilings, with per-call work of a
    7-point stencil (9 FLOP and 16 B per grid point)."""
    ceilings = tmp_path / "measured.toml"
    ceilings.write_text(
        '[provenance]\nmethod = "stream"\n[ceilings]\nhbm = 1.4e12\n"fp64-vector" = 20e12\n',
        encoding="utf-8",
    )
    work = tmp_path / "stencil.toml"
    work.write_text(
        '[[kernel]]\nmatch = "laplacian"\ndtype = "fp64"\n'
        'flops = "9 * grid_size"\nbytes = "16 * grid_size"\n',
        encoding="utf-8",
    )
    doc = compare_json(
        capsys, str(DEMO / "results.csv"), str(RERUN), "--kernel", "laplacian", "--jobs", "2",
        "--ceilings", str(ceilings), "--work", str(work),
    )  # fmt: skip
    (base_calls, base_ns) = stats(DEMO / "results.stats.csv", "laplacian_kernel")
    (new_calls, new_ns) = stats(RERUN.with_name("results.stats.csv"), "laplacian_kernel")
    assert (base_calls, base_ns, new_calls, new_ns) == (1001, 2608618986, 1001, 2646378558)
    e = doc["end_to_end"]
    assert e["kernel_time_s"] == [base_ns / 1e9, new_ns / 1e9]  # the other 3 kernels left out
    assert e["speedup"] == pytest.approx(base_ns / new_ns, rel=1e-12)  # 0.98573: 1.4 % slower
    (k,) = doc["kernels"]
    assert k["base_name"].startswith("void laplacian_kernel<double>(double*")
    assert k["new_name"] == "laplacian_kernel" and k["matched_by"] == "similarity"
    assert k["calls"] == [1001, 1001] and k["speedup"] == pytest.approx(base_ns / new_ns)
    roof = k["roofline"]
    points = [grid(DEMO / "results.csv", "laplacian"), grid(RERUN, "laplacian")]
    assert points == [512**3, 512**3]
    achieved = [9 * 1001 * points[0] / (base_ns / 1e9), 9 * 1001 * points[1] / (new_ns / 1e9)]
    assert roof["level"] == "hbm" and roof["intensity"] == [9 / 16, 9 / 16]
    assert roof["achieved_flops_s"] == pytest.approx(achieved)
    # the file's HBM peak on both sides: 9/16 FLOP/B * 1.4e12 B/s = 7.875e11 < 20e12 FLOP/s
    assert roof["efficiency"] == pytest.approx([a / (9 / 16 * 1.4e12) for a in achieved])
    assert roof["bound"] == ["memory", "memory"]


def catalogue(key: str, name: str) -> float:
    """A whole device's ceiling (``fp32-vector``, ``hbm``) from the catalogue's data file."""
    text = (resources.files("roofscope") / "data" / "devices.toml").read_text("utf-8")
    device = next(d for d in tomllib.loads(text)["device"] if d["key"] == key)
    kind, _, unit = name.partition("-")
    found = [
        c["value"]
        for c in device["ceilings"]
        if c["scope"] == "device"
        and (
            (c["kind"] == "memory" and c.get("level") == name)
            or (c.get("dtype") == kind and c.get("unit") == unit)
        )
    ]
    assert len(found) == 1, (key, name, found)
    return float(found[0])


def movement(doc: dict[str, Any], kernel: str) -> dict[str, Any]:
    roof: dict[str, Any] = next(k for k in doc["kernels"] if k["base_name"] == kernel)["roofline"]
    return roof


@pytest.mark.parametrize(
    ("given", "gpus"),
    [
        (["--gpu", "mi100"], ("mi100", "mi100")),
        (["--base-gpu", "mi100", "--new-gpu", "mi300x"], ("mi100", "mi300x")),
        (["--gpu", "mi100", "--new-gpu", "mi300x"], ("mi100", "mi300x")),
        (["--gpu", "mi300x", "--base-gpu", "mi100"], ("mi100", "mi300x")),
    ],
    ids=["gpu", "base-and-new", "gpu-and-new", "gpu-and-base"],
)
def test_each_side_on_its_gpu(capsys: Cap, given: list[str], gpus: tuple[str, str]) -> None:
    """The summary example against itself with the issue's work: mat_mul (43.3 FLOP/B) runs
    on each side's FP32 vector peak, vector_add (1.25 FLOP/B) on its HBM bandwidth."""
    doc = compare_json(capsys, str(SUMMARY), str(SUMMARY), *SUMMARY_WORK, *given)
    mat_mul, vector_add = movement(doc, "mat_mul"), movement(doc, "vector_add")
    flops = 2.6e10 / 1.3e-3  # kernels.csv: mat_mul 1,300,000 ns in all
    assert mat_mul["achieved_flops_s"] == pytest.approx([flops, flops])
    assert mat_mul["efficiency"] == pytest.approx(
        [flops / catalogue(g, "fp32-vector") for g in gpus]
    )
    assert mat_mul["bound"] == ["compute", "compute"]
    rate = 1.0e9 / 3.2e-3  # vector_add: 3,200,000 ns
    assert vector_add["efficiency"] == pytest.approx(
        [rate / (1.25 * catalogue(g, "hbm")) for g in gpus]
    )
    assert vector_add["bound"] == ["memory", "memory"]


def test_peaks_beat_each_sides_catalogue(capsys: Cap) -> None:
    """--peak-flops and --peak-bw rank above the catalogue on both sides, whatever their GPU."""
    doc = compare_json(
        capsys, str(SUMMARY), str(SUMMARY), *SUMMARY_WORK, "--base-gpu", "mi100",
        "--new-gpu", "mi300x", "--peak-flops", "50e12", "--peak-bw", "1.0e12",
    )  # fmt: skip
    # mat_mul: 43.3 FLOP/B * 1e12 B/s = 43.3e12 < 50e12 FLOP/s: bound by the given bandwidth
    attainable = min(50e12, 2.6e10 / 6.0e8 * 1.0e12)
    assert movement(doc, "mat_mul")["efficiency"] == pytest.approx([2e13 / attainable] * 2)
    assert movement(doc, "vector_add")["efficiency"] == pytest.approx(
        [1.0e9 / 3.2e-3 / (1.25 * 1.0e12)] * 2
    )


def test_format_reads_both_sides_as_analyze_reads_one(capsys: Cap) -> None:
    """A v1 trace read as a rocprofv3 kernel trace: compare stops on the baseline with the
    line analyze gives for it."""
    args = ["--format", "rocprofv3-kernel-trace"]
    assert main(["analyze", str(DEMO / "results.csv"), *args]) == 1
    alone = capsys.readouterr().err
    assert alone.startswith(f"roofscope: error: {DEMO / 'results.csv'}")
    assert main(["compare", str(DEMO / "results.csv"), str(RERUN), *args]) == 1
    assert capsys.readouterr().err == alone


def fails(capsys: Cap, *args: str) -> str:
    """``roofscope compare ARGS``: exit 2 and its one line."""
    assert main(["compare", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    return err.removeprefix("roofscope: error: ").rstrip("\n")


def test_gpu_with_both_side_gpus_is_an_error(capsys: Cap) -> None:
    assert fails(
        capsys, str(SUMMARY), str(SUMMARY), "--gpu", "mi100", "--base-gpu", "mi210",
        "--new-gpu", "mi300x",
    ) == (
        "--gpu 'mi100' with both --base-gpu and --new-gpu: it would apply to neither side; "
        "drop --gpu, or keep it for one side and drop that side's option"
    )  # fmt: skip


def test_side_gpu_not_in_the_catalogue(capsys: Cap) -> None:
    assert fails(capsys, str(SUMMARY), str(SUMMARY), "--new-gpu", "mi2") == (
        "--new-gpu 'mi2' is not in the catalogue; other parts of its generation: mi210, mi250, "
        "mi250x; `roofscope devices` lists every GPU"
    )


def test_selection_that_keeps_nothing_of_one_side(capsys: Cap) -> None:
    """The candidate names its laplacian kernel ``laplacian_kernel``, the baseline its full
    signature: ``<double>`` selects the baseline's alone, and the error names the side."""
    assert fails(capsys, str(DEMO / "results.csv"), str(RERUN), "--kernel", "<double>") == (
        f"candidate {RERUN}: --kernel '<double>': selects nothing of the profile (its devices: "
        "8); widen the selection (--kernel searches the normalised kernel names)"
    )
    assert fails(capsys, str(DEMO / "results.csv"), str(RERUN), "--device", "3") == (
        f"baseline {DEMO / 'results.csv'}: --device 3: selects nothing of the profile (its "
        "devices: 8); widen the selection (--kernel searches the normalised kernel names)"
    )


def test_device_keeps_the_other_devices_out_of_the_spread(capsys: Cap, tmp_path: Path) -> None:
    """The demo's trace with every other dispatch moved to device 9; in the candidate those
    run in half the time. On device 8 nothing changed: 1x, and its interval holds 1 (with the
    device 9 dispatches in the bootstrap, it lay wholly above 1)."""

    def move(faster: bool) -> Any:
        def edit(r: dict[str, str]) -> dict[str, str]:
            if int(r["Index"]) % 2:
                r["gpu-id"] = "9"
                if faster:
                    begin = int(r["BeginNs"])
                    r["EndNs"] = str(begin + (int(r["EndNs"]) - begin) // 2)
                    r["DurationNs"] = str(int(r["EndNs"]) - begin)
            return r

        return edit

    base = rewrite(DEMO / "results.csv", tmp_path / "base" / "results.csv", move(False))
    new = rewrite(DEMO / "results.csv", tmp_path / "new" / "results.csv", move(True))
    doc = compare_json(capsys, str(base), str(new), "--device", "8", "--kernel", "laplacian")
    with (DEMO / "results.csv").open(newline="") as f:
        kept = [r for r in csv.DictReader(f) if "laplacian" in r["KernelName"]]
    kept = [r for r in kept if int(r["Index"]) % 2 == 0]
    (k,) = doc["kernels"]
    assert k["speedup"] == 1.0 and k["calls"] == [len(kept), len(kept)] == [500, 500]
    low, high = k["interval"]["low"], k["interval"]["high"]
    assert low < 1 < high and k["interval"]["method"] == "bootstrap over dispatches"
