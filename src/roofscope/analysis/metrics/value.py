"""What the check-up reports of a derived counter metric, read by the limiter, the report and
the renderers without loading the formulas (:mod:`roofscope.analysis.metrics.derived`, over
counter columns): a profile without counters never loads those."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

# where an Nsight Compute metric comes from (analysis/metrics/nvidia.py): its own numbers
NCU_SOURCE = "Nsight Compute section files (docs/formats/nsight-compute.md, Metric labels)"

if TYPE_CHECKING:
    from roofscope.analysis.metrics.formula import Kind

ALL = -1  # key of the whole profile in the result of :func:`derived.metrics`


class CrossPass(msgspec.Struct, frozen=True):
    """A ratio whose counters were counted in different passes (separate replays of the
    dispatch, rocprof-compute 3.6+): each counter it reads with the pass file that counted it."""

    counters: tuple[tuple[str, str], ...]


class MetricValue(msgspec.Struct, frozen=True):
    unit: str
    kind: Kind
    value_dispatch_mean: float | None
    value_time_weighted: float | None  # ratio of sums (rate, ratio); duration-weighted (level)
    total: float | None  # amounts only
    peak: float | None
    pct_of_peak: float | None  # of value_dispatch_mean
    dispatches: int  # that entered the values
    left_out: int  # zero or unknown duration (rates), zero denominator (ratios)
    aggregation_differs: bool  # the two values differ by more than 1%
    source: str
    note: str | None = None  # why the value departs, by design, from another tool's
    peer: str | None = None  # the metric holding that tool's value, beside this one
    cross_pass: CrossPass | None = None  # a ratio of counts from two replays of the dispatch


# The labels of the NVIDIA pipes (metrics/nvidia.py's PIPES), as its metrics name them and the
# limiter labels their utilisation
PIPE_LABEL = {"alu": "ALU", "fma": "FMA", "fmaheavy": "FMA (heavy)", "fmalite": "FMA (lite)",
              "fp16": "FP16", "fp64": "FP64", "xu": "XU", "uniform": "Uniform", "cbu": "CBU",
              "adu": "ADU", "lsu": "LSU", "tex": "TEX", "shared": "Shared",
              "tensor": "Tensor", "tensor_op_hmma": "Tensor (HMMA)",
              "tensor_op_imma": "Tensor (IMMA)", "tensor_op_dmma": "Tensor (DMMA)",
              "tensor_op_gmma": "Tensor (GMMA)"}  # fmt: skip
