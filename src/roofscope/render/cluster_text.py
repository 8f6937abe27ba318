"""The terminal view of a cluster summary (``analyze --scheduler``): runs read and skipped, the
top kernels, the devices' busy time, the API calls and copies, the straggler, the kernels on
the roofline (where their counters give work), the findings as the check-up shows them, the
warnings.

It formats the summary document (``cluster.partial.summary`` plus the engine's ``skipped``)
as it is; a field the document leaves out shows as ``-``.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table

from roofscope import __version__
from roofscope.analysis.roofline import Bound, PlacedBy
from roofscope.diagnosis.findings import Finding
from roofscope.render.columns import NameCell, fitted_table, text_console
from roofscope.render.findings_text import findings_section, wrapped
from roofscope.render.names import short_names
from roofscope.render.numbers import cell, column_unit, count, duration, number, pct, si

Doc = dict[str, Any]
SHOWN_DEVICES = 8
SHOWN_ACTIVITY = 3

NBSP = "\u00a0"


def render_cluster_text(
    doc: Doc, *, top: int = 10, width: int | None = None, color: bool | None = None
) -> str:
    """The summary as text; colour only when asked (the CLI asks on a terminal)."""
    buf = io.StringIO()
    console = text_console(buf, width, color)
    _header(console, doc)
    console.print(_kernels(list(doc.get("kernels") or []), top, console.width))
    _devices(console, doc.get("devices"))
    _activity(console, list(doc.get("activity") or []))
    _straggler(console, doc.get("ranks"))
    _roofline(console, doc.get("roofline"), top)
    if "findings" in doc:
        findings_section(console, [_finding(f) for f in doc["findings"]], top)
    for w in doc.get("warnings") or []:
        text = f"[{w['code']}] {w['message']}" if isinstance(w, dict) else str(w)
        wrapped(console, f"! {text}", "", "  ", style="yellow")
    return buf.getvalue()


def _finding(f: Doc) -> Finding:
    """A finding of the document (``render.json.finding_dict``) as the check-up's view takes
    it."""
    return Finding(
        f["rule"], f["kernel"], f["kind"], f["severity"], f["summary"], f["prescription"],
        dict(f.get("evidence") or {}), dict(f.get("thresholds") or {}), f.get("gain_share"),
        f.get("formula"),
    )  # fmt: skip


def _header(console: Console, doc: Doc) -> None:
    runs = doc.get("runs") or {}
    skipped = list(doc.get("skipped") or [])
    read, sources = runs.get("read"), runs.get("sources")
    count = len(read) if isinstance(read, list) else read
    held = len(sources) if isinstance(sources, list) else sources
    more = "" if held is None or held == count else f" ({held} dispatch sources)"
    console.print(f"roofscope {__version__} · cluster summary · runs read: {count}{more}")
    if skipped:
        console.print(f"runs skipped: {len(skipped)} (--skip-unreadable)", style="yellow")
    for s in skipped:
        wrapped(console, f"skipped: {s['reason']}", "  ", "    ", style="yellow")


def _kernels(kernels: list[Doc], top: int, width: int) -> Table:
    shown = kernels[:top]
    tscale, tunit = column_unit(k.get("total_ns") for k in shown)
    mscale, munit = column_unit(k.get("median_ns") for k in shown)
    headers = ["#", "Kernel", "Calls", f"Total [{tunit}]", "Share", f"Median [{munit}]"]
    rows: list[tuple[list[str | NameCell], str | None]] = [
        (
            [
                str(i),
                NameCell((str(k["name"]),)),
                f"{k['calls']:,}",
                cell(k.get("total_ns"), tscale),
                pct(k.get("share")),
                cell(k.get("median_ns"), mscale),
            ],
            None,
        )
        for i, k in enumerate(shown, start=1)
    ]
    if len(kernels) > top:
        rows.append((_other(kernels[top:], tscale), "dim"))
    return fitted_table(headers, rows, width=width, name=1, drop=(5, 4))


def _other(rest: list[Doc], tscale: float) -> list[str | NameCell]:
    """The kernels past ``top``, as one row (their sums, where every one has the value)."""
    totals = [k.get("total_ns") for k in rest]
    shares = [k.get("share") for k in rest]
    return [
        "",
        f"other ({count(len(rest), 'kernel')})",
        f"{sum(k['calls'] for k in rest):,}",
        cell(None if None in totals else sum(t or 0 for t in totals), tscale),
        pct(None if None in shares else sum(s or 0 for s in shares)),
        "",
    ]


def _devices(console: Console, devices: Doc | None) -> None:
    """All devices' busy time of their span, then the first few devices one by one."""
    listed = list((devices or {}).get("devices") or [])
    if not devices or not listed:
        return
    console.print(
        f"Devices: {len(listed)}, busy {duration(devices.get('busy_ns'))} of "
        f"{duration(devices.get('span_ns'))} ({pct(devices.get('idle_share'))} idle)"
    )
    for d in listed[:SHOWN_DEVICES]:
        where = f"{d.get('source')} device {'-' if d.get('device') is None else d['device']}"
        busy = f"{duration(d.get('busy_ns'))}\u00a0of\u00a0{duration(d.get('span_ns'))}"
        wrapped(console, f"{where}: {busy}", "  ", "    ")
    if len(listed) > SHOWN_DEVICES:
        console.print(f"  … {len(listed) - SHOWN_DEVICES} more (see --json)")


def _activity(console: Console, rows: list[Doc]) -> None:
    """One line per kind: the first SHOWN_ACTIVITY API calls and copies as the summary lists
    them (largest first within each kind of record)."""
    for kind, title in (("api", "API calls"), ("copy", "Memory copies")):
        items = [a for a in rows if a.get("kind") == kind]
        if not items:
            continue
        shown = [
            f"{_cut(str(a['name']))}: {count(int(a['calls']), 'call').replace(' ', NBSP)}, "
            f"{duration(a.get('total_ns'))}"
            for a in items[:SHOWN_ACTIVITY]
        ]
        if len(items) > SHOWN_ACTIVITY:
            shown.append(f"… {len(items) - SHOWN_ACTIVITY} more")
        wrapped(console, f"{title} (not kernel time): {'; '.join(shown)}", "", "  ")


def _cut(name: str, most: int = 48) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def _straggler(console: Console, ranks: Doc | None) -> None:
    if not ranks:
        return
    stragglers = list(ranks.get("stragglers") or [])
    console.print(
        f"Ranks: {len(ranks.get('ranks') or [])}" + ("" if stragglers else "; no straggler")
    )
    for s in stragglers:
        kernels = ", ".join(short_names([str(k) for k in s.get("kernels") or []], 60))
        wrapped(
            console, f"straggler: rank {s.get('rank')} ({s.get('label')}): {kernels}", "  ", "    "
        )


def _roofline(console: Console, roof: Doc | None, top: int) -> None:
    """The kernels the counters place on the roofline, as the check-up's roofline table
    (intensity and achieved rate at the limiting level, else HBM); nothing without them."""
    kernels = list((roof or {}).get("kernels") or [])
    if not roof or not kernels:
        return
    device = roof.get("device") or {}
    where = device.get("name") or "GPU unknown"
    if device.get("detected_from"):
        where += f" ({device['detected_from']})"
    wrapped(console, f"Roofline · {where}", "", "  ", style="bold")
    if device.get("problem"):
        console.print(f"  {device['problem']}.")
    headers = ["Kernel", "AI [FLOP/B]", "Achieved", "Eff.", "Bound"]
    rows = [(_roof_row(k), "bold red" if k.get("above_roof") else None) for k in kernels[:top]]
    console.print(fitted_table(headers, rows, width=console.width, name=0, drop=(2,)))
    if any(k.get("placed_by") == PlacedBy.IOPS for k in kernels[:top]):
        console.print("  kernels on an integer ceiling: AI in IOP/B, rates in IOP/s")


def _roof_row(k: Doc) -> list[str | NameCell]:
    level = k.get("limiting_level") or "hbm"
    if k.get("placed_by") == PlacedBy.BANDWIDTH:
        achieved = si((k.get("achieved_bytes_s") or {}).get(level), "B/s")
    else:
        achieved = si(
            k.get("achieved_flops_s"), "IOP/s" if k.get("placed_by") == PlacedBy.IOPS else "FLOP/s"
        )
    bound = k.get("bound") or "-"
    if bound == Bound.MEMORY and k.get("limiting_level"):
        bound = f"memory ({k['limiting_level']})"
    ai = (k.get("ai") or {}).get(level)
    return [NameCell((str(k["name"]),)), number(ai), achieved, pct(k.get("efficiency")), bound]
