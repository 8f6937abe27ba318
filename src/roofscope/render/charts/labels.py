"""Placing labels on a chart without overlap: boxes estimated from the text's length, tried
at positions around their anchor, nearest first, against what is already drawn."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

CHAR_EM = 0.62  # a generous mean advance of a sans-serif character, in ems


@dataclass(frozen=True)
class Box:
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

    def near(self, b: Box) -> list[Box]:
        found = {n for key in self._keys(b) for n in self.cells.get(key, ())}
        return [self.boxes[n] for n in sorted(found)]


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_EM + 2


def text_box(x: float, baseline: float, text: str, size: float, anchor: str = "start") -> Box:
    """The box a text drawn at ``x``, ``baseline`` covers (ascent 0.8 em, descent 0.25 em)."""
    w = text_width(text, size)
    left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
    return Box(left, baseline - 0.8 * size, left + w, baseline + 0.25 * size)


def circle_box(cx: float, cy: float, r: float) -> Box:
    return Box(cx - r, cy - r, cx + r, cy + r)


@dataclass(frozen=True)
class Placed:
    """A label placed: its start (text-anchor start) and baseline, and its box."""

    x: float
    baseline: float
    box: Box
    moved: bool  # away from its anchor: draw a leader line


def leader_end(anchor: tuple[float, float], box: Box) -> tuple[float, float]:
    """The point of a label's box nearest its anchor: where a leader line ends."""
    return min(max(anchor[0], box.x0), box.x1), min(max(anchor[1], box.y0), box.y1)


def _hits(box: Box, a: tuple[float, float], b: tuple[float, float], steps: int = 24) -> bool:
    """Whether the segment from ``a`` to ``b`` passes through the box (sampled)."""
    for i in range(steps + 1):
        t = i / steps
        x, y = a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
        if box.x0 < x < box.x1 and box.y0 < y < box.y1:
            return True
    return False


def _offsets(radius: float) -> Iterable[tuple[float, float, bool]]:
    """Offsets of a label box's nearest corner from its anchor, ring by ring outwards."""
    for ring, extra in enumerate((2, 14, 30, 50, 75, 105, 140, 180, 230, 290)):
        distance = radius + extra
        steps = 8 + 4 * ring
        for i in range(steps):
            angle = 2 * math.pi * i / steps
            yield distance * math.cos(angle), distance * math.sin(angle), ring > 0


def place(
    anchor: tuple[float, float],
    radius: float,
    text: str,
    size: float,
    *,
    area: Box,
    taken: Sequence[Box],
    avoid: Sequence[Box] | Grid = (),
    blocked: Callable[[Box], bool] = lambda _: False,
) -> Placed | None:
    """The nearest position of ``text`` beside ``anchor`` inside ``area`` that overlaps nothing
    ``taken`` (labels) and is not ``blocked`` (struck by a line), touching the fewest
    ``avoid`` boxes (points); None if none fits."""
    w, h = text_width(text, size), 1.05 * size
    grid = avoid if isinstance(avoid, Grid) else Grid(avoid)
    best: tuple[float, Placed] | None = None
    for dx, dy, moved in _offsets(radius):
        left = anchor[0] + dx if dx >= 0 else anchor[0] + dx - w
        top = anchor[1] + dy if dy >= 0 else anchor[1] + dy - h
        if abs(dy) < h / 2:
            top = anchor[1] + dy - h / 2
        box = Box(left, top, left + w, top + h)
        if not box.within(area) or any(box.overlaps(t, 1.0) for t in taken) or blocked(box):
            continue
        cost = sum(box.overlap_area(a) for a in grid.near(box))
        if moved:  # a leader through another label: only when nothing else fits
            cost += 1e4 * sum(_hits(t, anchor, leader_end(anchor, box)) for t in taken)
        if best is None or cost < best[0]:
            best = (cost, Placed(left, top + 0.8 * size, box, moved))
        if cost == 0:
            break
    return None if best is None else best[1]
