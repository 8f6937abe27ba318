"""The HTML report: one offline file, escaped names, linked charts, checked in Chromium and
Firefox.

The browser tests need Chromium (Debian's /usr/bin/chromium, or $ROOFSCOPE_CHROMIUM) and
Playwright, and Firefox (Debian's firefox-esr, or $ROOFSCOPE_FIREFOX) and websockets: without
them they are skipped with the reason, except in CI (CI=true), where a missing browser fails
them. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, DEMO

ARTIFACTS = Path(__file__).parents[1] / "test-artifacts"
CHROMIUM = os.environ.get("ROOFSCOPE_CHROMIUM") or shutil.which("chromium") or ""
PROFILES = [DEMO, DEMO.parent / "openmp-collapse-mi300a", DATA / "rocprof-compute-mi200"]
XSS = "<img src=x onerror=alert(1)>"


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not CHROMIUM:
        return "no Chromium found (apt-get install chromium, or set ROOFSCOPE_CHROMIUM)"
    return None


def needs_browser() -> None:
    why = _browser_missing()
    if why is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests need a browser in CI: {why}")
    pytest.skip(why)


def analyze_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["analyze", *args, "--json"]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def xss_profile(tmp_path: Path) -> Path:
    path = tmp_path / "kernels.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Name", "Count", "TotalTimeNs", "AverageTimeNs"])
        w.writerow([XSS, 4, 4000, 1000])
        w.writerow(["copy_kernel", 2, 500, 250])
    return path


# -- without a browser ----------------------------------------------------------------------


def test_one_offline_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    doc = analyze_json(capsys, str(PROFILES[1]), "--html", str(html))
    text = html.read_text(encoding="utf-8")
    # no request: the URLs are SVG's namespace (a name) and the catalogue's citations, text
    urls = set(re.findall(r"(?:https?:)?//[\w.-]+[^\s\"'<>]*", text))
    cited = " ".join(c["source"] for c in doc["device"]["ceilings"])
    assert {u for u in urls if u not in cited} == {"http://www.w3.org/2000/svg"}
    assert not re.search(r"""(?:src|href)=["'](?!#)|url\((?!#)""", text)
    assert "default-src 'none'" in text and "<script src" not in text and "<link" not in text
    assert text.count('class="bar"') == len(doc["kernels"])  # 3 kernels, none folded
    # the metrics table: one row per kernel with metrics, e.g. VALU Active Threads 44.1
    metrics = text[text.index('<table id="metrics">') :].split("</table>")[0]
    assert metrics.count("<tr data-k=") == len(doc["kernels"])
    l18 = doc["kernels"][0]["metrics"]["VALU Active Threads"]["value_dispatch_mean"]
    # the number and its unit kept together (a no-break space), the value never wrapped
    assert f'<td><span class="n">{l18:.3g}&nbsp;threads</span></td>' in text
    assert main(["analyze", str(PROFILES[1]), "--html", str(html)]) == 2  # no overwrite
    assert "exists; pass --force" in capsys.readouterr().err
    assert main(["analyze", str(PROFILES[1]), "--html", str(html), "--force"]) == 0


def test_names_are_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    html = tmp_path / "xss.html"
    analyze_json(capsys, str(xss_profile(tmp_path)), "--html", str(html))
    text = html.read_text(encoding="utf-8")
    assert XSS not in text and "&lt;img src=x onerror=alert(1)&gt;" in text


def test_svg_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from xml.etree import ElementTree as ET

    analyze_json(capsys, str(PROFILES[1]), "--svg", str(tmp_path / "charts"))
    names = sorted(p.name for p in (tmp_path / "charts").iterdir())
    assert names == ["hotspots.svg", "roofline.svg", "timeline.svg"]
    for p in (tmp_path / "charts").iterdir():
        root = ET.parse(p).getroot()  # well-formed XML
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        # the drawing's own size, which the page scales to its width through the viewBox
        width = {"timeline.svg": 1000}.get(p.name, 760)
        assert root.get("viewBox") == f"0 0 {width} {root.get('height')}"
        assert float(root.get("width") or 0) == width


# -- in the browser ---------------------------------------------------------------------------


def open_page(html: Path, shot: str) -> tuple[Any, list[str], list[str]]:
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "request",
        lambda r: None if r.url.startswith(("file:", "data:")) else requests.append(r.url),
    )
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(html.as_uri())
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)
    page._roofscope_close = lambda: (browser.close(), pw.stop())  # type: ignore[attr-defined]
    return page, errors, requests


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_report_in_the_browser(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, profile: Path
) -> None:
    needs_browser()
    html = tmp_path / "r.html"
    doc = analyze_json(capsys, str(profile), "--html", str(html))
    page, errors, requests = open_page(html, f"report-{profile.name}")
    try:
        shown = min(20, len(doc["kernels"])) + (1 if len(doc["kernels"]) > 20 else 0)
        assert page.locator("#hotspots g.bar").count() == shown
        # one mark per kernel with work data: FLOPs (or, without them, IOPs) on the roofline
        # proper, bytes alone in the bandwidth strip beneath it
        work = [i for i, k in enumerate(doc["kernels"]) if k["roofline"]]
        flops = [i for i in work if doc["kernels"][i]["roofline"]["placed_by"] in ("flops", "iops")]
        bandwidth = [i for i in work if doc["kernels"][i]["roofline"]["placed_by"] == "bandwidth"]
        assert len(flops) + len(bandwidth) == len(work)
        assert page.locator("#roofline circle.point").count() == len(work)
        assert page.locator("#roofline circle.point.bw").count() == len(bandwidth)
        for i in flops[:1] + bandwidth[:1]:
            point = page.locator(f'#roofline circle.point[data-k="{i}"]')
            point.hover(force=True)
            assert doc["kernels"][i]["name"] in (page.text_content("#tip") or "")
            page.locator(f'#hotspots g.bar[data-k="{i}"] rect').click()
            assert "sel" in (point.get_attribute("class") or "")
            assert "sel" in (
                page.locator(f'#kernels tr[data-k="{i}"]').get_attribute("class") or ""
            )
        assert errors == [] and requests == []
    finally:
        page._roofscope_close()


def test_names_run_no_script_in_the_browser(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    needs_browser()
    html = tmp_path / "xss.html"
    analyze_json(capsys, str(xss_profile(tmp_path)), "--html", str(html))
    page, errors, requests = open_page(html, "report-xss")
    try:
        assert page.locator("img").count() == 0
        assert XSS in (page.text_content("#kernels") or "")
        page.locator('#hotspots g.bar[data-k="0"] rect').hover(force=True)
        assert XSS in (page.text_content("#tip") or "")
        assert errors == [] and requests == []
    finally:
        page._roofscope_close()


def test_reports_in_firefox(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same reports in Firefox (Debian's firefox-esr over WebDriver BiDi, one browser for
    all): the three real profiles, the hostile name and a comparison, with zero console errors,
    zero network requests, a bar per shown kernel, a mark per kernel with work, the full name
    on hover (the real pointer) and the click on a bar highlighting the roofline point."""
    from tests import firefox

    why = firefox.missing()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the Firefox test needs Firefox in CI: {why}")
        pytest.skip(why)
    from tests.test_compare import TRACE, rewrite, scale

    ARTIFACTS.mkdir(exist_ok=True)
    with firefox.firefox() as page:
        for profile in PROFILES:
            html = tmp_path / f"{profile.name}.html"
            doc = analyze_json(capsys, str(profile), "--html", str(html))
            page.errors.clear()
            page.requests.clear()
            page.open(html)
            page.screenshot(ARTIFACTS / f"firefox-report-{profile.name}.png")
            shown = min(20, len(doc["kernels"])) + (1 if len(doc["kernels"]) > 20 else 0)
            assert page.evaluate("document.querySelectorAll('#hotspots g.bar').length") == shown
            work = [i for i, k in enumerate(doc["kernels"]) if k["roofline"]]
            count = page.evaluate("document.querySelectorAll('#roofline circle.point').length")
            assert count == len(work)
            for i in work[:1]:
                point = f'#roofline circle.point[data-k="{i}"]'
                page.pointer(point, click=False)
                tip = page.evaluate("document.getElementById('tip').textContent")
                assert doc["kernels"][i]["name"] in tip
                page.pointer(f'#hotspots g.bar[data-k="{i}"] rect', click=True)
                classes = page.evaluate(f"document.querySelector('{point}').getAttribute('class')")
                assert "sel" in classes.split()
            assert page.errors == [] and page.requests == []

        html = tmp_path / "xss.html"
        analyze_json(capsys, str(xss_profile(tmp_path)), "--html", str(html))
        page.open(html)
        assert page.evaluate("document.querySelectorAll('img').length") == 0
        assert XSS in page.evaluate("document.getElementById('kernels').textContent")
        page.pointer('#hotspots g.bar[data-k="0"] rect', click=False)
        assert XSS in page.evaluate("document.getElementById('tip').textContent")
        assert page.errors == [] and page.requests == []

        new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale({"laplacian_kernel": 1.5}))
        html = tmp_path / "cmp.html"
        assert main(["compare", str(TRACE), str(new), "--html", str(html)]) == 0
        capsys.readouterr()
        page.open(html)
        page.screenshot(ARTIFACTS / "firefox-compare.png")
        assert page.evaluate("document.querySelectorAll('#waterfall g[data-k]').length") == 4
        assert "Gate: no gate set" in page.evaluate("document.body.textContent")  # no threshold
        assert page.errors == [] and page.requests == []


def test_comparison_in_the_browser(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    needs_browser()
    from tests.test_compare import TRACE, rewrite, scale

    new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale({"laplacian_kernel": 1.5}))
    html = tmp_path / "cmp.html"
    assert main(["compare", str(TRACE), str(new), "--html", str(html)]) == 0
    capsys.readouterr()
    page, errors, requests = open_page(html, "compare")
    try:
        assert page.locator("#waterfall g[data-k]").count() == 4
        assert "Gate: no gate set" in (page.text_content("body") or "")  # no threshold
        assert errors == [] and requests == []
    finally:
        page._roofscope_close()


def test_comparison_report_shows_movement(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The summary example against itself with vector_add twice as fast: its arrow on the
    roofline goes up (same work, half the time), labelled 2.00x."""
    from tests.conftest import SUMMARY, SUMMARY_WORK

    new = tmp_path / "new.csv"
    rows = SUMMARY.read_text(encoding="utf-8").splitlines()
    rows = [r.replace("vector_add,8,3200000,400000", "vector_add,8,1600000,200000") for r in rows]
    new.write_text("\n".join(rows) + "\n", encoding="utf-8")
    html = tmp_path / "cmp.html"
    args = [
        "compare",
        str(SUMMARY),
        str(new),
        "--gpu",
        "mi250x",
        *SUMMARY_WORK,
        "--html",
        str(html),
    ]
    assert main(args) == 0
    capsys.readouterr()
    text = html.read_text(encoding="utf-8")
    movement = text[text.index('id="movement"') :].split("</svg>")[0]
    assert movement.count("<g data-k=") == 4  # every kernel has work on both sides
    assert ">2.00x</text>" in movement and ">1.00x</text>" in movement
    # no threshold given: no verdict, never a green PASS
    assert "Gate: no gate set" in text and "PASS" not in text and 'id="waterfall"' in text


def _no_flops_softmax(work: list[str]) -> list[str]:
    """The summary example's work with softmax's FLOPs zeroed: bytes alone (a copy)."""
    return [w.replace("softmax=4.0e9:", "softmax=0:") for w in work]


def test_kernels_without_flops_are_drawn_by_bandwidth(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """softmax moves 6.4e8 B in 800 us = 800 GB/s; against the 1.6 TB/s peak that is 50.0%.
    It has no intensity, so it is drawn in the strip beneath the roofline, not left out."""
    from tests.conftest import PEAKS, SUMMARY, SUMMARY_WORK

    svgs = tmp_path / "svg"
    doc = analyze_json(capsys, str(SUMMARY), *_no_flops_softmax(SUMMARY_WORK), *PEAKS,
                       "--svg", str(svgs))  # fmt: skip
    index = next(i for i, k in enumerate(doc["kernels"]) if k["name"] == "softmax")
    svg = (svgs / "roofline.svg").read_text(encoding="utf-8")
    strip = svg[svg.index('class="bandwidth-strip"') :]
    assert strip.count('<circle class="point bw"') == 1
    assert f'data-k="{index}"' in strip
    assert "hbm 800 GB/s, efficiency 50.0% of the hbm ceiling" in strip
    assert svg.count('<circle class="point') == 4  # the three others on the roofline proper


def test_comparison_moves_kernels_without_flops(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """softmax (bytes only) twice as fast: its arrow in the bandwidth strip of the movement
    chart goes from 800 GB/s to 1.6 TB/s, labelled 2.00x."""
    from tests.conftest import SUMMARY, SUMMARY_WORK

    new = tmp_path / "new.csv"
    rows = SUMMARY.read_text(encoding="utf-8").replace(
        "softmax,4,800000,200000", "softmax,4,400000,100000"
    )
    new.write_text(rows, encoding="utf-8")
    html = tmp_path / "cmp.html"
    work = _no_flops_softmax(SUMMARY_WORK)
    assert (
        main(["compare", str(SUMMARY), str(new), "--gpu", "mi250x", *work, "--html", str(html)])
        == 0
    )
    capsys.readouterr()
    text = html.read_text(encoding="utf-8")
    movement = text[text.index('id="movement"') :].split("</svg>")[0]
    strip = movement[movement.index('class="bandwidth-strip"') :]
    assert movement.count("<g data-k=") == 3  # the kernels with FLOPs on the roofline proper
    assert strip.count('<g class="bw" data-k=') == 1
    assert "softmax: 2.00x; without FLOPs on one side or both: hbm 800 GB/s -&gt; 1.6 TB/s" in strip
    assert ">2.00x</text>" in strip


def test_comparison_charts_as_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """25 kernels k00..k24 of (i+1) x 100 us each, all twice as fast: ``compare --svg`` writes
    the waterfall and the movement chart; the waterfall shows the 20 largest and folds the
    other five (k00..k04) into one step of -(1+2+3+4+5) x 50 us = -0.750 ms, so that its steps
    end at the candidate's total."""
    from xml.etree import ElementTree as ET

    def write(path: Path, factor: float) -> Path:
        rows = ["Name,Count,TotalTimeNs,AverageTimeNs"]
        rows += [f"k{i:02d},1,{(i + 1) * 100000 * factor:.0f},{(i + 1) * 100000 * factor:.0f}"
                 for i in range(25)]  # fmt: skip
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        return path

    base, new = write(tmp_path / "base.csv", 1.0), write(tmp_path / "new.csv", 0.5)
    svgs = tmp_path / "svg"
    assert main(["compare", str(base), str(new), "--svg", str(svgs)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in svgs.iterdir()) == ["waterfall.svg"]  # no work: no movement
    root = ET.parse(svgs / "waterfall.svg").getroot()
    tips = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert "other (5 kernels): -0.750 ms" in tips
    assert "k24: -1.250 ms" in tips and not any(t and t.startswith("k04") for t in tips)
    assert tips[0] == "baseline 32.5 ms" and tips[-1] == "candidate 16.2 ms"


def test_out_folder_names_the_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["analyze", str(DEMO), "-o", str(tmp_path / "out")]) == 0
    assert main(["compare", str(DEMO), str(DEMO), "-o", str(tmp_path / "out")]) == 0
    assert main(["analyze", str(DEMO), "-o", str(tmp_path / "out")]) == 2  # exists: no --force
    capsys.readouterr()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "finite-difference-vs-finite-difference.roofscope.html",
        "finite-difference.roofscope.html",
    ]


def test_rank_view_in_the_browser(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Eight ranks, rank 5's laplacian 30% slower: a row per rank with rank 5 marked as the
    straggler, the spread table, a timeline lane per process named by its folder, and a spread
    row linked to the hotspot bar of the same kernel."""
    from tests.test_ranks import ranks

    needs_browser()
    html = tmp_path / "ranks.html"
    doc = analyze_json(capsys, str(ranks(tmp_path, slow=1.3)), "--html", str(html))
    page, errors, requests = open_page(html, "report-ranks")
    try:
        assert page.locator("#ranks tr").count() == 1 + 8
        marked = page.locator("#ranks tr.straggler")
        assert marked.count() == 1
        assert (marked.locator("td").first.text_content() or "").startswith("5")
        assert page.locator("#rank-spread tr").count() == 1 + len(doc["ranks"]["kernels"])
        assert page.locator("#timeline rect.tl-lane").count() == len(doc["devices"]) == 8
        names = page.evaluate(
            "[...document.querySelectorAll('#timeline text.tl-name')]"
            ".map(t => t.firstChild.textContent)"
        )
        assert names == [f"rank{r}/results.csv · device 8" for r in range(8)]
        lap = next(i for i, k in enumerate(doc["kernels"]) if "laplacian" in k["name"])
        page.locator(f'#hotspots g.bar[data-k="{lap}"] rect').click()
        row = page.locator(f'#rank-spread tr[data-k="{lap}"]')
        assert "sel" in (row.get_attribute("class") or "")
        assert errors == [] and requests == []
    finally:
        page._roofscope_close()
