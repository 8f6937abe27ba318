"""The roofline and movement charts explain themselves: a legend, the ten kernels with the most
time labelled, SI ticks, outliers at the edge, both GPUs' roofs in a comparison, and, in
Chromium, no text over other text. Screenshots of each checked SVG go to test-artifacts/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from roofscope.cli.app import main
from roofscope.render.charts.logplot import si_tick
from roofscope.render.numbers import si
from tests.conftest import DATA, SHARED_CORPUS, SUMMARY, SUMMARY_WORK, run_json
from tests.test_html import ARTIFACTS, CHROMIUM, needs_browser

NS = {"s": "http://www.w3.org/2000/svg"}
MI200 = SHARED_CORPUS / "amd" / "omniperf-v1-2022" / "Axes1" / "mi200"
TRIMMED = DATA / "rocprof-compute-omniperf1-mi200"
VCOPY = SHARED_CORPUS / "amd" / "rocprof-compute-vcopy-2025"


def test_si_ticks() -> None:
    assert [si_tick(d) for d in (-4, -3, -1, 0, 2, 3, 13, 15)] == [
        "100 µ", "1 m", "100 m", "1", "100", "1 k", "10 T", "1 P",
    ]  # fmt: skip
    assert si(1e-7, "FLOP/B") == "100 nFLOP/B"
    assert si(999.7, "B") == "1 kB"  # not 1e+03 B


def _svg(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[Any, ET.Element]:
    doc = run_json(capsys, *args, "--svg", str(tmp_path / "svg"))
    return doc, ET.parse(tmp_path / "svg" / "roofline.svg").getroot()


def _own(t: ET.Element) -> str:
    """A text's own words, without its tooltip."""
    return (t.text or "") + "".join(child.tail or "" for child in t)


def _texts(root: ET.Element, css: str) -> list[ET.Element]:
    return [t for t in root.iter(f"{{{NS['s']}}}text") if css in (t.get("class") or "").split()]


@pytest.mark.parametrize("profile", [MI200, TRIMMED], ids=["corpus", "trimmed"])
def test_mi200_roofline_explains_itself(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, profile: Path
) -> None:
    if not profile.exists():
        pytest.skip(f"{profile} is absent")
    doc, root = _svg(capsys, tmp_path, str(profile))
    words = " ".join("".join(t.itertext()) for t in root.iter(f"{{{NS['s']}}}text"))
    # the legend names the kinds of point drawn, and only those (issue 40)
    strokes = {c.get("stroke") for c in root.iter(f"{{{NS['s']}}}circle")
               if "point" in (c.get("class") or "")}  # fmt: skip
    assert ("memory-bound" in words) == ("#1f77b4" in strokes) and "#1f77b4" in strokes
    assert ("compute-bound" in words) == ("#d62728" in strokes)
    # its kernels over the HBM roof are at the measured roof, not above the hardware: filled,
    # and no 'hollow: above its roof' legend (issue 38, point 8.3)
    assert "hollow" not in words
    # the hotspot table's top eight, by total time, each named where its name fits, else
    # numbered (and named in the key), with its full name as tooltip (issue 40)
    by_time = sorted(range(len(doc["kernels"])), key=lambda i: -doc["kernels"][i]["total_s"])
    named = {int(t.get("data-k") or -1): t for t in _texts(root, "kernel-label")}
    numbered = {int(t.get("data-k") or -1): t for t in _texts(root, "kernel-number")}
    assert set(named) <= set(by_time[:8]) and set(by_time[:8]) <= set(named) | set(numbered)
    keyed = {int(t.get("data-k") or -1): "".join(t.itertext()) for t in _texts(root, "key-entry")}
    assert {i: _own(t) for i, t in numbered.items()} == {i: k.split()[0] for i, k in keyed.items()}
    for i, t in {**named, **numbered}.items():
        assert t.findtext("s:title", namespaces=NS) == doc["kernels"][i]["name"]
    ticks = ["".join(t.itertext()) for t in _texts(root, "tick")]
    assert ticks and not [t for t in ticks if re.search(r"\de[+-]?\d", t)]
    assert {"1 m", "1", "1 k", "1 T", "10 T"} <= set(ticks)


def test_warm_up_is_drawn_at_the_edge(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A 1 µs warm-up of 100 FLOP over 1 GB (1e-7 FLOP/B, 100 MFLOP/s, 0.017 % of the time)
    would stretch the x axis by five decades: it is clipped to the left edge and named.
    Omniperf's MI300A exercise: its warm-up (a validity finding, 98.5 % of the time) is too."""
    profile = tmp_path / "kernels.csv"
    profile.write_text(SUMMARY.read_text(encoding="utf-8") + "warmup,1,1000,1000\n")
    work = [*SUMMARY_WORK, "--work", "warmup=100:1.0e9", "--gpu", "mi250x"]
    doc, root = _svg(capsys, tmp_path, str(profile), *work)
    warm = next(i for i, k in enumerate(doc["kernels"]) if k["name"] == "warmup")
    circles = {c.get("data-k"): c for c in root.iter(f"{{{NS['s']}}}circle") if c.get("data-k")}
    assert "clipped" in (circles[str(warm)].get("class") or "")
    assert sum("clipped" in (c.get("class") or "") for c in circles.values()) == 1
    ticks = ["".join(t.itertext()) for t in _texts(root, "tick")]
    assert ticks[0] == "1 m"  # the bulk's 0.01 FLOP/B, half a decade spare: not 10 n
    legend = "".join(next(g for g in root.iter() if g.get("class") == "legend").itertext())
    assert "beyond the axes: warmup (100 nFLOP/B, 100 MFLOP/s, " in legend  # and its findings


# -- in Chromium ------------------------------------------------------------------------------

OVERLAPS = """svg => {
  const boxes = [...svg.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
  }).filter(b => b.x1 > b.x0);
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5)
      out.push(a.text + ' / ' + b.text);
  }
  return out;
}"""


def _overlaps_in_chromium(svg: Path, shot: str) -> list[str]:
    """Every pair of <text> whose boxes (as Chromium lays them out) overlap; a screenshot."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 800, "height": 700})
        page.set_content(
            f"<html><body style='margin:0'>{svg.read_text(encoding='utf-8')}</body></html>"
        )
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator("svg").first.screenshot(path=str(ARTIFACTS / f"{shot}.png"))
        found: list[str] = page.locator("svg").first.evaluate(OVERLAPS)
        browser.close()
    return found


def test_mi200_roofline_text_apart_in_chromium(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    needs_browser()
    profile = MI200 if MI200.exists() else TRIMMED
    run_json(capsys, str(profile), "--svg", str(tmp_path / "svg"))
    assert _overlaps_in_chromium(tmp_path / "svg" / "roofline.svg", "roofline-mi200") == []


def test_movement_draws_both_gpus_roofs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """vcopy on an MI200 against an MI300X (its rocpd folder: the rocprofv2 one has 0 ns
    dispatches, so no arrow): each side's ceilings drawn and named, no text over other text."""
    base, new = VCOPY / "MI200", VCOPY / "MI300X_A1_rocpd"
    if not base.exists() or not new.exists():
        pytest.skip(f"{VCOPY} is absent")
    svgs = tmp_path / "svg"
    assert main(["compare", str(base), str(new), "--svg", str(svgs)]) == 0
    capsys.readouterr()
    root = ET.parse(svgs / "movement.svg").getroot()
    lines = [x for x in root.iter(f"{{{NS['s']}}}line") if "ceiling" in (x.get("class") or "")]
    base_lines = [x for x in lines if "base" in (x.get("class") or "")]
    new_lines = [x for x in lines if "new" in (x.get("class") or "")]
    assert base_lines and new_lines
    # the MI300X's HBM (5.3 TB/s) among the candidate's lines, the MI200's (1.39 TB/s) among
    # the baseline's: rocprof-compute's own roofline.csv of each folder
    tips = lambda xs: " ".join(x.findtext("s:title", namespaces=NS) or "" for x in xs)  # noqa: E731
    assert "hbm 5.3 TB/s" in tips(new_lines) and "hbm 1.39 TB/s" in tips(base_lines)
    words = " ".join("".join(t.itertext()) for t in root.iter(f"{{{NS['s']}}}text"))
    assert "baseline roof: Instinct MI210" in words and "candidate roof: Instinct MI300X" in words
    if CHROMIUM:
        needs_browser()
        assert _overlaps_in_chromium(svgs / "movement.svg", "movement-mi200-mi300x") == []


def test_zoom_and_pan_in_the_browser(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Ctrl + wheel over the roofline zooms its viewBox about the pointer; a double-click
    resets it."""
    from tests.test_html import open_page

    needs_browser()
    html = tmp_path / "r.html"
    run_json(capsys, str(TRIMMED), "--html", str(html))
    page, errors, _ = open_page(html, "roofline-zoom")
    try:
        svg = page.locator("svg#roofline")
        full = svg.get_attribute("viewBox")
        svg.scroll_into_view_if_needed()
        box = svg.bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + 300, box["y"] + 200)
        page.keyboard.down("Control")
        page.mouse.wheel(0, -100)
        page.keyboard.up("Control")
        page.wait_for_timeout(100)
        svg.screenshot(path=str(ARTIFACTS / "roofline-zoomed.png"))
        zoomed = [float(v) for v in (svg.get_attribute("viewBox") or "").split()]
        assert zoomed[2] == pytest.approx(0.8 * float((full or "").split()[2]), rel=1e-3)
        svg.dblclick(position={"x": 300, "y": 200})
        assert [float(v) for v in (svg.get_attribute("viewBox") or "").split()] == [
            float(v) for v in (full or "").split()
        ]
        assert errors == []
    finally:
        page._roofscope_close()


def test_doubtful_warm_up_does_not_set_the_axes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Omniperf's MI300A OpenMP exercise: the first dispatch of QQmain_l18 is a warm-up (the
    warm-up-dominates finding) holding 98.5 % of the time at 2.17 MFLOP/s; the two sound
    kernels (1.54 and 1.78 TFLOP/s) set the axes, which no longer reach down to 100 k."""
    doc, root = _svg(capsys, tmp_path, str(DATA / "rocprof-compute-omniperf2-mi300a"))
    l18 = next(i for i, k in enumerate(doc["kernels"]) if k["name"].endswith("QQmain_l18"))
    clipped = [c for c in root.iter(f"{{{NS['s']}}}circle") if "clipped" in (c.get("class") or "")]
    assert [c.get("data-k") for c in clipped] == [str(l18)]
    ticks = ["".join(t.itertext()) for t in _texts(root, "tick")]
    assert "100 k" not in ticks and "100 M" in ticks  # 1 GFLOP/s, half a decade spare
    legend = "".join(next(g for g in root.iter() if g.get("class") == "legend").itertext())
    assert "warm-up-dominates" in legend


def test_bandwidth_strip_ticks_are_si(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """softmax without FLOPs goes to the strip: 6.4e8 B in 200 us = 3.2 TB/s, beside the
    MI250X's 3.28 TB/s HBM ceiling; the strip's axis reads 1 T and 10 T, not 1e12, 1e13."""
    from tests.test_html import _no_flops_softmax

    _, root = _svg(capsys, tmp_path, str(SUMMARY), *_no_flops_softmax(SUMMARY_WORK), "--gpu",
                   "mi250x")  # fmt: skip
    strip = next(g for g in root.iter() if g.get("class") == "bandwidth-strip")
    ticks = ["".join(t.itertext()) for t in _texts(strip, "tick")]
    assert {"1 T", "10 T"} <= set(ticks) and not [t for t in ticks if "e" in t]
