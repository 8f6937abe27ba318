"""The Python API (``roofscope.analyze``, ``roofscope.compare``): the commands' numbers and
documents, as objects; errors raised, never printed; the inline HTML view escaped and
well-formed. Every corpus profile: ``tests/test_api_corpus.py``."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

import roofscope
from tests.conftest import DEMO, SUMMARY
from tests.test_compare import TRACE, compare_json, rewrite, scale, totals
from tests.test_html import analyze_json

COUNTERS = DEMO.parent / "openmp-collapse-mi300a"
HOSTILE = ("<script>alert(1)</script>", "a<b>")
SVG = "{http://www.w3.org/2000/svg}svg"


def hostile_profile(tmp_path: Path) -> Path:
    """A stats file whose kernel names are markup: 4 x 1000 ns and 2 x 250 ns."""
    path = tmp_path / "kernels.csv"
    rows = [f'"{HOSTILE[0]}",4,4000,1000', f'"{HOSTILE[1]}",2,500,250']
    path.write_text("Name,Count,TotalTimeNs,AverageTimeNs\n" + "\n".join(rows) + "\n")
    return path


def test_import_is_light() -> None:
    """``import roofscope`` loads neither DuckDB nor numpy: the API loads on first use."""
    code = "import sys, roofscope; print(sorted({'duckdb', 'numpy', 'pandas'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert set(roofscope.__all__) <= set(dir(roofscope))


def test_compare_is_the_function() -> None:
    """``roofscope.compare`` is the API's function, also once the comparison's own package
    (``roofscope.verify``) is imported."""
    import roofscope.verify.gate as gate_module
    from roofscope.api.run import compare

    assert gate_module.Verdict is roofscope.Verdict
    assert roofscope.compare is compare
    assert list(inspect.signature(roofscope.compare).parameters)[:2] == ["base", "new"]


def test_report_is_the_cli_document(capsys: pytest.CaptureFixture[str]) -> None:
    report = roofscope.analyze(COUNTERS)
    assert capsys.readouterr() == ("", "")  # the API prints nothing
    doc = analyze_json(capsys, str(COUNTERS))
    assert report.to_dict() == doc
    assert report.to_json() == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    s = report.summary  # 3 kernels, 2 dispatches each (the workload's pmc_perf.csv)
    assert (s.kernels, s.dispatches) == (3, 6)
    assert s.kernel_time_s == doc["summary"]["kernel_time_s"]
    assert [k.name for k in report.kernels] == [k["name"] for k in doc["kernels"]]
    assert [f.rule for f in report.findings] == [f["rule"] for f in doc["findings"]]
    assert report.device.name == "Instinct MI300A"
    assert [w.code for w in report.warnings] == [w["code"] for w in doc["warnings"]]


def test_kernel_table() -> None:
    """One row per kernel with the hand-made stats file's numbers: 4000 ns over 4 calls."""
    pytest.importorskip("pandas")
    frame = roofscope.analyze(SUMMARY).to_pandas()
    assert list(frame["name"]) == ["vector_add", "mat_mul", "softmax", "layer_norm"]
    assert list(frame["calls"]) == [8, 2, 4, 6]
    assert list(frame["total_s"]) == [3.2e-3, 1.3e-3, 0.8e-3, 0.5e-3]
    assert frame["share"].tolist() == pytest.approx([3.2 / 5.8, 1.3 / 5.8, 0.8 / 5.8, 0.5 / 5.8])
    assert frame["mean_s"].tolist() == pytest.approx([4e-4, 6.5e-4, 2e-4, 5e-4 / 6])  # total/calls
    assert frame["median_s"].isna().all()  # a stats file gives no median
    # vector_add + mat_mul = 77.6 % < 80 %, so softmax joins the hotspots
    assert frame["hotspot"].tolist() == [True, True, True, False]


def test_roofline_columns() -> None:
    """Bound, efficiency, intensity and bytes/s per level from the counters, as in JSON."""
    pytest.importorskip("pandas")
    report = roofscope.analyze(COUNTERS)
    frame, doc = report.to_pandas(), report.to_dict()
    for row, k in zip(frame.to_dict("records"), doc["kernels"], strict=True):
        roof = k["roofline"]
        assert (row["bound"], row["efficiency"]) == (roof["bound"], roof["efficiency"])
        assert row["limiter"] == k["limiter"]["busiest"]["unit"]
        for level, ai in roof["ai"].items():
            assert row[f"intensity_{level}"] == ai
        hbm = roof["bytes"]["hbm"] / k["total_s"]  # time-weighted: bytes over kernel time
        assert row["achieved_bytes_s_hbm"] == pytest.approx(hbm, rel=1e-12)


def test_without_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    report = roofscope.analyze(COUNTERS)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    with pytest.raises(ImportError, match=r"pip install 'roofscope\[notebook\]'"):
        report.to_pandas()


def test_charts_are_the_cli_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = roofscope.analyze(COUNTERS)
    analyze_json(capsys, str(COUNTERS), "--svg", str(tmp_path))
    assert report.hotspots_svg() == (tmp_path / "hotspots.svg").read_text()
    assert report.roofline_svg() == (tmp_path / "roofline.svg").read_text()
    assert report.timeline_svg() == (tmp_path / "timeline.svg").read_text()


def test_html_file(tmp_path: Path) -> None:
    report = roofscope.analyze(COUNTERS)
    page = tmp_path / "r.html"
    report.to_html(page)
    report.to_html(page)  # a notebook cell run twice replaces its own output
    assert page.read_text(encoding="utf-8") == report.to_html()
    source = COUNTERS / "pmc_perf.csv"
    with pytest.raises(roofscope.UsageError, match="is an input of this run"):
        report.to_html(source)


class _Text(HTMLParser):
    """The text of a fragment, outside ``<style>``."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parsed(fragment: str) -> tuple[ET.Element, _Text]:
    root = ET.fromstring(fragment)  # well-formed: every element closed, every name escaped
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return root, parser


def test_repr_html_escapes_names(tmp_path: Path) -> None:
    report = roofscope.analyze(hostile_profile(tmp_path))
    fragment = report._repr_html_()
    root, parser = _parsed(fragment)
    assert "script" not in parser.tags and parser.tags.count("b") == 1  # "roofscope" only
    assert not any(n in fragment for n in HOSTILE)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in fragment
    assert [e.get("id") for e in root.iter(SVG)] == ["hotspots"]  # no ceilings: no roofline
    labels = "".join(parser.text)
    assert HOSTILE[0] in labels and "a<b>" in labels  # the names, as text


def test_repr_html_has_the_charts() -> None:
    report = roofscope.analyze(COUNTERS)
    root, parser = _parsed(report._repr_html_())
    assert [e.get("id") for e in root.iter(SVG)] == ["hotspots", "roofline"]
    assert "script" not in parser.tags
    assert "Kernel time 438 ms in 6 dispatches of 3 kernels" in "".join(parser.text)


def test_compare_is_the_cli_document(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """laplacian 20 % faster: speedup = base total / new total, summed from the two CSVs."""
    pytest.importorskip("pandas")
    new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale({"laplacian": 0.8}))
    cmp = roofscope.compare(TRACE, new)
    assert cmp.to_dict() == compare_json(capsys, str(TRACE), str(new))
    gated = compare_json(capsys, str(TRACE), str(new), "--fail-if-kernel-slower", "0")
    assert cmp.to_dict(cmp.gate(fail_if_kernel_slower=0)) == gated
    frame = cmp.to_pandas().set_index("name")
    before, after = totals(TRACE), totals(new)
    lap = next(k for k in before if k.startswith("void laplacian"))
    row = frame.loc[lap]
    assert (row["base_s"], row["new_s"]) == (before[lap] / 1e9, after[lap] / 1e9)
    assert row["speedup"] == pytest.approx(before[lap] / after[lap], rel=1e-12)
    assert row["low"] < row["speedup"] < row["high"] and bool(row["beyond_noise"])
    assert row["matched_by"] == "name" and row["share_of_change"] == pytest.approx(1, abs=1e-3)
    doc = {k["base_name"]: k for k in cmp.to_dict()["kernels"]}
    assert frame["speedup"].to_dict() == {n: k["speedup"] for n, k in doc.items()}


def test_compare_view_and_gate(tmp_path: Path) -> None:
    new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale({"laplacian": 1.5}))
    cmp = roofscope.compare(TRACE, new)
    verdict = cmp.gate(fail_if_slower=10)
    assert not verdict.passed and [c.name for c in verdict.failed] == ["end-to-end"]
    assert cmp.gate(fail_if_slower=60).passed  # 1.5 x the laplacian: about 50 % slower
    root, parser = _parsed(cmp._repr_html_())
    assert [e.get("id") for e in root.iter(SVG)] == ["waterfall"]  # no roofline: no movement
    assert "Gate: none set" in "".join(parser.text)
    with pytest.raises(roofscope.UsageError, match="min_share=2"):
        cmp.gate(min_share=2)
    with pytest.raises(roofscope.UsageError, match="is an input of this run"):
        cmp.new[0].to_html(new)  # a side's report, too, never replaces an input


def test_errors_are_raised_not_printed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nothing.csv"
    with pytest.raises(roofscope.InputError, match=str(missing)):
        roofscope.analyze(missing)
    # worded for Python: the argument as the caller wrote it, never the command-line flag
    with pytest.raises(roofscope.UsageError, match=r"^kernel='no_such_kernel': selects nothing"):
        roofscope.analyze(COUNTERS, kernel="no_such_kernel")
    with pytest.raises(roofscope.UsageError, match=r"^kernel='\(': not a valid regular"):
        roofscope.analyze(COUNTERS, kernel="(")
    with pytest.raises(
        roofscope.UsageError, match=r"^gap_us=-1: expected a number from 0 to 1,000,000,000,000$"
    ):
        roofscope.analyze(COUNTERS, gap_us=-1.0)
    with pytest.raises(roofscope.UsageError, match=r"jobs=0: expected a number from 1"):
        roofscope.analyze(COUNTERS, jobs=0)
    with pytest.raises(roofscope.UsageError, match=r"analyze\(\): no profile given"):
        roofscope.analyze()
    with pytest.raises(roofscope.UsageError, match=r"^jobs= sets this machine's worker"):
        roofscope.analyze(COUNTERS, jobs=2, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(roofscope.UsageError, match=r"^base_gpu= "):
        roofscope.compare(TRACE, TRACE, base_gpu="no such gpu")
    assert capsys.readouterr() == ("", "")


def test_work_and_progress() -> None:
    """``work=`` as ``--work`` (one rule or many); progress hears each file read."""
    heard: list[str] = []
    path = SUMMARY
    report = roofscope.analyze(path, work="mat_mul=2.6e10:6.0e8", peak_flops=22.6e12,
                               peak_bw=1.6e12, progress=heard.append)  # fmt: skip
    (mat_mul,) = report.roofline.kernels
    assert mat_mul.intensity == {"hbm": 2.6e10 / 6.0e8}
    assert mat_mul.achieved_flops_s == pytest.approx(2.6e10 / 1.3e-3)
    assert heard == [str(path)]
