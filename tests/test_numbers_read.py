"""Numbers a person reads (issue 36, point 8): every profile under tests/data through the text
report at 80, 100 and 120 columns, the HTML report and the SVG charts, with no exponent
(``1.6e+12``) outside kernel names, file paths and the report's script, no ``1 dispatches``
and no ``kernel(s)``; each input file listed once. The warnings' words are read too, and every
error and warning the bad-input tests meet goes through :func:`misworded`
(tests/test_bad_inputs.py's ``error_line`` and ``warnings_by_code``)."""

from __future__ import annotations

import re
from functools import cache
from html import escape
from pathlib import Path

import pytest
from msgspec.structs import replace

from roofscope.errors import RoofscopeError

DATA = Path(__file__).parent / "data"
EXPONENT = re.compile(r"\d[eE][+-]?\d")
PLURALS = (
    "dispatches|kernels|calls|gaps|ranks|runs|devices|rows|records|warnings|inputs|passes|"
    "files|values|events|metrics|columns|packets|ids|lines|names|keys|tables|views|GPUs|sources"
)
ONE_MANY = re.compile(rf"(?<![\d.,])1 (?:[\w-]+ )?(?:{PLURALS})\b")  # 1 malformed rows
MAYBE_MANY = re.compile(r"\w\((?:s|es)\)")
SCRIPT = re.compile(r"<script.*?</script>", re.S)
# what a reader sees of a page or a chart: its text, not its markup (a colour such as
# #e3e3e3 is no exponent); each element apart, so that two never read as one phrase
MARKUP = re.compile(r"<style.*?</style>|<[^>]*>", re.S)
COMMIT = re.compile(r"@[0-9a-f]{7,40}\b")  # a metric source's commit: @4056e092
# what a message may quote as the file or the user wrote it: '...', "...", `...`, a path, a
# commit (ROCm/rocm-systems @4056e092)
QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|\S*/\S*|@[0-9a-f]{7,40}\b")


def misworded(message: str) -> list[str]:
    """What reads wrong in a warning's or an error's words, outside its quoted file values and
    paths: an exponent (``1e+18``), ``1 <plural>``, ``(s)``."""
    said = QUOTED.sub("", message)
    return [m.group(0) for p in (EXPONENT, ONE_MANY, MAYBE_MANY) for m in p.finditer(said)]


@cache
def outputs() -> dict[str, dict[str, str]]:
    """Each profile folder's outputs, with its kernel names and input paths taken out."""
    from roofscope.checkup.engine import check_up, prepare
    from roofscope.checkup.options import CheckupOptions
    from roofscope.render.charts.hotspots import hotspot_svg
    from roofscope.render.charts.roofline import roofline_svg
    from roofscope.render.charts.timeline import timeline_svg
    from roofscope.render.report.html import render_html
    from roofscope.render.report.text import render_text

    out = {}
    for folder in sorted(p for p in DATA.rglob("*") if p.is_dir()):
        try:
            report = check_up([str(folder)], replace(prepare(CheckupOptions()), lanes=True))
        except RoofscopeError:
            continue
        texts = {f"text {w}": render_text(report, width=w) for w in (80, 100, 120)}
        texts["html"] = MARKUP.sub(" | ", SCRIPT.sub("", render_html(report)))
        charts = hotspot_svg(report) + roofline_svg(report) + timeline_svg(report)
        texts["svg"] = MARKUP.sub(" | ", charts)
        hidden = {k.name for k in report.hotspots.kernels} | {f.path for f in report.inputs}
        # the warnings, shown in the text and HTML, are read on their own (paths and quoted
        # file values left out): texts["warnings"]
        hidden |= {w.message for w in report.warnings}
        hidden |= {escape(h) for h in hidden}
        texts = {k: " ".join(t.split()) for k, t in texts.items()}  # unwrapped
        texts = {k: COMMIT.sub("", t) for k, t in texts.items()}
        for h in sorted({" ".join(h.split()) for h in hidden}, key=len, reverse=True):
            texts = {k: t.replace(h, "") for k, t in texts.items()}
        texts["warnings"] = " | ".join(QUOTED.sub("", w.message) for w in report.warnings)
        out[str(folder.relative_to(DATA))] = texts
    return out


def test_many_profiles_are_read() -> None:
    assert len(outputs()) >= 20


@pytest.mark.parametrize("pattern", [EXPONENT, ONE_MANY, MAYBE_MANY], ids=["e", "1-many", "(s)"])
def test_no_exponent_and_no_wrong_plural(pattern: re.Pattern[str]) -> None:
    found = [
        f"{folder} {kind}: {text[max(0, m.start() - 40) : m.end() + 10]!r}"
        for folder, texts in outputs().items()
        for kind, text in texts.items()
        for m in pattern.finditer(text)
    ]
    assert found == []


def test_a_file_read_twice_is_listed_once(tmp_path: Path) -> None:
    """A Kineto trace gives dispatches and copies: one ``input:`` line with both."""
    from roofscope.cli.app import main

    trace = DATA / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["analyze", str(trace)]) == 0
    lines = [line for line in out.getvalue().splitlines() if "input:" in line]
    assert len(lines) == 1, lines


@pytest.mark.parametrize(
    ("message", "wrong"),
    [
        ("f.csv: 1 malformed rows skipped", ["1 malformed rows"]),
        ("f.csv: 2 kernel(s) without a name skipped", ["l(s)"]),
        ("counter X = 1e+30 is beyond any GPU's count (1e+18)", ["1e+3", "1e+1"]),
        ("/tmp/run_1e5/f.csv: field 'x' = '6.02e23' is not an integer", []),  # path, quoted
        ("f.csv: 1 malformed row skipped; 3 rows kept", []),
    ],
)
def test_misworded_finds_what_reads_wrong(message: str, wrong: list[str]) -> None:
    assert misworded(message) == wrong


def test_warnings_of_every_profile_read_well() -> None:
    """Each profile's warnings (a [pass-timestamps-differ] of 17 per-pass files among them)."""
    said = {f: texts["warnings"] for f, texts in outputs().items() if texts["warnings"]}
    assert "3 dispatches recorded in 17 per-pass files" in said["rocprof-compute-rdna35-passes"]
    assert {f: misworded(w) for f, w in said.items() if misworded(w)} == {}
