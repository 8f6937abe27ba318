"""Where the runs of a profile are read: in this process, on this machine's worker
processes, or on a Dask cluster. Whatever reads them, each run (rank) becomes the same
mergeable partial, a :class:`~roofscope.readers.io.shards.Shard` (its rows, exact), and the
partials are merged in the runs' order into one Profile (``readers.load``), so the check-up
is the same at every scale.

- **This process**, or **local worker processes** (``--jobs N``, ``--scheduler local``):
  ``readers/io/shards.py``, from a fork server, batches of runs per worker.
- **Dask** (``--scheduler tcp://HOST:PORT``, or the path of the JSON file that ``dask
  scheduler --scheduler-file`` writes): ``distributed.Client``, one task per run; the workers
  read the paths themselves, from a file system they share. A worker that dies is replaced by
  Dask and its run read again elsewhere (the scheduler's ``allowed-failures``); a task that
  raises for another reason than the input is retried twice. A scheduler that has no worker
  within ``WORKER_WAIT`` is an error rather than a wait without end.

A path a Dask worker cannot see is an error naming the worker and the path: the runs a
worker without the shared file system gets would otherwise be left out by chance. So is a
worker without this version of roofscope installed: checked before the tasks are sent, and
again by each task, for the workers that join later.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from roofscope.errors import InputError, RoofscopeError
from roofscope.model import words
from roofscope.readers.io.shards import ReadPlan, Shard, export
from roofscope.readers.runs import Planned
from roofscope.version import __version__

if TYPE_CHECKING:
    from distributed import Client

TASK_RETRIES = 2  # a task that raises (not a run that cannot be read) is tried again twice
CONNECT_TIMEOUT = "20s"
WORKER_WAIT = 60.0  # seconds a scheduler may have no worker before the analysis stops
TASK = {"pure": False, "retries": TASK_RETRIES}  # every run is read, retried on a crash
INSTALL = "pip install roofscope[dask]"
DISTRIBUTION = "roofscope"  # the package whose version each Dask worker must have
_CWD = threading.Lock()  # a worker's tasks that read relative paths change its folder in turn


class _Failed(msgspec.Struct, frozen=True):
    """What a task returns for a run that cannot be read (retrying would not help)."""

    error: RoofscopeError


class _Unseen(msgspec.Struct, frozen=True):
    """What a Dask task returns for a path its worker cannot see."""

    worker: str
    path: str


class _Mismatch(msgspec.Struct, frozen=True):
    """What a Dask task returns on a worker whose roofscope is not the client's."""

    worker: str
    found: str | None  # its version; None: not installed


Outcome = Shard | _Failed | _Unseen | _Mismatch


class OnDask:
    """The runs read on the Dask cluster at ``address``: :meth:`__call__` is the map step
    ``readers.load`` asks for (each run to its partial, in the runs' order)."""

    def __init__(self, client: Client, address: str) -> None:
        self.client, self.address = client, address
        self.runs = 0  # how many it was given, once called

    @property
    def workers(self) -> int:
        return len(self.client.scheduler_info()["workers"])

    def __call__(self, units: Sequence[Sequence[Planned]], read: ReadPlan) -> Iterator[Shard]:
        """One task per run; the partials fetched in the runs' order (those that end early
        wait on their workers); the tasks left are cancelled on the way out."""
        cwd, self.runs = os.getcwd(), len(units)
        futures: list[Any] = [
            self.client.submit(on_worker, read, list(unit), cwd, __version__, **TASK)
            for unit in units
        ]
        try:
            for i, future in enumerate(futures):
                yield _checked(_result(future, units[i]))
                futures[i] = None  # let go of it: the client holds one partial at a time
        finally:
            self.client.cancel([f for f in futures if f is not None])


@contextlib.contextmanager
def on_dask(address: str) -> Iterator[OnDask]:
    """A client of the scheduler at ``address``, its workers checked, for the block."""
    with connect(address) as client:
        check_workers(client)
        yield OnDask(client, address)


def on_worker(read: ReadPlan, unit: list[Planned], cwd: str, expected: str) -> Outcome:
    """The Dask task: this worker's roofscope and the run's paths checked as this worker sees
    them (relative ones from the client's folder), then the run read and exported."""
    from distributed import get_worker

    found = installed()
    if found != expected:
        return _Mismatch(get_worker().address, found)
    paths = [str(item.head.path) for item, _ in unit]
    for path in paths:
        if not os.path.exists(os.path.join(cwd, path)):
            return _Unseen(get_worker().address, path)
    relative = any(not os.path.isabs(p) for p in paths)
    with _CWD if relative else contextlib.nullcontext(), _folder(cwd if relative else None):
        try:
            return export(read(unit))
        except RoofscopeError as exc:
            return _Failed(exc)


@contextlib.contextmanager
def _folder(cwd: str | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    with contextlib.chdir(cwd):
        yield


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
    that join later are checked by the task itself.)"""
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


def _result(future: Any, unit: Sequence[Planned]) -> Outcome:
    from distributed import KilledWorker

    try:
        outcome: Outcome = future.result()
    except KilledWorker:
        raise RoofscopeError(
            f"{unit[0][0].head.path}: the Dask workers reading this run died each time it was "
            "tried; give the workers more memory (dask worker --memory-limit) or read it alone "
            "(roofscope analyze PATH)"
        ) from None
    return outcome


def _checked(outcome: Outcome) -> Shard:
    """The run's partial, or the error its task met, raised here."""
    if isinstance(outcome, _Mismatch):
        raise _version_error(outcome.worker, outcome.found)
    if isinstance(outcome, _Unseen):
        raise InputError(
            outcome.path,
            f"the Dask worker {outcome.worker} cannot see this file",
            "put the profiles on a file system every worker mounts at the same path",
        )
    if isinstance(outcome, _Failed):
        raise outcome.error
    return outcome
