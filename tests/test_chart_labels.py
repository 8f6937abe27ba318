"""Labels placed, not thrown (issue 40): read back from the SVG itself, every label's box (from
the font's own widths, ``render.charts.font_metrics``) overlaps no other label and no point it
does not name, every leader line starts on the rim of its own point and ends on its label, no
two leaders cross; hollow points are exactly the kernels the findings call above their roof;
a profile without a placed kernel has no roofline chart and one line saying why."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from roofscope.cli.app import main
from roofscope.render.charts.font_metrics import EM, advance
from roofscope.render.charts.labels import Box, Circle, Placer, segments_cross, text_box
from tests.conftest import DATA, SHARED_CORPUS

NS = "{http://www.w3.org/2000/svg}"
OMNIPERF = SHARED_CORPUS / "amd" / "omniperf-v1-2022" / "Axes1"
PROFILES = [
    DATA / "rocprof-compute-mi200",
    DATA / "rocprof-compute-omniperf1-mi200",
    DATA / "kineto" / "h100_qwen1.5_0.5b_chat.json.gz",
    DATA / "kineto" / "torch_compile_triton_trace.json.gz",
    DATA / "ncu" / "asymgemm-h200" / "mlp_1b_raw.csv",
    OMNIPERF / "mi200",  # 167 points: the densest roofline of the corpus
]
PLACED = {"kernel-label", "kernel-number", "ceiling-label", "speedup"}


def _analyze(capsys: pytest.CaptureFixture[str], tmp_path: Path, profile: Path) -> Path:
    """The profile's charts as SVG files; their folder."""
    if not profile.exists():
        pytest.skip(f"{profile} is absent")
    svg = tmp_path / "svg"
    assert main(["analyze", str(profile), "--svg", str(svg), "--json", "--force"]) == 0
    capsys.readouterr()
    return svg


def _own(t: ET.Element) -> str:
    """A text's own words, without its tooltip."""
    return (t.text or "") + "".join(child.tail or "" for child in t)


def _box(t: ET.Element) -> Box:
    """The box of a ``<text>`` from its x, y, anchor, size and rotation."""
    x, y = float(t.get("x") or 0), float(t.get("y") or 0)
    size = float(t.get("font-size") or 10)
    b = text_box(x, y, _own(t), size, t.get("text-anchor") or "start")
    turn = t.get("transform") or ""
    if not turn.startswith("rotate("):
        return b
    angle, cx, cy = (float(v) for v in turn[7:-1].split())
    a = math.radians(angle)
    corners = [(b.x0, b.y0), (b.x1, b.y0), (b.x1, b.y1), (b.x0, b.y1)]
    turned = [
        (cx + (px - cx) * math.cos(a) - (py - cy) * math.sin(a),
         cy + (px - cx) * math.sin(a) + (py - cy) * math.cos(a))
        for px, py in corners
    ]  # fmt: skip
    xs, ys = [p[0] for p in turned], [p[1] for p in turned]
    return Box(min(xs), min(ys), max(xs), max(ys))


def _classes(e: ET.Element) -> set[str]:
    return set((e.get("class") or "").split())


def _labels(root: ET.Element) -> list[tuple[ET.Element, Box]]:
    return [(t, _box(t)) for t in root.iter(f"{NS}text") if _classes(t) & PLACED]


def _points(root: ET.Element) -> list[tuple[str, Circle]]:
    return [
        (c.get("data-k") or "", Circle(*(float(c.get(a) or 0) for a in ("cx", "cy", "r"))))
        for c in root.iter(f"{NS}circle")
        if "point" in _classes(c) and "bw" not in _classes(c)
    ]


def _apart(root: ET.Element) -> None:
    """The checks of the module's docstring on one chart."""
    labels, points = _labels(root), _points(root)
    assert labels
    for n, (t, b) in enumerate(labels):
        for u, c in labels[n + 1 :]:
            assert not b.overlaps(c), f"{_own(t)!r} over {_own(u)!r}"
        if _classes(t) & {"kernel-label", "kernel-number"}:
            for k, p in points:
                assert not p.meets(b, 0.0), f"{_own(t)!r} over the point of kernel {k}"
    circles = dict(points)
    boxes = {t.get("data-k"): b for t, b in labels if t.get("data-k")}
    leaders = [x for x in root.iter(f"{NS}line") if "leader" in _classes(x)]
    segs = []
    for x in leaders:
        x1, y1, x2, y2 = (float(x.get(a) or 0) for a in ("x1", "y1", "x2", "y2"))
        own = circles[x.get("data-k") or ""]
        assert math.hypot(x1 - own.cx, y1 - own.cy) == pytest.approx(own.r, abs=0.15)
        b = boxes[x.get("data-k")]
        on_edge = min(abs(x2 - b.x0), abs(x2 - b.x1), abs(y2 - b.y0), abs(y2 - b.y1))
        assert on_edge < 0.15 and b.x0 - 0.1 <= x2 <= b.x1 + 0.1 and b.y0 - 0.1 <= y2 <= b.y1 + 0.1
        segs.append((x1, y1, x2, y2))
    for n, a in enumerate(segs):
        assert not [b for b in segs[n + 1 :] if segments_cross(a, b)]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_roofline_labels_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, profile: Path
) -> None:
    first = (_analyze(capsys, tmp_path, profile) / "roofline.svg").read_text()
    _apart(ET.fromstring(first))
    # the same report, the same chart: the placement is deterministic
    assert (_analyze(capsys, tmp_path, profile) / "roofline.svg").read_text() == first


def test_the_top_kernels_are_named_or_numbered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The H100 Qwen trace: its eight kernels with the most time (by the trace's own
    durations, summed here) named beside their points or numbered and named in the key."""
    profile = DATA / "kineto" / "h100_qwen1.5_0.5b_chat.json.gz"
    assert main(["analyze", str(profile), "--svg", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    placed = {
        k["name"]
        for k in doc["kernels"]
        if (k.get("roofline") or {}).get("achieved_flops_s") and (k["roofline"].get("ai") or {})
    }
    top = [k["name"] for k in sorted(doc["kernels"], key=lambda k: -k["total_s"])]
    root = ET.parse(tmp_path / "roofline.svg").getroot()
    names = doc["kernels"]
    shown = {
        names[int(t.get("data-k") or -1)]["name"]
        for t in root.iter(f"{NS}text")
        if _classes(t) & {"kernel-label", "kernel-number"}
    }
    assert [n for n in top if n in placed][:8] == [n for n in top if n in shown][:8]
    key = [_own(t) for t in root.iter(f"{NS}text") if "key-entry" in _classes(t)]
    numbers = [_own(t) for t in root.iter(f"{NS}text") if "kernel-number" in _classes(t)]
    assert [k.split()[0] for k in key] == numbers == [str(n + 1) for n in range(len(numbers))]


def test_hollow_points_are_the_findings_above_roof(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Omniperf's MI200 exercise on roofs of 5 TFLOP/s and 1 TB/s (given, not measured): the
    kernels over them are ``above-roof`` findings, and exactly they are drawn hollow; on its
    own measured roofs the same kernels are ``at-measured-roof``: none hollow."""
    profile = DATA / "rocprof-compute-omniperf1-mi200"
    for extra, expected in ((["--peak-flops", "5e12", "--peak-bw", "1e12"], 11), ([], 0)):
        out = tmp_path / str(expected)
        assert main(["analyze", str(profile), "--svg", str(out), "--json", *extra]) == 0
        doc = json.loads(capsys.readouterr().out)
        above = {f["kernel"] for f in doc["findings"] if f["rule"] == "above-roof"}
        root = ET.parse(out / "roofline.svg").getroot()
        hollow = {
            doc["kernels"][int(c.get("data-k") or -1)]["name"]
            for c in root.iter(f"{NS}circle")
            if "above" in _classes(c) and c.get("fill") == "none"
        }
        filled = [c for c in root.iter(f"{NS}circle") if "point" in _classes(c)]
        assert hollow == above and len(hollow) == expected
        assert all((c.get("fill") == "none") == ("above" in _classes(c)) for c in filled)
        words = " ".join(_own(t) for t in root.iter(f"{NS}text"))
        assert ("hollow: above its roof" in words) == bool(expected)


def test_no_roofline_chart_without_a_placed_kernel(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A trace without work (inference_rank_1: no FLOPs, no bytes) on an H100's roofs: no
    roofline.svg, one line on stderr and one in the HTML saying why; the other charts made."""
    profile = DATA / "kineto" / "inference_rank_1.json.gz"
    html = tmp_path / "r.html"
    args = ["analyze", str(profile), "--gpu", "H100-SXM", "--svg", str(tmp_path / "svg")]
    assert main([*args, "--html", str(html)]) == 0
    err = capsys.readouterr().err
    why = "no kernel with work (FLOPs or bytes) to place on it"
    assert f"roofscope: no roofline chart written: {why}\n" in err
    assert not (tmp_path / "svg" / "roofline.svg").exists()
    assert (tmp_path / "svg" / "hotspots.svg").exists()
    page = html.read_text()
    assert f'<p class="muted no-chart">No roofline chart: {why}.</p>' in page
    assert 'id="roofline"' not in page and 'class="ridge"' not in page


def test_movement_speedups_apart(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Omniperf MI100 -> MI200: the speedup labels of the bandwidth strip's arrows apart from
    each other, from the level's ceiling label and off the row names; each speedup is the
    ratio of the two sides' total times (summed here from the JSON of each)."""
    base, new = OMNIPERF / "mi100", OMNIPERF / "mi200"
    if not base.exists() or not new.exists():
        pytest.skip(f"{OMNIPERF} is absent")
    svgs = tmp_path / "svg"
    assert main(["compare", str(base), str(new), "--svg", str(svgs)]) in (0, 1)
    capsys.readouterr()
    root = ET.parse(svgs / "movement.svg").getroot()
    texts = [(t, _box(t)) for t in root.iter(f"{NS}text")]
    speeds = [(t, b) for t, b in texts if "speedup" in _classes(t)]
    assert len(speeds) >= 10
    others = [(t, b) for t, b in texts if "speedup" not in _classes(t) and not t.get("class")]
    for n, (t, b) in enumerate(speeds):
        assert not [u for u, c in speeds[n + 1 :] if b.overlaps(c)]
        assert not [_own(u) for u, c in others if b.overlaps(c)], _own(t)


def test_placer_on_200_points_keeps_them_apart() -> None:
    """200 points in a 640 x 340 area (seeded), a label tried for each: no two placed boxes
    overlap nor any meets a point (its speed is measured in bench/, not asserted here)."""
    rng = random.Random(40)
    points = [Circle(rng.uniform(70, 690), rng.uniform(70, 390), rng.uniform(4, 12))
              for _ in range(200)]  # fmt: skip
    placer = Placer(Box(62, 62, 698, 398), points=points)
    placed = [placer.place(p, f"kernel_{n}", 10) for n, p in enumerate(points)]
    boxes = [p.box for p in placed if p is not None]
    assert len(boxes) > 20
    for n, b in enumerate(boxes):
        assert not [c for c in boxes[n + 1 :] if b.overlaps(c)]
        assert not [p for p in points if p.meets(b, 0.0)]


def test_widths_are_the_fonts() -> None:
    """Liberation Sans' advance widths (its hmtx table over 2048 units per em): 'W' 1933,
    'i' 455, '0' 1139, the ellipsis 2048."""
    assert (EM["W"], EM["i"], EM["0"], EM["…"]) == (0.944, 0.222, 0.556, 1.0)
    assert advance("Wi0", 10) == pytest.approx(10 * (1933 + 455 + 1139) / 2048, abs=0.02)
