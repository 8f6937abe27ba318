"""The hotspots of merged partials: ``analysis.hotspots``' own ranking of their kernels.

Every statistic of a :class:`KernelPart` is exact (integer sums, minima, maxima) except the
median, the sketch's above 1,000 timed dispatches (``sketch.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofscope.analysis.hotspots import Aggregate, Hotspots, ranked

if TYPE_CHECKING:
    from roofscope.cluster.partial import Partial


def hotspots_of(p: Partial) -> Hotspots:
    """The kernels of ``p`` as ``analysis.hotspots`` ranks a profile's: by total time, with
    their shares and the hot ones."""
    return ranked(
        [
            (
                name,
                Aggregate(
                    calls=k.calls,
                    timed=k.timed,
                    total=k.total_ns if k.timed else None,
                    minimum=k.min_ns,
                    maximum=k.max_ns,
                    sumsq=k.sumsq_ns2,
                    median=k.durations.quantile(0.5),
                    raw=k.raw_names,
                    first=None if k.first is None else k.first[1],
                ),
            )
            for name, k in p.kernels.items()
        ]
    )
