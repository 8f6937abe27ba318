"""What each tool answers: the check-up's JSON (``analyze --json``, ``compare --json``), its
long lists paged (``pages.py``). Pure of the MCP SDK: ``server.py`` registers these."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import msgspec

from roofscope.agent.pages import page
from roofscope.agent.roots import Roots
from roofscope.api.comparison import Comparison
from roofscope.api.report import Report
from roofscope.api.run import analyze, compare
from roofscope.errors import UsageError

if TYPE_CHECKING:
    from roofscope.analysis.gaps import Gap

KEPT = 4  # check-ups kept for paging without reading the files again
SEVERITIES = ("high", "medium", "low")
Options = dict[str, Any]  # the check-up's keyword arguments (api.run.analyze's)


class Session(msgspec.Struct):
    """The server's state: its roots, the last check-ups (newest last) and the last report."""

    roots: Roots
    kept: OrderedDict[tuple[object, ...], Report | Comparison] = msgspec.field(
        default_factory=OrderedDict
    )
    last: Report | None = None
    last_path: str | None = None

    def report(self, path: str, options: Options) -> Report:
        """The check-up of ``path`` under ``options``, read again when a file changed."""
        where = self.roots.check(path)
        # the timeline tool's gaps with their causes: kept with the check-up, asked once
        made = partial(analyze, where, **options, idle_gaps=True)
        report = self._kept((where, _stamp(where)), options, made)
        assert isinstance(report, Report)
        self.last, self.last_path = report, where
        return report

    def comparison(self, base: str, new: str, options: Options) -> Comparison:
        sides = self.roots.check(base), self.roots.check(new)
        key = (*sides, *map(_stamp, sides))
        both = self._kept(key, options, lambda: compare(*sides, **options))
        assert isinstance(both, Comparison)
        return both

    def _kept(
        self, files: tuple[object, ...], options: Options, make: Callable[[], Report | Comparison]
    ) -> Report | Comparison:
        """What ``make`` gives, kept for the next pages while the files stay unchanged."""
        key = (*files, tuple(sorted(options.items())))
        if key not in self.kept:
            self.kept[key] = make()
            while len(self.kept) > KEPT:
                self.kept.popitem(last=False)
        self.kept.move_to_end(key)
        return self.kept[key]


def _stamp(path: str) -> float | None:
    """When the file (or the folder's newest entry) last changed; None when there is none
    (the check-up then says so in its words)."""
    if not os.path.exists(path):
        return None
    if not os.path.isdir(path):
        return os.stat(path).st_mtime
    times = [e.stat().st_mtime for e in os.scandir(path)]
    return max([os.stat(path).st_mtime, *times])


def analyze_answer(report: Report, *, limit: int, cursor: str | None) -> dict[str, Any]:
    """Summary, run, device, warnings and a page of the kernels (most time first), with the
    five first findings in brief and how many there are (the ``findings`` tool pages them)."""
    doc = report.to_dict()
    kernels = page(doc["kernels"], cursor, limit)
    brief = [{k: f[k] for k in ("rule", "kernel", "severity", "summary")} for f in doc["findings"]]
    return {
        "summary": doc["summary"], "run": doc["run"], "device": doc["device"],
        "selection": doc["selection"], "warnings": doc["warnings"],
        "inputs": len(doc["inputs"]), "kernels": kernels.pop("items"), "kernels_page": kernels,
        "findings_first": brief[:5], "findings_total": len(brief),
    }  # fmt: skip


def kernel_answer(report: Report, name: str) -> dict[str, Any]:
    """One kernel's row (counters, limiter, roofline place) and the findings about it."""
    doc = report.to_dict()
    row = _one_kernel(doc["kernels"], name)
    about = [f for f in doc["findings"] if f["kernel"] == row["name"]]
    return {"kernel": row, "findings": about, "device": doc["device"]["name"]}


def _one_kernel(rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    exact = [r for r in rows if name == r["name"] or name in r["raw_names"]]
    found = exact or [r for r in rows if name.lower() in r["name"].lower()]
    if len(found) == 1:
        return found[0]
    if not found:
        raise UsageError(f"kernel {name!r}: no kernel of the profile has that name or part "
                         "of it; the analyze tool lists them")  # fmt: skip
    named = "; ".join(r["name"] for r in found[:5])
    raise UsageError(f"kernel {name!r}: {len(found)} kernels hold it ({named}); "
                     "give more of the name")  # fmt: skip


def findings_answer(
    report: Report, *, severity: str | None, rule: str | None, kernel: str | None,
    limit: int, cursor: str | None,
) -> dict[str, Any]:  # fmt: skip
    """The findings, ranked as the report ranks them, kept by severity, rule and kernel."""
    if severity is not None and severity not in SEVERITIES:
        raise UsageError(f"severity {severity!r}: expected one of {', '.join(SEVERITIES)}")
    rows = [
        f for f in report.to_dict()["findings"]
        if (severity is None or f["severity"] == severity) and (rule is None or f["rule"] == rule)
        and (kernel is None or kernel.lower() in (f["kernel"] or "").lower())
    ]  # fmt: skip
    found = page(rows, cursor, limit)
    return {"findings": found.pop("items"), **found}


def timeline_answer(
    report: Report, *, window: tuple[float, float | None], device: int | None, limit: int,
    cursor: str | None,
) -> dict[str, Any]:  # fmt: skip
    """Busy and idle time per device (and process), the same in a window of the timeline
    (seconds after the first kernel began) with its idle stretches, and the findings that
    explain idle time (the program findings: idle gaps and their host causes)."""
    doc = report.to_dict()
    rows = [d for d in doc["devices"] if device is None or d["device"] == device]
    found = page(rows, cursor, limit)
    idle = [f for f in doc["findings"] if f["kind"] == "program"]
    keys = ("wall_s", "busy_s", "idle_s", "idle_share", "gaps", "gap_total_s", "gap_threshold_s")
    return {"summary": {k: doc["summary"][k] for k in keys}, "devices": found.pop("items"),
            **found, "window": _window(report, window, device), "idle_findings": idle}  # fmt: skip


STRETCHES = 20  # idle stretches per lane, longest first (the answer says how many there are)


def _window(
    report: Report, bounds: tuple[float, float | None], device: int | None
) -> dict[str, Any] | None:
    """The window's busy and idle time per lane, at the timeline's bin resolution; None
    without dispatch timestamps."""
    from roofscope.analysis.idle_window import window

    lanes = report.checkup.lanes
    start, end = bounds
    if lanes is None or not lanes.lanes:
        return None
    if start < 0 or (end is not None and end <= start):
        raise UsageError(f"window {start} to {end} s: expected 0 <= start_s < end_s")
    w = window(lanes, round(start * 1e9), None if end is None else round(end * 1e9))
    s = w.bin_ns / 1e9

    def at(i: int) -> float:
        return i * w.bin_ns / 1e9

    return {"from_s": at(w.first), "to_s": at(w.end), "bin_s": s, "lanes": [
        {"input": _input(report, lane.source),
         "device": lane.device, "busy_s": lane.busy_ns / 1e9,
         "idle_s": (lane.span_ns - lane.busy_ns) / 1e9,
         "idle_stretches": [[at(a), at(b)] for a, b in lane.idle_bins[:STRETCHES]],
         "idle_stretches_total": len(lane.idle_bins)}
        for lane in w.lanes if device is None or lane.device == device
    ], **_gaps(report, lanes.start_ns, bounds, device)}  # fmt: skip


def _gap(report: Report, g: Gap, origin: int) -> dict[str, Any]:
    return {
        "input": _input(report, g.source),
        "device": g.device,
        "start_s": (g.start_ns - origin) / 1e9,
        "end_s": (g.end_ns - origin) / 1e9,
        "length_s": g.length_ns / 1e9,
        "cause": g.cause,
        "inside_s": {kind: ns / 1e9 for kind, ns in g.inside},
    }


def _input(report: Report, source: int | None) -> str | None:
    return None if source is None else report.inputs[source].path


def _gaps(
    report: Report, origin: int, bounds: tuple[float, float | None], device: int | None
) -> dict[str, Any]:
    """The idle gaps of the window one by one (of the longest the check-up kept), longest
    first, each with the time copies and each kind of host range filled of it and the kind
    that filled half or more (its cause)."""
    start, end = bounds
    lo = origin + round(start * 1e9)
    hi = None if end is None else origin + round(end * 1e9)
    kept = report.checkup.idle_gaps
    inside = [g for g in kept if g.end_ns > lo and (hi is None or g.start_ns < hi)
              and (device is None or g.device == device)]  # fmt: skip
    listed = [_gap(report, g, origin) for g in inside[:STRETCHES]]
    return {
        "gaps": listed,
        "gaps_in_window": len(inside),
        "gaps_kept": len(kept),
        "gaps_note": (
            f"the profile's {len(kept)} longest gaps of at least the gap threshold are kept "
            "with their causes; the window lists those it overlaps, longest first"
        ),
    }


def compare_answer(
    both: Comparison, gate: dict[str, float | None], *, limit: int, cursor: str | None
) -> dict[str, Any]:
    """``compare --json`` with the gate's verdict for the thresholds given, the kernel
    changes paged (biggest first); the added and removed kernels are among them
    (``matched_by``), so their name lists give way to their counts."""
    verdict = both.gate(**{k: v for k, v in gate.items() if v is not None})
    doc = both.to_dict(verdict)
    kernels = page(doc.pop("kernels"), cursor, limit)
    counts = {f"{side}_total": len(doc.pop(side)) for side in ("added", "removed")}
    return {**doc, **counts, "kernels": kernels.pop("items"), "kernels_page": kernels}


def devices_answer(name: str | None, *, limit: int, cursor: str | None) -> dict[str, Any]:
    """The GPU catalogue (a page of it), or the parts a name fits with their ceilings."""
    from roofscope.catalogue import devices as catalogue

    found = catalogue.catalogue() if name is None else catalogue.resolve(name)
    if not found:
        raise UsageError(catalogue.not_found(name or ""))
    rows = [catalogue.as_dict(d) for d in found]
    listed = page(rows, cursor, limit)
    return {"devices": listed.pop("items"), **listed}


def formats_answer() -> dict[str, Any]:
    """Every input format roofscope recognises (``roofscope formats``)."""
    from roofscope.readers import registry

    return {"formats": [{"name": r.name, "description": r.description}
                        for r in registry.readers()]}  # fmt: skip
