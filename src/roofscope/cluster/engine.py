"""Where the runs of a job are reduced: in this process, on local worker processes, or on a
Dask cluster. Every engine runs the same task, :func:`roofscope.cluster.partial.reduce_run`,
once per run, and returns the partial results in the runs' order, whatever order they end in.

- **In this process** (``jobs=1``): one run after another.
- **Local worker processes** (``jobs > 1``): forked from a fork server, as the readers'
  parallel reading (``readers/shards.py``) does, so no DuckDB thread state is copied.
- **Dask** (``scheduler="tcp://HOST:PORT"``): ``distributed.Client(address)``, one task per
  run; the workers read the paths themselves, from a file system they share. A worker that
  dies is replaced by Dask and its run read again elsewhere (the scheduler's
  ``allowed-failures``); a task that raises is retried twice.

A run that cannot be read (the reader's one-line :class:`InputError`) stops the reduction,
naming it, unless ``skip_unreadable``: then it is left out and returned as a :class:`Skipped`.
A path a Dask worker cannot see is always an error naming the worker and the path: the runs
a worker without the shared file system gets would otherwise be left out by chance. So is a
worker without this version of roofscope installed (checked before the tasks are sent).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as local_completed
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roofscope import __version__
from roofscope.cluster.partial import Partial, reduce_run
from roofscope.errors import InputError, RoofscopeError
from roofscope.readers.shards import default_jobs

if TYPE_CHECKING:
    from distributed import Client

Run = Sequence[str]
Reduce = Callable[[list[str], str | None], Partial]
Progress = Callable[[int, int], None]  # (runs done, runs in all)
TASK_RETRIES = 2  # a task that raises (not a run that cannot be read) is tried again twice
CONNECT_TIMEOUT = "20s"
INSTALL = "pip install roofscope[dask]"
DISTRIBUTION = "roofscope"  # the package whose version each Dask worker must have


@dataclass(frozen=True)
class Skipped:
    """A run left out: its files and the one line that says why."""

    run: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class _Failed:
    """What a task returns for a run that cannot be read (retrying would not help)."""

    reason: str


@dataclass(frozen=True)
class _Unseen:
    """What a Dask task returns for a path its worker cannot see."""

    worker: str
    path: str


Outcome = Partial | _Failed | _Unseen


class Unreadable(RoofscopeError):
    """A run that cannot be read, without ``skip_unreadable``."""


def partials(
    runs: Sequence[Run],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    skip_unreadable: bool = False,
    progress: Progress | None = None,
    fmt: str | None = None,
) -> tuple[list[Partial], list[Skipped]]:
    """Each run reduced to a Partial (in the order of ``runs``) and the runs skipped.

    On Dask when ``scheduler`` names one; else on ``jobs`` local worker processes (default:
    every core), in this process when ``jobs`` is 1 or there is one run."""
    todo = [list(run) for run in runs]
    if scheduler:
        with connect(scheduler) as client:
            check_workers(client)
            with closing(_on_dask(client, todo, fmt)) as done:
                return _collect(done, todo, skip_unreadable, progress)
    workers = min(default_jobs() if jobs is None else jobs, len(todo))
    if workers < 2:
        here = ((i, attempt(reduce_run, run, fmt)) for i, run in enumerate(todo))
        return _collect(here, todo, skip_unreadable, progress)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["roofscope.readers.load", "roofscope.cluster.partial"])
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(attempt, reduce_run, run, fmt): i for i, run in enumerate(todo)}
        try:
            done = ((futures[f], f.result()) for f in local_completed(futures))
            return _collect(done, todo, skip_unreadable, progress)
        finally:
            pool.shutdown(cancel_futures=True)


def attempt(reduce: Reduce, run: list[str], fmt: str | None) -> Partial | _Failed:
    """``reduce(run, fmt)``, or the one line of the input error that stopped it."""
    try:
        return reduce(run, fmt)
    except RoofscopeError as exc:
        return _Failed(str(exc))


def on_worker(reduce: Reduce, run: list[str], fmt: str | None) -> Outcome:
    """The Dask task: the run's paths checked as this worker sees them, then reduced."""
    from distributed import get_worker

    for path in run:
        if not os.path.exists(path):
            return _Unseen(get_worker().address, path)
    return attempt(reduce, run, fmt)


def connect(address: str) -> Client:
    """A client of the scheduler at ``address``; one line when distributed is missing or
    nothing answers there."""
    try:
        from distributed import Client
    except ImportError:
        raise RoofscopeError(
            f"--scheduler {address}: running on Dask needs its distributed package; "
            f"install it with `{INSTALL}`"
        ) from None
    try:
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, ValueError) as exc:
        why = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise RoofscopeError(
            f"--scheduler {address}: no Dask scheduler answered ({why}); start one "
            "(`dask scheduler`) and its workers, or check the address"
        ) from None


def check_workers(client: Client) -> None:
    """Every worker has this roofscope installed: one line naming a worker that has none or
    another version. (A worker that cannot unpickle the task breaks without a word; workers
    that join later are not checked.)"""
    from importlib.metadata import version

    found = client.run(version, DISTRIBUTION, on_error="return")
    for worker, got in sorted(found.items()):
        if isinstance(got, BaseException) or got != __version__:
            has = "no roofscope installed" if isinstance(got, BaseException) else f"roofscope {got}"
            raise RoofscopeError(
                f"the Dask worker {worker} has {has}, this process roofscope {__version__}; "
                f"install the same on every worker (pip install 'roofscope[dask]=={__version__}')"
            )


def _on_dask(
    client: Client, runs: list[list[str]], fmt: str | None
) -> Generator[tuple[int, Any], None, None]:
    """One task per run, yielded as each ends; the tasks left are cancelled on the way out.
    The paths go as absolute paths: a worker runs in a folder of its own, and the job's files
    are where the shared file system mounts them on every machine."""
    from distributed import as_completed

    futures = [
        client.submit(on_worker, reduce_run, _absolute(run), fmt, pure=False, retries=TASK_RETRIES)
        for run in runs
    ]
    index = {f.key: i for i, f in enumerate(futures)}
    try:
        for future in as_completed(futures, loop=client.loop):
            yield index[future.key], _result(future, runs[index[future.key]])
    finally:
        client.cancel(futures)


def _absolute(run: list[str]) -> list[str]:
    return [os.path.abspath(p) for p in run]


def _result(future: Any, run: list[str]) -> Any:
    from distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker:
        raise RoofscopeError(
            f"{run[0]}: the Dask workers reading this run died each time it was tried; "
            "give the workers more memory (dask worker --memory-limit) or read it alone "
            "(roofscope analyze PATH)"
        ) from None


def _collect(
    outcomes: Iterator[tuple[int, Any]],
    runs: list[list[str]],
    skip_unreadable: bool,
    progress: Progress | None,
) -> tuple[list[Partial], list[Skipped]]:
    """The outcomes in the runs' order; raises at the first run that cannot be read or seen
    (unless runs that cannot be read are skipped)."""
    found: dict[int, Partial] = {}
    skipped: dict[int, Skipped] = {}
    for done, (i, outcome) in enumerate(outcomes, 1):
        if isinstance(outcome, _Unseen):
            raise InputError(
                outcome.path,
                f"the Dask worker {outcome.worker} cannot see this file",
                "put the profiles on a file system every worker mounts at the same path",
            )
        if isinstance(outcome, _Failed) and not skip_unreadable:
            raise Unreadable(
                f"{outcome.reason} (run {i + 1} of {len(runs)}; --skip-unreadable "
                "reads the others and lists it)"
            )
        if isinstance(outcome, _Failed):
            skipped[i] = Skipped(tuple(runs[i]), outcome.reason)
        else:
            found[i] = outcome
        if progress:
            progress(done, len(runs))
    return [found[i] for i in sorted(found)], [skipped[i] for i in sorted(skipped)]
