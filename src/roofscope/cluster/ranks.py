"""The rank view of merged partials: ``analysis.ranks``' own, from each dispatch source's
kernel time per kernel, made only where ``readers.runs`` finds the sources to be ranks of
one job."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofscope.analysis.ranks import RankView, rank_order, spread_view
from roofscope.readers.runs import RunSource, job_evidence

if TYPE_CHECKING:
    from roofscope.cluster.partial import Partial


def job_of(p: Partial) -> str | None:
    """What makes the sources ranks of one job (``readers.runs.job_evidence``); None if not."""
    found = [RunSource(s.path, s.rank, s.pid, s.span) for s in p.sources]
    return job_evidence(found) if len(found) > 1 else None


def rank_view_of(p: Partial) -> RankView | None:
    """As ``analysis.ranks.rank_view``: None for one source, several formats, or sources that
    are not ranks of one job."""
    srcs = p.sources
    if len(srcs) < 2 or len({s.format for s in srcs}) > 1 or job_of(p) is None:
        return None
    order, numbers = rank_order(
        [s.rank for s in srcs], [s.timed_pid for s in srcs], [s.path for s in srcs]
    )
    ordered = [srcs[i] for i in order]
    per_kernel: dict[str, list[float]] = {}
    for r, s in enumerate(ordered):
        for kernel, total in s.kernel_ns.items():
            per_kernel.setdefault(kernel, [0.0] * len(ordered))[r] = float(total)
    labels = tuple(f"{s.path} (pid {'-' if s.timed_pid is None else s.timed_pid})" for s in ordered)
    return spread_view(per_kernel, numbers, labels)
