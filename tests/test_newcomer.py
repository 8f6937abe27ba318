"""What a newcomer meets first: the bare command, the demo's outputs, the help, the README."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from roofscope.cli.app import main
from roofscope.cli.commands import COMMANDS
from roofscope.cli.parse import Opt

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "roofscope"
COUNTERS = PACKAGE / "data" / "demo" / "openmp-collapse-mi300a"
Cap = pytest.CaptureFixture[str]


def test_no_arguments_prints_the_help_and_no_empty_error(capsys: Cap) -> None:
    assert main([]) == 2  # a usage error's code: a command line that asks nothing
    out, err = capsys.readouterr()
    assert out.startswith("usage: roofscope [--version] [--help] COMMAND")
    assert "analyze" in out and "compare" in out
    assert err == ""


def test_a_real_usage_error_still_says_what_is_wrong(capsys: Cap) -> None:
    assert main(["analyze"]) == 2
    assert capsys.readouterr().err == (
        "roofscope: error: The following arguments are required: PATHS; "
        "see roofscope analyze --help\n"
    )


def test_demo_counters_writes_the_html_charts_and_json(tmp_path: Path, capsys: Cap) -> None:
    html, svg, png = tmp_path / "r.html", tmp_path / "svg", tmp_path / "png"
    args = ["--html", str(html), "--svg", str(svg), "--png", str(png), "--json"]
    assert main(["demo", "counters", *args]) == 0
    document = json.loads(capsys.readouterr().out)
    hottest, total_ns = _hottest_kernel(COUNTERS / "pmc_perf.csv")
    assert document["kernels"][0]["raw_names"] == [hottest]
    assert document["kernels"][0]["total_s"] == pytest.approx(total_ns * 1e-9, abs=1e-12)
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert sorted(p.name for p in svg.iterdir()) == ["hotspots.svg", "roofline.svg", "timeline.svg"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in png.iterdir())
    assert len(list(png.iterdir())) == 3
    # as analyze: never over a file without --force
    assert main(["demo", "counters", "--html", str(html)]) == 2
    assert "--force" in capsys.readouterr().err


def _hottest_kernel(pmc_perf: Path) -> tuple[str, int]:
    """The kernel with the largest summed End_Timestamp - Start_Timestamp in Omniperf's pmc_perf."""
    totals: dict[str, int] = {}
    with pmc_perf.open(newline="") as f:
        for row in csv.DictReader(f):
            name = row["Kernel_Name"]
            took = int(row["End_Timestamp"]) - int(row["Start_Timestamp"])
            totals[name] = totals.get(name, 0) + took
    hottest = max(totals, key=lambda name: totals[name])
    return hottest, totals[hottest]


@pytest.mark.parametrize("command", ["analyze", "compare", "demo", "profile", "peaks"])
@pytest.mark.parametrize("columns", ["60", "80"])
def test_help_wraps_at_word_boundaries(
    command: str, columns: str, capsys: Cap, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every word of every option's help is shown whole (no word cut, none elided with …)."""
    monkeypatch.setenv("COLUMNS", columns)
    assert main([command, "--help"]) == 0
    shown = capsys.readouterr().out
    assert "…" not in shown
    assert max(len(line) for line in shown.splitlines()) <= int(columns)
    words = set(shown.split())
    for param in COMMANDS[command].params:
        for word in param.help.split():
            assert word in words, (param.dest, word)
        if isinstance(param, Opt):
            assert all(flag in words or f"{flag}," in words for flag in param.flags)


def test_one_device_is_not_one_device_s(capsys: Cap) -> None:
    assert main(["demo", "trace"]) == 0
    out = capsys.readouterr().out
    assert "on 1 device;" in out and "1 kernel makes 80%" in out
    assert not re.search(r"\w\(s\)", out)


def test_the_readme_shows_what_the_demo_prints(capsys: Cap) -> None:
    assert main(["demo", "trace"]) == 0
    printed = capsys.readouterr().out.replace(str(PACKAGE), "<package>")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Example: `roofscope demo`") :]
    excerpt = section.split("```\n")[1]
    shown = "".join(line.rstrip() + "\n" for line in printed.splitlines())
    # The input lines wrap where the install path is long: compare them word by word, the
    # rest (from the first line of the baseline on) line by line.
    head, body = excerpt.split("Kernel time", 1)
    shown_head, shown_body = shown.split("Kernel time", 1)
    assert head.split() == shown_head.split()
    assert body == shown_body


def test_the_command_list_shows_each_summary_whole(
    capsys: Cap, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The root help lists each command with its whole first paragraph (click cut them at
    the width left: 'profile (files of...'), wrapped between words."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["--help"]) == 0
    shown = capsys.readouterr().out
    listed = " ".join(shown[shown.index("commands:") :].split())
    assert "..." not in listed
    for name, command in COMMANDS.items():
        summary = " ".join((command.run.__doc__ or "").split("\n\n")[0].split())
        assert f"{name} {summary}" in listed


def test_the_metrics_of_a_long_name_read_at_80_columns(
    capsys: Cap, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SuperBench's cuBLASLt ncu log (a 107-character CUTLASS name, four ncu rules): at 80
    columns the metrics section keeps its indentation, each line at most 80 characters:
    the name shortened, each rule's 'see Findings' line wrapped under itself."""
    monkeypatch.setenv("COLUMNS", "80")
    log = ROOT / "tests" / "data" / "ncu" / "superbench-cublaslt-ncu" / "cublaslt_ncu.log"
    assert main(["analyze", str(log)]) == 0
    out = capsys.readouterr().out
    section = out[out.index("Metrics of the hot kernels") : out.index("Roofline ·")]
    lines = section.splitlines()[2:]  # after the heading (two lines at 80 columns)
    assert lines and all(len(line) <= 80 and line.startswith("  ") for line in lines)
    assert sum("see Findings" in line for line in lines) == 4
