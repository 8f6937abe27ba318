"""Data-validity checks, run on each hot kernel before any verdict about its bottleneck.

A kernel that fails one gets that finding instead of a bottleneck verdict: a diagnosis
built on a wrong number is worse than none. ``single-dispatch`` and ``warm-up`` are caveats
(the numbers are right but thin or skewed): they are reported beside the verdict. Thresholds
and their reasons:

- ``no-time``: every dispatch of the kernel takes 0 ns: timestamps lost or damaged.
- ``above-roof``: efficiency > 1 (+1e-9) against a ceiling that states the peak (catalogue,
  ``--peak-*``), beyond 110 % of a measured one, or above the catalogue's theoretical peak:
  no kernel beats the hardware, so the GPU, the ceilings' scope (one XCD/GCD vs the whole
  chip, partition mode) or the work is wrong. Up to 110 % of a measured ceiling (a
  benchmark's lower bound) it is the caveat ``at-measured-roof`` instead (trust.py).
- ``metric-above-peak``: a counter metric above 101 % of its peak (the peak is rounded):
  the same causes as ``above-roof``, or counters and times from different runs.
- ``average-outside-range``: a summary's mean below its min or above its max: arithmetic
  says the file is damaged or its columns are mislabelled.
- ``counters-missing`` / ``counters-all-zero``: the profile has counters, but none for this
  kernel (a pass filtered it out), or its busy-cycle, wave and instruction counters (which
  count for any kernel that ran) are all 0: the counters were not armed. Counters that a
  kernel may rightly leave at 0 (LDS bank conflicts of a kernel without LDS) do not count.
- ``pass-dispatch-mismatch``: a counter run saw the kernel a different number of times
  than the trace: the per-call work is scaled, but passes may have seen different inputs.
  Each run (one file) is compared on its own: two passes of 100 calls each are 100, not 200.
- ``single-dispatch``: one dispatch is one sample: its time includes any cold start and has
  no spread (MIN_DISPATCHES = 2).
- ``warm-up``: the first dispatch took more than WARMUP_RATIO = 2x the mean of the others:
  code-object load, first-touch page faults or clock ramp inflate the mean. A caveat,
  unless the first dispatch holds more than WARMUP_HOLDS = half the kernel's time
  (``warm-up-dominates``): then any verdict would describe the warm-up, not the kernel.
"""

from __future__ import annotations

from roofscope.diagnosis.evidence import KernelView
from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.trust import roof_finding

# Caveats: the data is right but thin; the verdict is still given, with the caveat beside it.
CAVEATS = frozenset({"single-dispatch", "warm-up", "at-measured-roof"})
MIN_DISPATCHES = 2
PEAK_TOLERANCE = 0.01  # a metric's peak is itself rounded; 1 % above is still noise
WARMUP_RATIO = 2.0
WARMUP_HOLDS = 0.5  # beyond this share of the kernel's time the first call decides any verdict


def no_time(k: KernelView) -> Finding | None:
    s = k.stats
    if s.total_ns is None or s.total_ns > 0 or s.calls <= 0:
        return None
    return Finding(
        "no-time",
        s.name,
        "validity",
        "high",
        f"its {s.calls} dispatch{'' if s.calls == 1 else 'es'} "
        f"take{'s' if s.calls == 1 else ''} 0 ns (Begin equals End): no rate, efficiency "
        "or bound can be computed",
        "the timestamps were lost (a file re-saved by a tool that rounds or drops "
        "them); use the profiler's original output, or its timestamps.csv pass",
        {"calls": s.calls, "total_ns": s.total_ns},
    )


def roof_standing(k: KernelView) -> Finding | None:
    """Above its roof: at a measured one, or beyond (trust.py)."""
    if k.standing is None:
        return None
    served = k.roof is not None and k.roof.cache_served
    return roof_finding(k.stats.name, k.standing, k.device, derived=served)


def average_outside_range(k: KernelView) -> Finding | None:
    mean, low, high = k.facts.summary_mean_ns, k.facts.summary_min_ns, k.facts.summary_max_ns
    if mean is None or low is None or high is None:
        return None
    if low <= mean * (1 + 1e-9) and mean <= high * (1 + 1e-9):
        return None
    return Finding(
        "average-outside-range",
        k.stats.name,
        "validity",
        "high",
        f"the summary's mean {mean:.0f} ns lies outside its [min {low:.0f}, max {high:.0f}]",
        "the summary is damaged or its columns mislabelled; analyse the trace instead",
        {"mean_ns": mean, "min_ns": low, "max_ns": high},
    )


def counters_missing(k: KernelView) -> Finding | None:
    f = k.facts
    if k.has_counters and f.counter_rows == 0:
        return Finding(
            "counters-missing",
            k.stats.name,
            "validity",
            "medium",
            "the profile has counters, but none for this kernel",
            "re-run the counter passes without a --kernel/--dispatch filter that drops it",
            {"counter_values": 0},
        )
    if not (k.has_counters and f.activity_counters and f.nonzero_activity == 0):
        return None
    return Finding(
        "counters-all-zero",
        k.stats.name,
        "validity",
        "high",
        f"its {f.activity_counters} busy-cycle, wave and instruction counter values "
        "are all 0, though it ran",
        "the counters were not armed for it (a driver or profiler fault); re-profile",
        {"activity_values": f.activity_counters, "nonzero": 0},
    )


def pass_dispatch_mismatch(k: KernelView) -> Finding | None:
    """A counter run (each its own run of the program) that saw the kernel a different
    number of times than the trace; runs are compared one by one, never summed."""
    traced = k.stats.calls
    differ = [n for n in k.facts.counter_run_calls if n != traced]
    if not differ:
        return None
    saw = _counts(k.facts.counter_run_calls)
    return Finding(
        "pass-dispatch-mismatch",
        k.stats.name,
        "validity",
        "medium",
        f"the counter runs saw {saw} dispatch{'' if saw == '1' else 'es'}, the trace {traced}",
        "profile counters and timing in one run of the same input, or check that "
        "every pass ran the same iterations",
        {"counter_run_calls": differ[0], "trace_calls": traced, "counter_runs": saw},
    )


def _counts(calls: tuple[int, ...]) -> str:
    """Each run's dispatches, "100 and 99" (one number when they agree)."""
    distinct = list(dict.fromkeys(calls))
    return " and ".join(str(n) for n in distinct) if len(distinct) > 1 else str(distinct[0])


def metric_above_peak(k: KernelView) -> list[Finding]:
    """Every metric of roofscope's own above its peak (another tool's way of computing one,
    shown beside it, is not roofscope's evidence)."""
    others = {v.peer for v in k.measured.values.values() if v.peer}
    out = []
    for metric, value in sorted(k.measured.values.items()):
        pct = value.pct_of_peak
        if metric not in others and pct is not None and pct > 100 * (1 + PEAK_TOLERANCE):
            out.append(
                Finding(
                    "metric-above-peak",
                    k.stats.name,
                    "validity",
                    "high",
                    f"{metric} is {pct:.0f}% of its peak",
                    "check the GPU and its partition (per-XCD counters against whole-chip "
                    "peaks), and whether the counters come from the same run as the times",
                    {"metric": metric, "value": value.value_dispatch_mean, "peak": value.peak},
                    {"pct_of_peak_max": 100.0},
                )
            )
    return out


def single_dispatch(k: KernelView) -> Finding | None:
    if k.stats.calls >= MIN_DISPATCHES:
        return None
    return Finding(
        "single-dispatch",
        k.stats.name,
        "validity",
        "low",
        "one dispatch: its time is a single sample, with any cold start in it",
        "profile more iterations before judging this kernel",
        {"calls": k.stats.calls},
        {"min_dispatches": MIN_DISPATCHES},
    )


def warm_up(k: KernelView) -> Finding | None:
    s = k.stats
    rest = _rest_mean(s.total_ns, s.first_ns, s.calls)
    if not rest or s.first_ns is None or s.first_ns <= WARMUP_RATIO * rest:
        return None
    held = s.first_ns / s.total_ns if s.total_ns else 0.0
    return Finding(
        "warm-up" if held <= WARMUP_HOLDS else "warm-up-dominates",
        s.name,
        "validity",
        "low" if held <= WARMUP_HOLDS else "high",
        f"the first dispatch took {s.first_ns / rest:.1f}x the mean of the others and "
        f"holds {held:.0%} of the kernel's time",
        "leave the first call out (profile after a warm-up iteration); a first call "
        "that slow is code-object loading, first-touch page migration (APUs, "
        "managed memory) or clocks ramping up, not the kernel's steady state",
        {"first_ns": s.first_ns, "rest_mean_ns": rest, "first_share": held},
        {"ratio_max": WARMUP_RATIO, "first_share_max": WARMUP_HOLDS},
    )


def _rest_mean(total: float | None, first: float | None, calls: int) -> float | None:
    """The mean duration of all dispatches but the first."""
    if total is None or first is None or calls < 2:
        return None
    return (total - first) / (calls - 1)
