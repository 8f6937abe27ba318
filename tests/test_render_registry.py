"""The renderer registry: every output by the kind of result and its name, each the same
bytes as the view function it stands for, on the shipped demo profile."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

import roofscope
from roofscope.errors import UsageError
from roofscope.render.charts.hotspots import hotspot_svg
from roofscope.render.charts.movement import movement_svg
from roofscope.render.charts.roofline import roofline_svg
from roofscope.render.charts.timeline import timeline_svg
from roofscope.render.charts.waterfall import waterfall_svg
from roofscope.render.compare.gate import junit, markdown
from roofscope.render.compare.html import render_compare_html
from roofscope.render.compare.notebook import compare_fragment
from roofscope.render.compare.out import compare_dict, render_compare_json, render_compare_text
from roofscope.render.registry import (
    CHARTS,
    REGISTRY,
    Gated,
    Options,
    renderer,
    report_dict,
)
from roofscope.render.registry import compare_dict as registry_compare_dict
from roofscope.render.report.html import render_html
from roofscope.render.report.json import render_json, to_dict
from roofscope.render.report.notebook import report_fragment
from roofscope.render.report.text import render_text
from roofscope.report import Report
from tests.conftest import DEMO
from tests.test_compare import TRACE, rewrite, scale

REPORT_VIEWS: dict[str, Callable[[Report], str]] = {
    "text": lambda r: render_text(r, top=20, color=None),
    "json": render_json,
    "html": render_html,
    "notebook": report_fragment,
    "hotspots": hotspot_svg,
    "roofline": roofline_svg,
    "timeline": timeline_svg,
}
COMPARE_VIEWS: dict[str, Callable[[Gated], str]] = {
    "text": lambda g: render_compare_text(g.comparison, g.verdict),
    "json": lambda g: render_compare_json(g.comparison, g.verdict),
    "html": lambda g: render_compare_html(g.comparison, g.verdict, *g.ceilings, g.gpus),
    "notebook": lambda g: compare_fragment(g.comparison, g.verdict, g.ceilings, g.gpus),
    "markdown": lambda g: markdown(g.comparison, g.verdict),
    "junit": lambda g: junit(g.comparison, g.verdict),
    "waterfall": lambda g: waterfall_svg(g.comparison),
    "movement": lambda g: movement_svg(g.comparison, *g.ceilings, g.gpus),
}


@pytest.fixture(scope="module")
def report() -> Report:
    return roofscope.analyze(DEMO).checkup


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Gated:
    new = rewrite(TRACE, tmp_path_factory.mktemp("new") / "results.csv", scale({"laplacian": 0.8}))
    cmp = roofscope.compare(DEMO, new)
    base, after = cmp.base[0], cmp.new[0]
    return Gated(
        cmp.result,
        cmp.gate(fail_if_slower=5),
        (base.roofline.ceilings, after.roofline.ceilings),
        (base.device.name or "baseline", after.device.name or "candidate"),
    )


def test_every_renderer_is_reachable_by_its_kind_and_name() -> None:
    assert {n for k, n in REGISTRY if k == "report"} == set(REPORT_VIEWS)
    assert {n for k, n in REGISTRY if k == "compare"} == set(COMPARE_VIEWS)
    assert {n for k, n in REGISTRY if k == "chart"} == {"png"}
    for kind, name in REGISTRY:
        view = renderer(kind, name)
        assert (view.name, view.suffix[0]) == (name, ".")
    assert set(CHARTS["report"]) < set(REPORT_VIEWS) and set(CHARTS["compare"]) < set(COMPARE_VIEWS)


def test_an_unknown_name_lists_the_known_ones() -> None:
    known = "hotspots, html, json, notebook, roofline, text, timeline"
    with pytest.raises(UsageError, match=f"no report renderer named 'svg'; known: {known}$"):
        renderer("report", "svg")
    with pytest.raises(UsageError, match="no compare renderer named 'roofline'; known: html, "):
        renderer("compare", "roofline")


@pytest.mark.parametrize("name", sorted(REPORT_VIEWS))
def test_each_report_renderer_writes_what_its_view_writes(report: Report, name: str) -> None:
    assert renderer("report", name).render(report) == REPORT_VIEWS[name](report)


@pytest.mark.parametrize("name", sorted(COMPARE_VIEWS))
def test_each_compare_renderer_writes_what_its_view_writes(gated: Gated, name: str) -> None:
    assert renderer("compare", name).render(gated) == COMPARE_VIEWS[name](gated)


def test_the_options_reach_the_view(report: Report) -> None:
    options = Options(top=3, color=True)
    assert renderer("report", "text", options).render(report) == render_text(
        report, top=3, color=True
    )
    assert renderer("report", "hotspots", Options(top=2)).render(report) == hotspot_svg(report, 2)


def test_the_documents_are_the_json_views(report: Report, gated: Gated) -> None:
    assert report_dict(report) == to_dict(report)
    assert registry_compare_dict(gated) == compare_dict(gated.comparison, gated.verdict)


def test_png_is_the_rasterised_chart(report: Report) -> None:
    pytest.importorskip("vl_convert")
    from roofscope.render.charts.png import png_bytes

    svg = hotspot_svg(report)
    assert renderer("chart", "png").render(svg) == png_bytes(svg)


def test_the_views_load_only_when_asked() -> None:
    """Asking the registry for a renderer imports no view: rendering does."""
    code = (
        "import sys; from roofscope.render.registry import renderer; renderer('report', 'html');"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('roofscope.render.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["roofscope.render.registry"]
