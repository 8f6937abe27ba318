"""The terminal view: summary, hotspots with a bar per kernel, idle time, roofline, warnings."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from roofscope.analysis.device import DeviceSource
from roofscope.analysis.hotspots import Hotspots, KernelStats
from roofscope.analysis.timeline import Timeline
from roofscope.catalogue import devices
from roofscope.model.profile import Runs
from roofscope.render.columns import NameCell, fitted_table, text_console, wrapped
from roofscope.render.inputs_line import inputs_once
from roofscope.render.names import short_names
from roofscope.render.numbers import cell, column_unit, count, duration, pct
from roofscope.render.report.categories_text import categories_section
from roofscope.render.report.findings_text import findings_section
from roofscope.render.report.limiter_text import limiter_section
from roofscope.render.report.metrics_text import metrics_section
from roofscope.render.report.operators_text import operators_section
from roofscope.render.report.ranges_text import ranges_section
from roofscope.render.report.roofline_text import roofline_section
from roofscope.report import Barriers, Report, summary_of
from roofscope.version import __version__

BAR_WIDTH = 10


def _pct(x: float | None) -> str:
    return pct(x)


def _bar(share: float | None) -> str:
    if share is None:
        return ""
    eighths = round(share * BAR_WIDTH * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")


def render_text(
    report: Report, *, top: int = 20, width: int | None = None, color: bool | None = None
) -> str:
    """The whole text report; colour only when asked or on a terminal (NO_COLOR honoured)."""
    buf = io.StringIO()
    console = text_console(buf, width, color)
    _header(console, report)
    console.print(_table(report, top, console.width))
    if any(report.validity(k.name) for k in report.hotspots.kernels[:top]):
        console.print("  ! its numbers have a validity finding: read them with it (Findings)")
    categories_section(console, report)
    _ranks(console, report)
    operators_section(console, report, top)
    ranges_section(console, report, top)
    metrics_section(console, report)
    roofline_section(console, report, top)
    limiter_section(console, report, top)
    _activity(console, report)
    findings_section(console, report, top)
    _warnings(console, report)
    return buf.getvalue()


def communication_part(report: Report) -> str:
    """``; 19.5% of it in communication kernels``, where any ran."""
    share = summary_of(report).communication_share
    return f"; {share:.1%} of it in communication kernels" if share else ""


def _header(console: Console, report: Report) -> None:
    run, gpu = report.run, gpu_title(report)
    console.print(
        Text(
            f"roofscope {__version__} · {run.producer or 'unknown producer'} · {gpu}", style="bold"
        )
    )
    for path, what in inputs_once(report.inputs):
        wrapped(console, f"input: {path} ({what})", "  ", "    ")
    if line := job_line(report):
        wrapped(console, f"job: {line}", "  ", "    ")
    if line := runs_line(report.runs):
        wrapped(console, f"runs: {line}", "  ", "    ")
    if (engine := report.engine) is not None:
        where = "this machine's" if engine.scheduler == "local" else f"Dask {engine.scheduler}:"
        runs, workers = count(engine.runs, "run"), count(engine.workers, "worker")
        wrapped(console, f"engine: {runs} read on {where} {workers}, merged", "  ", "    ")
    h, t = report.hotspots, report.timeline
    if report.selection.kernel or report.selection.device is not None:
        console.print(
            f"  selection: kernel ~ {report.selection.kernel or '*'}, "
            f"device {report.selection.device if report.selection.device is not None else '*'}"
        )
    wrapped(
        console,
        f"{kernel_time(h)}{communication_part(report)}.",
        "",
        "  ",
    )
    if report.barriers is not None:
        console.print(barrier_line(report.barriers))
    if t is not None:
        wrapped(
            console,
            f"GPU {busy_idle(t)}, "
            f"{count(t.gaps, 'gap')} ≥ {duration(t.gap_threshold_ns)} totalling "
            f"{duration(t.gap_ns)}.",
            "",
            "  ",
        )
    else:
        console.print("No dispatch timestamps: busy and idle time cannot be known.")


def _table(report: Report, top: int, width: int) -> Table:
    kernels = list(report.hotspots.kernels)
    shown, rest = kernels[:top], kernels[top:]
    tscale, tunit = column_unit([k.total_ns for k in shown])
    mscale, munit = column_unit([k.mean_ns for k in shown] + [k.median_ns for k in shown])
    headers = ["#", "Kernel", "Calls", f"Total [{tunit}]", "Share", "Cum.", f"Mean [{munit}]"]
    headers += [f"Median [{munit}]", ""]
    rows = [
        (_row(i, k, tscale, mscale, bool(report.validity(k.name))), "bold red" if k.hot else None)
        for i, k in enumerate(shown, start=1)
    ]
    if rest:
        rows.append((_rest(rest, tscale), "dim"))
    # narrow: the bar goes first, then the cumulative share, then the median
    return fitted_table(headers, rows, width=width, name=1, drop=(8, 5, 7), left=(8,))


def _rest(rest: list[KernelStats], tscale: float) -> list[str | NameCell]:
    """The kernels past --top, as one row."""
    total = (
        sum(k.total_ns or 0 for k in rest) if all(k.total_ns is not None for k in rest) else None
    )
    share = sum(k.share or 0 for k in rest) if all(k.share is not None for k in rest) else None
    return [
        "",
        f"other ({count(len(rest), 'kernel')})",
        f"{sum(k.calls for k in rest):,}",
        cell(total, tscale),
        _pct(share),
        "100.0%" if share is not None else "-",
        "",
        "",
        _bar(share),
    ]


def _row(
    i: int, k: KernelStats, tscale: float, mscale: float, flagged: bool
) -> list[str | NameCell]:
    """One kernel; ``!`` before its name when a validity finding is about it (see Findings)."""
    mark = ("● " if k.hot else "  ") + ("! " if flagged else "")
    return [
        str(i),
        NameCell((k.name,), mark),
        f"{k.calls:,}",
        cell(k.total_ns, tscale),
        _pct(k.share),
        _pct(k.cumulative_share),
        cell(k.mean_ns, mscale),
        cell(k.median_ns, mscale),
        _bar(k.share),
    ]


def _ranks(console: Console, report: Report) -> None:
    view = report.ranks
    if view is None:
        return
    totals = sorted(view.totals_ns)
    console.print(
        f"Ranks: {len(view.labels)}; kernel time per rank {duration(totals[0])} .. "
        f"{duration(totals[-1])} (median {duration(view.median_ns)})"
    )
    shown = view.kernels[:5]
    names = short_names([k.kernel for k in shown], 60)
    for k, name in zip(shown, names, strict=True):
        ratio = f"{k.max_ns / k.min_ns:.2f}" if k.min_ns else "-"
        console.print(f"  {name}: cv {k.cv:.3f}, max/min {ratio}, slowest rank {k.slowest}")
    for st in view.stragglers:
        console.print(f"  straggler: rank {st.rank} ({st.label}): {', '.join(st.kernels)}")


def gpu_title(report: Report) -> str:
    """The GPU the report is about: the one given with ``--gpu`` (and what the profile says,
    where it says something else), or the profile's own."""
    run, choice = report.run, report.roofline.choice
    profiled = " · ".join(x for x in (run.gpu, run.arch) if x)
    said = f"; the profile says {profiled})" if profiled else ")"
    given = choice.detected
    if given is not None and given.source is DeviceSource.GPU_OPTION:
        if not given.shared and choice.name:
            return f"{choice.name} (--gpu{said}"
        if given.shared and choice.alternatives:
            parts = 1 + len(choice.alternatives)
            return f"{given.names[0]} (--gpu: {parts} parts, the ceilings they share{said}"
    if choice.device is not None and run.gpu and not devices.names_a_part(run.gpu):
        return f"{choice.name} (the profile says {profiled})"
    return profiled or "GPU unknown"


def barrier_line(b: Barriers) -> str:
    """One line on the barrier packets: how many, how long, what it usually means."""
    share = "" if b.share is None else f" ({_pct(b.share)} of kernel + barrier time)"
    return (
        f"Barrier packets (not kernel time): {count(b.records, 'record')}, "
        f"{duration(b.total_ns)}{share}; {b.meaning}."
    )


def _activity(console: Console, report: Report) -> None:
    for kind, title in (
        ("api", "API calls (host side, not kernel time)"),
        ("copy", "Memory copies (not kernel time)"),
    ):
        items = [a for a in report.activity if a.kind == kind]
        if not items:
            continue
        console.print(f"{title}:")
        for a in items[:5]:
            console.print(f"  {a.name}: {count(a.calls, 'call')}, {duration(a.total_ns)}")
        if len(items) > 5:
            console.print(f"  … {len(items) - 5} more (see --json)")


def _warnings(console: Console, report: Report) -> None:
    if not report.warnings:
        return
    console.print("Warnings:")
    for w in report.warnings:
        wrapped(console, f"! [{w.code}] {w.message}", "  ", "    ", style="yellow")


def runs_line(runs: Runs) -> str | None:
    """Which runs were found and which are analysed; None for one run and nothing left out."""
    parts = []
    if runs.job is not None:
        parts.append(f"{len(runs.read)} ranks of one job ({runs.job})")
    elif runs.separate:
        parts.append(f"{len(runs.read)} separate runs read together, not ranks of one job")
    elif runs.nested:
        parts.append(f"1 read ({runs.read[0] if runs.read else 'its summaries'})")
    if runs.nested:
        parts.append(f"{len(runs.nested)} nested, left out: {', '.join(runs.nested)}")
    return "; ".join(parts) or None


def kernel_time(h: Hotspots) -> str:
    """``Kernel time T in D dispatches of K kernels; N kernels make 80% of it`` (the last
    part only where some kernel took time)."""
    n80 = h.kernels_for_80pct
    hot = f"; {count(n80, 'kernel')} make{'s' if n80 == 1 else ''} 80% of it" if n80 else ""
    return (
        f"Kernel time {duration(h.total_ns)} in {count(h.dispatches, 'dispatch')} of "
        f"{count(len(h.kernels), 'kernel')}{hot}"
    )


def busy_idle(t: Timeline) -> str:
    """``busy B of W wall on 1 device; idle I (P%)``; on several devices busy and idle are
    parts of the devices' spans summed, and the sentence says so (B + I = that sum)."""
    idle = f"idle {duration(t.idle_ns)} ({pct(t.idle_share)})"
    if len(t.devices) < 2:
        return f"busy {duration(t.busy_ns)} of {duration(t.wall_ns)} wall on 1 device; {idle}"
    return (
        f"busy {duration(t.busy_ns)} of {duration(t.span_ns)}, the {len(t.devices)} devices' "
        f"spans summed (wall {duration(t.wall_ns)}); {idle}"
    )


def job_line(report: Report) -> str | None:
    """``rank 0 of 8, backend nccl``: the job the profile states (Kineto's distributedInfo)."""
    run, ranks = report.run, report.ranks_read
    if run.world_size is None and run.backend is None:
        return None
    said = ", ".join(map(str, ranks)) if len(ranks) < 5 else f"{len(ranks)} ranks"
    which = f"rank{'s' if len(ranks) > 1 else ''} {said}" if ranks else "rank not stated"
    size = f" of {run.world_size}" if run.world_size else ""
    backend = f", backend {run.backend}" if run.backend else ""
    return f"{which}{size}{backend}"
