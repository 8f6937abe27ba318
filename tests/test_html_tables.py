"""HTML tables that fit, checked in Chromium on the rendered page: no cell's content runs
over its neighbours (``scrollWidth <= clientWidth``), a number never leaves its unit on the
next line, a kernel's name stays on one line of its cell (the full name on hover and in a
copy button that copies it), and no number anywhere is written with an exponent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, DEMO, SHARED_CORPUS
from tests.test_html import ARTIFACTS, CHROMIUM, needs_browser

REPORTS = [
    DEMO,  # rocprof v1 CSV
    DEMO.parent / "openmp-collapse-mi300a",  # Omniperf workload, counters
    DATA / "rocprof-compute-mi200",
    DATA / "kineto" / "h100_qwen1.5_0.5b_chat.json.gz",  # PyTorch trace, H100
    DATA / "ncu" / "asymgemm-h200",  # Nsight Compute raw export, H200
    DATA / "nsys" / "cloverleaf-a100.sqlite",  # Nsight Systems
    DATA / "rocprofv3-json" / "mi300a_ps_file_results.json",
    SHARED_CORPUS / "amd" / "omniperf-v1-2022" / "Axes1" / "mi200",  # 167 long names
]

# each table cell whose content is wider than the cell (it would run over the next one)
OVERFLOWING = """() => [...document.querySelectorAll('table td, table th')]
  .filter(c => c.scrollWidth > c.clientWidth + 1)
  .map(c => c.closest('table').id + ': ' + c.textContent.trim().slice(0, 60))"""

# each number cell whose text lies on more than one line (its text's boxes, not a bar's)
WRAPPED_NUMBERS = """() => [...document.querySelectorAll('td.n, .n')].filter(c => {
  const tops = new Set(), walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    const r = document.createRange(); r.selectNodeContents(t);
    [...r.getClientRects()].filter(b => b.width > 0).forEach(b => tops.add(Math.round(b.top)));
  }
  return tops.size > 1; }).map(c => c.textContent)"""

# the page's text (charts' too, their tooltips included), without its script and style
TEXT = """() => { const b = document.body.cloneNode(true);
  b.querySelectorAll('script, style').forEach(e => e.remove()); return b.textContent; }"""

# per name cell: its short name's box within the cell, one line, and the copy button's text
NAME_CELLS = """() => [...document.querySelectorAll('td.name summary[title]')].map(s => {
  const nm = s.querySelector('.nm'), td = s.closest('td'), btn = s.querySelector('.copy');
  const a = nm.getBoundingClientRect(), c = td.getBoundingClientRect();
  return {inside: a.left >= c.left - 1 && a.right <= c.right + 1, height: a.height,
          line: parseFloat(getComputedStyle(nm).lineHeight) || a.height,
          full: s.getAttribute('title'), copies: btn && btn.getAttribute('data-copy')}; })"""

EXPONENT = re.compile(r"(?<![\w.])\d+(?:\.\d+)?e[+-]\d+\b", re.IGNORECASE)


def _open(html: Path) -> tuple[Any, Any, list[str]]:
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    context = browser.new_context(
        viewport={"width": 1100, "height": 1000}, permissions=["clipboard-read", "clipboard-write"]
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(html.as_uri())
    page._roofscope_close = lambda: (browser.close(), pw.stop())  # type: ignore[attr-defined]
    return page, context, errors


def _check_tables(page: Any, shot: str) -> None:
    for width in (1100, 700):
        page.set_viewport_size({"width": width, "height": 1000})
        assert page.evaluate(OVERFLOWING) == [], width
        assert page.evaluate(WRAPPED_NUMBERS) == [], width
        for cell in page.evaluate(NAME_CELLS):
            assert cell["inside"] and cell["height"] <= 1.5 * cell["line"], cell
            assert cell["copies"] == cell["full"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"tables-{shot}.png"))  # the first screen: a look
    text = page.evaluate(TEXT)
    assert EXPONENT.findall(text) == []


@pytest.mark.parametrize("profile", REPORTS, ids=lambda p: p.name)
def test_report_tables_fit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, profile: Path
) -> None:
    if not profile.exists():
        pytest.skip("needs ../shared/corpus")
    needs_browser()
    html = tmp_path / "r.html"
    assert main(["analyze", str(profile), "--html", str(html)]) == 0
    capsys.readouterr()
    page, _, errors = _open(html)
    try:
        _check_tables(page, profile.name)
        assert errors == []
    finally:
        page._roofscope_close()


def test_compare_tables_fit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Omniperf 1.0.3's Axes1 workload, MI100 against MI200 (both trimmed)."""
    needs_browser()
    html = tmp_path / "c.html"
    base, new = DATA / "omniperf-v1-mi100", DATA / "rocprof-compute-omniperf1-mi200"
    assert main(["compare", str(base), str(new), "--html", str(html)]) == 0
    capsys.readouterr()
    page, _, errors = _open(html)
    try:
        _check_tables(page, "compare-omniperf")
        assert errors == []
    finally:
        page._roofscope_close()


def test_copy_button_copies_the_full_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The copy button puts the kernel's whole (demangled) name on the clipboard, and
    clicking it neither opens the name's details nor selects the row."""
    needs_browser()
    html = tmp_path / "r.html"
    assert main(["analyze", str(DATA / "rocprof-compute-mi200"), "--html", str(html)]) == 0
    capsys.readouterr()
    page, _, errors = _open(html)
    try:
        button = page.locator("#kernels td.name button.copy").first
        full = button.get_attribute("data-copy")
        assert full and full.startswith("vecCopy(")  # the demangled name, parameters and all
        button.click()
        assert page.evaluate("navigator.clipboard.readText()") == full
        assert page.locator("#kernels details[open]").count() == 0
        assert page.locator("#kernels tr.sel").count() == 0
        assert errors == []
    finally:
        page._roofscope_close()
