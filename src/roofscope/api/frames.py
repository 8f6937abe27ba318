"""pandas tables from the typed results, in the JSON's SI units (tests/test_api_corpus.py
holds every corpus profile's table to its ``--json`` document): one row per kernel of a
report, one per kernel change of a comparison. pandas is imported only here, when a table is
asked for (``pip install 'roofscope[notebook]'``)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from roofscope.render.compare.words import across_gpus_text
from roofscope.render.numbers import seconds

if TYPE_CHECKING:
    from pandas import DataFrame

    from roofscope.analysis.hotspots import KernelStats
    from roofscope.analysis.limiter import Limiter
    from roofscope.analysis.roofline import KernelRoofline
    from roofscope.report import Report
    from roofscope.verify.compare import Comparison, KernelChange
    from roofscope.verify.levels import CategoryChange, OperatorChange
    from roofscope.verify.spread import Interval

EXTRA = "notebook"
KERNEL_COLUMNS = ("name", "calls", "total_s", "mean_s", "median_s", "min_s", "max_s", "std_s",
                  "share", "cumulative_share")  # fmt: skip
ROOF_COLUMNS = ("bound", "efficiency", "achieved_flops_s", "attainable_flops_s", "ceiling")
# the columns that are not numbers (or None): every other one is float64, None as NaN
OTHER = {"name", "full_name", "calls", "hotspot", "limiter", "bound", "ceiling", "base_name",
         "new_name", "matched_by", "beyond_noise", "category", "input_dims", "input_types",
         "side"}  # fmt: skip


def pandas(method: str) -> ModuleType:
    """The pandas module, or an ImportError that names the extra which brings it."""
    try:
        return importlib.import_module("pandas")
    except ImportError as exc:
        raise ImportError(
            f"{method} needs pandas, which roofscope installs as an extra: "
            f"pip install 'roofscope[{EXTRA}]'"
        ) from exc


def kernel_frame(report: Report) -> DataFrame:
    """One row per kernel of a check-up, most time first: built from its typed parts (the
    hotspots table, each kernel's roofline and limiter), in the JSON's SI units."""
    roof = {k.name: k for k in report.roofline.result.kernels}
    rows = [_kernel_row(k, roof.get(k.name), report.limiters.get(k.name)) for k in
            report.hotspots.kernels]  # fmt: skip
    name, *stats = KERNEL_COLUMNS
    columns = [name, "full_name", *stats, "hotspot", "limiter", "limiter_pct", *ROOF_COLUMNS]
    return _frame("Report.to_pandas()", rows, columns)


def _kernel_row(
    k: KernelStats, roof: KernelRoofline | None, limiter: Limiter | None
) -> dict[str, Any]:
    times = {"total": k.total_ns, "mean": k.mean_ns, "median": k.median_ns, "min": k.min_ns,
             "max": k.max_ns, "std": k.std_ns}  # fmt: skip
    row: dict[str, Any] = {"name": k.name, "full_name": "; ".join(k.raw_names), "calls": k.calls}
    row |= {f"{t}_s": seconds(ns) for t, ns in times.items()}
    row |= {"share": k.share, "cumulative_share": k.cumulative_share, "hotspot": k.hot}
    busiest = None if limiter is None else limiter.busiest
    row["limiter"] = None if busiest is None else busiest.unit
    row["limiter_pct"] = None if busiest is None else busiest.pct_of_peak
    return row | _roof_cells(roof)


def _roof_cells(roof: KernelRoofline | None) -> dict[str, Any]:
    """The kernel's place on the roofline; its intensity and bytes/s per memory level."""
    if roof is None:
        return dict.fromkeys(ROOF_COLUMNS)
    cells: dict[str, Any] = {
        "bound": None if roof.bound is None else str(roof.bound),
        "efficiency": roof.efficiency,
        "achieved_flops_s": roof.achieved_flops_s,
        "attainable_flops_s": roof.attainable_flops_s,
        "ceiling": roof.ceiling,
    }
    cells |= {f"intensity_{level}": v for level, v in roof.intensity.items()}
    return cells | {f"achieved_bytes_s_{lv}": v for lv, v in roof.achieved_bytes_s.items()}


def change_frame(comparison: Comparison) -> DataFrame:
    """One row per kernel change of a comparison (biggest change first); the added and
    removed kernels too, their ``matched_by`` saying so. Where the two sides ran on different
    GPUs, the table's ``attrs["note"]`` says so in compare's words (else None)."""
    rows = [_change_row(k) for k in comparison.kernels]
    columns = ["name", "base_name", "new_name", "matched_by", "base_s", "new_s", "speedup",
               "low", "high", "beyond_noise", "share_of_change", "delta_s"]  # fmt: skip
    frame = _frame("Comparison.to_pandas()", rows, columns)
    frame.attrs["note"] = across_gpus_text(comparison)
    return frame


def _change_row(k: KernelChange) -> dict[str, Any]:
    interval = k.interval
    return {
        "name": k.name,
        "base_name": k.base,
        "new_name": k.new,
        "matched_by": k.how,
        "base_s": k.total_ns[0] / 1e9,
        "new_s": k.total_ns[1] / 1e9,
        "speedup": k.speedup,
        "low": None if interval is None else interval.low,
        "high": None if interval is None else interval.high,
        "beyond_noise": None if interval is None else interval.beyond_noise,
        "share_of_change": k.attribution,
        "delta_s": k.delta_ns / 1e9,
    }


LEVEL_COLUMNS = ("base_calls", "new_calls", "base_s", "new_s", "speedup", "low", "high",
                 "beyond_noise")  # fmt: skip


def category_frame(comparison: Comparison) -> DataFrame:
    """One row per kernel category either side has (most base time first)."""
    rows = [{"category": c.category.value, **_level(c)} for c in comparison.categories]
    return _frame("Comparison.to_pandas(level='categories')", rows, ["category", *LEVEL_COLUMNS])


def operator_frame(comparison: Comparison) -> DataFrame:
    """One row per operator signature (both PyTorch traces): ``side`` is ``both`` for a
    matched one, else ``base`` or ``new``; empty where a side has no operators."""
    ops = comparison.operators
    groups = (
        () if ops is None else (("both", ops.matched), ("base", ops.removed), ("new", ops.added))
    )
    rows = [_operator_row(o, side) for side, items in groups for o in items]
    columns = ["name", "input_dims", "input_types", "side", *LEVEL_COLUMNS]
    return _frame("Comparison.to_pandas(level='operators')", rows, columns)


def _operator_row(o: OperatorChange, side: str) -> dict[str, Any]:
    return {"name": o.name, "input_dims": o.dims, "input_types": o.types, "side": side, **_level(o)}


def _level(c: CategoryChange | OperatorChange) -> dict[str, Any]:
    return {
        "base_calls": c.calls[0],
        "new_calls": c.calls[1],
        "base_s": c.total_ns[0] / 1e9,
        "new_s": c.total_ns[1] / 1e9,
        "speedup": c.speedup,
        **_spread(c.interval),
    }


def _spread(interval: Interval | None) -> dict[str, Any]:
    return {
        "low": None if interval is None else interval.low,
        "high": None if interval is None else interval.high,
        "beyond_noise": None if interval is None else interval.beyond_noise,
    }


def _frame(method: str, rows: list[dict[str, Any]], columns: Iterable[str]) -> DataFrame:
    """The rows as a table; the per-level columns (intensity, bytes/s) after the fixed ones,
    in the order they first appear; numbers as float64 (None as NaN)."""
    pd = pandas(method)
    fixed = list(columns)
    extra = list(dict.fromkeys(c for row in rows for c in row if c not in fixed))
    frame: DataFrame = pd.DataFrame(rows, columns=[*fixed, *extra])
    floats = [c for c in frame.columns if c not in OTHER]
    frame[floats] = frame[floats].astype("float64")
    if "beyond_noise" in frame:
        frame["beyond_noise"] = frame["beyond_noise"].astype("boolean")  # None: spread unknown
    return frame
