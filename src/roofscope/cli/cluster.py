"""``roofscope analyze DIR --scheduler ADDR``: the cluster summary of a job of many runs.

The paths are split into runs as ``analyze`` reads them (``readers.load.run_paths``). Each
run is reduced on the Dask cluster, or with ``--scheduler local`` on this machine's worker
processes (``cluster.engine``), and the partials are merged as they arrive
(``cluster.partial``). The options that need the dispatch rows (HTML, the selection, the
gap threshold) are refused: the summary has kernels, devices, ranks, and the roofline of the
kernels whose counters or ``--work`` rules give work, on the device the runs name or ``--gpu``
names, with the user's ceilings (``cluster.roof``); ``--svg``/``--png`` draw its kernel-time
chart and roofline plot (``cluster.charts``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roofscope.errors import InputError, UsageError

if TYPE_CHECKING:
    from roofscope.cluster.engine import Skipped
    from roofscope.cluster.partial import Partial
    from roofscope.cluster.summary import Examined
    from roofscope.report import RooflineOptions

TOP = 10  # kernels in the text table unless --top says otherwise
SCHEMA = "roofscope-cluster-summary/1"  # the document's kind and version: raised on a change


def refuse_without_rows(given: dict[str, Any]) -> None:
    """A UsageError naming the first option given that the cluster summary cannot honour."""
    for option, value in given.items():
        if value not in (None, False, [], ()):
            raise UsageError(
                f"{option} needs the dispatch rows, which --scheduler leaves on the workers "
                f"(the cluster summary has kernels, devices and ranks); drop {option}, or "
                "analyse without --scheduler"
            )


@dataclass(frozen=True)
class Charts:
    """``--svg DIR`` / ``--png DIR`` and ``--force``: where the cluster's charts go."""

    svg: str | None = None
    png: str | None = None
    force: bool = False
    keep: tuple[str, ...] = ()  # the option files read (--ceilings): never overwritten


def cluster_summary(
    paths: Sequence[str],
    scheduler: str,
    *,
    jobs: int | None = None,
    fmt: str | None,
    skip_unreadable: bool,
    as_json: bool,
    top: int | None,
    roof: RooflineOptions | None = None,
    charts: Charts = Charts(),
) -> str:
    """The summary of the runs under ``paths`` reduced on ``scheduler``, as JSON or text;
    its kernel-time chart and roofline plot written where ``charts`` says."""
    from roofscope.cluster.summary import examine
    from roofscope.report import DEFAULTS

    with _progress() as tick:
        whole, skipped, read = merged_job(
            paths, scheduler, jobs=jobs, fmt=fmt, skip_unreadable=skip_unreadable,
            progress=tick,
        )  # fmt: skip
    seen = examine(whole, roof or DEFAULTS)
    doc = document(whole, skipped, seen)
    if charts.svg or charts.png:
        from roofscope.cli.outputs import write_charts
        from roofscope.cluster.charts import cluster_charts

        drawn = cluster_charts(seen)
        keep = [*read, *charts.keep]
        write_charts(drawn, charts.svg, charts.png, force=charts.force, keep=keep)
    if as_json:
        return json.dumps(doc, indent=2) + "\n"
    from roofscope.render.cluster_text import render_cluster_text

    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    return render_cluster_text(doc, top=TOP if top is None else top, color=color)


def cluster_document(
    paths: Sequence[str],
    scheduler: str,
    *,
    jobs: int | None = None,
    fmt: str | None = None,
    skip_unreadable: bool = False,
    progress: Callable[[int, int], None] | None = None,
    roof: RooflineOptions | None = None,
) -> dict[str, Any]:
    """The cluster summary's document (``--json``); ``progress`` hears runs done / in all;
    ``roof``: the user's ``--gpu`` and ceilings. Prints nothing: ``roofscope.cluster_summary``
    calls it."""
    from roofscope.cluster.summary import examine
    from roofscope.report import DEFAULTS

    whole, skipped, _ = merged_job(
        paths, scheduler, jobs=jobs, fmt=fmt, skip_unreadable=skip_unreadable,
        progress=progress,
    )  # fmt: skip
    return document(whole, skipped, examine(whole, roof or DEFAULTS))


def merged_job(
    paths: Sequence[str],
    scheduler: str,
    *,
    jobs: int | None,
    fmt: str | None,
    skip_unreadable: bool,
    progress: Callable[[int, int], None] | None,
) -> tuple[Partial, list[Skipped], list[str]]:
    """The runs under ``paths`` reduced on ``scheduler`` and merged, the runs skipped, and
    every path of every run."""
    from roofscope.cluster.engine import LOCAL, merged
    from roofscope.readers.load import run_paths

    if jobs is not None and scheduler != LOCAL:
        raise UsageError(
            f"--jobs sets this machine's worker processes, and --scheduler {scheduler} runs on "
            "the Dask cluster's workers; drop --jobs, or use --scheduler local"
        )
    runs = run_paths(paths, fmt=fmt)
    whole, skipped = merged(
        runs, jobs=jobs, scheduler=scheduler, skip_unreadable=skip_unreadable,
        progress=progress, fmt=fmt,
    )  # fmt: skip
    if whole is None:
        raise InputError(
            paths[0],
            f"none of its {len(runs)} runs could be read ({skipped[0].reason})",
            "pass the profilers' own output",
        )
    return whole, skipped, [path for run in runs for path in run]


def document(whole: Partial, skipped: list[Skipped], seen: Examined) -> dict[str, Any]:
    """The ``--json`` document of the merged runs, ``seen`` by ``cluster.summary.examine``."""
    from roofscope.cluster.summary import summary_of

    doc = {"schema": SCHEMA, **summary_of(whole, seen)}
    doc["skipped"] = [{"run": list(s.run), "reason": s.reason} for s in skipped]
    return doc


@contextmanager
def _progress() -> Iterator[Callable[[int, int], None] | None]:
    """Runs done / in all, on stderr, as local reading shows its progress: on a terminal only."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("reducing runs…") as status:
        yield lambda done, total: status.update(f"runs reduced: {done} / {total}")
