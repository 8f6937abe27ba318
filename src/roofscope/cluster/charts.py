"""The cluster summary's charts: the kernel-time bars and the roofline plot, drawn by the
check-up's own renderers from the merged partials (``cluster.hot``, ``cluster.roof``), the
roofline's points set aside from its axes by the same validity findings as the check-up's
(``cluster.diagnosis``).

The timeline chart is not drawn: its lanes split each device's busy time by kernel, which the
partials' bins (busy ns per bin per device) do not keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofscope.diagnosis.findings import validity_of
from roofscope.render.charts.hotspots import hotspot_bars
from roofscope.render.charts.roofline import roofline_plot

if TYPE_CHECKING:
    from roofscope.cluster.summary import Examined


def cluster_charts(seen: Examined) -> dict[str, str]:
    """``hotspots`` and ``roofline`` SVG of the merged runs ``seen`` by
    ``summary.examine``, as ``analyze --svg`` names them."""
    hot, found = seen.hot.kernels, seen.roofline.result
    return {
        "hotspots": hotspot_bars(hot),
        "roofline": roofline_plot(found, hot, lambda k: validity_of(seen.findings, k)),
    }
