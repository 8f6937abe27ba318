"""The cluster summary: one JSON-ready document from a merged :class:`Partial`.

Kernels as the hotspots table orders them (total time, then calls, then name), with their
time-weighted share and cumulative share; statistics per dispatch are count-weighted. The
median is exact up to 1,000 timed dispatches of a kernel, else the sketch's (within 1 %,
``sketch.py``). Devices as ``analysis.timeline`` measures them, kept apart per dispatch
source. The rank view is ``analysis.ranks``' own (:func:`spread_view`, :func:`rank_order`),
made only where ``readers.runs`` finds the sources to be ranks of one job. Activity as the
check-up lists it (``analysis.activity``; ``from`` says which records: ``summary``, ``trace``
or ``packets``), each kernel's launch shapes by dispatches, and each device's busy ns per
bin (``timeline``: bin i starts at i · ``bin_ns``; ``records.py``). Times in ns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roofscope.analysis.hotspots import Hotspots, KernelStats
from roofscope.cluster import sketch
from roofscope.cluster.diagnosis import cluster_findings
from roofscope.cluster.hot import hotspots_of
from roofscope.cluster.ranks import job_of, rank_view_of
from roofscope.cluster.records import ORIGINS, SHAPE_COLUMNS
from roofscope.cluster.roof import ClusterRoofline, cluster_roofline, counters_doc, roofline_doc
from roofscope.diagnosis.findings import Finding
from roofscope.render.report.json import finding_dict
from roofscope.report import DEFAULTS, RooflineOptions

if TYPE_CHECKING:
    from roofscope.cluster.partial import KernelPart, Partial


@dataclass(frozen=True)
class Examined:
    """The merged runs' kernels ranked, their roofline and their findings: made once, for the
    summary and the charts."""

    hot: Hotspots
    roofline: ClusterRoofline
    findings: list[Finding]


def examine(p: Partial, roof: RooflineOptions = DEFAULTS) -> Examined:
    """``p``'s kernels ranked (``hot.py``), placed on the roofline with the user's ``--gpu``,
    ceilings and work rules (``roof.py``), and diagnosed (``diagnosis.py``)."""
    hot = hotspots_of(p)
    found = cluster_roofline(p, hot, roof)
    return Examined(hot, found, cluster_findings(p, hot, found))


def summary(p: Partial, roof: RooflineOptions = DEFAULTS) -> dict[str, Any]:
    """The summary of the runs merged in ``p``; ``roof``: the user's options for its
    roofline."""
    return summary_of(p, examine(p, roof))


def summary_of(p: Partial, seen: Examined) -> dict[str, Any]:
    """The summary of the runs merged in ``p``, ``seen`` by :func:`examine`."""
    return {
        "sketch": {
            "exact_up_to": sketch.EXACT_LIMIT,
            "relative_accuracy": sketch.RELATIVE_ACCURACY,
        },
        **_kernels(p, seen.hot),
        "devices": _devices(p),
        "ranks": _ranks(p),
        "copies": [{"direction": k, "count": c.count, "ns": c.ns} for k, c in p.copies.items()],
        "runs": {
            "read": [list(r.paths) for r in p.runs],
            "sources": [s.path for s in p.sources],
            "job": job_of(p),
        },
        "warnings": [
            {"code": code, "count": n, "message": message}
            for code, (n, message) in p.warnings.items()
        ],
        "counters": counters_doc(p.counters),
        "roofline": roofline_doc(p, seen.roofline),
        "findings": [finding_dict(f) for f in seen.findings],
        "activity": _activity(p),
        "launch_shapes": {
            kernel: [
                {**dict(zip(SHAPE_COLUMNS, s, strict=True)), "dispatches": n}
                for s, n in counted.items()
            ]
            for kernel, counted in p.shapes.items()
        },
        "timeline": _timeline(p),
    }


def _activity(p: Partial) -> list[dict[str, Any]]:
    """In the check-up's order: the producer's totals (by kind, then largest), the traced
    copies, the barrier packets (largest first); totals rounded to a float once, merged."""
    rank = {origin: i for i, origin in enumerate(ORIGINS)}
    rows = sorted(
        p.activity.items(),
        key=lambda kv: (rank[kv[0][0]], kv[0][1], -kv[1].total_ns, kv[0][2]),
    )
    return [
        {
            "kind": kind,
            "name": name,
            "from": origin,
            "calls": a.calls,
            "total_ns": float(a.total_ns),
        }
        for (origin, kind, name), a in rows
    ]


def _timeline(p: Partial) -> dict[str, Any]:
    """Busy ns per bin of each device; bin i starts at i · bin_ns (``records.py``)."""
    width = p.busy.bin_ns
    return {
        "bin_ns": width,
        "devices": [
            {
                "source": path,
                "device": None if device == -1 else device,
                "start_ns": b.first * width,
                "busy_ns": b.busy_ns.tolist(),
            }
            for (path, device), b in p.busy.devices.items()
        ],
    }


def _kernels(p: Partial, hot: Hotspots) -> dict[str, Any]:
    return {
        "total_ns": hot.total_ns,
        "dispatches": hot.dispatches,
        "kernels_for_80pct": hot.kernels_for_80pct,
        "kernels": [_kernel(k, p.kernels[k.name]) for k in hot.kernels],
    }


def _kernel(k: KernelStats, part: KernelPart) -> dict[str, Any]:
    return {
        "name": k.name,
        "raw_names": list(k.raw_names),
        "calls": k.calls,
        "total_ns": k.total_ns,
        "mean_ns": k.mean_ns,
        "median_ns": k.median_ns,
        "median_exact": part.durations.exact is not None,
        "min_ns": k.min_ns,
        "max_ns": k.max_ns,
        "std_ns": k.std_ns,
        "share": k.share,
        "cumulative_share": k.cumulative_share,
        "hot": k.hot,
    }


def _devices(p: Partial) -> dict[str, Any]:
    devices = [
        {
            "source": path,
            "device": None if device == -1 else device,
            "busy_ns": d.busy_ns,
            "span_ns": d.span_ns,
            "idle_ns": d.span_ns - d.busy_ns,
            "first_ns": d.first_ns,
            "last_ns": d.last_ns,
            "dispatches": d.dispatches,
            "gaps": d.gaps,
            "gap_ns": d.gap_ns,
        }
        for (path, device), d in p.devices.items()
    ]
    parts = list(p.devices.values())
    span = sum(d.span_ns for d in parts)
    busy = sum(d.busy_ns for d in parts)
    wall = max(d.last_ns for d in parts) - min(d.first_ns for d in parts) if parts else None
    return {
        "wall_ns": wall,
        "busy_ns": busy,
        "span_ns": span,
        "idle_share": (span - busy) / span if span else 0.0,
        "devices": devices,
    }


def _ranks(p: Partial) -> dict[str, Any] | None:
    """As ``analyze --json``'s ``ranks`` (``cluster.ranks``)."""
    view = rank_view_of(p)
    if view is None:
        return None
    return {
        "ranks": list(view.ranks),
        "labels": list(view.labels),
        "kernel_ns": list(view.totals_ns),
        "median_ns": view.median_ns,
        "kernels": [
            {
                "name": k.kernel,
                "total_ns": list(k.totals_ns),
                "min_ns": k.min_ns,
                "median_ns": k.median_ns,
                "max_ns": k.max_ns,
                "cv": k.cv,
                "slowest_rank": k.slowest,
            }
            for k in view.kernels
        ],
        "stragglers": [
            {"rank": s.rank, "label": s.label, "kernel_ns": s.total_ns, "kernels": list(s.kernels)}
            for s in view.stragglers
        ],
    }
