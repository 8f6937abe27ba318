"""The kernels' labels on a roofline chart: the kernels with the most time named beside their
points (a thin purple leader line where a name had to move away), the next ones numbered
with a small number beside the point and named in a key beneath the chart, every one placed
clear of the others by the shared placer (``labels.Placer``). Every point keeps its
``<title>``: the kernels neither named nor numbered are found by hovering."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import msgspec

from roofscope.render.charts.labels import Circle, Placed, Placer, leader_svg
from roofscope.render.names import short_names
from roofscope.render.numbers import count

NAMED, NUMBERED = 8, 30  # kernels named beside their points; numbered after them
NAME_RINGS = 6  # a name within about 100 px of its point, or a number instead
NAME_SIZE, NAME_CHARS = 10.0, 30
NUMBER_SIZE, KEY_SIZE, KEY_ROW, KEY_CHARS = 9.0, 9.0, 13, 52


class Spot(msgspec.Struct, frozen=True):
    """A kernel's point as drawn: its index (data-k), full name, share and circle."""

    index: int
    name: str
    share: float
    circle: Circle


class Labels(msgspec.Struct, frozen=True):
    """The labels' SVG, and the key's entries: (number, index, shown name)."""

    svg: list[str]
    key: list[tuple[int, int, str]]
    unshown: int  # kernels neither named nor numbered: on hover only


def kernel_labels(spots: Sequence[Spot], placer: Placer) -> Labels:
    """The ``NAMED`` kernels with the most time that fit, named; those that did not fit and
    the next ones, up to ``NUMBERED``, numbered; most time first."""
    ranked = sorted(spots, key=lambda s: (-s.share, s.index))
    names = short_names([s.name for s in ranked[:NAMED]], NAME_CHARS)
    out: list[str] = []
    rest: list[Spot] = []
    for s, text in zip(ranked[:NAMED], names, strict=True):
        spot = placer.place(s.circle, text, NAME_SIZE, rings=NAME_RINGS)
        if spot is None:
            rest.append(s)
        else:
            out += _named(s, text, spot)
    named = len(ranked[:NAMED]) - len(rest)
    rest += ranked[NAMED:]
    numbered = rest[:NUMBERED]
    key_names = short_names([s.name for s in numbered], KEY_CHARS)
    key: list[tuple[int, int, str]] = []
    for n, (s, name) in enumerate(zip(numbered, key_names, strict=True)):
        reach = NAME_RINGS + 2 if n < len(ranked[:NAMED]) - named else 4  # the top ones further
        spot = placer.place(s.circle, str(len(key) + 1), NUMBER_SIZE, rings=reach)
        if spot is not None:
            key.append((len(key) + 1, s.index, name))
            out += _numbered(s, len(key), spot)
    return Labels(out, key, len(spots) - named - len(key))


def _leader(s: Spot, spot: Placed) -> list[str]:
    line = leader_svg(spot, f' data-k="{s.index}"')
    return [line] if line else []


def _named(s: Spot, text: str, spot: Placed) -> list[str]:
    return [*_leader(s, spot), (
        f'<text class="kernel-label" data-k="{s.index}" x="{spot.x:.1f}" '
        f'y="{spot.baseline:.1f}" font-size="{NAME_SIZE:g}" stroke="#fff" stroke-width="3" '
        f'paint-order="stroke"><title>{escape(s.name)}</title>{escape(text)}</text>'
    )]  # fmt: skip


def _numbered(s: Spot, number: int, spot: Placed) -> list[str]:
    return [*_leader(s, spot), (
        f'<text class="kernel-number" data-k="{s.index}" x="{spot.x:.1f}" '
        f'y="{spot.baseline:.1f}" font-size="{NUMBER_SIZE:g}" fill="#333" stroke="#fff" '
        f'stroke-width="2.5" paint-order="stroke"><title>{escape(s.name)}</title>'
        f"{number}</text>"
    )]  # fmt: skip


def key_height(labels: Labels) -> int:
    """The height of the key beneath the chart (0 without numbered kernels)."""
    rows = (len(labels.key) + 1) // 2 + (1 if labels.unshown else 0)
    return 0 if not rows else 8 + KEY_ROW * rows


def key(labels: Labels, top: float, width: int, pad: int) -> list[str]:
    """The numbered kernels' names in two columns from ``top`` down, in a ``g.key``."""
    if not key_height(labels):
        return []
    out = ['<g class="key">']
    half = (width - 2 * pad) / 2
    rows = (len(labels.key) + 1) // 2
    for n, (number, index, name) in enumerate(labels.key):
        x, y = pad + half * (n // rows if rows else 0), top + 8 + KEY_ROW * (n % rows) + 9
        out.append(f'<text class="key-entry" data-k="{index}" x="{x:.1f}" y="{y:.1f}" '
                   f'font-size="{KEY_SIZE:g}">{number}  {escape(name)}</text>')  # fmt: skip
    if labels.unshown:
        y = top + 8 + KEY_ROW * rows + 9
        one = labels.unshown == 1
        words = (f"{count(labels.unshown, 'more kernel')} without a label: "
                 f"{'its name' if one else 'their names'} on hover")  # fmt: skip
        out.append(f'<text class="key-more" x="{pad}" y="{y:.1f}" font-size="{KEY_SIZE:g}" '
                   f'fill="#555">{escape(words)}</text>')  # fmt: skip
    return [*out, "</g>"]
