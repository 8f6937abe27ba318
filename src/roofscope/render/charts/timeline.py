"""The timeline as SVG: one lane per device (per process and device where the profile merges
several), its bins (analysis/timeline_lanes.py) drawn as runs of equal colour, the hot
kernels coloured, the rest grey, idle left blank, and a time axis in the unit that fits.

Never one element per dispatch: a run of neighbouring bins with the same kernel and the same
busy share (in tenths) is one rectangle, so a lane has at most as many elements as bins.
In the HTML page the plot zooms (wheel) and pans (drag), the axis redrawn by SCRIPT."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from roofscope.analysis.timeline_lanes import IDLE, OTHER, Lane, TimelineLanes
from roofscope.render.charts.font import SVG_FONT
from roofscope.render.charts.hotspots import distinct
from roofscope.render.charts.labels import text_width
from roofscope.render.charts.time_axis import ticks
from roofscope.render.escape import escape_text as _e
from roofscope.render.names import fit, shortened, showing_full
from roofscope.render.numbers import count, duration
from roofscope.report import Report

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#393b79")  # fmt: skip
OTHER_COLOUR, IDLE_COLOUR = "#9aa5b1", "#f4f4f4"
OTHER_WORDS = "other kernels"
WIDTH, LEFT, RIGHT, TOP, ROW = 1000, 180, 80, 54, 26


def timeline_svg(report: Report) -> str:
    """Empty when the report has no timeline bins (no timestamps, or not made for charts)."""
    t = report.lanes
    if t is None or not t.lanes:
        return ""
    plot, width, columns = WIDTH - LEFT - RIGHT, _width(t.kernels), _columns()
    series = drawn(t)
    legend_rows = math.ceil(len(series) / columns) + 1
    height = TOP + ROW * len(t.lanes) + 12 + 16 * legend_rows
    span = t.bin_ns * t.bins
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart wide" id="timeline" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'data-span-ns="{span}" data-bins="{t.bins}" data-plot-x="{LEFT}" '
        f'data-plot-w="{plot}" {SVG_FONT}>',
        "<title>Kernels over time per device (hot kernels coloured, idle blank); wheel to "
        "zoom, drag to pan, double-click to reset</title>",
        '<text class="title" x="8" y="16" font-size="13" font-weight="bold">Kernels over '
        "time per device (the top kernels coloured, idle blank)</text>",
        *_axis(span, plot, TOP + ROW * len(t.lanes)),
        f'<svg class="tl-plot" x="{LEFT}" y="{TOP}" width="{plot}" '
        f'height="{ROW * len(t.lanes)}" viewBox="0 0 {plot} {ROW * len(t.lanes)}" '
        'preserveAspectRatio="none">',
    ]
    for row, lane in enumerate(t.lanes):
        out += _lane(t, lane, row * ROW, plot / t.bins)
    out.append("</svg>")
    out += [_label(report, lane, TOP + row * ROW) for row, lane in enumerate(t.lanes)]
    out += _legend(t, series, TOP + ROW * len(t.lanes) + 14, columns)
    out.append("</svg>")
    return "\n".join(out)


def timeline_absence(report: Report) -> str:
    """Why a profile has no timeline chart, in one line."""
    if report.timeline is None:
        return "the input has no kernel timestamps (a summary or counter export)"
    return "the kernels span no time (every Begin equals its End)"


def _columns() -> int:
    """Legend items to a row: three, or one where names are whole (``full_names``)."""
    return 1 if showing_full() else 3


def _width(kernels: Sequence[str]) -> int:
    """The chart's width: ``WIDTH``, or wider where a whole name in the legend needs it."""
    if not showing_full():
        return WIDTH
    return max([WIDTH, *(LEFT + 14 + round(text_width(k, 11)) + 8 for k in kernels)])


def _lane(t: TimelineLanes, lane: Lane, y: int, step: float) -> list[str]:
    """The lane's background (idle) and one rectangle per run of equal bins."""
    out = [f'<rect class="tl-lane" data-series="idle" x="0" y="{y + 3}" '
           f'width="{step * t.bins:.1f}" height="{ROW - 6}" fill="{IDLE_COLOUR}"/>']  # fmt: skip
    for first, last, kernel, tenths in _runs(lane, t.bin_ns):
        name = OTHER_WORDS if kernel == OTHER else t.kernels[kernel]
        busy = sum(lane.busy_ns[first:last]) / ((last - first) * t.bin_ns)
        tip = (
            f"{name} · {duration(first * t.bin_ns)} to {duration(last * t.bin_ns)}: "
            f"busy {100 * busy:.0f}%"
        )
        out.append(
            f'<rect data-series="{_series(kernel)}" x="{first * step:.1f}" y="{y + 3}" '
            f'width="{(last - first) * step:.1f}" '
            f'height="{ROW - 6}" fill="{_colour(kernel)}" fill-opacity="{max(tenths, 2) / 10}">'
            f"<title>{_e(tip)}</title></rect>"
        )
    return out


def drawn(t: TimelineLanes) -> list[int]:
    """The series the lanes draw, in the legend's order: the kernels told apart that fill a
    run somewhere, then OTHER where some run is the other kernels', then IDLE (every lane's
    background)."""
    seen = {kernel for lane in t.lanes for _, _, kernel, _ in _runs(lane, t.bin_ns)}
    return [*(k for k in range(len(t.kernels)) if k in seen), *([OTHER] if OTHER in seen else []),
            IDLE]  # fmt: skip


def _series(kernel: int) -> str:
    """A series' name in ``data-series``: ``k3`` (the 4th kernel told apart), ``other``,
    ``idle``."""
    return {OTHER: "other", IDLE: "idle"}.get(kernel, f"k{kernel}")


def _colour(kernel: int) -> str:
    if kernel in (OTHER, IDLE):
        return OTHER_COLOUR if kernel == OTHER else IDLE_COLOUR
    return PALETTE[kernel % len(PALETTE)]


def _runs(lane: Lane, bin_ns: int) -> Iterator[tuple[int, int, int, int]]:
    """(first bin, bin after the last, kernel, busy share in tenths, at least 1) of each run
    of neighbouring busy bins that agree on both; idle bins end a run and are skipped."""
    keys = [(k, max(1, round(10 * b / bin_ns))) for k, b in zip(lane.kernel, lane.busy_ns,
                                                               strict=True)]  # fmt: skip
    first = 0
    while first < len(keys):
        last = first + 1
        while last < len(keys) and keys[last] == keys[first]:
            last += 1
        if keys[first][0] != IDLE:
            yield first, last, *keys[first]
        first = last


def _axis(span: int, plot: int, bottom: int) -> list[str]:
    """The time axis above the lanes: ticks and their grid lines (redrawn on zoom)."""
    out = [f'<g class="tl-axis" data-bottom="{bottom}">']
    for at, label in ticks(0, span):
        x = LEFT + at / span * plot
        out.append(
            f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{bottom}" stroke="#ddd"/>'
            f'<text class="tick" x="{x:.1f}" y="{TOP - 8}" font-size="11" text-anchor="middle">'
            f"{label}</text>"
        )
    out.append("</g>")
    out.append(f'<text x="8" y="{TOP - 8}" font-size="11">time since 1st kernel</text>')
    return out


def _process(report: Report, source: int | None) -> str:
    """Which process a lane is, where the profile merges several: its rank where the input
    says, else its file with the folder above it (rank3/results.csv)."""
    if source is None:
        return ""
    given = report.inputs[source]
    if given.rank is not None:
        return f"rank {given.rank} · "
    path = Path(given.path)
    return f"{path.parent.name}/{path.name} · "


def _label(report: Report, lane: Lane, y: int) -> str:
    """The lane's name at the left, its busy share at the right."""
    name = f"{_process(report, lane.source)}device {'-' if lane.device is None else lane.device}"
    name = name if len(name) <= 30 else "…" + name[-29:]
    times = report.timeline.devices if report.timeline else ()
    spans = {(d.source, d.device): d for d in times if d.span_ns}
    d = spans.get((lane.source, lane.device))
    share = None if d is None else d.busy_ns / d.span_ns
    busy = "" if share is None else f"busy {100 * share:.1f}%"
    return (
        f'<text class="tl-name" x="{LEFT - 8}" y="{y + ROW / 2 + 4}" font-size="12" '
        'text-anchor="end">'
        f"{_e(name)}<title>{count(lane.dispatches, 'dispatch')}</title></text>"
        f'<text x="{WIDTH - RIGHT + 6}" y="{y + ROW / 2 + 4}" font-size="11">{busy}</text>'
    )


def _legend(t: TimelineLanes, series: Sequence[int], y: int, columns: int) -> list[str]:
    """A swatch per series drawn (``drawn``), ``columns`` to a row, named as the lanes' tips
    name them (the kernels told apart, then ``other kernels``, ``idle``), then a note on
    what the opacity means."""
    cell = (WIDTH - LEFT) / columns
    names = [OTHER_WORDS if k == OTHER else "idle" if k == IDLE else t.kernels[k] for k in series]
    labels = legend_labels(names, cell - 14 - 10)
    out = ['<g class="legend">']
    for n, (kernel, name) in enumerate(zip(series, names, strict=True)):
        x, row_y = LEFT + (n % columns) * cell, y + 16 * (n // columns)
        out.append(
            f'<g class="tl-key legend-entry" data-series="{_series(kernel)}"><title>{_e(name)}'
            f'</title><rect x="{x:.1f}" y="{row_y}" width="10" height="10" '
            f'fill="{_colour(kernel)}" stroke="#bbb"/><text x="{x + 14:.1f}" y="{row_y + 9}" '
            f'font-size="11">{_e(labels[n])}</text></g>'
        )
    note_y = y + 16 * math.ceil(len(series) / columns) + 9
    out.append(
        f'</g><text class="note" x="{LEFT}" y="{note_y}" font-size="11">Opacity: the busy '
        f"share of each {duration(t.bin_ns)} slice of time.</text>"
    )
    return out


def legend_labels(names: Sequence[str], room: float) -> list[str]:
    """The legend's words for ``names``, each in ``room`` px at 11 px (``text_width``): short
    names told apart (names.py) in the most characters (40 at most) where all fit, a ``#n``
    after any that still read alike."""
    labels: list[str] = []
    for chars in range(40, 9, -2):
        short = shortened(names, chars)
        labels = distinct([short.get(n) or fit(n, chars) for n in names])
        if showing_full() or all(text_width(t, 11) <= room for t in labels):
            break
    return labels


# Zoom (wheel, around the pointer) and pan (drag) of the timeline's lanes; double-click
# resets. The lanes are a nested SVG whose viewBox narrows; the axis is redrawn with the
# same rule as ``ticks``. No more than 20 bins fill the plot at the deepest zoom.
SCRIPT = """
(function(){
  var svg=document.getElementById('timeline');if(!svg)return;
  var NS='http://www.w3.org/2000/svg',plot=svg.querySelector('svg.tl-plot');
  var axis=svg.querySelector('g.tl-axis'),bottom=+axis.getAttribute('data-bottom');
  var span=+svg.getAttribute('data-span-ns'),px=+svg.getAttribute('data-plot-x');
  var pw=+svg.getAttribute('data-plot-w'),least=20*span/+svg.getAttribute('data-bins');
  var ph=plot.viewBox.baseVal.height,top=+plot.getAttribute('y'),v0=0,v1=span,drag=null;
  var units=[[1e9,'s'],[1e6,'ms'],[1e3,'\\u00b5s'],[1,'ns']];
  function add(tag,attrs,text){var e=document.createElementNS(NS,tag);
    for(var a in attrs)e.setAttribute(a,attrs[a]);if(text)e.textContent=text;axis.appendChild(e);}
  function ticks(){
    var raw=Math.max(v1-v0,1)/8,mag=Math.pow(10,Math.floor(Math.log10(raw)));
    var step=[1,2,5,10].map(function(m){return m*mag;}).find(function(s){return s>=raw;});
    var u=units.find(function(u){return v1>=u[0];})||units[3];
    var d=Math.max(0,Math.ceil(-Math.log10(step/u[0])-1e-9));
    while(axis.firstChild)axis.removeChild(axis.firstChild);
    for(var i=Math.ceil(v0/step-1e-9);i<=Math.floor(v1/step+1e-9);i++){
      var x=(px+(i*step-v0)/(v1-v0)*pw).toFixed(1);
      add('line',{x1:x,y1:top-4,x2:x,y2:bottom,stroke:'#ddd'});
      add('text',{x:x,y:top-8,'font-size':11,'text-anchor':'middle'},
          (i*step/u[0]).toFixed(d)+' '+u[1]);
    }
  }
  function show(a,b){var w=Math.min(span,Math.max(least,b-a));
    a=Math.min(Math.max(0,a),span-w);v0=a;v1=a+w;
    plot.setAttribute('viewBox',(v0/span*pw)+' 0 '+(w/span*pw)+' '+ph);ticks();}
  function at(ev){var p=svg.createSVGPoint();p.x=ev.clientX;p.y=ev.clientY;
    return (p.matrixTransform(svg.getScreenCTM().inverse()).x-px)/pw;}
  svg.addEventListener('wheel',function(ev){ev.preventDefault();
    var f=Math.min(1,Math.max(0,at(ev))),t=v0+f*(v1-v0),w=(v1-v0)*(ev.deltaY<0?0.8:1.25);
    show(t-f*w,t-f*w+w);},{passive:false});
  svg.addEventListener('pointerdown',function(ev){drag=[at(ev),v0,v1];});
  svg.addEventListener('pointermove',function(ev){if(!drag)return;
    var dt=(at(ev)-drag[0])*(drag[2]-drag[1]);show(drag[1]-dt,drag[2]-dt);});
  window.addEventListener('pointerup',function(){drag=null;});
  svg.addEventListener('dblclick',function(){show(0,span);});
})();
"""
