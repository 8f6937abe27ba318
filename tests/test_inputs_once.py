"""Each input listed once (issue 36, point 8): a rocprof-compute 3.6+ workload's per-pass
files (``results_pmc_perf_0.csv`` ... ``_16.csv``) are one ``input:`` line in the text and
HTML reports, as one numbered path; the JSON keeps every file."""

from __future__ import annotations

import csv
import re
from html import escape, unescape
from pathlib import Path

import pytest

from roofscope.model.profile import InputFile
from roofscope.model.schema import Role
from roofscope.render.inputs_line import inputs_once, numbered
from tests.conftest import DATA, run_json

PASSES = DATA / "rocprof-compute-rdna35-passes"


def expected_line() -> tuple[str, str]:
    """The one line, from the folder's own files: their numbers, and the first pass's
    dispatches (its distinct Dispatch_ID values)."""
    files = sorted(PASSES.glob("results_pmc_perf_*.csv"))
    numbers = sorted(int(f.stem.rsplit("_", 1)[1]) for f in files)
    assert numbers == list(range(17))
    with (PASSES / "results_pmc_perf_0.csv").open(newline="") as f:
        dispatches = len({r["Dispatch_ID"] for r in csv.DictReader(f)})
    path = f"{PASSES}/results_pmc_perf_{{{numbers[0]}..{numbers[-1]}}}.csv"
    what = f"rocprof-compute-workload, {dispatches} rows, dispatches; 16 counter passes"
    return path, what


def test_per_pass_files_are_one_input_line(capsys: pytest.CaptureFixture[str]) -> None:
    from roofscope.checkup.engine import check_up, prepare
    from roofscope.checkup.options import CheckupOptions
    from roofscope.render.report.html import render_html
    from roofscope.render.report.text import render_text

    path, what = expected_line()
    report = check_up([str(PASSES)], prepare(CheckupOptions()))
    text = " ".join(render_text(report, width=120).split())
    assert text.count("input:") == 2  # the passes and sysinfo.csv
    assert f"input: {path} ({what})" in text
    listed = rf"<li>({re.escape(escape(str(PASSES)))}/results_pmc_perf[^<]*)</li>"
    items = re.findall(listed, render_html(report))
    assert [unescape(i) for i in items] == [f"{path} ({what})"]
    doc = run_json(capsys, str(PASSES))  # the JSON keeps each file
    roles = [i["role"] for i in doc["inputs"] if "results_pmc_perf_" in i["path"]]
    assert roles == ["dispatches"] + ["counter-pass"] * 16


def _file(path: str, role: Role = Role.COUNTER_PASS) -> InputFile:
    return InputFile(path, "rocprofv3-counters", 4, role)


def test_rocprofv3_pass_folders_are_one_line() -> None:
    """rocprofv3 ``-i`` passes: ``pass_N/PID_counter_collection.csv``, the folder numbered."""
    name = "4242_counter_collection.csv"
    files = [_file(f"run/pass_{n}/{name}") for n in (1, 2, 3)]
    files[0] = _file(files[0].path, Role.DISPATCHES)
    assert inputs_once(files) == [
        (f"run/pass_{{1..3}}/{name}", "rocprofv3-counters, 4 rows, dispatches; 2 counter passes")
    ]


def test_a_single_counter_pass_is_counted_singular() -> None:
    files = [_file("r/pmc_1/a.csv", Role.DISPATCHES), _file("r/pmc_2/a.csv")]
    assert inputs_once(files)[0][1].endswith("; 1 counter pass")


@pytest.mark.parametrize(
    ("paths", "shown"),
    [
        (["d/p_1.csv", "d/p_3.csv", "d/p_7.csv"], "d/p_{1,3,7}.csv"),  # a gap: each number
        (["d/p_10.csv", "d/p_9.csv", "d/p_8.csv"], "d/p_{8..10}.csv"),  # read in name order
        (["d/p_1/12.csv", "d/p_2/13.csv"], None),  # two numbers differ
        (["d/p_1.csv", "e/p_2.csv"], None),  # more than a number differs
        (["d/p_1.csv", "d/p_2/x.csv"], None),
        (["d/only.csv"], "d/only.csv"),
    ],
)
def test_numbered_paths(paths: list[str], shown: str | None) -> None:
    assert numbered(paths) == shown


def test_passes_not_told_apart_by_one_number_keep_their_lines() -> None:
    files = [_file("r/pmc_1/11_a.csv", Role.DISPATCHES), _file("r/pmc_2/12_a.csv")]
    assert [p for p, _ in inputs_once(files)] == ["r/pmc_1/11_a.csv", "r/pmc_2/12_a.csv"]


def test_a_file_read_twice_is_still_one_line() -> None:
    files = [InputFile("t.json", "kineto", 14, Role.DISPATCHES)]
    files.append(InputFile("t.json", "kineto", 1, Role.COPIES))
    assert inputs_once(files) == [("t.json", "kineto, 14 rows, dispatches; 1 row, copies")]


def test_a_lone_counter_pass_file_is_its_own_line() -> None:
    """A pass whose first pass came from another file group still shows (never dropped)."""
    assert inputs_once([_file("x/pass_2/a.csv")]) == [
        ("x/pass_2/a.csv", "rocprofv3-counters, 4 rows, counter-pass")
    ]


def test_json_paths_are_real_files(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(PASSES))
    assert all(Path(i["path"]).is_file() for i in doc["inputs"])
