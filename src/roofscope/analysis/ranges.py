"""The ranges the user named as a level, like operators: per range name (a PyTorch
``record_function``, ``ProfilerStep#N``), its calls, the GPU time of the kernels launched
inside it, those kernels and their share of the kernel time.

A kernel is a range's when its launch started inside the range on the range's thread
(the reader's ``range_launches``). Nested ranges each count their own kernels: a kernel
launched inside "decode step" and inside "attention layer 12" counts in both, so the
shares of nested ranges add up past their parent's. ``ProfilerStep#N`` ranges are one row,
"ProfilerStep", whose calls are the steps and whose mean is the mean step's GPU time.
"""

from __future__ import annotations

from typing import Any

import msgspec

from roofscope.analysis.hotspots import Hotspots
from roofscope.model.access import has_range_launches, names, query, range_launches, user_ranges
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION, NOT_BACKWARDS
from roofscope.model.selection import Selection, dispatches

TOP = 30  # range names kept (by GPU time); the rest are summed in ``others``
KERNELS = 5  # kernel names kept per range, longest total first
STEP = "ProfilerStep"  # torch.profiler's own step ranges, ProfilerStep#<n>, as one row


class RangeRow(msgspec.Struct, frozen=True):
    name: str  # as the user named it; ProfilerStep#<n> as "ProfilerStep"
    calls: int  # ranges of that name that launched kernels (for ProfilerStep: the steps)
    dispatches: int  # kernels launched inside them
    time_ns: float  # those kernels' summed duration
    mean_ns: float  # per call
    share: float  # of the selection's kernel time
    kernels: tuple[str, ...]  # up to KERNELS kernel names, longest total first
    kernel_names: int  # distinct kernel names


class Ranges(msgspec.Struct, frozen=True):
    """The range table; ``outside_*``: the kernels launched in no user range."""

    rows: tuple[RangeRow, ...]
    others: int  # range names beyond TOP
    others_ns: float
    outside_dispatches: int
    outside_ns: float
    nested: bool  # some kernel counts in more than one range name


_PER_DISPATCH = f"""
, dd AS (SELECT row_id, source, name_id, dispatch_id, {DURATION} AS dur FROM d
    WHERE {NOT_BACKWARDS})
, hit AS (
    SELECT x.row_id, x.name_id, x.dur, r.source, r.range_id,
        regexp_replace(u.name, '^{STEP}#[0-9]+$', '{STEP}') AS label
    FROM dd x JOIN rl r ON r.source = x.source AND r.correlation = x.dispatch_id
    JOIN ur u ON u.source = r.source AND u.range_id = r.range_id)
"""

# one statement: the rows by range (kind 0), then the kernels outside every range (kind 1)
# and the kernels in more than one range name (kind 2); three statements took 19 ms of
# CPU on HTA's alexnet trace, this one 9 ms. Each range's kernel list joins its row after
# the grouping: carried on every launch into it, any_value over the lists took 24 of the
# statement's 31 ms on HTA's trace_filter
_GROUPED = """
, per_kernel AS (
    SELECT label, n.kernel, sum(dur) AS t FROM hit JOIN named n ON n.name_id = hit.name_id
    GROUP BY ALL)
, kernels AS (
    SELECT label, list(kernel ORDER BY t DESC, kernel) AS names FROM per_kernel GROUP BY label)
, by_range AS (
    SELECT label, count(DISTINCT (source, range_id)) AS calls, count(*) AS n, sum(dur) AS t
    FROM hit GROUP BY label)
SELECT 0 AS kind, label, calls, n, t, k.names FROM by_range JOIN kernels k USING (label)
UNION ALL
SELECT 1, NULL, NULL, count(*), sum(dur), NULL FROM dd
WHERE row_id NOT IN (SELECT row_id FROM hit)
UNION ALL
SELECT 2, NULL, NULL, count(*), NULL, NULL
FROM (SELECT row_id FROM hit GROUP BY row_id HAVING count(DISTINCT label) > 1)
ORDER BY kind, t DESC NULLS LAST, label
"""


def ranges(profile: Profile, selection: Selection, hot: Hotspots) -> Ranges | None:
    """The user's ranges and the kernels launched inside them; None where the input has
    none around a launch."""
    if not has_range_launches(profile):
        return None
    held = range_launches(profile).distinct()  # a launch's two API rows (nsys) count once
    more = {"rl": held, "ur": user_ranges(profile), "named": names(profile)}
    sel = dispatches(profile, selection)
    found = query(profile, sel, _PER_DISPATCH + _GROUPED, (), **more).fetchall()
    rows = [r[1:] for r in found if r[0] == 0]
    ((_, _, _, out_n, out_ns, _),) = [r for r in found if r[0] == 1]
    ((_, _, _, nested, _, _),) = [r for r in found if r[0] == 2]
    total = hot.total_ns or 0.0
    rest = rows[TOP:]
    return Ranges(
        rows=tuple(_row(r, total) for r in rows[:TOP]),
        others=len(rest),
        others_ns=sum(float(r[3] or 0) for r in rest),
        outside_dispatches=int(out_n),
        outside_ns=float(out_ns or 0),
        nested=int(nested) > 0,
    )


def _row(r: tuple[Any, ...], total: float) -> RangeRow:
    label, calls, n, time_ns, kernels = r
    time = float(time_ns or 0)
    return RangeRow(
        name=str(label),
        calls=int(calls),
        dispatches=int(n),
        time_ns=time,
        mean_ns=time / int(calls) if calls else 0.0,
        share=time / total if total else 0.0,
        kernels=tuple(str(k) for k in kernels[:KERNELS]),
        kernel_names=len(kernels),
    )
