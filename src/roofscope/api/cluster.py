"""``cluster_summary``: ``roofscope analyze PATHS --scheduler ADDR`` from Python. Each run
(rank) is reduced on the Dask cluster and the partials merged; the summary has kernels,
devices, ranks, the roofline from the summed counters and the findings, not the dispatch
rows, so no counter metrics or HTML (a ``Report``)."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roofscope.api.run import DEFAULT_GAP_US, options_of, paths_of
from roofscope.cli.checkup import prepare
from roofscope.cli.cluster import cluster_document

if TYPE_CHECKING:
    from pandas import DataFrame


@dataclass(frozen=True, eq=False)
class ClusterSummary:
    """What ``roofscope.cluster_summary`` returns: the ``analyze --scheduler --json``
    document (times in ns, as there)."""

    document: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The document, a copy of it."""
        return copy.deepcopy(self.document)

    def to_json(self) -> str:
        """The ``analyze --scheduler ADDR --json`` text, byte for byte."""
        return json.dumps(self.document, indent=2) + "\n"

    def to_pandas(self) -> DataFrame:
        """One row per kernel, most time first: the columns of ``Report.to_pandas()`` that a
        summary has (times in seconds), and ``median_exact`` (False: the sketch's, within 1 %)."""
        from roofscope.api.frames import cluster_frame

        return cluster_frame(self.document)

    def __repr__(self) -> str:
        from roofscope.model.words import count

        runs, kernels = len(self.document["runs"]["read"]), len(self.document["kernels"])
        return f"<roofscope.ClusterSummary: {count(runs, 'run')}, {count(kernels, 'kernel')}>"


def cluster_summary(
    *paths: str | os.PathLike[str],
    scheduler: str,
    jobs: int | None = None,
    fmt: str | None = None,
    skip_unreadable: bool = False,
    progress: Callable[[int, int], None] | None = None,
    gpu: str | None = None,
    work: str | Sequence[str] = (),
    ceilings: str | os.PathLike[str] | None = None,
    peak_flops: float | None = None,
    peak_bw: float | None = None,
) -> ClusterSummary:
    """The runs under ``paths``, each reduced on the Dask scheduler at ``scheduler``
    (``tcp://HOST:PORT`` or its scheduler file; ``pip install 'roofscope[dask]'``), or with
    ``scheduler="local"`` on ``jobs`` worker processes of this machine. ``skip_unreadable``:
    leave out the runs that cannot be read (listed in ``skipped``); ``progress`` hears runs
    done / all; ``gpu``, ``work`` and the ceilings place the roofline as ``analyze``'s do."""
    names = paths_of(paths, "cluster_summary")
    options = options_of(
        gpu=gpu, work=work, ceilings=ceilings, peak_flops=peak_flops, peak_bw=peak_bw,
        kernel=None, device=None, jobs=jobs, fmt=fmt, gap_us=DEFAULT_GAP_US,
    )  # fmt: skip
    doc = cluster_document(
        names, scheduler, jobs=jobs, fmt=fmt, skip_unreadable=skip_unreadable,
        progress=progress, roof=prepare(options).roof,
    )  # fmt: skip
    return ClusterSummary(doc)
