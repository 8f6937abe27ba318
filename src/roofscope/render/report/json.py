"""The machine view: schema_version "1", SI units (seconds), every kernel, sorted by time.

The schema lives beside the package (``schema/report-v1.schema.json``). Values the input
cannot give are null, never invented.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from roofscope.analysis.categories import CategoryTime
from roofscope.analysis.limiter import Limiter
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.metrics.per_kernel import KernelMetrics
from roofscope.analysis.metrics.value import MetricValue
from roofscope.analysis.ranges import Ranges
from roofscope.analysis.ranks import RankView
from roofscope.analysis.roofline import KernelRoofline
from roofscope.analysis.work.model import Work
from roofscope.catalogue.ceilings import Ceiling, is_integer
from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.grouping import FindingGroup
from roofscope.model.categories import Category
from roofscope.render.device_choice import detected_from
from roofscope.render.numbers import seconds
from roofscope.render.struct_dict import asdict
from roofscope.report import Barriers, Report, RooflineSection, summary_of
from roofscope.version import __version__

if TYPE_CHECKING:
    from roofscope.analysis.ops.operators import Operators

SCHEMA_VERSION = "1"


def to_dict(report: Report) -> dict[str, Any]:
    doc = _document(report)
    if report.operators is not None:  # present only for inputs with operators
        doc["operators"] = _operators(report.operators)
    if report.ranges is not None:  # present only for inputs with user ranges
        doc["ranges"] = _ranges(report.ranges)
    if report.engine is not None:  # --scheduler: where the runs were read, nothing else
        doc["engine"] = asdict(report.engine)
    return doc


def _document(report: Report) -> dict[str, Any]:
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
            **_distributed(report),
        },
        "device": _device(report.roofline),
        "traffic": _traffic(report.roofline.whole),
        "metrics": {
            "machine": _machine(report.metrics.machine),
            "whole": {n: _metric(v) for n, v in report.metrics.whole.items()},
            "problem": report.metrics.problem,
        },
        "selection": {"kernel": report.selection.kernel, "device": report.selection.device},
        "summary": summary_dict(report),
        "devices": [
            {
                "device": d.device,
                "input": None if d.source is None else report.inputs[d.source].path,
                "span_s": seconds(d.span_ns),
                "busy_s": seconds(d.busy_ns),
                "idle_s": seconds(d.idle_ns),
                "gaps": d.gaps,
                "gap_total_s": seconds(d.gap_ns),
            }
            for d in (t.devices if t else ())
        ],
        "kernels": [
            {
                "name": k.name,
                "raw_names": list(k.raw_names),
                "calls": k.calls,
                "total_s": seconds(k.total_ns),
                "mean_s": seconds(k.mean_ns),
                "median_s": seconds(k.median_ns),
                "min_s": seconds(k.min_ns),
                "max_s": seconds(k.max_ns),
                "std_s": seconds(k.std_ns),
                "share": k.share,
                "cumulative_share": k.cumulative_share,
                "hotspot": k.hot,
                "communication": k.communication,
                "category": str(report.categories.of.get(k.name, Category.OTHER)),
                "validity": list(report.validity(k.name)),
                "profiler_rules": [asdict(r) for r in report.profiler_rules.get(k.name, ())],
                "roofline": kernel_roofline(roof.get(k.name)),
                "limiter": _limiter(report.limiters.get(k.name)),
                **_kernel_metrics(report.metrics.kernels.get(k.name)),
            }
            for k in h.kernels
        ],
        "activity": [
            {"kind": a.kind, "name": a.name, "calls": a.calls, "total_s": seconds(a.total_ns)}
            for a in report.activity
        ],
        "runs": {
            "read": list(report.runs.read),
            "nested": list(report.runs.nested),
            "job": report.runs.job,
            "separate": report.runs.separate,
        },
        "barriers": _barriers(report.barriers),
        "ranks": _ranks(report.ranks),
        "findings": [finding_dict(f) for f in report.findings],
        "findings_grouped": [group_dict(g) for g in report.finding_groups],
        "warnings": [
            {"code": w.code, "message": w.message, "count": w.count} for w in report.warnings
        ],
        "categories": [_category(c) for c in report.categories.rows],
    }


def _category(c: CategoryTime) -> dict[str, Any]:
    return {
        "category": str(c.category),
        "kernels": c.kernels,
        "calls": c.calls,
        "total_s": seconds(c.total_ns),
        "share": c.share,
        "placed_s": seconds(c.placed_ns),
        "efficiency": c.efficiency,
    }


def _operators(ops: Operators) -> dict[str, Any]:
    return {
        "fp32_matmul": ops.fp32_matmul,
        "rows": [
            {
                "name": r.name,
                "input_dims": r.dims,
                "input_types": r.types,
                "calls": r.calls,
                "dispatches": r.dispatches,
                "total_s": seconds(r.time_ns),
                "share": r.share,
                "kernels": list(r.kernels),
                "flops": r.flops,
                "bytes": r.bytes,
                "formula": r.formula,
                "work_unknown": r.why,
            }
            for r in ops.rows
        ],
        "others": ops.others,
        "others_s": seconds(ops.others_ns),
        "unlinked_dispatches": ops.unlinked_dispatches,
        "unlinked_s": seconds(ops.unlinked_ns),
    }


def _ranges(ranges: Ranges) -> dict[str, Any]:
    return {
        "rows": [
            {
                "name": r.name,
                "calls": r.calls,
                "dispatches": r.dispatches,
                "total_s": seconds(r.time_ns),
                "mean_s": seconds(r.mean_ns),
                "share": r.share,
                "kernels": list(r.kernels),
                "kernel_names": r.kernel_names,
            }
            for r in ranges.rows
        ],
        "others": ranges.others,
        "others_s": seconds(ranges.others_ns),
        "outside_dispatches": ranges.outside_dispatches,
        "outside_s": seconds(ranges.outside_ns),
        "nested": ranges.nested,
    }


def _distributed(report: Report) -> dict[str, Any]:
    """The parallel job, where the producer states it (Kineto's distributedInfo): present
    only then, so that documents of other inputs keep their shape."""
    run = report.run
    if run.world_size is None and run.backend is None:
        return {}
    job = {"ranks": list(report.ranks_read), "world_size": run.world_size, "backend": run.backend}
    return {"distributed": job}


def summary_dict(report: Report) -> dict[str, Any]:
    """The document's ``summary``: kernel time and its timeline, in seconds."""
    return asdict(summary_of(report))


def _barriers(b: Barriers | None) -> dict[str, Any] | None:
    if b is None:
        return None
    return {
        "records": b.records,
        "total_s": seconds(b.total_ns),
        "share_of_kernel_and_barrier_time": b.share,
        "meaning": b.meaning,
    }


def _device(section: RooflineSection) -> dict[str, Any]:
    d, r = section.choice.device, section.result
    return {
        "name": section.choice.name,
        "key": d.key if d else None,
        "alternatives": [a.key for a in section.choice.alternatives],
        "arch": section.choice.arch,
        "scope": section.choice.scope,
        "detected_from": detected_from(section.choice),
        "problem": section.problem,
        "main_ceiling": r.main_ceiling,
        "ridge_flop_per_byte": r.ridge,
        "ceilings": [ceiling_dict(c) for c in r.ceilings],
    }


def ceiling_dict(c: Ceiling) -> dict[str, Any]:
    """One ceiling as ``device.ceilings[]`` writes it."""
    return {
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


def _traffic(whole: Work | None) -> dict[str, Any] | None:
    """Whole-profile totals and rates from counters, aggregated both ways."""
    if whole is None:
        return None
    weighted = whole.time_weighted()
    quantities = {**whole.bytes, **(whole.flops or {})}
    return {
        "dispatches": whole.dispatches,
        "time_s": seconds(whole.time_ns),
        "quantities": {
            q: {
                "total": total,
                "unit": "B" if q in whole.bytes else "IOP" if is_integer(q) else "FLOP",
                "time_weighted_per_s": weighted.get(q),
                "dispatch_mean_per_s": whole.rates.get(q),
            }
            for q, total in quantities.items()
        },
    }


def kernel_roofline(k: KernelRoofline | None) -> dict[str, Any] | None:
    """One kernel's ``kernels[].roofline``."""
    if k is None:
        return None
    return {
        "work_source": k.work_source,
        "flops": _total(k.flops, integer=False),
        "iops": _total(k.flops, integer=True),
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
        "missing_ceiling": k.missing_ceiling,
    } | ({"no_bound": k.no_bound} if k.no_bound else {})


def _total(by_ceiling: dict[str, float] | None, *, integer: bool) -> float | None:
    """The FLOPs (or IOPs) of ``by_ceiling``; None when none of that kind is known."""
    values = [v for n, v in (by_ceiling or {}).items() if is_integer(n) == integer]
    return sum(values) if values else None


def _limiter(lim: Limiter | None) -> dict[str, Any] | None:
    if lim is None:
        return None
    return {"busiest": asdict(lim.busiest), "units": [asdict(u) for u in lim.units]}


def _machine(m: Machine) -> dict[str, Any]:
    values = {n: getattr(m, n) for n in m.__struct_fields__ if n != "sources"}
    return {**values, "sources": dict(m.sources)}


def _metric(v: MetricValue) -> dict[str, Any]:
    return {
        "value_dispatch_mean": v.value_dispatch_mean,
        "value_time_weighted": v.value_time_weighted,
        "total": v.total,
        "unit": v.unit,
        "kind": v.kind,
        "peak": v.peak,
        "pct_of_peak": v.pct_of_peak,
        "dispatches": v.dispatches,
        "left_out": v.left_out,
        "aggregation_differs": v.aggregation_differs,
        "source": v.source,
        "note": v.note,
        "peer": v.peer,
        # only where a ratio divides counts of two passes (rocprof-compute 3.6+ per-pass files)
        **({"cross_pass": dict(v.cross_pass.counters)} if v.cross_pass else {}),
    }


def _kernel_metrics(k: KernelMetrics | None) -> dict[str, Any]:
    if k is None:
        return {"metrics": {}, "occupancy": None}
    occ, got = k.occupancy, k.achieved
    occupancy = None
    if occ is not None or got is not None:
        occupancy = {
            "theoretical": None
            if occ is None
            else {
                "arch": occ.arch,
                "wave_size": occ.wave_size,
                "vgprs": occ.vgprs,
                "lds_bytes": occ.shape.lds_bytes,
                "workgroup_size": occ.shape.workgroup_size,
                "waves_per_simd": occ.waves_per_simd,
                "max_waves_per_simd": occ.max_waves_per_simd,
                "waves_per_cu": occ.waves_per_cu,
                "fraction": occ.fraction,
                "limiter": occ.limiter,
                "limits_workgroups_per_cu": occ.limits,
                "lift": occ.lift,
                "lift_value": occ.lift_value,
                "other_shapes": occ.other_shapes,
            },
            "achieved": None
            if got is None
            else {
                "waves_on_gpu": got.waves_on_gpu,
                "waves_per_cu": got.waves_per_cu,
                "occupancy_percent": got.occupancy_percent,
                "ratio_to_theoretical": got.ratio,
                "counters": list(got.counters),
            },
        }
    return {"metrics": {n: _metric(v) for n, v in k.values.items()}, "occupancy": occupancy}


def _ranks(view: RankView | None) -> dict[str, Any] | None:
    if view is None:
        return None
    return {
        "ranks": list(view.ranks),
        "labels": list(view.labels),
        "kernel_time_s": [t / 1e9 for t in view.totals_ns],
        "kernels": [
            {
                "name": k.kernel,
                "total_s": [t / 1e9 for t in k.totals_ns],
                "min_s": k.min_ns / 1e9,
                "median_s": k.median_ns / 1e9,
                "max_s": k.max_ns / 1e9,
                "cv": k.cv,
                "slowest_rank": k.slowest,
            }
            for k in view.kernels
        ],
        "stragglers": [
            {"rank": s.rank, "kernel_time_s": s.total_ns / 1e9, "kernels": list(s.kernels)}
            for s in view.stragglers
        ],
    }


def finding_dict(f: Finding) -> dict[str, Any]:
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


def group_dict(g: FindingGroup) -> dict[str, Any]:
    """One cause: the rule, its prescription, and the findings[] entries it folds."""
    return {
        "rule": g.rule,
        "kind": g.kind,
        "severity": g.severity,
        "prescription": g.prescription,
        "kernels": list(g.kernels),
        "findings": list(g.members),
        "gain_share": g.gain_share,
        "program_speedup_bound": g.program_speedup_bound,
        "formula": g.formula,
    }


def render_json(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
