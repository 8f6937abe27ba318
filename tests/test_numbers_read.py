"""Numbers a person reads (issue 36, point 8): every profile under tests/data through the text
report at 80, 100 and 120 columns, the HTML report and the SVG charts, with no exponent
(``1.6e+12``) outside kernel names, file paths and the report's script, no ``1 dispatches``
and no ``kernel(s)``; each input file listed once."""

from __future__ import annotations

import re
from functools import cache
from html import escape
from pathlib import Path

import pytest

from roofscope.errors import RoofscopeError

DATA = Path(__file__).parent / "data"
# a number in e-notation, not the digits of a word such as a commit hash (@4056e092) or a
# kernel's tile name
EXPONENT = re.compile(r"(?<![\w@])\d+(?:\.\d+)?[eE][+-]?\d+(?!\w)")
PLURALS = "dispatches|kernels|calls|gaps|ranks|runs|devices|rows|records|warnings|inputs"
ONE_MANY = re.compile(rf"(?<![\d.,])1 (?:{PLURALS})\b")
MAYBE_MANY = re.compile(r"\w\((?:s|es)\)")
SCRIPT = re.compile(r"<script.*?</script>", re.S)


@cache
def outputs() -> dict[str, dict[str, str]]:
    """Each profile folder's outputs, with its kernel names and input paths taken out."""
    from roofscope.cli.checkup import CheckupOptions, check_up, prepare
    from roofscope.render.charts import hotspot_svg, roofline_svg
    from roofscope.render.html import render_html
    from roofscope.render.text import render_text
    from roofscope.render.timeline_chart import timeline_svg
    from roofscope.report import with_lanes

    out = {}
    for folder in sorted(p for p in DATA.rglob("*") if p.is_dir()):
        try:
            checkup = check_up([str(folder)], prepare(CheckupOptions()))
        except RoofscopeError:
            continue
        report = with_lanes(checkup.report, checkup.profile)
        texts = {f"text {w}": render_text(report, width=w) for w in (80, 100, 120)}
        texts["html"] = SCRIPT.sub("", render_html(report))
        texts["svg"] = hotspot_svg(report) + roofline_svg(report) + timeline_svg(report)
        hidden = {k.name for k in report.hotspots.kernels} | {f.path for f in report.inputs}
        # the readers' warnings (their words are the readers', issue 36's other parts)
        hidden |= {w.message for w in report.warnings}
        hidden |= {escape(h) for h in hidden}
        texts = {k: " ".join(t.split()) for k, t in texts.items()}  # unwrapped
        for h in sorted({" ".join(h.split()) for h in hidden}, key=len, reverse=True):
            texts = {k: t.replace(h, "") for k, t in texts.items()}
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
