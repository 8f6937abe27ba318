"""What the diagnosis knows about each hot kernel, gathered once from the profile."""

from __future__ import annotations

from dataclasses import dataclass

from roofscope.analysis.hotspots import KernelStats
from roofscope.analysis.limiter import Limiter
from roofscope.analysis.roofline import KernelRoofline
from roofscope.diagnosis.trust import RoofStanding
from roofscope.metrics.machine import Machine
from roofscope.metrics.per_kernel import KernelMetrics
from roofscope.model import Profile
from roofscope.work.assign import run_name_ids


@dataclass(frozen=True)
class KernelView:
    stats: KernelStats
    roof: KernelRoofline | None
    measured: KernelMetrics
    machine: Machine
    limiter: Limiter | None = None  # every measured unit as a share of its peak
    counter_rows: int = 0  # counter values stored for its dispatches
    activity_counters: int = 0  # values of counters no kernel that ran can leave at 0
    nonzero_activity: int = 0
    counter_run_calls: int | None = None  # its dispatches in counter runs of the program
    summary_mean_ns: float | None = None  # a summary file's own mean, min and max
    summary_min_ns: float | None = None
    summary_max_ns: float | None = None
    standing: RoofStanding | None = None  # above its roof: how far, against what (trust.py)


@dataclass(frozen=True)
class ProgramView:
    """Whole-program facts for program-level rules."""

    kernel_ns: float | None
    span_ns: int | None  # the devices' spans summed (the wall time on one device)
    idle_ns: int | None
    gaps: int | None
    gap_ns: int | None
    gap_threshold_ns: int | None
    dispatches: int
    copy_ns: float
    has_counters: bool
    communication_ns: float = 0.0  # in NCCL/RCCL kernels (part of kernel_ns)
    # the formats of the timeline's files whose dispatches carry counters: a counter-collection
    # run, whose idle time is the profiler's (serialised dispatches, counter reads)
    counter_run: str | None = None
    loader_idle_ns: int | None = None  # idle inside data-loader steps (analysis/input_wait.py)


# Counters that count for any kernel that ran at all: GPU-busy cycles, waves launched,
# instructions issued. All zero means the counters were not armed for the kernel.
ACTIVITY = ("GRBM_GUI_ACTIVE", "GRBM_COUNT", "SQ_WAVES", "SQ_BUSY_CYCLES", "SQ_WAVE_CYCLES",
            "SQ_CYCLES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "Wavefronts", "GPUBusy")  # fmt: skip


def kernel_facts(profile: Profile, kernels: list[str]) -> dict[str, dict[str, float | int | None]]:
    """A summary's own mean/min/max and the counter coverage of these kernels."""
    if not kernels:
        return {}
    con = profile.con
    names = "SELECT name_id FROM names WHERE kernel IN (SELECT unnest($1::VARCHAR[]))"
    out: dict[str, dict[str, float | int | None]] = {k: {} for k in kernels}
    summaries = con.execute(
        f"""SELECT n.kernel, max(mean_ns), min(min_ns), max(max_ns) FROM kernel_summary s
        JOIN names n USING (name_id) WHERE s.name_id IN ({names}) GROUP BY n.kernel""",
        [kernels],
    ).fetchall()
    for kernel, mean, low, high in summaries:
        out[str(kernel)].update(summary_mean_ns=mean, summary_min_ns=low, summary_max_ns=high)
    if profile.count("counters") == 0:
        return out
    in_runs = run_name_ids(profile, kernels)
    runs = profile.sources("counter-run")
    own: dict[str, list[int]] = {}
    query = f"SELECT kernel, name_id FROM names WHERE name_id IN ({names})"
    for k, i in con.execute(query, [kernels]).fetchall():
        own.setdefault(str(k), []).append(int(i))
    for kernel in kernels:
        facts = _counter_facts(profile, profile.sources("dispatches"), own.get(kernel, []))
        if kernel in in_runs:
            more = _counter_facts(profile, runs, in_runs[kernel])
            facts = {key: facts[key] + more[key] for key in facts}
            out[kernel]["counter_run_calls"] = more["dispatches"]
        del facts["dispatches"]
        out[kernel].update(facts)
    return out


def counter_collected(profile: Profile) -> str | None:
    """The formats of the dispatch files on the timeline whose dispatches carry counters
    (a rocprof-compute workload, rocprofv3 or rocprof v1 counter passes); None if none."""
    timed = [s for s in profile.sources("dispatches") if profile.inputs[s].on_timeline]
    if not timed or profile.count("counters") == 0:
        return None
    rows = profile.con.execute(
        f"""SELECT DISTINCT d.source FROM dispatches d
        WHERE d.source IN ({", ".join(map(str, timed))})
        AND EXISTS (SELECT 1 FROM counters c WHERE c.row_id = d.rowid)"""
    ).fetchall()
    return ", ".join(sorted({profile.inputs[int(s)].format for (s,) in rows})) or None


def _counter_facts(profile: Profile, sources: list[int], name_ids: list[int]) -> dict[str, int]:
    """Dispatches of these kernels in these sources, and their counter values."""
    if not sources or not name_ids:
        return dict.fromkeys(("dispatches", "counter_rows", "activity_counters",
                              "nonzero_activity"), 0)  # fmt: skip
    row = profile.con.execute(
        f"""SELECT count(DISTINCT d.rowid), count(c.value),
            count(c.value) FILTER (c.counter IN {ACTIVITY}),
            count(c.value) FILTER (c.counter IN {ACTIVITY} AND c.value <> 0)
        FROM dispatches d LEFT JOIN counters c ON c.row_id = d.rowid
        WHERE d.source IN ({", ".join(map(str, sources))})
        AND d.name_id IN ({", ".join(map(str, name_ids))})"""
    ).fetchone()
    keys = ("dispatches", "counter_rows", "activity_counters", "nonzero_activity")
    return dict(zip(keys, (int(v or 0) for v in (row or (0, 0, 0, 0))), strict=True))
