"""One self-contained HTML file: styles, charts (SVG) and script inline, no network.

Kernel names are untrusted text: they reach the page only through :func:`html.escape`
(tables, SVG) and ``textContent`` (the tooltip), never as markup.
"""

from __future__ import annotations

from roofscope.analysis.ranks import STRAGGLER_EXCESS
from roofscope.analysis.roofline import KernelRoofline
from roofscope.diagnosis.profiler import FINDING_KINDS
from roofscope.render.charts.hotspots import NO_TIME, hotspot_svg
from roofscope.render.charts.roofline import absence, drawn_on_roofline, roofline_svg
from roofscope.render.charts.timeline import timeline_absence, timeline_svg
from roofscope.render.device_choice import detected_from
from roofscope.render.escape import escape_text as _e
from roofscope.render.inputs_line import inputs_once
from roofscope.render.layout import kept, number, stacked, words
from roofscope.render.names import name_cell, shortened
from roofscope.render.numbers import count, duration, pct, si
from roofscope.render.page import page
from roofscope.render.report.categories_html import categories_table
from roofscope.render.report.findings_html import findings_table
from roofscope.render.report.operators_html import operators_table
from roofscope.render.report.ranges_html import ranges_table
from roofscope.render.report.sources import ceiling_table
from roofscope.render.report.text import (
    barrier_line,
    busy_idle,
    gpu_title,
    kernel_time,
    runs_line,
)
from roofscope.report import Report
from roofscope.version import __version__


def render_html(report: Report) -> str:
    h, t, run = report.hotspots, report.timeline, report.run
    gpu = gpu_title(report)
    body = [
        f"<h1>roofscope check-up · {_e(run.producer or 'unknown producer')} · {_e(gpu)}</h1>",
        f'<p class="muted">roofscope {__version__}</p>',
        "<h2>Baseline</h2>",
        f"<p>{_e(kernel_time(h))}.</p>",
    ]
    if report.barriers is not None:
        body.append(f'<p id="barriers">{_e(barrier_line(report.barriers))}</p>')
    if t is not None:
        body.append(f"<p>GPU {_e(busy_idle(t))}, {count(t.gaps, 'gap')}.</p>")
        body.append(timeline_svg(report) or _no_chart("timeline", timeline_absence(report)))
    else:
        body.append('<p class="muted">No dispatch timestamps: no timeline.</p>')
    body += ["<h2>Hotspots and roofline</h2>", _dual(report), _kernel_table(report)]
    body.append(categories_table(report))
    body.append(operators_table(report))
    body.append(ranges_table(report))
    if report.ranks is not None:
        body += ["<h2>Ranks</h2>", _rank_tables(report)]
    if report.metrics.kernels:
        body += ["<h2>Metrics of the hot kernels</h2>", _metrics_table(report)]
    body.append("<h2>Roofline ceilings</h2>")
    section = report.roofline
    if section.problem:
        body.append(f'<p class="muted">{_e(section.problem)}.</p>')
    if section.result.ceilings:
        body.append(ceiling_table(report.roofline.result.ceilings))
        body.append(_undrawn(report))
    if report.limiters:
        body += ["<h2>Limiter</h2>", _limiter_table(report)]
    body += ["<h2>Findings</h2>", findings_table(report), *_profiler_notes(report)]
    body.append("<h2>Inputs and warnings</h2>")
    body.append(
        "<ul>"
        + "".join(f"<li>{_e(p)} ({_e(what)})</li>" for p, what in inputs_once(report.inputs))
        + "</ul>"
    )
    if runs := runs_line(report.runs):
        body.append(f"<p>Runs: {_e(runs)}</p>")
    if report.warnings:
        body.append(
            "<ul>"
            + "".join(f"<li>[{_e(w.code)}] {_e(w.message)}</li>" for w in report.warnings)
            + "</ul>"
        )
    return page(f"roofscope · {gpu}", body)


def _dual(report: Report) -> str:
    """The hotspot bars, then the roofline at the page's full width (its labels read at 11 px
    or more from a 840 px wide window): where the time goes and why."""
    section = report.roofline
    roof = _no_chart("roofline", absence(section.result))
    if section.result.ceilings:
        choice = section.choice
        problem = f'<p class="muted">{_e(section.problem)}.</p>' if section.problem else ""
        chart = roofline_svg(report) or _no_chart("roofline", absence(section.result))
        roof = (
            f"{problem}<p>{_e(choice.name or 'ceilings from the user')} · scope "
            f"{_e(choice.scope)} · detected from {_e(detected_from(choice) or '-')}</p>{chart}"
        )
    bars = hotspot_svg(report) or _no_chart("hotspot", NO_TIME)
    return stacked(bars, roof)


def _no_chart(name: str, why: str) -> str:
    return f'<p class="muted no-chart">No {name} chart: {_e(why)}.</p>'


def _undrawn(report: Report) -> str:
    """Why the kernels with work that the roofline chart does not show are missing."""
    kernels = report.roofline.result.kernels
    drawn = sum(1 for k in kernels if drawn_on_roofline(k))
    if drawn == len(kernels):
        return ""
    return (
        f'<p class="muted">{len(kernels) - drawn} of {count(len(kernels), "kernel")} with work are '
        "not drawn: no time, or no ceiling for the memory level they use (see the table).</p>"
    )


def _kernel_table(report: Report, top: int = 50) -> str:
    roofs = {k.name: k for k in report.roofline.result.kernels}
    rows = []
    shown = report.hotspots.kernels[:top]
    short = shortened([k.name for k in shown])
    for i, k in enumerate(shown):
        r = roofs.get(k.name)
        eff = "-" if r is None or r.efficiency is None else pct(r.efficiency)
        mark = "● " if k.hot else ""
        rows.append(
            f'<tr data-k="{i}" data-name="{_e(k.name)}">'
            f"{name_cell(k.name, short[k.name], mark=mark, after=_flags(report, k.name))}"
            f"{number(f'{k.calls:,}')}{number(duration(k.total_ns))}{number(pct(k.share))}"
            f"{number(duration(k.mean_ns))}{number(eff)}"
            f"<td>{_e(_bound(r))}</td></tr>"
        )
    return (
        '<table id="kernels"><tr><th>Kernel</th><th>Calls</th><th>Total</th><th>Share</th>'
        "<th>Mean</th><th>Efficiency</th><th>Bound</th></tr>" + "".join(rows) + "</table>"
    )


def _flags(report: Report, kernel: str) -> str:
    """The validity findings about a kernel, beside its name."""
    rules = report.validity(kernel)
    if not rules:
        return ""
    return f' <span class="validity" title="validity findings">⚠ {_e(", ".join(rules))}</span>'


def _rank_tables(report: Report, top: int = 20) -> str:
    """Kernel time per rank (stragglers marked) and each kernel's spread over the ranks."""
    view = report.ranks
    assert view is not None
    median = view.median_ns
    slow = {s.rank for s in view.stragglers}
    ranks = []
    for r, label, total in zip(view.ranks, view.labels, view.totals_ns, strict=True):
        mark = (' class="straggler"', " ⚠ straggler") if r in slow else ("", "")
        excess = f"{100 * (total / median - 1):+.1f}%" if median else "-"
        ranks.append(
            f"<tr{mark[0]}><td>{words(f'{r}{mark[1]}')}</td><td>{_e(label)}</td>"
            f"{number(duration(total))}{number(excess)}</tr>"
        )
    index = {k.name: i for i, k in enumerate(report.hotspots.kernels)}
    short = shortened([k.kernel for k in view.kernels[:top]])
    spread = [
        f'<tr data-k="{index.get(k.kernel, "")}">{name_cell(k.kernel, short[k.kernel])}'
        f"{number(duration(k.min_ns))}{number(duration(k.median_ns))}"
        f"{number(duration(k.max_ns))}{number(f'{k.cv:.3f}')}{number(str(k.slowest))}</tr>"
        for k in view.kernels[:top]
    ]
    return (
        f"<p>{len(view.ranks)} ranks; a rank whose kernel time exceeds the median rank's by more "
        f"than {100 * STRAGGLER_EXCESS:.0f}% is a straggler.</p>"
        '<table id="ranks"><tr><th>Rank</th><th>Input (pid)</th><th>Kernel time</th>'
        "<th>vs median</th></tr>" + "".join(ranks) + "</table>"
        '<table id="rank-spread"><tr><th>Kernel</th><th>Min over ranks</th><th>Median</th>'
        "<th>Max</th><th>cv</th><th>Slowest rank</th></tr>" + "".join(spread) + "</table>"
    )


def _metrics_table(report: Report) -> str:
    """One row per hot kernel with metrics: the speed-of-light set, mean over dispatches
    (the time-weighted value beside it where the two differ), and occupancy."""
    from roofscope.render.report.metrics_text import SHOWN, pass_note, peer_note, value_text

    index = {k.name: i for i, k in enumerate(report.hotspots.kernels)}
    kernels = [k for k in report.hotspots.kernels if k.name in report.metrics.kernels]
    columns = [n for n in SHOWN if any(n in report.metrics.kernels[k.name].values for k in kernels)]
    short = shortened([k.name for k in kernels])
    head = "".join(f"<th>{_e(n)}</th>" for n in columns)
    rows = []
    for k in kernels:
        m = report.metrics.kernels[k.name]
        cells = []
        for n in columns:
            v = m.values.get(n)
            text = "-" if v is None else value_text(v)
            notes = [x for x in (peer_note(n, m.values), pass_note(n, m.values)) if x]
            aside = "".join(f'<br><small class="note">{_e(x)}</small>' for x in notes)
            cells.append(f'<td><span class="n">{kept(text)}</span>{aside}</td>')
        occ = m.occupancy
        share = "" if occ is None else f'<span class="n">{100 * occ.fraction:.0f}%</span>'
        occupancy = "-" if occ is None else f"{share} {words(f'({occ.limiter})')}"
        name = name_cell(k.name, short[k.name])
        rows.append(f'<tr data-k="{index[k.name]}">{name}{"".join(cells)}<td>{occupancy}</td></tr>')
    return (
        f'<table id="metrics"><tr><th>Kernel</th>{head}<th>Occupancy</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def _bound(r: KernelRoofline | None) -> str:
    """The bound, or why there is none: the ceiling its work lacks."""
    if r is not None and r.missing_ceiling:
        return f"- (no {r.missing_ceiling} ceiling)"
    if r is not None and r.no_bound:
        return "unknown (no byte counters)"
    return (r.bound or "-") if r else "-"


def _limiter_table(report: Report) -> str:
    """One row per kernel with a limiter (hot, or on the roofline): the unit nearest its
    peak, how near, where the number comes from, and every other unit measured."""
    from roofscope.render.report.limiter_text import unit_text

    index = {k.name: i for i, k in enumerate(report.hotspots.kernels)}
    short = shortened(list(report.limiters))
    rows = []
    for k in report.hotspots.kernels:
        lim = report.limiters.get(k.name)
        if lim is None:
            continue
        b = lim.busiest
        rest = " · ".join(unit_text(u) for u in lim.units[1:])
        name = name_cell(k.name, short[k.name])
        rows.append(f'<tr data-k="{index[k.name]}">{name}<td>{_e(b.unit)} '
                    f"({_e(b.side)})</td>{number(f'{b.pct_of_peak:.1f}%')}<td>{_e(b.evidence)}: "
                    f"{_e(b.source)}</td><td>{_e(rest)}</td></tr>")  # fmt: skip
    return (
        '<table id="limiter"><tr><th>Kernel</th><th>Busiest unit</th><th>% of peak</th>'
        "<th>From</th><th>Other units</th></tr>" + "".join(rows) + "</table>"
    )


def _ceiling_table(report: Report) -> str:
    rows = "".join(
        f"<tr><td>{_e(c.name)}</td><td>{_e(si(c.value, c.unit_of_value))}</td>"
        f"<td>{_e(c.origin)}</td><td>{_e(c.scope)}</td><td>{_e(c.source)}</td></tr>"
        for c in report.roofline.result.ceilings
    )
    return (
        '<table id="ceilings"><tr><th>Ceiling</th><th>Value</th><th>Origin</th><th>Scope</th>'
        f"<th>Source</th></tr>{rows}</table>"
    )


def _profiler_notes(report: Report) -> list[str]:
    """Nsight Compute's informational rules (INF: never findings), whole."""
    items = [
        f"<li>{_e(kernel)}: ncu {_e(r.label)}: {_e(r.text)}</li>"
        for kernel, rules in report.profiler_rules.items()
        for r in rules
        if r.kind not in FINDING_KINDS
    ]
    if not items:
        return []
    return ["<h2>Nsight Compute notes</h2>", f'<ul id="profiler-notes">{"".join(items)}</ul>']
