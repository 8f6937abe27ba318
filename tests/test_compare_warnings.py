"""compare carries each side's data-quality warnings into every output (text, JSON, Markdown,
JUnit, HTML), and its gate fails when a side mixes runs or clocks (issue 19).

The derived side is two ranks of the demo's rocprof v1 trace whose clocks lie a day apart
(rank0/, rank1/: ranks by name, but no run's wall time spans a day).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from roofscope.cli.app import main
from roofscope.model.words import sig
from tests.conftest import SHARED_CORPUS
from tests.test_compare import TRACE, compare_json, rewrite, scale, totals

Cap = pytest.CaptureFixture[str]

FD = SHARED_CORPUS / "amd/hpctraining-rocprofv1-mi250x/finite-difference"
RERUN = FD / "xr_laplacian_dp_kernel1"
DAY_NS = 86_400 * 10**9
BLOCK = "is not one run, so its times are no run's times: "


def span(path: Path) -> tuple[int, int]:
    """The first Begin and the last End of a rocprof v1 trace."""
    with path.open(newline="") as f:
        rows = [(int(r["BeginNs"]), int(r["EndNs"])) for r in csv.DictReader(f)]
    return min(b for b, _ in rows), max(e for _, e in rows)


def clocks_apart(*traces: Path) -> str:
    """The start of the clocks-apart warning, from the traces' own timestamps."""
    spans = [span(p) for p in traces]
    wall = max(e for _, e in spans) - min(b for b, _ in spans)
    own = sum(e - b for b, e in spans)
    return (
        f"[clocks-apart] the timestamps of {len(spans)} inputs span {sig(wall / 1e9)} s, more "
        f"than 10 times their own spans ({sig(own / 1e9)} s together)"
    )


def text(capsys: Cap, *args: str, code: int) -> str:
    """``roofscope compare ARGS`` in the terminal, its line wraps undone."""
    assert main(["compare", *args]) == code
    return " ".join(capsys.readouterr().out.split())


def shift(r: dict[str, str]) -> dict[str, str]:
    for column in ("DispatchNs", "BeginNs", "EndNs", "CompleteNs"):
        r[column] = str(int(r[column]) + DAY_NS)
    return r


def mixed_side(tmp_path: Path) -> Path:
    """The demo's run in ``rank0/``, and in ``rank1/`` the same run a day later."""
    side = tmp_path / "mixed"
    (side / "rank0").mkdir(parents=True)
    shutil.copy(TRACE, side / "rank0" / "results.csv")
    rewrite(TRACE, side / "rank1" / "results.csv", shift)
    return side


@pytest.mark.skipif(not FD.is_dir(), reason="needs ../shared/corpus")
def test_nested_rerun_fails_the_gate(capsys: Cap) -> None:
    """finite-difference/ holds its re-run in xr_laplacian_dp_kernel1/. Read whole it gave
    1.99x faster, a wall of 8.55e4 s and 'Gate: PASS' with no warning; now the top-level run
    is compared alone (its own results.stats.csv: 2,610,787,312 ns), and the folder's nested
    run fails the gate, thresholds or none, whichever side it is on."""
    out = text(capsys, str(FD), str(RERUN), "--fail-if-slower", "1000", code=3)
    assert "Gate: PASS" not in out and "Gate: FAIL" in out
    assert "[clocks-apart]" not in out
    assert (
        "! baseline: [nested-runs] 1 run in sub-folders of the run read is another run, "
        f"left out: {RERUN};" in out
    )
    assert (
        "x baseline's folder holds other runs, so which run it means is a guess: [nested-runs]"
        in out
    )
    doc = compare_json(capsys, str(RERUN), str(FD), code=3)
    with (FD / "results.stats.csv").open(newline="") as f:
        stats_ns = sum(int(r["TotalDurationNs"]) for r in csv.DictReader(f))
    assert stats_ns == 2_610_787_312
    assert round(doc["end_to_end"]["kernel_time_s"][1] * 1e9) == stats_ns
    (blocked,) = doc["gate"]["blocked_by"]
    assert blocked in doc["warnings"]
    assert (blocked["side"], blocked["run"], blocked["code"], blocked["blocks_gate"]) == (
        "candidate", None, "nested-runs", True,
    )  # fmt: skip
    assert not doc["gate"]["passed"]


def test_side_warnings_in_every_output(capsys: Cap, tmp_path: Path) -> None:
    """A candidate of two runs a day apart: its kernel time adds up both (0.5x: 'slower'),
    and every output names the candidate's clocks-apart as the reason the gate fails."""
    mixed = mixed_side(tmp_path)
    expected = clocks_apart(TRACE, mixed / "rank1" / "results.csv")
    out = {name: tmp_path / name for name in ("gate.xml", "gate.md", "cmp.html")}
    doc = compare_json(
        capsys, str(TRACE), str(mixed), "--junit", str(out["gate.xml"]),
        "--markdown", str(out["gate.md"]), "--html", str(out["cmp.html"]), code=3,
    )  # fmt: skip
    assert doc["end_to_end"]["speedup"] == pytest.approx(0.5, rel=1e-12)
    (w,) = doc["warnings"]
    line = f"[clocks-apart] {w['message']}"
    assert line.startswith(expected)
    assert w == {"side": "candidate", "run": None, "code": "clocks-apart", "kernel": None,
                 "message": w["message"], "count": 1, "blocks_gate": True}  # fmt: skip
    reason = f"candidate {BLOCK}{line}; compare one run with one run"
    assert doc["gate"] == {"passed": False, "reasons": [reason], "checks": [], "blocked_by": [w]}
    suite = ET.parse(out["gate.xml"]).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1")
    props = [(p.get("name"), p.get("value")) for p in suite.iter("property")]
    assert props == [("warning.candidate", line)]
    (case,) = suite.iter("testcase")
    failure = case.find("failure")
    assert case.get("name") == "data quality: candidate" and failure is not None
    assert failure.get("message") == reason and case.findtext("system-err") == line
    md = out["gate.md"].read_text(encoding="utf-8")
    assert md.startswith("### roofscope compare: FAIL")
    # the verdict and the table first, the warnings after the numbers they qualify
    assert f"Gate failed:\n- {reason}\n\n| kernel |" in md
    assert md.endswith(f"Data-quality warnings:\n- candidate: {line} **(fails the gate)**\n")
    html = out["cmp.html"].read_text(encoding="utf-8")
    assert "<h2>Data-quality warnings</h2>" in html and "candidate: [clocks-apart]" in html
    terminal = text(capsys, str(TRACE), str(mixed), code=3)
    assert f"! candidate: {expected}" in terminal and terminal.endswith("(fails the gate)")
    assert f"Gate: FAIL x {reason} Kernel " in terminal
    assert terminal.index("Kernel ") < terminal.index("Warnings (data quality)")
    assert html.index("Gate: FAIL") < html.index('id="changes"') < html.index('id="warnings"')


def test_warning_of_one_run_of_several(capsys: Cap, tmp_path: Path) -> None:
    """--base-run: a warning names the run of its side that carries it."""
    mixed = mixed_side(tmp_path)
    doc = compare_json(capsys, str(TRACE), str(TRACE), "--base-run", str(mixed), code=3)
    assert [(w["side"], w["run"], w["code"]) for w in doc["gate"]["blocked_by"]] == [
        ("baseline", 2, "clocks-apart")
    ]
    assert doc["gate"]["reasons"][0].startswith(f"baseline run 2 {BLOCK}[clocks-apart] ")


def test_warning_that_does_not_block(capsys: Cap, tmp_path: Path) -> None:
    """One candidate dispatch with End == Begin warns zero-duration: shown in every output,
    labelled, but the gate passes (it says nothing about mixed runs)."""
    first = True

    def zero(r: dict[str, str]) -> dict[str, str]:
        nonlocal first
        if first and "laplacian" in r["KernelName"]:
            r["EndNs"], r["DurationNs"], first = r["BeginNs"], "0", False
        return r

    new = rewrite(TRACE, tmp_path / "new" / "results.csv", zero)
    xml, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    doc = compare_json(capsys, str(TRACE), str(new), "--fail-if-slower", "5",
                       "--junit", str(xml), "--markdown", str(md))  # fmt: skip
    line = (
        "[zero-duration] 1 dispatch of 0 ns (End equals Begin); kept, though a time of 0 ns "
        "is below the timer's resolution"
    )
    assert [(w["side"], w["code"], w["count"], w["blocks_gate"]) for w in doc["warnings"]] == [
        ("candidate", "zero-duration", 1, False)
    ]
    assert doc["gate"]["passed"] and doc["gate"]["blocked_by"] == []
    suite = ET.parse(xml).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("2", "0")
    case = next(c for c in suite.iter("testcase") if c.get("name") == "data quality: candidate")
    assert case.find("failure") is None and case.findtext("system-err") == line
    report = md.read_text(encoding="utf-8")
    assert report.startswith("### roofscope compare: PASS")
    assert f"- candidate: {line}\n" in report and "fails the gate" not in report
    terminal = text(capsys, str(TRACE), str(new), code=0)
    assert terminal.endswith(f"Warnings (data quality): ! candidate: {line}")
    # no threshold on the command line: no verdict (the JSON's gate passes, as before)
    assert "Gate: no gate set" in terminal and "PASS" not in terminal


def test_clean_runs_have_no_warnings_block(capsys: Cap, tmp_path: Path) -> None:
    """Two clean runs (the demo and its laplacian 2x faster): no warnings in any output."""
    new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale({"laplacian_kernel": 0.5}))
    xml, md, html = tmp_path / "gate.xml", tmp_path / "gate.md", tmp_path / "cmp.html"
    args = [str(TRACE), str(new), "--fail-if-slower", "0"]
    doc: dict[str, Any] = compare_json(capsys, *args, "--junit", str(xml),
                                       "--markdown", str(md), "--html", str(html))  # fmt: skip
    assert doc["warnings"] == [] and doc["gate"]["blocked_by"] == [] and doc["gate"]["passed"]
    suite = ET.parse(xml).getroot()
    assert suite.find("properties") is None
    assert [c.get("name") for c in suite.iter("testcase")] == ["end-to-end"]
    assert "Data-quality" not in md.read_text(encoding="utf-8")
    assert "Data-quality" not in html.read_text(encoding="utf-8")
    faster = (1 - sum(totals(new).values()) / sum(totals(TRACE).values())) * 100
    terminal = text(capsys, *args, code=0)
    assert "Warnings" not in terminal
    assert f"ok end-to-end: {faster:.1f}% faster (threshold 0% slower) Kernel " in terminal
    assert "Gate: PASS" in terminal


@pytest.mark.parametrize(
    ("code", "passed"),
    [
        ("mixed-runs", False),
        ("clocks-apart", False),
        ("mixed-producers", False),
        ("nested-runs", False),
        ("zero-duration", True),
    ],
)
def test_which_codes_block_the_gate(code: str, passed: bool) -> None:
    """RUN_MIXING is the one set that blocks; any other warning is shown and passes."""
    from msgspec.structs import replace

    from roofscope.readers.load import load
    from roofscope.report import analyse
    from roofscope.verify.compare import compare, run_of
    from roofscope.verify.gate import gate
    from roofscope.verify.quality import SideWarning

    profile = load([str(TRACE)])
    run = run_of(profile, analyse(profile))
    clean = compare([run], [run], ("a", "b"))
    assert clean.warnings == ()
    warning = SideWarning("candidate", None, code, "a message")
    verdict = gate(
        replace(clean, warnings=(warning,)),
        fail_if_slower=0, fail_if_kernel_slower=None, min_share=0.01,
    )  # fmt: skip
    assert verdict.passed == passed
    assert verdict.blocked_by == (() if passed else (warning,))
