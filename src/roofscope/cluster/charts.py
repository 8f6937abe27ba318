"""The cluster summary's charts: the kernel-time bars and the roofline plot, drawn by the
check-up's own renderers from the merged partials (``cluster.hot``, ``cluster.roof``), the
roofline's points set aside from its axes by the same validity findings as the check-up's
(``cluster.diagnosis``).

The timeline chart is not drawn: its lanes split each device's busy time by kernel, which the
partials' bins (busy ns per bin per device) do not keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofscope.cluster.diagnosis import cluster_findings
from roofscope.cluster.hot import hotspots_of
from roofscope.cluster.roof import cluster_roofline
from roofscope.diagnosis.findings import validity_of
from roofscope.render.charts import hotspot_bars, roofline_plot

if TYPE_CHECKING:
    from roofscope.cluster.partial import Partial
    from roofscope.report import RooflineOptions


def cluster_charts(p: Partial, roof: RooflineOptions) -> dict[str, str]:
    """``hotspots`` and ``roofline`` SVG of the runs merged in ``p``, as ``analyze --svg``
    names them."""
    hot = hotspots_of(p)
    found = cluster_roofline(p, hot, roof)
    findings = cluster_findings(p, hot, found)
    return {
        "hotspots": hotspot_bars(hot.kernels),
        "roofline": roofline_plot(found.result, hot.kernels, lambda k: validity_of(findings, k)),
    }
