"""The limiter of each kernel studied (hot, or on the roofline) among the top ones in the
terminal view: one line, the unit nearest its peak first (Speed-of-Light style), with the
metric or ceiling it was read from."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from roofscope.analysis.limiter import Limiter, Utilisation
from roofscope.render.columns import wrapped
from roofscope.render.names import short_names, showing_full
from roofscope.report import Report

UNITS_SHOWN = 3  # the busiest and the next ones, per kernel
NAME_WIDTH = 48


def limiter_section(console: Console, report: Report, top: int) -> None:
    kernels = [k for k in report.hotspots.kernels[:top] if k.name in report.limiters]
    if not kernels:
        return
    console.print(
        Text("Limiter (each unit's share of its peak, busiest first; source in ( )):", "bold")
    )
    names = short_names([k.name for k in kernels], NAME_WIDTH)
    if showing_full():  # a whole name on its lines, its limiter under it
        for k, name in zip(kernels, names, strict=True):
            wrapped(console, name, "  ", "    ")
            wrapped(console, limiter_line(report.limiters[k.name]), "    ", "      ")
        return
    width = max(len(n) for n in names)
    for k, name in zip(kernels, names, strict=True):
        line = f"{name:<{width}} {limiter_line(report.limiters[k.name])}"
        wrapped(console, line, "  ", " " * (width + 3))


def limiter_line(lim: Limiter) -> str:
    """``VALU 99.0% (VALU Utilization) · hbm 2.8% (roofline: hbm ceiling) · …``"""
    shown = " · ".join(unit_text(u) for u in lim.units[:UNITS_SHOWN])
    more = len(lim.units) - UNITS_SHOWN
    return shown + (f" · {more} more" if more > 0 else "")


def unit_text(u: Utilisation) -> str:
    return f"{u.unit} {u.pct_of_peak:.1f}% ({u.evidence})"
