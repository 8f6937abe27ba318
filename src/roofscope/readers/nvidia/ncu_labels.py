"""The details page's human labels: (section, label) -> the raw metric each stands for, from
NVIDIA's section files (docs/formats/nsight-compute.md, "Metric labels"), and the counter name
of a row."""

from __future__ import annotations

DURATION = "gpu__time_duration.sum"

_SOL = "GPU Speed Of Light Throughput"
_MEM = "Memory Workload Analysis"
_LAUNCH = "Launch Statistics"
_OCC = "Occupancy"
_SCHED = "Scheduler Statistics"
_CWA = "Compute Workload Analysis"

LABELS: dict[tuple[str, str], str] = {
    (_SOL, "Duration"): DURATION,
    (_SOL, "Compute (SM) Throughput"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    (_SOL, "Memory Throughput"): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    (_SOL, "DRAM Throughput"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    (_SOL, "L1/TEX Cache Throughput"): "l1tex__throughput.avg.pct_of_peak_sustained_active",
    (_SOL, "L2 Cache Throughput"): "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    (_SOL, "Elapsed Cycles"): "gpc__cycles_elapsed.max",
    (_SOL, "SM Active Cycles"): "sm__cycles_active.avg",
    (_SOL, "SM Frequency"): "gpc__cycles_elapsed.avg.per_second",
    (_SOL, "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    (_MEM, "Memory Throughput"): "dram__bytes.sum.per_second",
    (_MEM, "Mem Busy"): "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",
    (_MEM, "Max Bandwidth"): "gpu__compute_memory_request_throughput.avg"
    ".pct_of_peak_sustained_elapsed",
    (_MEM, "Mem Pipes Busy"): "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed",
    (_MEM, "L1/TEX Hit Rate"): "l1tex__t_sector_hit_rate.pct",
    (_MEM, "L2 Hit Rate"): "lts__t_sector_hit_rate.pct",
    (_LAUNCH, "Grid Size"): "launch__grid_size",
    (_LAUNCH, "Block Size"): "launch__block_size",
    (_LAUNCH, "Threads"): "launch__thread_count",
    (_LAUNCH, "Registers Per Thread"): "launch__registers_per_thread",
    (_LAUNCH, "Static Shared Memory Per Block"): "launch__shared_mem_per_block_static",
    (_LAUNCH, "Dynamic Shared Memory Per Block"): "launch__shared_mem_per_block_dynamic",
    (_LAUNCH, "Driver Shared Memory Per Block"): "launch__shared_mem_per_block_driver",
    (_LAUNCH, "Shared Memory Configuration Size"): "launch__shared_mem_config_size",
    (_LAUNCH, "Waves Per SM"): "launch__waves_per_multiprocessor",
    (_LAUNCH, "Stack Size"): "launch__stack_size",
    (_LAUNCH, "Cluster Size"): "launch__cluster_size",
    (_LAUNCH, "# SMs"): "launch__sm_count",
    (_LAUNCH, "# TPCs"): "launch__tpc_count",
    (_LAUNCH, "Uses Green Context"): "launch__uses_green_context",
    (_OCC, "Achieved Occupancy"): "sm__warps_active.avg.pct_of_peak_sustained_active",
    (_OCC, "Achieved Active Warps Per SM"): "sm__warps_active.avg.per_cycle_active",
    (_OCC, "Theoretical Occupancy"): "sm__maximum_warps_per_active_cycle_pct",
    (_OCC, "Theoretical Active Warps per SM"): "sm__maximum_warps_avg_per_active_cycle",
    (_OCC, "Block Limit Registers"): "launch__occupancy_limit_registers",
    (_OCC, "Block Limit Shared Mem"): "launch__occupancy_limit_shared_mem",
    (_OCC, "Block Limit Warps"): "launch__occupancy_limit_warps",
    (_OCC, "Block Limit SM"): "launch__occupancy_limit_blocks",
    (_OCC, "Block Limit Barriers"): "launch__occupancy_limit_barriers",
    (_OCC, "Cluster Occupancy"): "launch__occupancy_cluster_pct",
    (_OCC, "Max Active Clusters"): "launch__cluster_max_active",
    (_OCC, "Max Cluster Size"): "launch__cluster_max_potential_size",
    (_OCC, "Overall GPU Occupancy"): "launch__occupancy_cluster_gpu_pct",
    (_SCHED, "One or More Eligible"): "smsp__issue_active.avg.pct_of_peak_sustained_active",
    (_CWA, "SM Busy"): "sm__instruction_throughput.avg.pct_of_peak_sustained_active",
    (_SCHED, "No Eligible"): "smsp__issue_inst0.avg.pct_of_peak_sustained_active",
    (_SCHED, "Issued Warp Per Scheduler"): "smsp__issue_active.avg.per_cycle_active",
    (_SCHED, "Eligible Warps Per Scheduler"): "smsp__warps_eligible.avg.per_cycle_active",
    (_SCHED, "Active Warps Per Scheduler"): "smsp__warps_active.avg.per_cycle_active",
}
# the Launch Statistics section repeats the occupancy it shows with the same labels
LABELS |= {(_LAUNCH, label): m for (s, label), m in LABELS.items() if s == _OCC}


def metric_key(section: str, body: str, label: str) -> str:
    """The counter name of a details row: the raw metric name, the metric a section label
    stands for, else ``<section>/[<body item>/]<label>``."""
    if "__" in label and " " not in label:
        return label
    if not body and (mapped := LABELS.get((section, label))):
        return mapped
    return "/".join(p for p in (section, body, label) if p)
