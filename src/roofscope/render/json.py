"""The machine view: schema_version "1", SI units (seconds), every kernel, sorted by time.

The schema lives beside the package (``schema/report-v1.schema.json``). Values the input
cannot give are null, never invented.
"""

from __future__ import annotations

import json
from typing import Any

from roofscope import __version__
from roofscope.analysis.roofline import KernelRoofline
from roofscope.diagnosis.findings import Finding
from roofscope.report import Report, RooflineSection
from roofscope.work.model import Work

SCHEMA_VERSION = "1"


def _s(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e9


def to_dict(report: Report) -> dict[str, Any]:
    h, t = report.hotspots, report.timeline
    roof = {k.name: k for k in report.roofline.result.kernels}
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "roofscope", "version": __version__},
        "inputs": [
            {"path": f.path, "format": f.format, "rows": f.rows, "role": f.role}
            for f in report.inputs
        ],
        "run": {
            "producer": report.run.producer,
            "producer_version": report.run.producer_version,
            "gpu": report.run.gpu,
            "arch": report.run.arch,
        },
        "device": _device(report.roofline),
        "traffic": _traffic(report.roofline.whole),
        "selection": {"kernel": report.selection.kernel, "device": report.selection.device},
        "summary": {
            "kernel_time_s": _s(h.total_ns),
            "dispatches": h.dispatches,
            "kernels": len(h.kernels),
            "kernels_for_80pct": h.kernels_for_80pct,
            "wall_s": _s(t.wall_ns) if t else None,
            "busy_s": _s(t.busy_ns) if t else None,
            "idle_s": _s(t.idle_ns) if t else None,
            "idle_share": t.idle_share if t else None,
            "gaps": t.gaps if t else None,
            "gap_total_s": _s(t.gap_ns) if t else None,
            "gap_threshold_s": _s(t.gap_threshold_ns) if t else None,
        },
        "devices": [
            {
                "device": d.device,
                "span_s": _s(d.span_ns),
                "busy_s": _s(d.busy_ns),
                "idle_s": _s(d.idle_ns),
                "gaps": d.gaps,
                "gap_total_s": _s(d.gap_ns),
            }
            for d in (t.devices if t else ())
        ],
        "kernels": [
            {
                "name": k.name,
                "raw_names": list(k.raw_names),
                "calls": k.calls,
                "total_s": _s(k.total_ns),
                "mean_s": _s(k.mean_ns),
                "median_s": _s(k.median_ns),
                "min_s": _s(k.min_ns),
                "max_s": _s(k.max_ns),
                "std_s": _s(k.std_ns),
                "share": k.share,
                "cumulative_share": k.cumulative_share,
                "hotspot": k.hot,
                "roofline": _kernel_roofline(roof.get(k.name)),
            }
            for k in h.kernels
        ],
        "activity": [
            {"kind": a.kind, "name": a.name, "calls": a.calls, "total_s": _s(a.total_ns)}
            for a in report.activity
        ],
        "findings": [_finding(f) for f in report.findings],
        "warnings": [
            {"code": w.code, "message": w.message, "count": w.count} for w in report.warnings
        ],
    }


def _device(section: RooflineSection) -> dict[str, Any]:
    d, r = section.choice.device, section.result
    return {
        "name": section.choice.name,
        "key": d.key if d else None,
        "alternatives": [a.key for a in section.choice.alternatives],
        "arch": d.arch if d else None,
        "scope": section.choice.scope,
        "detected_from": section.choice.detected_from,
        "problem": section.problem,
        "main_ceiling": r.main_ceiling,
        "ridge_flop_per_byte": r.ridge,
        "ceilings": [
            {
                "name": c.name,
                "kind": c.kind,
                "dtype": c.dtype,
                "engine": c.unit,
                "level": c.level,
                "value": c.value,
                "unit": c.unit_of_value,
                "source": c.source,
                "origin": c.origin,
                "scope": c.scope,
            }
            for c in r.ceilings
        ],
    }


def _traffic(whole: Work | None) -> dict[str, Any] | None:
    """Whole-profile totals and rates from counters, aggregated both ways."""
    if whole is None:
        return None
    weighted = whole.time_weighted()
    quantities = {**whole.bytes, **(whole.flops or {})}
    return {
        "dispatches": whole.dispatches,
        "time_s": _s(whole.time_ns),
        "quantities": {
            q: {
                "total": total,
                "unit": "B" if q in whole.bytes else "FLOP",
                "time_weighted_per_s": weighted.get(q),
                "dispatch_mean_per_s": whole.rates.get(q),
            }
            for q, total in quantities.items()
        },
    }


def _kernel_roofline(k: KernelRoofline | None) -> dict[str, Any] | None:
    if k is None:
        return None
    return {
        "work_source": k.work_source,
        "flops": None
        if k.flops is None
        else sum(v for n, v in k.flops.items() if not n.startswith("int8")),
        "flops_by_ceiling": k.flops,
        "bytes": k.bytes,
        "ai": k.intensity,
        "achieved_flops_s": k.achieved_flops_s,
        "achieved_bytes_s": k.achieved_bytes_s,
        "dispatch_mean_rates_per_s": k.dispatch_mean_rates,
        "attainable_flops_s": k.attainable_flops_s,
        "efficiency": k.efficiency,
        "bound": k.bound,
        "ceiling": k.ceiling,
        "limiting_level": k.limiting_level,
        "placed_by": k.placed_by,
        "above_roof": k.above_roof,
    }


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "kernel": f.kernel,
        "kind": f.kind,
        "severity": f.severity,
        "summary": f.summary,
        "evidence": f.evidence,
        "thresholds": f.thresholds,
        "prescription": f.prescription,
        "gain_share": f.gain_share,
        "program_speedup_bound": f.program_speedup_bound,
        "formula": f.formula,
    }


def render_json(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
