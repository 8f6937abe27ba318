"""Placing labels on a chart without overlap: each text measured with the font's widths, tried
at positions around its point, nearest first, and kept at the first that overlaps no label, no
point, no line and no leader line, and whose own leader line (when it had to move away) crosses
no other leader and runs through no label or other point.

The small API, shared by the charts: ``Placer(area, taken=boxes, points=circles,
lines=segments)``, then ``placer.place(point, text, size)`` in order of importance, each
returning where the text goes (or None: there is no room) and reserving its room."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import msgspec

from roofscope.render.charts.font_metrics import advance

Segment = tuple[float, float, float, float]  # x1, y1, x2, y2 in pixels
ASCENT, DESCENT = 0.8, 0.25  # of a label's box, in ems: capitals and descenders covered


class Box(msgspec.Struct, frozen=True):
    """An axis-aligned rectangle in pixels."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box, gap: float = 0.0) -> bool:
        return not (
            self.x1 + gap <= other.x0
            or other.x1 + gap <= self.x0
            or self.y1 + gap <= other.y0
            or other.y1 + gap <= self.y0
        )

    def overlap_area(self, other: Box) -> float:
        w = min(self.x1, other.x1) - max(self.x0, other.x0)
        h = min(self.y1, other.y1) - max(self.y0, other.y0)
        return max(0.0, w) * max(0.0, h)

    def within(self, other: Box) -> bool:
        return (
            self.x0 >= other.x0 and self.y0 >= other.y0
            and self.x1 <= other.x1 and self.y1 <= other.y1
        )  # fmt: skip


class Circle(msgspec.Struct, frozen=True):
    """A point as drawn: its centre and radius in pixels."""

    cx: float
    cy: float
    r: float

    @property
    def box(self) -> Box:
        return Box(self.cx - self.r, self.cy - self.r, self.cx + self.r, self.cy + self.r)

    def meets(self, b: Box, gap: float = 1.0) -> bool:
        """Whether the disc (grown by ``gap``) and the box share a point."""
        nx, ny = min(max(self.cx, b.x0), b.x1), min(max(self.cy, b.y0), b.y1)
        return math.hypot(nx - self.cx, ny - self.cy) < self.r + gap

    def cut_by(self, seg: Segment) -> bool:
        """Whether the segment passes through the disc."""
        x1, y1, x2, y2 = seg
        dx, dy = x2 - x1, y2 - y1
        t = ((self.cx - x1) * dx + (self.cy - y1) * dy) / ((dx * dx + dy * dy) or 1.0)
        t = min(max(t, 0.0), 1.0)
        return math.hypot(x1 + t * dx - self.cx, y1 + t * dy - self.cy) < self.r


class Grid:
    """Boxes bucketed in square cells, to find those near a box without visiting them all."""

    def __init__(self, boxes: Sequence[Box], cell: float = 40.0) -> None:
        self.cell = cell
        self.cells: dict[tuple[int, int], list[int]] = {}
        self.boxes = list(boxes)
        for n, b in enumerate(self.boxes):
            for key in self._keys(b):
                self.cells.setdefault(key, []).append(n)

    def _keys(self, b: Box) -> Iterable[tuple[int, int]]:
        c = self.cell
        for i in range(math.floor(b.x0 / c), math.floor(b.x1 / c) + 1):
            for j in range(math.floor(b.y0 / c), math.floor(b.y1 / c) + 1):
                yield i, j

    def indices(self, b: Box) -> list[int]:
        return sorted({n for key in self._keys(b) for n in self.cells.get(key, ())})

    def near(self, b: Box) -> list[Box]:
        return [self.boxes[n] for n in self.indices(b)]


def text_width(text: str, size: float) -> float:
    """The width of ``text`` at ``size`` px in the charts' font, with 1 px spare each side."""
    return advance(text, size) + 2


def text_box(x: float, baseline: float, text: str, size: float, anchor: str = "start") -> Box:
    """The box a text drawn at ``x``, ``baseline`` covers."""
    w = text_width(text, size)
    left = {"start": x - 1, "middle": x - w / 2, "end": x - w + 1}[anchor]
    return Box(left, baseline - ASCENT * size, left + w, baseline + DESCENT * size)


def circle_box(cx: float, cy: float, r: float) -> Box:
    return Box(cx - r, cy - r, cx + r, cy + r)


class Placed(msgspec.Struct, frozen=True):
    """A label placed: its start (text-anchor start) and baseline, its box, and its leader
    line from the rim of its point to the box, where it had to move away."""

    x: float
    baseline: float
    box: Box
    leader: Segment | None

    @property
    def moved(self) -> bool:
        return self.leader is not None


# a leader line: thin and purple, unlike every roof (grey, solid, dashed or dotted)
LEADER = 'stroke="#9467bd" stroke-width="0.8" pointer-events="none"'


def leader_svg(spot: Placed, data: str = "") -> str:
    """The leader line of a placed label, if it has one (``data``: attributes to add)."""
    if spot.leader is None:
        return ""
    x1, y1, x2, y2 = spot.leader
    return (f'<line class="leader"{data} x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" '
            f'y2="{y2:.1f}" {LEADER}/>')  # fmt: skip


def leader_end(anchor: tuple[float, float], box: Box) -> tuple[float, float]:
    """The point of a label's box nearest its anchor: where a leader line ends."""
    return min(max(anchor[0], box.x0), box.x1), min(max(anchor[1], box.y0), box.y1)


def _side(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])


def segments_cross(a: Segment, b: Segment) -> bool:
    """Whether two segments cross (touching at an end does not count)."""
    p, q, r, s = (a[0], a[1]), (a[2], a[3]), (b[0], b[1]), (b[2], b[3])
    return _side(p, q, r) * _side(p, q, s) < 0 and _side(r, s, p) * _side(r, s, q) < 0


def segment_hits_box(seg: Segment, box: Box) -> bool:
    """Whether a segment passes through the inside of the box."""
    x1, y1, x2, y2 = seg
    if any(box.x0 < x < box.x1 and box.y0 < y < box.y1 for x, y in ((x1, y1), (x2, y2))):
        return True
    corners = [(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)]
    edges = [(*corners[i], *corners[(i + 1) % 4]) for i in range(4)]
    return any(segments_cross(seg, e) for e in edges)


def crosses(box: Box, seg: Segment) -> bool:
    """Whether a straight segment passes through the box."""
    x1, y1, x2, y2 = seg
    if x2 < x1:
        x1, y1, x2, y2 = x2, y2, x1, y1
    lo, hi = max(box.x0, x1), min(box.x1, x2)
    if lo > hi:
        return False

    def at(x: float) -> float:
        return y1 if x2 == x1 else y1 + (y2 - y1) * (x - x1) / (x2 - x1)

    ya, yb = sorted((at(lo), at(hi)))
    return not (yb < box.y0 or ya > box.y1)


def _offsets(radius: float, rings: int) -> Iterable[tuple[float, float]]:
    """Offsets of a label box's nearest corner from its anchor, ring by ring outwards."""
    for ring, extra in enumerate((2, 14, 30, 50, 75, 105, 140, 180, 230, 290)[:rings]):
        distance = radius + extra
        steps = 8 + 4 * ring
        for i in range(steps):
            angle = 2 * math.pi * i / steps
            yield distance * math.cos(angle), distance * math.sin(angle)


def _candidate(anchor: Circle, dx: float, dy: float, w: float, h: float) -> Box:
    """The box of a text ``w`` x ``h`` whose nearest corner (or edge) is at the offset."""
    left = anchor.cx + dx if dx >= 0 else anchor.cx + dx - w
    top = anchor.cy + dy if dy >= 0 else anchor.cy + dy - h
    if abs(dy) < h / 2:
        top = anchor.cy + dy - h / 2
    return Box(left, top, left + w, top + h)


class Placer:
    """Labels placed one after another, most important first, each clear of all before it."""

    def __init__(
        self,
        area: Box,
        *,
        taken: Sequence[Box] = (),
        points: Sequence[Circle] = (),
        lines: Sequence[Segment] = (),
    ) -> None:
        self.area = area
        self.taken = list(taken)  # labels' boxes
        self.points = list(points)
        self.lines = list(lines)  # lines no label may sit on (a chart's roofs)
        self.leaders: list[Segment] = []
        self._grid = Grid([p.box for p in self.points])

    def reserve(self, box: Box) -> None:
        """Room already used (a label drawn elsewhere)."""
        self.taken.append(box)

    def place(self, point: Circle, text: str, size: float, *, rings: int = 10) -> Placed | None:
        """The nearest position of ``text`` beside ``point`` (within ``rings`` rings of
        candidates) that is free and whose leader runs over no other point, or else over the
        fewest; reserved. None when none is free."""
        w, h = text_width(text, size), (ASCENT + DESCENT) * size
        best: tuple[int, Placed] | None = None
        for dx, dy in _offsets(point.r, rings):
            box = _candidate(point, dx, dy, w, h)
            if not self._free(box):
                continue
            leader = self._leader(point, box) if math.hypot(dx, dy) > point.r + 3 else None
            over = 0 if leader is None else self._over(leader, point)
            if over is not None and (best is None or over < best[0]):
                best = (over, Placed(box.x0 + 1, box.y0 + ASCENT * size, box, leader))
                if over == 0:
                    break
        if best is not None:
            self.taken.append(best[1].box)
            if best[1].leader is not None:
                self.leaders.append(best[1].leader)
        return None if best is None else best[1]

    def _free(self, box: Box) -> bool:
        if not box.within(self.area) or any(box.overlaps(t, 1.0) for t in self.taken):
            return False
        if any(self.points[n].meets(box) for n in self._grid.indices(box)):
            return False
        return not any(crosses(box, s) for s in self.lines) and not any(
            segment_hits_box(s, box) for s in self.leaders
        )

    @staticmethod
    def _leader(point: Circle, box: Box) -> Segment:
        ex, ey = leader_end((point.cx, point.cy), box)
        d = math.hypot(ex - point.cx, ey - point.cy) or 1.0
        sx, sy = point.cx + (ex - point.cx) * point.r / d, point.cy + (ey - point.cy) * point.r / d
        return sx, sy, ex, ey

    def _over(self, leader: Segment, own: Circle) -> int | None:
        """How many other points a leader runs over; None where it crosses another leader or
        runs through a label."""
        if any(segments_cross(leader, other) for other in self.leaders):
            return None
        if any(segment_hits_box(leader, t) for t in self.taken):
            return None
        x1, y1, x2, y2 = leader
        reach = Box(min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
        return sum(
            1 for n in self._grid.indices(reach)
            if self.points[n] != own and self.points[n].cut_by(leader)
        )  # fmt: skip
