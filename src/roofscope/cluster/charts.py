"""The cluster summary's charts: the kernel-time bars and the roofline plot, drawn by the
check-up's own renderers from the merged partials (``cluster.hot``, ``cluster.roof``).

The timeline chart is not drawn: its lanes split each device's busy time by kernel, which the
partials' bins (busy ns per bin per device) do not keep. The roofline's points carry no
validity findings (the cluster summary makes none), so none is left off its axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofscope.cluster.hot import hotspots_of
from roofscope.cluster.roof import cluster_roofline
from roofscope.render.charts import hotspot_bars, roofline_plot

if TYPE_CHECKING:
    from roofscope.cluster.partial import Partial
    from roofscope.report import RooflineOptions


def cluster_charts(p: Partial, roof: RooflineOptions) -> dict[str, str]:
    """``hotspots`` and ``roofline`` SVG of the runs merged in ``p``, as ``analyze --svg``
    names them."""
    hot = hotspots_of(p)
    found = cluster_roofline(p, hot, roof)
    return {
        "hotspots": hotspot_bars(hot.kernels),
        "roofline": roofline_plot(found.result, hot.kernels),
    }
