"""What the diagnosis knows about each hot kernel, gathered once from the profile."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from roofscope.analysis.hotspots import KernelStats
from roofscope.analysis.input_wait import LaunchSyncs
from roofscope.analysis.launch import LaunchShape
from roofscope.analysis.limiter import Limiter
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.metrics.per_kernel import KernelMetrics
from roofscope.analysis.ranks import RankView
from roofscope.analysis.roofline import KernelRoofline
from roofscope.analysis.work.assign import run_name_ids
from roofscope.diagnosis.trust import RoofStanding
from roofscope.model.access import (
    Relation,
    all_summaries,
    count,
    counter_values,
    graph_launches,
    graph_replayed,
    has_counters,
    has_graph_launches,
    has_summaries,
    names,
    query,
)
from roofscope.model.profile import Profile
from roofscope.model.relation import among
from roofscope.model.schema import Role
from roofscope.model.selection import dispatches


class KernelFacts(msgspec.Struct, frozen=True):
    """What the profile's tables say of one kernel beyond its statistics: a summary file's own
    mean, min and max, and how its dispatches are covered by counters."""

    counter_rows: int = 0  # counter values stored for its dispatches
    activity_counters: int = 0  # values of counters no kernel that ran can leave at 0
    nonzero_activity: int = 0
    # its dispatches in each counter run of the program (one file per run), in source order
    counter_run_calls: tuple[int, ...] = ()
    summary_mean_ns: float | None = None
    summary_min_ns: float | None = None
    summary_max_ns: float | None = None


class KernelView(msgspec.Struct, frozen=True):
    """Everything a kernel rule or validity check may read about one kernel."""

    stats: KernelStats
    roof: KernelRoofline | None
    measured: KernelMetrics
    machine: Machine
    limiter: Limiter | None = None  # every measured unit as a share of its peak
    facts: KernelFacts = KernelFacts()
    standing: RoofStanding | None = None  # above its roof: how far, against what (trust.py)
    has_counters: bool = False  # the profile has counters (for some kernel)
    device: str | None = None  # the GPU the ceilings are of, as the report names it
    launch: LaunchShape | None = None  # its largest grid (analysis/launch.py)
    producer_small: str | None = None  # the profiler's rule text calling its grid too small


class GraphFacts(msgspec.Struct, frozen=True):
    """The CUDA/HIP graph launches of the trace and the dispatches they replayed."""

    launches: int  # graph launches (cudaGraphLaunch, hipGraphLaunch) in the trace
    empty: int  # of them, with no kernel in the trace carrying their correlation id
    dispatches: int  # the selected dispatches a graph launch replayed
    short_dispatches: int  # of them, those under the short-kernel threshold


class ProgramView(msgspec.Struct, frozen=True):
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
    short_dispatches: int = 0  # dispatches under SHORT_NS (rules.py), summaries' lower bound in
    short_from_summary: int = 0  # of them, counted from summaries (diagnose.surely_short)
    ranks: RankView | None = None  # the per-rank view of a many-process profile
    # the formats of the timeline's files whose dispatches carry counters: a counter-collection
    # run, whose idle time is the profiler's (serialised dispatches, counter reads)
    counter_run: str | None = None
    loader_idle_ns: int | None = None  # idle inside data-loader steps (analysis/input_wait.py)
    graphs: GraphFacts | None = None  # None when the trace holds no graph launch
    sync_idle_ns: int | None = None  # idle inside blocking runtime calls (analysis/input_wait.py)
    compile_idle_ns: int | None = None  # idle inside JIT compilation (analysis/input_wait.py)
    launch_syncs: LaunchSyncs | None = None  # launches then a sync (analysis/input_wait.py)


# Counters that count for any kernel that ran at all: GPU-busy cycles, waves launched,
# instructions issued. All zero means the counters were not armed for the kernel.
ACTIVITY = ("GRBM_GUI_ACTIVE", "GRBM_COUNT", "SQ_WAVES", "SQ_BUSY_CYCLES", "SQ_WAVE_CYCLES",
            "SQ_CYCLES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "Wavefronts", "GPUBusy")  # fmt: skip


def kernel_facts(profile: Profile, kernels: list[str]) -> dict[str, KernelFacts]:
    """A summary's own mean/min/max and the counter coverage of these kernels."""
    if not kernels:
        return {}
    summarised = has_summaries(profile)
    if not summarised and not has_counters(profile):  # a trace: nothing to ask
        summaries, counted = {}, {}
    else:
        wanted = _kernels_named(profile, kernels)
        summaries = _summary_times(profile, wanted) if summarised else {}
        counted = _coverage(profile, kernels, wanted) if has_counters(profile) else {}
    out = {}
    for kernel in kernels:
        mean, low, high = summaries.get(kernel, (None, None, None))
        rows, activity, nonzero, in_runs = counted.get(kernel, (0, 0, 0, ()))
        out[kernel] = KernelFacts(rows, activity, nonzero, in_runs, mean, low, high)
    return out


def _summary_times(
    profile: Profile, wanted: Iterable[int]
) -> dict[str, tuple[float | None, float | None, float | None]]:
    """A summary's own mean/min/max of each kernel of these name ids."""
    rows = query(
        profile,
        all_summaries(profile),
        """SELECT n.kernel, max(mean_ns), min(min_ns), max(max_ns) FROM d
        JOIN n USING (name_id) WHERE name_id IN (SELECT unnest($1::INTEGER[]))
        GROUP BY n.kernel""",
        [list(wanted)],
        n=names(profile),
    ).fetchall()
    return {str(kernel): (mean, low, high) for kernel, mean, low, high in rows}


def graph_facts(profile: Profile, selected: Relation, short: Relation) -> GraphFacts | None:
    """The graph launches and, of the ``selected`` and ``short`` dispatches, those a graph
    launch replayed; None when the trace holds no graph launch."""
    if not has_graph_launches(profile):  # spares counting every dispatch (0.46 s at 2 M)
        return None
    ((launches, empty),) = query(
        profile, graph_launches(profile), "SELECT count(*), count(*) FILTER (kernels = 0) FROM d"
    ).fetchall()
    if not launches:
        return None
    replayed = count(profile, graph_replayed(profile, selected))
    return GraphFacts(
        int(launches), int(empty), replayed, count(profile, graph_replayed(profile, short))
    )


def _kernels_named(profile: Profile, kernels: list[str]) -> dict[int, str]:
    """The name ids whose normalised name is one of ``kernels``, with that name."""
    rows = query(
        profile,
        names(profile),
        "SELECT name_id, kernel FROM d WHERE kernel IN (SELECT unnest($1::VARCHAR[]))",
        [kernels],
    )
    return {int(i): str(k) for i, k in rows.fetchall()}


def _coverage(
    profile: Profile, kernels: list[str], wanted: dict[int, str]
) -> dict[str, tuple[int, int, int, tuple[int, ...]]]:
    """Per kernel: its counter values, activity counter values and non-zero ones, over its
    dispatches and those of the counter runs; and its dispatches in each counter run. Grouped
    queries over the trace and over the counter runs, whatever the kernels."""
    in_runs = run_name_ids(profile, kernels)
    sources = profile.sources(Role.COUNTER_RUN)
    pairs = [(i, kernel) for kernel, ids in in_runs.items() for i in ids]
    own = kernel_counter_facts(profile, profile.sources(Role.DISPATCHES), list(wanted.items()))
    runs = kernel_counter_facts(profile, sources, pairs)
    per_run = run_calls(profile, sources, pairs)
    out = {}
    for kernel in kernels:
        _, rows, activity, nonzero = own.get(kernel, NO_FACTS)
        calls: tuple[int, ...] = ()
        if kernel in in_runs:
            calls = per_run.get(kernel, ())
            _, more_rows, more_activity, more_nonzero = runs.get(kernel, NO_FACTS)
            rows, activity, nonzero = (
                rows + more_rows,
                activity + more_activity,
                nonzero + more_nonzero,
            )
        out[kernel] = (rows, activity, nonzero, calls)
    return out


def run_calls(
    profile: Profile, sources: Sequence[int], kernels: Sequence[tuple[int, str]]
) -> dict[str, tuple[int, ...]]:
    """Each kernel's dispatches in each of these runs that saw it, in source order: every
    counter run (rocprof v1's one file per input file, rocprof-compute's pmc_perf_N.csv) is
    its own run of the program, so its dispatches are compared with the trace's one run by
    one, never summed (two passes of 100 calls are not 200)."""
    if not sources or not kernels:
        return {}
    rows = query(
        profile,
        dispatches(profile, sources=sources),
        """SELECT g.kernel, d.source, count(*) FROM d
        JOIN (SELECT unnest($1::INTEGER[]) AS name_id, unnest($2::VARCHAR[]) AS kernel) g
        USING (name_id) GROUP BY g.kernel, d.source ORDER BY g.kernel, d.source""",
        [[i for i, _ in kernels], [k for _, k in kernels]],
    ).fetchall()
    out: dict[str, tuple[int, ...]] = {}
    for kernel, _, n in rows:
        out[str(kernel)] = (*out.get(str(kernel), ()), int(n))
    return out


def counter_collected(profile: Profile) -> str | None:
    """The formats of the dispatch files on the timeline whose dispatches carry counters
    (a rocprof-compute workload, rocprofv3 or rocprof v1 counter passes); None if none."""
    timed = [s for s in profile.sources(Role.DISPATCHES) if profile.inputs[s].on_timeline]
    if not timed or not has_counters(profile):
        return None
    found = query(
        profile,
        dispatches(profile, sources=timed),
        "SELECT DISTINCT source FROM d WHERE row_id IN (SELECT row_id FROM c)",
        c=counter_values(profile),
    ).fetchall()
    return ", ".join(sorted({profile.inputs[int(s)].format for (s,) in found})) or None


def counter_facts(
    profile: Profile,
    sources: Sequence[int],
    name_ids: list[int],
    activity: Sequence[str] = ACTIVITY,
) -> tuple[int, int, int, int]:
    """Dispatches of these kernels in these sources, their counter values, the values of
    ``activity`` counters and the non-zero ones among those."""
    found = kernel_counter_facts(profile, sources, [(i, "") for i in name_ids], activity)
    return found.get("", NO_FACTS)


NO_FACTS = (0, 0, 0, 0)


def kernel_counter_facts(
    profile: Profile,
    sources: Sequence[int],
    kernels: Sequence[tuple[int, str]],
    activity: Sequence[str] = ACTIVITY,
) -> dict[str, tuple[int, int, int, int]]:
    """:func:`counter_facts` of each kernel over its name ids, ``kernels`` giving (name id,
    kernel) pairs, in one query (a kernel without dispatches there is left out)."""
    if not sources or not kernels:
        return {}
    # the activity counters by id: no join of every value to its name
    active = among("counter_id", profile.known_counter_ids(activity))
    values = counter_values(profile).project(f"row_id, value, {active} AS active")
    rows = query(
        profile,
        dispatches(profile, sources=sources),
        # the values counted per dispatch first, then summed per kernel: each dispatch one
        # row of the join, where a join to every value counted the dispatches DISTINCT
        # (7.7 against 3.8 ms on a 3-dispatch workload of 2,967 values)
        """SELECT g.kernel, count(*), coalesce(sum(c.n), 0), coalesce(sum(c.a), 0),
            coalesce(sum(c.z), 0)
        FROM d JOIN (SELECT unnest($1::INTEGER[]) AS name_id, unnest($2::VARCHAR[]) AS kernel) g
        USING (name_id)
        LEFT JOIN (SELECT row_id, count(value) AS n, count(value) FILTER (active) AS a,
                count(value) FILTER (active AND value <> 0) AS z
            FROM c GROUP BY row_id) c ON c.row_id = d.row_id
        GROUP BY g.kernel""",
        [[i for i, _ in kernels], [k for _, k in kernels]],
        c=values,
    ).fetchall()
    return {str(k): (int(n), int(v), int(a), int(z)) for k, n, v, a, z in rows}
