"""pandas tables from the JSON documents, so that a table and ``--json`` cannot disagree:
one row per kernel of a report, one per kernel change of a comparison. pandas is imported
only here, when a table is asked for (``pip install 'roofscope[notebook]'``)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pandas import DataFrame

EXTRA = "notebook"
KERNEL_COLUMNS = ("name", "calls", "total_s", "mean_s", "median_s", "min_s", "max_s", "std_s",
                  "share", "cumulative_share")  # fmt: skip
ROOF_COLUMNS = ("bound", "efficiency", "achieved_flops_s", "attainable_flops_s", "ceiling")
# the columns that are not numbers (or None): every other one is float64, None as NaN
OTHER = {"name", "full_name", "calls", "hotspot", "limiter", "bound", "ceiling", "base_name",
         "new_name", "matched_by", "beyond_noise"}  # fmt: skip


def pandas(method: str) -> ModuleType:
    """The pandas module, or an ImportError that names the extra which brings it."""
    try:
        return importlib.import_module("pandas")
    except ImportError as exc:
        raise ImportError(
            f"{method} needs pandas, which roofscope installs as an extra: "
            f"pip install 'roofscope[{EXTRA}]'"
        ) from exc


def kernel_frame(doc: dict[str, Any]) -> DataFrame:
    """One row per kernel of an ``analyze`` document, in its order (most time first)."""
    rows = [_kernel_row(k) for k in doc["kernels"]]
    name, *stats = KERNEL_COLUMNS
    columns = [name, "full_name", *stats, "hotspot", "limiter", "limiter_pct", *ROOF_COLUMNS]
    return _frame("Report.to_pandas()", rows, columns)


def _kernel_row(k: dict[str, Any]) -> dict[str, Any]:
    roof, limiter = k["roofline"] or {}, k["limiter"]
    busiest = limiter["busiest"] if limiter else {}
    row = {c: k[c] for c in KERNEL_COLUMNS}
    row |= {"full_name": "; ".join(k["raw_names"]), "hotspot": k["hotspot"]}
    row |= {"limiter": busiest.get("unit"), "limiter_pct": busiest.get("pct_of_peak")}
    row |= {c: roof.get(c) for c in ROOF_COLUMNS}
    row |= {f"intensity_{level}": v for level, v in (roof.get("ai") or {}).items()}
    row |= {f"achieved_bytes_s_{lv}": v for lv, v in (roof.get("achieved_bytes_s") or {}).items()}
    return row


def change_frame(doc: dict[str, Any]) -> DataFrame:
    """One row per kernel change of a ``compare`` document (biggest change first); the added
    and removed kernels too, their ``matched_by`` saying so."""
    rows = [_change_row(k) for k in doc["kernels"]]
    columns = ["name", "base_name", "new_name", "matched_by", "base_s", "new_s", "speedup",
               "low", "high", "beyond_noise", "share_of_change", "delta_s"]  # fmt: skip
    return _frame("Comparison.to_pandas()", rows, columns)


def _change_row(k: dict[str, Any]) -> dict[str, Any]:
    interval = k["interval"] or {}
    return {
        "name": k["base_name"] if k["base_name"] is not None else k["new_name"],
        "base_name": k["base_name"],
        "new_name": k["new_name"],
        "matched_by": k["matched_by"],
        "base_s": k["total_s"][0],
        "new_s": k["total_s"][1],
        "speedup": k["speedup"],
        "low": interval.get("low"),
        "high": interval.get("high"),
        "beyond_noise": interval.get("beyond_noise"),
        "share_of_change": k["attribution"],
        "delta_s": k["delta_s"],
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
