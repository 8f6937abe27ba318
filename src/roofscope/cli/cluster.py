"""``roofscope analyze DIR --scheduler ADDR``: the cluster summary of a job of many runs.

The paths are split into runs as ``analyze`` reads them (``readers.load.run_paths``), each run
is reduced on the Dask cluster (``cluster.engine.partials``) and the partials are merged
(``cluster.partial``). The options that need the dispatch rows (charts, HTML, the roofline
and its work, the selection) are refused: the summary has kernels, devices and ranks only.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from roofscope.errors import InputError, UsageError

SCHEDULER_ENV = "ROOFSCOPE_SCHEDULER"
TOP = 10  # kernels in the text table unless --top says otherwise


def refuse_without_rows(given: dict[str, Any]) -> None:
    """A UsageError naming the first option given that the cluster summary cannot honour."""
    for option, value in given.items():
        if value not in (None, False, [], ()):
            raise UsageError(
                f"{option} needs the dispatch rows, which --scheduler leaves on the workers "
                f"(the cluster summary has kernels, devices and ranks); drop {option}, or "
                "analyse without --scheduler"
            )


def cluster_summary(
    paths: Sequence[str],
    scheduler: str,
    *,
    fmt: str | None,
    skip_unreadable: bool,
    as_json: bool,
    top: int | None,
) -> str:
    """The summary of the runs under ``paths`` reduced on ``scheduler``, as JSON or text."""
    with _progress() as tick:
        doc = cluster_document(
            paths, scheduler, fmt=fmt, skip_unreadable=skip_unreadable, progress=tick
        )
    if as_json:
        return json.dumps(doc, indent=2) + "\n"
    from roofscope.render.cluster_text import render_cluster_text

    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    return render_cluster_text(doc, top=TOP if top is None else top, color=color)


def cluster_document(
    paths: Sequence[str],
    scheduler: str,
    *,
    fmt: str | None = None,
    skip_unreadable: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The cluster summary's document (``--json``); ``progress`` hears runs done / in all.
    Prints nothing: ``analyze --scheduler`` and ``roofscope.cluster_summary`` call it."""
    from roofscope.cluster.engine import partials
    from roofscope.cluster.partial import merge, summary
    from roofscope.readers.load import run_paths

    runs = run_paths(paths, fmt=fmt)
    parts, skipped = partials(
        runs, scheduler=scheduler, skip_unreadable=skip_unreadable, progress=progress, fmt=fmt
    )
    if not parts:
        raise InputError(
            paths[0],
            f"none of its {len(runs)} runs could be read ({skipped[0].reason})",
            "pass the profilers' own output",
        )
    doc = summary(merge(parts))
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
