"""Where the runs of a job are reduced: in this process, on local worker processes, or on a
Dask cluster. Every engine runs the same task, :func:`roofscope.cluster.partial.reduce_run`,
once per run, and returns the partial results in the runs' order, whatever order they end in.

- **In this process** (``jobs=1``): one run after another.
- **Local worker processes** (``jobs > 1``, or ``scheduler="local"``): forked from a fork
  server, as the readers' parallel reading (``readers/shards.py``) does, so no DuckDB thread
  state is copied.
- **Dask** (``scheduler="tcp://HOST:PORT"``, or the path of the JSON file that ``dask
  scheduler --scheduler-file`` writes): ``distributed.Client``, one task per run; the workers
  read the paths themselves, from a file system they share, and merge the partials in
  pairs, so that this process neither merges them all nor holds more than the result. A
  worker that dies is replaced by Dask and its run read again elsewhere (the scheduler's
  ``allowed-failures``); a task that raises is retried twice. A scheduler that has no
  worker within ``WORKER_WAIT`` is an error rather than a wait without end.

A run that cannot be read (the reader's one-line :class:`InputError`) stops the reduction,
naming it, unless ``skip_unreadable``: then it is left out and returned as a :class:`Skipped`.
A path a Dask worker cannot see is always an error naming the worker and the path: the runs
a worker without the shared file system gets would otherwise be left out by chance. So is a
worker without this version of roofscope installed: checked before the tasks are sent, and
again by each task, for the workers that join later.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as local_completed
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roofscope.cluster.partial import Partial, merge, reduce_run
from roofscope.errors import InputError, RoofscopeError
from roofscope.model import words
from roofscope.readers.shards import default_jobs
from roofscope.version import __version__

if TYPE_CHECKING:
    from distributed import Client

Run = Sequence[str]
Reduce = Callable[[list[str], str | None], Partial]
Progress = Callable[[int, int], None]  # (runs done, runs in all)
TASK_RETRIES = 2  # a task that raises (not a run that cannot be read) is tried again twice
CONNECT_TIMEOUT = "20s"
WORKER_WAIT = 60.0  # seconds a scheduler may have no worker before the analysis stops
TASK = {"pure": False, "retries": TASK_RETRIES}  # every run is read, retried on a crash
LOCAL = "local"  # --scheduler local: this machine's worker processes, no Dask
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


@dataclass(frozen=True)
class _Mismatch:
    """What a Dask task returns on a worker whose roofscope is not the client's."""

    worker: str
    found: str | None  # its version; None: not installed


@dataclass(frozen=True)
class _Remote:
    """A partial held by a Dask worker: its future."""

    future: Any


Outcome = Partial | _Failed | _Unseen | _Mismatch


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
    found: dict[int, Partial] = {}
    skipped: dict[int, Skipped] = {}
    with _reduced(todo, jobs, scheduler, fmt, skip_unreadable, progress) as done:
        for i, got in done:
            if isinstance(got, Skipped):
                skipped[i] = got
            else:
                found[i] = _result(got.future, todo[i]) if isinstance(got, _Remote) else got
    return [found[i] for i in sorted(found)], [skipped[i] for i in sorted(skipped)]


def merged(
    runs: Sequence[Run],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    skip_unreadable: bool = False,
    progress: Progress | None = None,
    fmt: str | None = None,
) -> tuple[Partial | None, list[Skipped]]:
    """The runs' partials merged as each arrives (None when no run was read) and the runs
    skipped: this process holds one merged partial and the one that just arrived, never all
    of them; on Dask the workers merge them in pairs (``_Tree``) and this process fetches
    the one result. Merging is commutative and associative, so the order in which the runs
    end does not change the result (``cluster/partial.py``)."""
    todo = [list(run) for run in runs]
    whole: Partial | None = None
    tree = _Tree()
    skipped = {}
    with _reduced(todo, jobs, scheduler, fmt, skip_unreadable, progress) as done:
        for i, got in done:
            if isinstance(got, Skipped):
                skipped[i] = got
            elif isinstance(got, _Remote):
                tree.add(got.future)
            else:
                whole = got if whole is None else merge([whole, got])
        if tree.levels:  # on Dask: the last merges, and the one partial fetched
            whole = _result(tree.root(), ["the merged partials"])
    return whole, [skipped[i] for i in sorted(skipped)]


class _Tree:
    """The partials of a Dask run merged on the workers, as a binary counter merges: two of
    one level make one of the next, so merges of disjoint pairs run at once on different
    workers and no partial is merged more than log2(runs) times. The client holds futures
    only; a worker lost with a merged partial has it made again from its lineage."""

    def __init__(self) -> None:
        self.levels: dict[int, Any] = {}  # level: the one future waiting for its pair

    def add(self, future: Any, level: int = 0) -> None:
        while level in self.levels:
            future = _merge_on_worker(self.levels.pop(level), future)
            level += 1
        self.levels[level] = future

    def root(self) -> Any:
        """One future for every partial added (the levels left, merged)."""
        futures = [self.levels[k] for k in sorted(self.levels)]
        root = futures[0]
        for f in futures[1:]:
            root = _merge_on_worker(root, f)
        return root


def _merge_on_worker(a: Any, b: Any) -> Any:
    return a.client.submit(_merge_pair, a, b, **TASK)


def _merge_pair(a: Partial, b: Partial) -> Partial:
    return merge([a, b])


@contextmanager
def _reduced(
    todo: list[list[str]],
    jobs: int | None,
    scheduler: str | None,
    fmt: str | None,
    skip_unreadable: bool,
    progress: Progress | None,
) -> Iterator[Iterator[tuple[int, Partial | _Remote | Skipped]]]:
    """Each run's partial (on Dask: where it is) or its Skipped, as it ends (``_checked``),
    on the engine the options name; the Dask client stays open until the block ends, for
    the merges and fetches made in it."""
    with _session(scheduler) as client, closing(_outcomes(todo, jobs, client, fmt)) as outcomes:
        yield _checked(outcomes, todo, skip_unreadable, progress)


@contextmanager
def _session(scheduler: str | None) -> Iterator[Client | None]:
    """The Dask client the runs go to, its workers checked; None off Dask."""
    if not scheduler or scheduler == LOCAL:
        yield None
        return
    with connect(scheduler) as client:
        check_workers(client)
        yield client


def _outcomes(
    todo: list[list[str]], jobs: int | None, client: Client | None, fmt: str | None
) -> Generator[tuple[int, Any], None, None]:
    """(index of the run, its outcome), as each run ends: on Dask when ``client`` is given,
    else in this process or on local worker processes."""
    if client is not None:
        with closing(_on_dask(client, todo, fmt)) as done:
            yield from done
        return
    workers = min(default_jobs() if jobs is None else jobs, len(todo))
    if workers < 2:
        yield from ((i, attempt(reduce_run, run, fmt)) for i, run in enumerate(todo))
        return
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["roofscope.readers.load", "roofscope.cluster.partial"])
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(attempt, reduce_run, run, fmt): i for i, run in enumerate(todo)}
        try:
            for f in local_completed(futures):
                # a Future keeps its result: let go of it, or every partial stays held here
                yield futures.pop(f), f.result()
        finally:
            pool.shutdown(cancel_futures=True)


def attempt(reduce: Reduce, run: list[str], fmt: str | None) -> Partial | _Failed:
    """``reduce(run, fmt)``, or the one line of the input error that stopped it."""
    try:
        return reduce(run, fmt)
    except RoofscopeError as exc:
        return _Failed(str(exc))


def on_worker(reduce: Reduce, run: list[str], fmt: str | None, expected: str) -> Outcome:
    """The Dask task: this worker's roofscope and the run's paths checked as this worker sees
    them, then the run reduced."""
    from distributed import get_worker

    found = installed()
    if found != expected:
        return _Mismatch(get_worker().address, found)
    for path in run:
        if not os.path.exists(path):
            return _Unseen(get_worker().address, path)
    return attempt(reduce, run, fmt)


def installed(distribution: str = DISTRIBUTION) -> str | None:
    """This machine's roofscope version as pip installed it (None: not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def connect(address: str) -> Client:
    """A client of the scheduler at ``address`` (or named in the scheduler file there), with
    a worker; one line when distributed is missing, nothing answers, or no worker joins."""
    try:
        from distributed import Client
    except ImportError:
        raise RoofscopeError(
            f"--scheduler {address}: running on Dask needs its distributed package; "
            f"install it with `{INSTALL}`"
        ) from None
    where = {"scheduler_file": address} if os.path.isfile(address) else {"address": address}
    try:
        client = Client(**where, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, ValueError) as exc:
        why = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise RoofscopeError(
            f"--scheduler {address}: no Dask scheduler answered ({why}); start one "
            "(`dask scheduler`) and its workers, or check the address"
        ) from None
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT)
    except TimeoutError:
        client.close()
        raise RoofscopeError(
            f"--scheduler {address}: the scheduler has had no worker for "
            f"{words.sig(WORKER_WAIT)} s; "
            f"start workers (`dask worker {address}`) or check that they reach it"
        ) from None
    return client


def check_workers(client: Client) -> None:
    """Every worker has this roofscope installed: one line naming a worker that has none or
    another version. (A worker that cannot unpickle the task breaks without a word; workers
    that join later are not checked.)"""
    found = client.run(installed, DISTRIBUTION, on_error="return")
    for worker, got in sorted(found.items()):
        if isinstance(got, BaseException) or got != __version__:
            raise _version_error(worker, None if isinstance(got, BaseException) else got)


def _version_error(worker: str, found: str | None) -> RoofscopeError:
    has = "no roofscope installed" if found is None else f"roofscope {found}"
    return RoofscopeError(
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

    futures = {
        i: client.submit(on_worker, reduce_run, _absolute(run), fmt, __version__, **TASK)
        for i, run in enumerate(runs)
    }
    kinds = {client.submit(_kind, f, pure=False): i for i, f in futures.items()}
    index = {f.key: i for f, i in kinds.items()}
    try:
        for kind in as_completed(list(kinds), loop=client.loop):
            i = index[kind.key]
            found = _result(kind, runs[i])
            future = futures.pop(i)  # from here on the merges hold it, while they need it
            yield i, _Remote(future) if found is None else found
    finally:
        client.cancel(list(futures.values()))


def _kind(outcome: Outcome) -> Outcome | None:
    """On the worker: None for a partial (it stays there, to be merged there), else the
    outcome (a few bytes) for the client to check."""
    return None if isinstance(outcome, Partial) else outcome


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


def _checked(
    outcomes: Iterator[tuple[int, Any]],
    runs: list[list[str]],
    skip_unreadable: bool,
    progress: Progress | None,
) -> Iterator[tuple[int, Partial | _Remote | Skipped]]:
    """Each run's partial (on Dask: where it is), or its Skipped, as it ends; raises at the
    first run that cannot be read or seen (unless runs that cannot be read are skipped)."""
    for done, (i, outcome) in enumerate(outcomes, 1):
        if isinstance(outcome, _Mismatch):
            raise _version_error(outcome.worker, outcome.found)
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
        failed = isinstance(outcome, _Failed)
        yield i, Skipped(tuple(runs[i]), outcome.reason) if failed else outcome
        if progress:
            progress(done, len(runs))
