"""The waterfall of a comparison, as SVG: from the baseline's total kernel time, one step
per kernel's change (the ``top`` largest in the comparison's order, the rest folded into
'other'), to the candidate's total.

A time axis with its unit; every step's value written beside it (and its share of the
baseline); both totals labelled. When the totals and every level between them lie close
together (their spread under a quarter of the larger total), the axis is zoomed to that
spread and the total bars are drawn cut (a break mark at their left end, and a line saying
where the axis starts), so that a 1 % change is as wide as it is readable."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from roofscope.render.charts.font import SVG_FONT
from roofscope.render.charts.labels import text_width
from roofscope.render.charts.time_axis import ticks
from roofscope.render.escape import escape_text as _e
from roofscope.render.names import shortened, showing_full
from roofscope.render.numbers import count, duration, sig
from roofscope.verify.compare import Comparison

WIDTH, LEFT, RIGHT, TOP, ROW = 760, 250, 130, 76, 22
ZOOM_BELOW = 0.25  # spread of the levels / larger total under which the axis is zoomed
SLOWER, FASTER, BASE, NEW, SAME = "#d62728", "#2ca02c", "#9aa5b1", "#555", "#bbb"
SERIES = {"baseline": ("baseline total", BASE), "candidate": ("candidate total", NEW),
          "slower": ("kernel slower", SLOWER), "faster": ("kernel faster", FASTER),
          "unchanged": ("no change", SAME)}  # fmt: skip


class _Axis(msgspec.Struct, frozen=True):
    lo: float  # ns at the plot's left edge
    hi: float
    zoomed: bool

    def x(self, ns: float) -> float:
        return LEFT + (ns - self.lo) / (self.hi - self.lo) * (WIDTH - LEFT - RIGHT)


def _axis(levels: list[float]) -> _Axis:
    lo, hi = min(levels), max(levels)
    if hi <= 0:
        return _Axis(0.0, 1.0, False)
    if hi - lo >= ZOOM_BELOW * hi:
        return _Axis(0.0, hi * 1.02, False)
    pad = max((hi - lo) * 0.15, hi * 1e-4)
    return _Axis(lo - pad, hi + pad, True)


def _steps(cmp: Comparison, top: int) -> list[tuple[int, str, float]]:
    items = [(i, k.name, k.delta_ns) for i, k in enumerate(cmp.kernels)]
    if len(items) > top:
        rest = sum(d for _, _, d in items[top:])
        items = [*items[:top], (-1, f"other ({count(len(items) - top, 'kernel')})", rest)]
    return items


def _signed(delta: float, base: float) -> str:
    """A step's value and its share of the baseline total, e.g. ``-103 µs (-0.004%)``."""
    if delta == 0:
        return "no change"
    share = f" ({_pct(100 * delta / base)})" if base else ""
    return f"{'+' if delta > 0 else '-'}{duration(abs(delta))}{share}"


def _pct(pct: float) -> str:
    """A percentage to one decimal, or to one significant figure when smaller than 0.1 %."""
    return f"{pct:+.1f}%" if abs(pct) >= 0.1 else f"{'+' if pct >= 0 else '-'}{sig(abs(pct), 1)}%"


def waterfall_svg(cmp: Comparison, top: int = 20) -> str:
    """Empty when the comparison has no kernels."""
    items = _steps(cmp, top)
    if not items:
        return ""
    base, new = cmp.end_to_end.kernel_ns
    levels = [base]
    for _, _, delta in items:
        levels.append(levels[-1] + delta)
    axis = _axis([*levels, new])
    height = TOP + ROW * (len(items) + 2) + (22 if axis.zoomed else 8)
    labels = shortened([name for _, name, _ in items], 38)
    shift = _room_for(labels.values())
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="waterfall" '
        f'width="{WIDTH + shift}" height="{height}" viewBox="0 0 {WIDTH + shift} {height}" '
        'role="img" aria-label="Kernel time from the baseline total to the candidate total, '
        f'one step per kernel" {SVG_FONT}>',
        *([f'<g transform="translate({shift},0)">'] if shift else []),
        '<text class="title" x="8" y="16" font-size="13" font-weight="bold">Kernel time, '
        "baseline to candidate: one step per kernel</text>",
        *_legend([_series(d) for _, _, d in items]),
        *_grid(axis, TOP + ROW * (len(items) + 2)),
        _total("baseline", base, axis, TOP),
    ]
    for n, (i, name, delta) in enumerate(items, start=1):
        step = _step(i, (name, labels[name]), delta, levels[n - 1], base, axis, TOP + n * ROW)
        out.append(step)
    out.append(_total("candidate", new, axis, TOP + (len(items) + 1) * ROW, base))
    if axis.zoomed:
        out.append(
            f'<text x="{LEFT}" y="{height - 6}" font-size="10" fill="#555">axis zoomed: it '
            f"starts at {_e(duration(axis.lo))}, not 0; the total bars are cut (≈)</text>"
        )
    out += ["</g>"] if shift else []
    out.append("</svg>")
    return "\n".join(out)


def _room_for(labels: Iterable[str]) -> int:
    """How far the chart moves right so that whole names (``full_names``) fit left of it."""
    if not showing_full():
        return 0
    return max([0, *(round(text_width(t, 11)) + 8 - LEFT for t in labels)])


def _series(delta: float) -> str:
    return "slower" if delta > 0 else "faster" if delta < 0 else "unchanged"


def _legend(steps: Iterable[str]) -> list[str]:
    """One entry per series drawn: both totals, and the kinds of step there are."""
    drawn = {"baseline", "candidate", *steps}
    out, x = ['<g class="legend">'], float(LEFT)
    for series, (words, colour) in SERIES.items():
        if series in drawn:
            out.append(
                f'<g class="legend-entry" data-series="{series}"><rect x="{x:.1f}" y="27" '
                f'width="18" height="10" fill="{colour}"/><text x="{x + 24:.1f}" y="36" '
                f'font-size="11">{words}</text></g>'
            )
            x += 24 + text_width(words, 11) + 14
    out.append("</g>")
    return out


# a value's white outline: the faint grid lines behind it stop short of its letters
HALO = 'stroke="#fff" stroke-width="3" paint-order="stroke"'


def _grid(axis: _Axis, bottom: float) -> list[str]:
    """Tick labels above the rows, their grid lines through them, and the axis title."""
    out = [f'<text x="{LEFT - 18}" y="{TOP - 10}" font-size="10" text-anchor="end">'
           "kernel time</text>"]  # fmt: skip
    for at, label in ticks(axis.lo, axis.hi, 6):
        x = axis.x(at)
        out.append(
            f'<line class="grid" x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{bottom}" '
            'stroke="#e4e4e4"/>'
            f'<text class="tick" x="{x:.1f}" y="{TOP - 10}" font-size="10" '
            f'text-anchor="middle">{label}</text>'
        )
    return out


def _total(side: str, total: float, axis: _Axis, y: float, base: float = 0.0) -> str:
    """A total's bar from the axis start, cut with a break mark when the axis is zoomed."""
    x0, x1 = axis.x(max(axis.lo, 0.0)), axis.x(total)
    change = f" ({_pct(100 * (total / base - 1))})" if base else ""
    cut = (
        f'<path d="M{x0 + 6:.1f},{y + 1} l4,8 l-4,8" stroke="#fff" stroke-width="2" fill="none"/>'
        if axis.zoomed
        else ""
    )
    return (
        f'<g class="total"><rect data-series="{side}" x="{x0:.1f}" y="{y + 2}" '
        f'width="{max(1.0, x1 - x0):.1f}" '
        f'height="16" fill="{BASE if side == "baseline" else NEW}">'
        f"<title>{side} {duration(total)}</title></rect>{cut}"
        f'<text x="{LEFT - 6}" y="{y + 15}" text-anchor="end" font-size="11" '
        f'font-weight="bold">{side}</text>'
        f'<text x="{x1 + 4:.1f}" y="{y + 15}" font-size="10" font-weight="bold" {HALO}>'
        f"{_e(duration(total))}{change}</text></g>"
    )


def _step(
    i: int, named: tuple[str, str], delta: float, level: float, base: float, axis: _Axis, y: float
) -> str:
    """One kernel's change: a bar from the level before it to the level after, its value
    beside the bar, and a dashed line down from the level it ends at."""
    a, b = sorted((axis.x(level), axis.x(level + delta)))
    end = axis.x(level + delta)
    name, label = named
    return (
        f'<g data-k="{i}"><title>{_e(f"{name}: {delta / 1e6:+.3f} ms")}</title>'
        f'<text x="{LEFT - 6}" y="{y + 15}" text-anchor="end" font-size="11">{_e(label)}</text>'
        f'<rect data-series="{_series(delta)}" x="{a:.1f}" y="{y + 2}" '
        f'width="{max(1.0, b - a):.1f}" height="16" fill="{SERIES[_series(delta)][1]}"/>'
        f'<line x1="{end:.1f}" y1="{y + 18}" x2="{end:.1f}" y2="{y + ROW + 2}" stroke="#888" '
        'stroke-dasharray="2,2"/>'
        f'<text x="{max(a, b) + 4:.1f}" y="{y + 15}" font-size="10" {HALO}>'
        f"{_e(_signed(delta, base))}</text></g>"
    )
