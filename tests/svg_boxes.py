"""What a reader of an exported chart sees, read back from the SVG itself: every ``<text>``
with the box it covers (from the chart's own font widths, ``labels.text_box``), the tick
labels, the legend's entries and the series the marks draw. The checks of issue 40's
acceptance are plain functions of these, so that a failure names the texts at fault."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from roofscope.render.charts.labels import Box, text_box

NS = "{http://www.w3.org/2000/svg}"
E_NOTATION = re.compile(r"\d[eE][+-]?\d")
_TRANSLATE = re.compile(r"translate\(\s*([-\d.]+)[ ,]+([-\d.]+)\s*\)")
_ROTATE = re.compile(r"rotate\(\s*([-\d.]+)(?:[ ,]+([-\d.]+)[ ,]+([-\d.]+))?\s*\)")


@dataclass(frozen=True)
class Text:
    """A ``<text>`` as drawn: its words, its box, its classes, whether it is in a legend."""

    words: str
    box: Box
    classes: frozenset[str]
    in_legend: bool


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


def _rotated(box: Box, transform: str) -> Box:
    """The box turned by a ``rotate(a cx cy)`` of a right angle (an axis name)."""
    m = _ROTATE.search(transform)
    if m is None or float(m.group(1)) % 180 == 0:
        return box
    cx, cy = float(m.group(2) or 0), float(m.group(3) or 0)
    xs, ys = (box.x0 - cx, box.x1 - cx), (box.y0 - cy, box.y1 - cy)
    return Box(cx + min(ys), cy + min(xs), cx + max(ys), cy + max(xs))


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
    box = _rotated(box, e.get("transform") or "")
    moved = Box(box.x0 + dx, box.y0 + dy, box.x1 + dx, box.y1 + dy)
    return Text(words, moved, _classes(e), legend)


def overlapping(svg: str) -> list[tuple[str, str]]:
    """Each pair of texts whose boxes overlap, by their words."""
    shown = [t for t in texts(svg) if t.words]
    return [
        (a.words, b.words)
        for n, a in enumerate(shown)
        for b in shown[n + 1 :]
        if a.box.overlaps(b.box)
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
