"""Numbers that cannot be trusted are never shown as trusted: every validity finding about a
kernel is carried beside that kernel in the terminal table (``!``), in its JSON entry
(``kernels[].validity``) and in its HTML row, not only in the findings at the bottom."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, DEMO

# real profiles and the validity classes they show (among others)
REAL = {
    DEMO.parent / "openmp-collapse-mi300a": {"warm-up-dominates"},
    DATA / "rocprof-compute-mi300a": {"no-time"},
    DATA / "rocprof-compute-omniperf1-mi200": {"at-measured-roof", "single-dispatch"},
    DATA / "rocprofv3-layouts": {"warm-up"},
    DATA / "nsys" / "host_cuda_gpu_trace.csv": {"single-dispatch"},
}


class _Rows(HTMLParser):
    """The text of each row of the HTML kernel table, by kernel index."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[int, str] = {}
        self._k: int | None = None
        self._in_table = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table":
            self._in_table = found.get("id") == "kernels"
        if tag == "tr" and self._in_table and found.get("data-k") is not None:
            self._k = int(found["data-k"] or 0)
            self.rows[self._k] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._k = None
        if tag == "table":
            self._in_table = False

    def handle_data(self, data: str) -> None:
        if self._k is not None:
            self.rows[self._k] += data


def assert_beside(capsys: pytest.CaptureFixture[str], tmp: Path, *args: str) -> set[str]:
    """Run the check-up as JSON, text and HTML; every validity finding about a kernel is on
    that kernel's entry, row and line. Returns the rules seen."""
    assert main(["analyze", *args, "--json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    tmp.mkdir(parents=True, exist_ok=True)
    html = tmp / "report.html"
    assert main(["analyze", *args, "--html", str(html), "--force"]) == 0
    text = capsys.readouterr().out
    parser = _Rows()
    parser.feed(html.read_text(encoding="utf-8"))
    index = {k["name"]: i for i, k in enumerate(doc["kernels"])}
    # the kernel table's rows: the lines after its header (a wrapped input line above it may
    # also begin with a number, as it did where the checkout path was longer)
    lines = text.splitlines()
    header = next(n for n, x in enumerate(lines) if "Calls" in x and "Share" in x)
    table = lines[header + 1 :]
    seen = set()
    for f in doc["findings"]:
        if f["kind"] != "validity" or f["kernel"] is None:
            continue
        seen.add(f["rule"])
        i = index[f["kernel"]]
        assert f["rule"] in doc["kernels"][i]["validity"]
        if i < 50:
            assert "⚠ " in parser.rows[i] and f["rule"] in parser.rows[i]
        if i < 20:
            line = next(x for x in table if x.lstrip().startswith(f"{i + 1} "))
            assert "! " in line, line
    flagged = {k["name"] for k in doc["kernels"] if k["validity"]}
    assert flagged == {f["kernel"] for f in doc["findings"] if f["kind"] == "validity"} - {None}
    return seen


@pytest.mark.parametrize("path", list(REAL), ids=lambda p: p.name)
def test_validity_beside_the_kernel(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path
) -> None:
    assert REAL[path] <= assert_beside(capsys, tmp_path, str(path))
