"""The engines that reduce a job's runs (cluster/engine.py) and ``analyze --scheduler``.

A real Dask cluster (a scheduler and two worker processes on loopback) reduces eight ranks
(copies of the demo's rocprof v1 trace); the summary must equal the one reduced in this
process, and per kernel the calls and total time counted from the CSV itself, times eight.
Killing a worker while it reads gives the same summary; a run that cannot be read stops the
analysis or, with --skip-unreadable, is listed. The tests assert on the summary's kernels'
``calls`` and ``total_ns`` only (the fields cluster/partial.py promises), on the runs skipped
and on the errors.
"""

from __future__ import annotations

import csv
import gc
import json
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from subprocess import DEVNULL, Popen
from typing import Any

import pytest

from roofscope.cluster import engine
from roofscope.cluster.engine import partials
from roofscope.cluster.partial import merge, summary
from roofscope.model.names import normalise
from roofscope.readers.load import run_paths
from tests.slow_reduce import SlowReduce
from tests.test_bad_inputs import error_line, run
from tests.test_compare import TRACE
from tests.test_ranks import ranks

Cap = pytest.CaptureFixture[str]
needs_dask = pytest.mark.skipif(
    find_spec("distributed") is None, reason="needs the dask extra: pip install roofscope[dask]"
)
RANKS = 8


def counted(path: Path, copies: int) -> dict[str, tuple[int, int]]:
    """Per kernel (calls, total ns) counted from a rocprof v1 CSV itself, times ``copies``."""
    out: dict[str, tuple[int, int]] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            calls, total = out.get(normalise(r["KernelName"]), (0, 0))
            out[normalise(r["KernelName"])] = (
                calls + 1,
                total + int(r["EndNs"]) - int(r["BeginNs"]),
            )
    return {k: (calls * copies, total * copies) for k, (calls, total) in out.items()}


def kernels(doc: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {k["name"]: (k["calls"], round(k["total_ns"])) for k in doc["kernels"]}


def in_process(runs: list[list[str]]) -> dict[str, Any]:
    parts, skipped = partials(runs, jobs=1)
    assert skipped == []
    return summary(merge(parts))


def damage(path: Path) -> None:
    """Every row given five more fields than the header: no dispatch row is left."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0] + "".join(r.rstrip("\n") + ",1,2,3,4,5\n" for r in lines[1:]))


# -- in this process and on local worker processes: no Dask ----------------------------------


def test_the_runs_of_a_job_are_its_ranks(tmp_path: Path) -> None:
    root = ranks(tmp_path)
    assert run_paths([str(root)]) == [[str(root / f"rank{r}" / "results.csv")] for r in range(8)]
    assert run_paths([str(TRACE)]) == [[str(TRACE)]]  # one run: the paths as given


def test_in_process_and_local_workers_give_the_counted_kernels(tmp_path: Path) -> None:
    runs = run_paths([str(ranks(tmp_path))])
    done: list[tuple[int, int]] = []
    one, skipped = partials(runs, jobs=1, progress=lambda d, n: done.append((d, n)))
    assert skipped == [] and done == [(d, RANKS) for d in range(1, RANKS + 1)]
    assert kernels(summary(merge(one))) == counted(TRACE, RANKS)
    two, _ = partials(runs, jobs=2)
    assert kernels(summary(merge(two))) == counted(TRACE, RANKS)


def test_merged_as_they_arrive_equals_merged_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``merged`` folds each partial in as its run ends (the client never holds them all) and
    gives the partial that merging all of them at the end gives."""
    root = ranks(tmp_path)
    (root / "rank6" / "results.csv").write_bytes(b"")
    runs = run_paths([str(root)])
    parts, skipped = partials(runs, jobs=1, skip_unreadable=True)
    held: list[int] = []  # runs in the merged partial, at each fold
    arrived: list[weakref.ref[Any]] = []
    alive: list[int] = []  # partials that arrived before this one and are still in memory

    def folding(two: list[Any]) -> Any:
        held.append(len(two[0].runs))
        arrived.append(weakref.ref(two[1]))
        gc.collect()
        alive.append(sum(r() is not None for r in arrived[:-1]))
        return merge(two)

    monkeypatch.setattr(engine, "merge", folding)
    whole, skipped_too = engine.merged(runs, jobs=2, skip_unreadable=True)
    assert whole is not None and summary(whole) == summary(merge(parts))
    assert skipped_too == skipped and len(skipped) == 1
    assert held == [1, 2, 3, 4, 5, 6]  # two partials at a time, seven runs read
    # the worker processes' futures let go of their results (a Future keeps its own)
    assert alive == [0] * 6


def test_a_run_that_cannot_be_read_stops_or_is_skipped(tmp_path: Path) -> None:
    root = ranks(tmp_path)
    damage(root / "rank3" / "results.csv")
    (root / "rank6" / "results.csv").write_bytes(b"")  # a rank that died before writing
    runs = run_paths([str(root)])
    with pytest.raises(engine.Unreadable) as stopped:
        partials(runs, jobs=1)
    assert str(stopped.value).startswith(f"{root / 'rank3' / 'results.csv'}: has no dispatch rows")
    assert "(run 4 of 8; --skip-unreadable reads the others and lists it)" in str(stopped.value)
    parts, skipped = partials(runs, jobs=2, skip_unreadable=True)
    assert [s.run for s in skipped] == [(str(root / f"rank{r}" / "results.csv"),) for r in (3, 6)]
    empty = root / "rank6" / "results.csv"
    assert (
        skipped[1].reason == f"{empty}: is empty; re-run the profiler; the file was never written"
    )
    assert len(parts) == 6 and kernels(summary(merge(parts))) == counted(TRACE, 6)


def test_scheduler_without_distributed_says_how_to_get_it(
    capsys: Cap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError
    rc, out, err = run(capsys, "analyze", str(ranks(tmp_path)), "--scheduler", "tcp://h:8786")
    assert (rc, out) == (1, "")
    assert error_line(err) == (
        "--scheduler tcp://h:8786: running on Dask needs its distributed package; install it "
        "with `pip install roofscope[dask]`"
    )


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--html", "x.html"], "--html"),
        (["--kernel", "lap"], "--kernel"),
    ],
)
def test_options_that_need_the_rows_are_refused(
    capsys: Cap, tmp_path: Path, extra: list[str], option: str
) -> None:
    rc, out, err = run(capsys, "analyze", str(tmp_path), "--scheduler", "tcp://h:1", *extra)
    assert (rc, out) == (2, "")
    assert error_line(err).startswith(f"{option} needs the dispatch rows, which --scheduler")


def test_scheduler_local_reads_on_this_machines_workers(capsys: Cap, tmp_path: Path) -> None:
    """``--scheduler local --jobs 2``: the summary of local worker processes, no Dask; --jobs
    with a Dask address is refused (it would not set the cluster's workers)."""
    root = ranks(tmp_path)
    rc, out, err = run(
        capsys, "analyze", str(root), "--scheduler", "local", "--jobs", "2", "--json"
    )
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "roofscope-cluster-summary/1"
    assert kernels(doc) == counted(TRACE, RANKS)
    here = json.loads(json.dumps(in_process(run_paths([str(root)]))))
    assert doc == {"schema": "roofscope-cluster-summary/1", **here, "skipped": []}
    rc, out, err = run(capsys, "analyze", str(root), "--scheduler", "tcp://h:1", "--jobs", "2")
    assert (rc, out) == (2, "")
    assert error_line(err) == (
        "--jobs sets this machine's worker processes, and --scheduler tcp://h:1 runs on the "
        "Dask cluster's workers; drop --jobs, or use --scheduler local"
    )


def test_skip_unreadable_without_scheduler_is_refused(capsys: Cap) -> None:
    rc, out, err = run(capsys, "analyze", str(TRACE), "--skip-unreadable")
    assert (rc, out) == (2, "")
    assert error_line(err).startswith("--skip-unreadable applies to --scheduler only")


def test_text_view_of_a_summary() -> None:
    """Twelve kernels (kernel_i: 10·i calls, (13 - i) ms, a median of (13 - i)/i · 100 µs; the
    total is 78 ms): ten rows and the two others folded, 230 calls and 3 ms (3.8%)."""
    from roofscope.render.cluster_text import render_cluster_text

    doc = {
        "kernels": [
            {"name": f"kernel_{i}", "calls": 10 * i, "total_ns": 1e6 * (13 - i),
             "median_ns": 1e5 * (13 - i) / i, "share": (13 - i) / 78}
            for i in range(1, 13)
        ],
        "devices": {
            "busy_ns": 4e9, "span_ns": 5e9, "idle_share": 0.2,
            "devices": [{"source": "/job/rank0/results.csv", "device": 1, "busy_ns": 2.5e9,
                         "span_ns": 3e9}, {"source": "/job/rank1/results.csv", "device": 1,
                         "busy_ns": 1.5e9, "span_ns": 2e9}],
        },
        "ranks": {"ranks": [0, 1], "stragglers": [{"rank": 1, "label": "rank1 (pid 7)",
                                                   "kernels": ["kernel_1"]}]},
        "runs": {"read": [["/job/rank0/results.csv"], ["/job/rank1/results.csv"]]},
        "warnings": [{"code": "mixed-runs", "message": "not ranks of one job"}],
        "skipped": [{"run": ["/job/rank3/results.csv"], "reason": "/job/rank3/results.csv: is "
                     "empty; re-run the profiler; the file was never written"}],
    }  # fmt: skip
    rows = [
        f"{i:>2}   {f'kernel_{i}':<53}{10 * i:>7,}{13 - i:>13}{100 * (13 - i) / 78:>7.1f}%"
        f"{median:>14}"
        for i, median in zip(range(1, 11), ["1,200", "550", "333", "225", "160", "117", "85.7",
                                            "62.5", "44.4", "30"], strict=True)
    ]  # fmt: skip
    assert render_cluster_text(doc, width=100).splitlines() == [
        "roofscope 0.1.0 · cluster summary · runs read: 2",
        "runs skipped: 1 (--skip-unreadable)",
        "  skipped: /job/rank3/results.csv: is empty; re-run the profiler; the file was never "
        "written",
        " #   Kernel" + " " * 49 + "Calls   Total [ms]   Share   Median [µs]",
        "─" * 100,
        *rows,
        "     other (2 kernels)" + " " * 40 + "230            3    3.8%" + " " * 14,
        "Devices: 2, busy 4 s of 5 s (20.0% idle)",
        "  /job/rank0/results.csv device 1: 2.5 s of 3 s",
        "  /job/rank1/results.csv device 1: 1.5 s of 2 s",
        "Ranks: 2",
        "  straggler: rank 1 (rank1 (pid 7)): kernel_1",
        "! [mixed-runs] not ranks of one job",
    ]


# -- on a Dask cluster: a scheduler and two worker processes on loopback ---------------------


class TaskLog:
    """A scheduler plugin: the worker of each engine task that ended in memory."""

    def __init__(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        self.done: list[str] = []  # the worker of each run's task
        self.merged: list[str] = []  # the worker of each merge of two partials

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        name = key[0] if isinstance(key, tuple) else str(key)
        if finish == "memory" and name.startswith("on_worker-"):
            self.done.append(str(kwargs.get("worker")))
        if finish == "memory" and name.startswith("_merge_pair-"):
            self.merged.append(str(kwargs.get("worker")))


@dataclass
class Cluster:
    address: str
    log: TaskLog
    client: Any

    def worker_pids(self) -> dict[str, int]:
        return dict(self.client.run(os.getpid))


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    from distributed import Client, LocalCluster
    from distributed.diagnostics.plugin import SchedulerPlugin

    local = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=":0", worker_dashboard_address=None,
    )  # fmt: skip
    log = type("Log", (TaskLog, SchedulerPlugin), {})(local.scheduler)
    local.scheduler.add_plugin(log)
    with local, Client(local.scheduler_address, set_as_default=False) as client:
        yield Cluster(local.scheduler_address, log, client)


def analyze_on(capsys: Cap, cluster: Cluster, *args: str) -> tuple[int, str, str]:
    return run(capsys, "analyze", *args, "--scheduler", cluster.address)


@needs_dask
def test_cluster_summary_equals_the_in_process_one(
    capsys: Cap, tmp_path: Path, cluster: Cluster
) -> None:
    root = ranks(tmp_path)
    before, merges = len(cluster.log.done), len(cluster.log.merged)
    rc, out, err = analyze_on(capsys, cluster, str(root), "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert kernels(doc) == counted(TRACE, RANKS)
    here = json.loads(json.dumps(in_process(run_paths([str(root)]))))
    # the whole summary: devices, ranks, medians too
    assert doc == {"schema": "roofscope-cluster-summary/1", **here, "skipped": []}
    ran = cluster.log.done[before:]  # the scheduler ran one task per rank, on its workers
    assert len(ran) == RANKS and set(ran) <= set(cluster.worker_pids())
    merged = cluster.log.merged[merges:]  # and the merges too: 8 partials, 7 merges of two
    assert len(merged) == RANKS - 1 and set(merged) <= set(cluster.worker_pids())


@needs_dask
def test_text_summary_on_the_cluster(capsys: Cap, tmp_path: Path, cluster: Cluster) -> None:
    rc, out, err = analyze_on(capsys, cluster, str(ranks(tmp_path)))
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].endswith("· cluster summary · runs read: 8")
    lap = next(line for line in lines if "laplacian_kernel<double>" in line)
    calls, total = counted(TRACE, RANKS)[next(k for k in counted(TRACE, 1) if "laplacian" in k)]
    assert f"{calls:,}" in lap.split() and f"{total / 1e9:.1f}" in lap.split()


@needs_dask
def test_cluster_summary_from_python(capsys: Cap, tmp_path: Path, cluster: Cluster) -> None:
    """``roofscope.cluster_summary`` is ``analyze --scheduler --json``; its table has each
    kernel's calls and time summed over the eight ranks by hand (``counted``)."""
    import roofscope

    root = ranks(tmp_path)
    got = roofscope.cluster_summary(root, scheduler=cluster.address)
    assert capsys.readouterr() == ("", "")  # nothing printed
    rc, out, err = analyze_on(capsys, cluster, str(root), "--json")
    assert rc == 0, err
    assert got.to_json() == out and got.to_dict() == json.loads(out)
    pytest.importorskip("pandas")
    frame = got.to_pandas()
    table = {n: (c, t) for n, c, t in zip(frame.name, frame.calls, frame.total_s, strict=True)}
    assert table == {n: (c, t / 1e9) for n, (c, t) in counted(TRACE, RANKS).items()}
    with pytest.raises(roofscope.UsageError, match=r"roofscope.cluster_summary\(\*paths"):
        roofscope.analyze(root, scheduler=cluster.address)


def kill_first_worker_seen(marks: Path, killed: list[int]) -> None:
    """SIGKILL the worker process that leaves the first mark (within 15 s)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if found := sorted(marks.iterdir()):
            pid = int(found[0].name.split(".")[0])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.02)


@needs_dask
def test_a_worker_killed_while_reading_gives_the_same_summary(
    capsys: Cap, tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, marks = ranks(tmp_path), tmp_path / "marks"
    marks.mkdir()
    pids = cluster.worker_pids()
    monkeypatch.setattr(engine, "reduce_run", SlowReduce(str(marks), 0.4))
    killed: list[int] = []
    killer = threading.Thread(target=kill_first_worker_seen, args=(marks, killed))
    killer.start()
    rc, out, err = analyze_on(capsys, cluster, str(root), "--json")
    killer.join()
    assert rc == 0, err
    assert len(killed) == 1 and killed[0] in pids.values()
    assert kernels(json.loads(out)) == counted(TRACE, RANKS)
    # every rank started once, and the one whose worker died once more, elsewhere
    assert len(list(marks.iterdir())) == RANKS + 1


@needs_dask
def test_unreadable_run_on_the_cluster(
    capsys: Cap, tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = ranks(tmp_path)
    damage(root / "rank2" / "results.csv")
    bad = root / "rank2" / "results.csv"
    rc, out, err = analyze_on(capsys, cluster, str(root), "--json")
    assert (rc, out) == (1, "")
    assert error_line(err).startswith(f"{bad}: has no dispatch rows (header only")
    rc, out, err = analyze_on(capsys, cluster, str(root), "--json", "--skip-unreadable")
    assert rc == 0, err
    doc = json.loads(out)
    assert [s["run"] for s in doc["skipped"]] == [[str(bad)]]
    assert doc["skipped"][0]["reason"].startswith(f"{bad}: has no dispatch rows")
    assert kernels(doc) == counted(TRACE, RANKS - 1)
    monkeypatch.setenv("COLUMNS", "400")  # the path on one line
    rc, out, _ = analyze_on(capsys, cluster, str(root), "--skip-unreadable")
    assert "runs skipped: 1 (--skip-unreadable)" in out and f"skipped: {bad}: has no" in out


@needs_dask
def test_a_path_a_worker_cannot_see(tmp_path: Path, cluster: Cluster) -> None:
    gone = tmp_path / "rank0" / "results.csv"
    with pytest.raises(engine.InputError) as refused:
        partials([[str(gone)]], scheduler=cluster.address)
    worker = str(refused.value).split("the Dask worker ")[1].split(" ")[0]
    assert worker in cluster.worker_pids()
    assert str(refused.value) == (
        f"{gone}: the Dask worker {worker} cannot see this file; put the profiles on a file "
        "system every worker mounts at the same path"
    )


@needs_dask
def test_a_worker_with_another_roofscope(
    capsys: Cap, tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "__version__", "0.0.1")  # this process; the workers: 0.1.0
    rc, out, err = analyze_on(capsys, cluster, str(ranks(tmp_path)))
    assert (rc, out) == (1, "")
    line = error_line(err)
    worker = line.removeprefix("the Dask worker ").split(" ")[0]
    assert worker == min(cluster.worker_pids())
    assert line == (
        f"the Dask worker {worker} has roofscope 0.1.0, this process roofscope 0.0.1; install "
        "the same on every worker (pip install 'roofscope[dask]==0.0.1')"
    )


@needs_dask
def test_a_worker_without_roofscope(
    tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "DISTRIBUTION", "roofscope-on-no-worker")
    with pytest.raises(engine.RoofscopeError) as refused:
        partials([[str(TRACE)]], scheduler=cluster.address)
    worker = str(refused.value).removeprefix("the Dask worker ").split(" ")[0]
    assert worker == min(cluster.worker_pids())  # the first, by address
    assert str(refused.value) == (
        f"the Dask worker {worker} has no roofscope installed, this process roofscope 0.1.0; "
        "install the same on every worker (pip install 'roofscope[dask]==0.1.0')"
    )


@needs_dask
def test_a_worker_that_joins_later_with_another_roofscope(
    capsys: Cap, tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check before the tasks are sent misses a worker that joins after it: each task
    checks its own worker's roofscope again."""
    monkeypatch.setattr(engine, "check_workers", lambda client: None)  # joined after the check
    monkeypatch.setattr(engine, "__version__", "0.0.1")  # this process; the workers: 0.1.0
    rc, out, err = analyze_on(capsys, cluster, str(ranks(tmp_path)))
    assert (rc, out) == (1, "")
    line = error_line(err)
    worker = line.removeprefix("the Dask worker ").split(" ")[0]
    assert worker in cluster.worker_pids()
    assert line == (
        f"the Dask worker {worker} has roofscope 0.1.0, this process roofscope 0.0.1; install "
        "the same on every worker (pip install 'roofscope[dask]==0.0.1')"
    )


@needs_dask
def test_a_scheduler_without_workers(capsys: Cap, monkeypatch: pytest.MonkeyPatch) -> None:
    from distributed import LocalCluster

    monkeypatch.setattr(engine, "WORKER_WAIT", 1.0)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        rc, out, err = run(capsys, "analyze", str(TRACE), "--scheduler", empty.scheduler_address)
    assert (rc, out) == (1, "")
    assert error_line(err) == (
        f"--scheduler {empty.scheduler_address}: the scheduler has had no worker for 1 s; start "
        f"workers (`dask worker {empty.scheduler_address}`) or check that they reach it"
    )


@needs_dask
def test_no_scheduler_at_the_address(capsys: Cap, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "CONNECT_TIMEOUT", "1s")
    rc, out, err = run(capsys, "analyze", str(TRACE), "--scheduler", "tcp://127.0.0.1:9")
    assert (rc, out) == (1, "")
    line = error_line(err)
    assert line.startswith("--scheduler tcp://127.0.0.1:9: no Dask scheduler answered (")
    assert line.endswith("start one (`dask scheduler`) and its workers, or check the address")


@needs_dask
def test_the_scheduler_from_the_environment(
    capsys: Cap, tmp_path: Path, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROOFSCOPE_SCHEDULER", cluster.address)
    before = len(cluster.log.done)
    rc, out, err = run(capsys, "analyze", str(ranks(tmp_path)), "--json")
    assert rc == 0, err
    assert kernels(json.loads(out)) == counted(TRACE, RANKS)
    assert len(cluster.log.done) - before == RANKS


@needs_dask
def test_dask_equals_the_local_analyze_with_its_straggler(
    capsys: Cap, tmp_path: Path, cluster: Cluster
) -> None:
    """The acceptance check, literally: ``analyze DIR --scheduler ADDR --json`` against the
    local ``analyze DIR --json`` of eight ranks, rank 5's laplacian 1.3x slower: per kernel
    calls, totals, min and max exact, medians within the sketch's error, the same straggler."""
    from tests.test_cluster_partial import assert_kernels_match

    root = ranks(tmp_path, slow=1.3)
    rc, out, err = run(capsys, "analyze", str(root), "--json")
    assert rc == 0, err
    local = json.loads(out)
    rc, out, err = analyze_on(capsys, cluster, str(root), "--json")
    assert rc == 0, err
    dask = json.loads(out)
    assert_kernels_match(local, dask)
    (s,) = dask["ranks"]["stragglers"]
    (want,) = local["ranks"]["stragglers"]
    assert (s["rank"], s["kernels"]) == (want["rank"], want["kernels"]) == (5, want["kernels"])


def wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert path.exists(), f"{path} was not written within {seconds} s"


@needs_dask
def test_the_dask_commands_with_a_scheduler_file_and_relative_paths(
    capsys: Cap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster started by hand as the README says (`dask scheduler --scheduler-file`, `dask
    worker`) in a folder of its own; roofscope is given the scheduler file and the job as a
    path relative to its own folder, which the workers, elsewhere, still read."""
    dask = Path(sys.executable).with_name("dask")
    if not dask.exists():
        pytest.skip(f"no dask command beside {sys.executable}")
    found, elsewhere = tmp_path / "scheduler.json", tmp_path / "cluster"
    elsewhere.mkdir()
    quiet: dict[str, Any] = {"cwd": elsewhere, "stdout": DEVNULL, "stderr": DEVNULL}
    scheduler = Popen(
        [dask, "scheduler", "--scheduler-file", found, "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard"], **quiet,
    )  # fmt: skip
    worker = None
    try:
        wait_for(found, 60)
        worker = Popen(
            [dask, "worker", "--scheduler-file", found, "--nthreads", "1", "--no-dashboard"],
            **quiet,
        )  # fmt: skip
        ranks(tmp_path)
        monkeypatch.chdir(tmp_path)
        rc, out, err = run(capsys, "analyze", "job", "--scheduler", str(found), "--json")
        assert rc == 0, err
        assert kernels(json.loads(out)) == counted(TRACE, RANKS)
        assert json.loads(out)["runs"]["read"][0] == [str(tmp_path / "job/rank0/results.csv")]
    finally:
        for p in (worker, scheduler):
            if p is not None:
                p.terminate()
                p.wait(30)


def test_a_long_device_line_wraps_under_its_indent() -> None:
    from roofscope.render.cluster_text import render_cluster_text

    source = "/scratch/project/job-2026-12-04/rank0000/out/pmc_perf.csv"
    doc = {
        "devices": {"busy_ns": 55_500, "span_ns": 1_100_000, "idle_share": 0.95,
                    "devices": [{"source": source, "device": 0, "busy_ns": 55_500,
                                 "span_ns": 1_100_000}]},
    }  # fmt: skip
    lines = render_cluster_text(doc, width=80).splitlines()
    at = lines.index(f"  {source} device 0:")  # 73 columns, then the rest under its indent
    assert lines[at + 1 :] == ["    55.5 µs of 1.1 ms"]
    lines = render_cluster_text(doc, width=60).splitlines()  # the path alone is 61 wide
    at = lines.index(f"  {source}")
    assert lines[at + 1 :] == ["    device 0: 55.5 µs of 1.1 ms"]


@dataclass(frozen=True)
class Node:
    """A stand-in for a Dask future: the leaves under it and its depth of merges."""

    leaves: tuple[int, ...]
    depth: int = 0

    @property
    def client(self) -> Any:
        return self

    def submit(self, fn: Any, a: Node, b: Node, **_: Any) -> Node:
        return Node(a.leaves + b.leaves, 1 + max(a.depth, b.depth))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 1000])
def test_the_merges_on_dask_make_a_tree(n: int) -> None:
    """Every partial in the root once; no partial merged more than ceil(log2 n) times, where
    merging each into one as they arrive would merge the first n - 1 times."""
    tree = engine._Tree()
    for i in range(n):
        tree.add(Node((i,)))
    root = tree.root()
    assert sorted(root.leaves) == list(range(n))
    assert root.depth == (n - 1).bit_length()  # ceil(log2 n)
