"""What a reader of an exported chart sees, read back from the SVG itself: every ``<text>``
with the box it covers (from the chart's own font widths, ``labels.text_box``), the tick
labels, the legend's entries and the series the marks draw. The checks of issue 40's
acceptance are plain functions of these, so that a failure names the texts at fault."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from xml.etree import ElementTree as ET

from roofscope.render.charts.labels import Box, text_box

NS = "{http://www.w3.org/2000/svg}"
E_NOTATION = re.compile(r"\d[eE][+-]?\d")
_TRANSLATE = re.compile(r"translate\(\s*([-\d.]+)[ ,]+([-\d.]+)\s*\)")
_ROTATE = re.compile(r"rotate\(\s*([-\d.]+)(?:[ ,]+([-\d.]+)[ ,]+([-\d.]+))?\s*\)")


Point = tuple[float, float]


@dataclass(frozen=True)
class Text:
    """A ``<text>`` as drawn: its words, its box (the bounds of its corners), its corners
    (turned with the text: a label along a diagonal roof), its classes, whether it is in a
    legend."""

    words: str
    box: Box
    classes: frozenset[str]
    in_legend: bool
    corners: tuple[Point, ...] = ()


def _classes(e: ET.Element) -> frozenset[str]:
    return frozenset((e.get("class") or "").split())


def _words(e: ET.Element) -> str:
    """The text's own words (a ``<title>`` child is a tooltip, not drawn)."""
    parts = [e.text or ""]
    for child in e:
        if child.tag != f"{NS}title":
            parts.append("".join(child.itertext()))
        parts.append(child.tail or "")
    return "".join(parts).strip()


def _rotated(box: Box, transform: str) -> tuple[Point, ...]:
    """The box's corners turned by a ``rotate(a cx cy)`` (an axis name, a roof's label)."""
    corners = ((box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1))
    m = _ROTATE.search(transform)
    if m is None:
        return corners
    a = math.radians(float(m.group(1)))
    cx, cy = float(m.group(2) or 0), float(m.group(3) or 0)
    cos, sin = math.cos(a), math.sin(a)
    return tuple(
        (cx + (x - cx) * cos - (y - cy) * sin, cy + (x - cx) * sin + (y - cy) * cos)
        for x, y in corners
    )


def texts(svg: str) -> list[Text]:
    """Every drawn text of the chart (those of nested plots included) with its box."""
    return list(_walk(ET.fromstring(svg), 0.0, 0.0, False, top=True))


def _walk(e: ET.Element, dx: float, dy: float, legend: bool, top: bool = False) -> Iterator[Text]:
    if e.tag == f"{NS}text":
        yield _text(e, dx, dy, legend)
        return
    m = _TRANSLATE.search(e.get("transform") or "")
    if m:
        dx, dy = dx + float(m.group(1)), dy + float(m.group(2))
    if e.tag == f"{NS}svg" and not top:
        dx, dy = dx + float(e.get("x") or 0), dy + float(e.get("y") or 0)
    legend = legend or "legend" in _classes(e)
    for child in e:
        yield from _walk(child, dx, dy, legend)


def _text(e: ET.Element, dx: float, dy: float, legend: bool) -> Text:
    words, size = _words(e), float(e.get("font-size") or 10)
    box = text_box(float(e.get("x") or 0), float(e.get("y") or 0), words, size,
                   e.get("text-anchor") or "start")  # fmt: skip
    corners = tuple((x + dx, y + dy) for x, y in _rotated(box, e.get("transform") or ""))
    xs, ys = [x for x, _ in corners], [y for _, y in corners]
    return Text(words, Box(min(xs), min(ys), max(xs), max(ys)), _classes(e), legend, corners)


def _axes(quad: Sequence[Point]) -> list[Point]:
    return [(q[1] - p[1], p[0] - q[0]) for p, q in zip(quad, [*quad[1:], quad[0]], strict=True)]


def _apart(a: Sequence[Point], b: Sequence[Point]) -> bool:
    """Whether two convex quadrilaterals are apart (a separating axis among their edges')."""
    for ax, ay in [*_axes(a), *_axes(b)]:
        pa, pb = [x * ax + y * ay for x, y in a], [x * ax + y * ay for x, y in b]
        if max(pa) <= min(pb) or max(pb) <= min(pa):
            return True
    return False


def overlapping(svg: str) -> list[tuple[str, str]]:
    """Each pair of texts whose boxes overlap, by their words."""
    shown = [t for t in texts(svg) if t.words]
    return [
        (a.words, b.words)
        for n, a in enumerate(shown)
        for b in shown[n + 1 :]
        if a.box.overlaps(b.box) and not _apart(a.corners, b.corners)
    ]


def tick_labels(svg: str) -> list[str]:
    return [t.words for t in texts(svg) if "tick" in t.classes]


def exponents(svg: str) -> list[str]:
    """Every text, drawn or tooltip, that writes a number with an exponent (``1.6e+12``)."""
    root = ET.fromstring(svg)
    found = ["".join(e.itertext()) for e in root.iter() if e.tag in (f"{NS}text", f"{NS}title")]
    return [t for t in found if E_NOTATION.search(t)]


@dataclass(frozen=True)
class Entry:
    """A legend entry: the series it names, its words, its swatch's colour."""

    series: str
    words: str
    fill: str | None


def legend(svg: str) -> list[Entry]:
    """The entries of the chart's ``g.legend`` (``g.legend-entry``, ``data-series``)."""
    root = ET.fromstring(svg)
    out = []
    for g in root.iter(f"{NS}g"):
        if "legend-entry" in _classes(g):
            words = " ".join(_words(t) for t in g.iter(f"{NS}text"))
            fills = [s.get("fill") for s in g if s.tag == f"{NS}rect"]
            out.append(Entry(g.get("data-series") or "", words, fills[0] if fills else None))
    return out


def has_legend(svg: str) -> bool:
    """Whether the chart has a ``g.legend`` with some words in it."""
    return any(t.in_legend and t.words for t in texts(svg))


def drawn_series(svg: str) -> dict[str, set[str]]:
    """The series the chart's marks draw (``data-series`` outside the legend), each with the
    fills its marks use."""
    out: dict[str, set[str]] = {}
    _marks(ET.fromstring(svg), out)
    return out


def _marks(e: ET.Element, out: dict[str, set[str]]) -> None:
    if "legend" in _classes(e):
        return
    series = e.get("data-series")
    if series is not None:
        out.setdefault(series, set()).add(e.get("fill") or "none")
    for child in e:
        _marks(child, out)


def segments(svg: str) -> list[tuple[str, tuple[Point, Point]]]:
    """Every straight piece of a line the chart draws (``line``, ``polyline``, a ``path`` of
    moves and lines), by its class, outside ``defs`` (an arrowhead's shape)."""
    out: list[tuple[str, tuple[Point, Point]]] = []
    _lines(ET.fromstring(svg), 0.0, 0.0, out)
    return out


def _lines(e: ET.Element, dx: float, dy: float, out: list[tuple[str, tuple[Point, Point]]]) -> None:
    if e.tag in (f"{NS}defs", f"{NS}text"):
        return
    m = _TRANSLATE.search(e.get("transform") or "")
    if m:
        dx, dy = dx + float(m.group(1)), dy + float(m.group(2))
    ends = _ends(e)
    kind = e.get("class") or e.tag.removeprefix(NS)
    out += [(kind, ((a[0] + dx, a[1] + dy), (b[0] + dx, b[1] + dy))) for a, b in ends]
    for child in e:
        _lines(child, dx, dy, out)


def _ends(e: ET.Element) -> list[tuple[Point, Point]]:
    """The straight pieces of one element."""
    if e.tag == f"{NS}line":
        a = (float(e.get("x1") or 0), float(e.get("y1") or 0))
        return [(a, (float(e.get("x2") or 0), float(e.get("y2") or 0)))]
    if e.tag == f"{NS}polyline":
        pts = [float(v) for v in re.split(r"[ ,]+", (e.get("points") or "").strip()) if v]
    elif e.tag == f"{NS}path" and re.fullmatch(r"[MLz\d., -]*", e.get("d") or ""):
        pts = [float(v) for v in re.findall(r"-?[\d.]+", e.get("d") or "")]
    else:
        return []
    xy = list(zip(pts[::2], pts[1::2], strict=True))
    return list(pairwise(xy))


def crossed(svg: str) -> list[tuple[str, str]]:
    """Each (text, line's class) where a line of the chart runs through a drawn text (its box
    narrowed by half a pixel: a leader line ends at its label's edge). A faint grid line
    (``line.grid``), drawn behind every text, is read through and is not counted."""
    shown = [t for t in texts(svg) if t.words]
    out = []
    for kind, (a, b) in segments(svg):
        if kind == "grid":
            continue
        reach = Box(min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))
        for t in shown:
            if t.box.overlaps(reach) and not _apart(_narrowed(t.corners), (a, b)):
                out.append((t.words, kind))
    return out


def _narrowed(quad: Sequence[Point], by: float = 0.5) -> tuple[Point, ...]:
    """The quadrilateral's corners moved ``by`` px towards its centre along each diagonal."""
    cx, cy = sum(x for x, _ in quad) / len(quad), sum(y for _, y in quad) / len(quad)
    out = []
    for x, y in quad:
        d = math.hypot(x - cx, y - cy) or 1.0
        out.append((x - (x - cx) * by / d, y - (y - cy) * by / d))
    return tuple(out)


def outside(svg: str) -> list[str]:
    """The texts that reach beyond the chart's own canvas (its viewBox): cut by its edge."""
    root = ET.fromstring(svg)
    x0, y0, w, h = (float(v) for v in (root.get("viewBox") or "0 0 0 0").split())
    edge = Box(x0, y0, x0 + w, y0 + h)
    return [
        t.words
        for t in texts(svg)
        if t.box.x0 < edge.x0 - 0.5 or t.box.x1 > edge.x1 + 0.5
        or t.box.y0 < edge.y0 - 0.5 or t.box.y1 > edge.y1 + 0.5
    ]  # fmt: skip
