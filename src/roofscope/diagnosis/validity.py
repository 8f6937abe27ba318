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
- ``pass-dispatch-mismatch``: the counter runs saw the kernel a different number of times
  than the trace: the per-call work is scaled, but passes may have seen different inputs.
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


def check_kernel(k: KernelView, *, has_counters: bool, device: str | None) -> list[Finding]:
    s, out = k.stats, []
    name = s.name
    if s.total_ns is not None and s.total_ns <= 0 and s.calls > 0:
        out.append(
            Finding(
                "no-time",
                name,
                "validity",
                "high",
                f"its {s.calls} dispatch(es) take 0 ns (Begin equals End): no rate, efficiency "
                "or bound can be computed",
                "the timestamps were lost (a file re-saved by a tool that rounds or drops "
                "them); use the profiler's original output, or its timestamps.csv pass",
                {"calls": s.calls, "total_ns": s.total_ns},
            )
        )
    if k.standing is not None:  # above its roof: at a measured one, or beyond (trust.py)
        out.append(roof_finding(name, k.standing, device))
    mean, low, high = k.summary_mean_ns, k.summary_min_ns, k.summary_max_ns
    if (
        mean is not None
        and low is not None
        and high is not None
        and not (low <= mean * (1 + 1e-9) and mean <= high * (1 + 1e-9))
    ):
        out.append(
            Finding(
                "average-outside-range",
                name,
                "validity",
                "high",
                f"the summary's mean {mean:.0f} ns lies outside its [min {low:.0f}, "
                f"max {high:.0f}]",
                "the summary is damaged or its columns mislabelled; analyse the trace instead",
                {"mean_ns": mean, "min_ns": low, "max_ns": high},
            )
        )
    if has_counters and k.counter_rows == 0:
        out.append(
            Finding(
                "counters-missing",
                name,
                "validity",
                "medium",
                "the profile has counters, but none for this kernel",
                "re-run the counter passes without a --kernel/--dispatch filter that drops it",
                {"counter_values": 0},
            )
        )
    elif k.activity_counters and k.nonzero_activity == 0:
        out.append(
            Finding(
                "counters-all-zero",
                name,
                "validity",
                "high",
                f"its {k.activity_counters} busy-cycle, wave and instruction counter values "
                "are all 0, though it ran",
                "the counters were not armed for it (a driver or profiler fault); re-profile",
                {"activity_values": k.activity_counters, "nonzero": 0},
            )
        )
    if k.counter_run_calls is not None and k.counter_run_calls != s.calls:
        out.append(
            Finding(
                "pass-dispatch-mismatch",
                name,
                "validity",
                "medium",
                f"the counter runs saw {k.counter_run_calls} dispatch(es), the trace {s.calls}",
                "profile counters and timing in one run of the same input, or check that "
                "every pass ran the same iterations",
                {"counter_run_calls": k.counter_run_calls, "trace_calls": s.calls},
            )
        )
    others = {v.peer for v in k.measured.values.values() if v.peer}  # another tool's way
    for metric, value in sorted(k.measured.values.items()):
        pct = value.pct_of_peak
        if metric not in others and pct is not None and pct > 100 * (1 + PEAK_TOLERANCE):
            out.append(
                Finding(
                    "metric-above-peak",
                    name,
                    "validity",
                    "high",
                    f"{metric} is {pct:.0f}% of its peak",
                    "check the GPU and its partition (per-XCD counters against whole-chip "
                    "peaks), and whether the counters come from the same run as the times",
                    {"metric": metric, "value": value.value_dispatch_mean, "peak": value.peak},
                    {"pct_of_peak_max": 100.0},
                )
            )
    if s.calls < MIN_DISPATCHES:
        out.append(
            Finding(
                "single-dispatch",
                name,
                "validity",
                "low",
                "one dispatch: its time is a single sample, with any cold start in it",
                "profile more iterations before judging this kernel",
                {"calls": s.calls},
                {"min_dispatches": MIN_DISPATCHES},
            )
        )
    rest = _rest_mean(s.total_ns, s.first_ns, s.calls)
    if rest and s.first_ns is not None and s.first_ns > WARMUP_RATIO * rest:
        held = s.first_ns / s.total_ns if s.total_ns else 0.0
        out.append(
            Finding(
                "warm-up" if held <= WARMUP_HOLDS else "warm-up-dominates",
                name,
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
        )
    return out


def _rest_mean(total: float | None, first: float | None, calls: int) -> float | None:
    """The mean duration of all dispatches but the first."""
    if total is None or first is None or calls < 2:
        return None
    return (total - first) / (calls - 1)
