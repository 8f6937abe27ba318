"""Nsight Compute metrics (docs/formats/nsight-compute.md, "Metric labels") under the names
the diagnosis rules read, for NVIDIA architectures (``sm_*``).

ncu reports these already aggregated per launch, as percentages of a peak or as rates; they
enter as ``level`` metrics (the value of each dispatch, averaged over dispatches and weighted
by duration), except the DRAM bandwidth, which is recomputed from the bytes and the duration.
Where the AMD catalogue has a metric of the same meaning, the name is shared ("L2 Cache Hit
Rate" is what fraction of L2 sector lookups hit on both), so the same rule applies; the others
carry ncu's own labels.
"""

from __future__ import annotations

from roofscope.analysis.counters import Array, Counters
from roofscope.analysis.metrics.formula import Kind, Metric, Parts, Side, rate
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.metrics.value import NCU_SOURCE, PIPE_LABEL

NVIDIA = ("sm_*",)
SOURCE = NCU_SOURCE


def _level(name: str, unit: str, metric: str, kind: Kind = "level") -> Metric:
    """A value ncu reports per launch, taken as it is."""
    return Metric(
        name, unit, kind, NVIDIA, SOURCE, metric, lambda c, m, d: Parts(c[metric], d),
    )  # fmt: skip


def _dram_bytes(c: Counters, m: Machine) -> Array:
    if "dram__bytes.sum" in c:
        return c["dram__bytes.sum"]
    return c["dram__bytes_read.sum"] + c["dram__bytes_write.sum"]


_DRAM: Side = _dram_bytes

# The pipes of the Compute Workload Analysis section's pipe-utilisation chart, each as the share
# of its peak instruction rate (``sm__inst_executed_pipe_<p>``) or of its cycles
# (``sm__pipe_<p>_cycles_active``), both ``.avg.pct_of_peak_sustained_active``.
PIPES = ("alu", "fma", "fmaheavy", "fmalite", "fp16", "fp64", "xu", "uniform", "cbu", "adu",
         "lsu", "tex", "shared", "tensor", "tensor_op_hmma", "tensor_op_imma", "tensor_op_dmma",
         "tensor_op_gmma")  # fmt: skip


def _pipes() -> list[Metric]:
    """Each pipe's share of its peak instruction rate and of its cycles."""
    metric = "{}.avg.pct_of_peak_sustained_active"
    return [
        m
        for p in PIPES
        for m in (
            _level(f"{PIPE_LABEL[p]} Pipe Instructions", "%",
                   metric.format(f"sm__inst_executed_pipe_{p}")),
            _level(f"{PIPE_LABEL[p]} Pipe Cycles Active", "%",
                   metric.format(f"sm__pipe_{p}_cycles_active")),
        )
    ]  # fmt: skip


PIPE_METRICS = tuple(m.name for m in _pipes())

NCU: list[Metric] = [
    _level("L2 Cache Hit Rate", "%", "lts__t_sector_hit_rate.pct"),
    _level("L1/TEX Hit Rate", "%", "l1tex__t_sector_hit_rate.pct"),
    _level("Achieved Occupancy", "%", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    _level("Theoretical Occupancy", "%", "sm__maximum_warps_per_active_cycle_pct"),
    _level("Compute (SM) Throughput", "%", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    _level(
        "Memory Throughput",
        "%",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    _level("DRAM Throughput", "%", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
    _level("Issue Slots Busy", "%", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
    _level("SM Busy", "%", "sm__instruction_throughput.avg.pct_of_peak_sustained_active"),
    _level("L1/TEX Cache Throughput", "%", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
    _level("L2 Cache Throughput", "%", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    *_pipes(),
    rate(
        "DRAM Bandwidth",
        "GB/s",
        NVIDIA,
        SOURCE,
        "dram__bytes.sum (or read + write) / gpu__time_duration.sum",
        _DRAM,
    ),
]
