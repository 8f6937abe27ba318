"""The prompt "diagnose this profile": the check-up's four steps, in the tools' words."""

from __future__ import annotations

STEPS = """Diagnose the GPU profile at {path} with roofscope's tools, in the check-up's four steps.

1. Baseline: call `analyze` with path {path!r}. Say what the run cost (summary.kernel_time_s,
   dispatches, kernels) and on which GPU (device.name, device.detected_from). Read `warnings`
   first: a warning can make a number untrustworthy.
2. Hotspots: from `kernels` (most time first, `share` and `cumulative_share`), name the few
   kernels that make 80 % of the time (summary.kernels_for_80pct), and the idle share
   (summary.idle_share); call `timeline` when the GPU sits idle for more than a tenth.
3. Metrics: for each hotspot call `kernel`: its roofline place (roofline.bound, efficiency,
   ai), its limiter and counters; then `findings` (severity "high" first) for the evidence and
   the prescription, ranked by what fixing each could save (gain_share).
4. Verification: after a change, profile again and call `compare` with the old and the new
   profile and a threshold (fail_if_slower); report the speedup and the gate's verdict.

Quote the numbers as the tools give them, with their units (seconds, bytes, FLOP/s); say
which findings are validity problems (kind "validity") before any bottleneck."""


def diagnose_text(path: str) -> str:
    return STEPS.format(path=path)
