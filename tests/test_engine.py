"""One check-up engine at every scale (issue 37): each run (rank) read into its partial, the
partials merged in the runs' order, one report. In this process, on this machine's worker
processes (``--scheduler local --jobs 2``) and on a Dask cluster (``--scheduler ADDR``), the
JSON is the same document but for its ``engine`` section and the text the same but for its
``engine:`` line; ``--html`` is the same page. The kernels are checked against the demo trace
itself (``counted``), eight times over."""

from __future__ import annotations

import csv
import gc
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from subprocess import DEVNULL, Popen
from typing import Any

import pytest

import roofscope.readers.load as load
from roofscope.checkup import workers
from roofscope.model import profile
from roofscope.model.names import normalise
from tests.test_bad_inputs import error_line, run
from tests.test_compare import TRACE
from tests.test_ranks import ranks

Cap = pytest.CaptureFixture[str]
needs_dask = pytest.mark.skipif(
    find_spec("distributed") is None, reason="needs the dask extra: pip install roofscope[dask]"
)
RANKS = 8


def counted(path: Path, copies: int) -> dict[str, tuple[int, float]]:
    """Per kernel (calls, total s) counted from a rocprof v1 CSV itself, times ``copies``."""
    out: dict[str, tuple[int, int]] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            calls, total = out.get(normalise(r["KernelName"]), (0, 0))
            out[normalise(r["KernelName"])] = (
                calls + 1,
                total + int(r["EndNs"]) - int(r["BeginNs"]),
            )
    return {k: (calls * copies, total * copies / 1e9) for k, (calls, total) in out.items()}


def kernels(doc: dict[str, Any]) -> dict[str, tuple[int, float]]:
    return {k["name"]: (k["calls"], pytest.approx(k["total_s"], rel=1e-12)) for k in doc["kernels"]}


def damage(path: Path) -> None:
    """Every row given five more fields than the header: no dispatch row is left."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0] + "".join(r.rstrip("\n") + ",1,2,3,4,5\n" for r in lines[1:]))


def analyze_json(capsys: Cap, *args: str) -> dict[str, Any]:
    rc, out, err = run(capsys, "analyze", *args, "--json")
    assert rc == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def without_engine(text: str) -> str:
    return "".join(
        line for line in text.splitlines(keepends=True) if not line.startswith("  engine: ")
    )


# -- in this process and on local worker processes: no Dask ----------------------------------


def test_local_workers_give_the_report_of_this_process(capsys: Cap, tmp_path: Path) -> None:
    root = str(ranks(tmp_path))
    here = analyze_json(capsys, root, "--jobs", "1")
    assert "engine" not in here  # said only when --scheduler chose where the runs are read
    local = analyze_json(capsys, root, "--scheduler", "local", "--jobs", "2")
    assert local.pop("engine") == {"scheduler": "local", "workers": 2, "runs": RANKS}
    assert local == here
    assert kernels(local) == counted(TRACE, RANKS)
    assert local["ranks"]["ranks"] == list(range(RANKS))
    _, text_here, _ = run(capsys, "analyze", root, "--jobs", "1")
    _, text_local, _ = run(capsys, "analyze", root, "--scheduler", "local", "--jobs", "2")
    assert "  engine: 8 runs read on this machine's 2 workers, merged" in text_local.splitlines()
    assert without_engine(text_local) == text_here


def test_a_big_job_merged_on_disk_gives_the_same_report(
    capsys: Cap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ON_DISK_BYTES of input the merged runs live in a database file (compressed): the
    same document, and the file's temporary folder is gone once the profile is."""
    root = str(ranks(tmp_path))
    here = analyze_json(capsys, root, "--jobs", "1")
    folders: list[str] = []
    made = profile.tempfile.mkdtemp

    def mkdtemp(*args: Any, **kwargs: Any) -> str:
        folder: str = made(*args, **kwargs)
        folders.extend([folder] if Path(folder).name.startswith("roofscope-") else [])
        return folder

    monkeypatch.setattr(load, "ON_DISK_BYTES", 0)
    monkeypatch.setattr(profile.tempfile, "mkdtemp", mkdtemp)
    on_disk = analyze_json(capsys, root, "--scheduler", "local", "--jobs", "2")
    on_disk.pop("engine")
    assert on_disk == here
    (folder,) = folders
    assert Path(folder).parent == Path(tempfile.gettempdir())
    gc.collect()
    profile.close_spilled()
    assert not Path(folder).exists()


def test_the_html_report_is_the_same_on_local_workers(capsys: Cap, tmp_path: Path) -> None:
    """--html with --scheduler: the full report (roofline and timeline), the same page."""
    root = str(ranks(tmp_path))
    pages = []
    for extra in ((), ("--scheduler", "local", "--jobs", "2")):
        page = tmp_path / f"report{len(pages)}.html"
        rc, _, err = run(capsys, "analyze", root, "--html", str(page), *extra)
        assert rc == 0, err
        pages.append(page.read_bytes())
    assert pages[0] == pages[1]
    assert b'class="timeline"' in pages[1] or b"timeline" in pages[1]


def test_a_run_that_cannot_be_read_is_left_out_alike(capsys: Cap, tmp_path: Path) -> None:
    """Runs found in a folder that cannot be read are left out with a warning at every scale;
    a run named on the command line stops the check-up, unless --skip-unreadable."""
    root = ranks(tmp_path)
    bad = root / "rank3" / "results.csv"
    damage(bad)
    here = analyze_json(capsys, str(root))
    local = analyze_json(capsys, str(root), "--scheduler", "local", "--jobs", "2")
    local.pop("engine")
    assert local == here
    assert kernels(here) == counted(TRACE, RANKS - 1)
    (left,) = [w for w in here["warnings"] if w["code"] == "run-unreadable"]
    assert left["message"].startswith(f"{bad}: has no dispatch rows")
    named = [str(root / f"rank{r}" / "results.csv") for r in range(RANKS)]
    for extra in ((), ("--scheduler", "local", "--jobs", "2")):
        rc, out, err = run(capsys, "analyze", *named, *extra)
        assert (rc, out) == (1, "")
        assert error_line(err).startswith(f"{bad}: has no dispatch rows")
    skipped = analyze_json(capsys, *named, "--skip-unreadable", "--scheduler", "local")
    assert kernels(skipped) == counted(TRACE, RANKS - 1)


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


def test_jobs_with_a_dask_scheduler_is_refused(capsys: Cap) -> None:
    """--jobs would not set the cluster's workers: refused in each adapter's words."""
    import roofscope

    rc, out, err = run(capsys, "analyze", str(TRACE), "--scheduler", "tcp://h:1", "--jobs", "2")
    assert (rc, out) == (2, "")
    assert error_line(err) == (
        "--jobs sets this machine's worker processes, and --scheduler tcp://h:1 runs on the "
        "Dask cluster's workers; drop --jobs, or use --scheduler local"
    )
    with pytest.raises(roofscope.UsageError) as refused:
        roofscope.analyze(TRACE, scheduler="tcp://h:1", jobs=2)
    assert str(refused.value) == (
        "jobs= sets this machine's worker processes, and scheduler= tcp://h:1 runs on the "
        "Dask cluster's workers; drop jobs=, or use scheduler= local"
    )


def test_the_python_api_takes_a_scheduler(tmp_path: Path) -> None:
    import roofscope

    root = ranks(tmp_path)
    here = roofscope.analyze(root).to_dict()
    local = roofscope.analyze(root, scheduler="local", jobs=2).to_dict()
    assert local.pop("engine") == {"scheduler": "local", "workers": 2, "runs": RANKS}
    assert local == here


# -- on a Dask cluster -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    from distributed import LocalCluster

    local = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=":0", worker_dashboard_address=None,
    )  # fmt: skip
    with local:
        yield local.scheduler_address


@needs_dask
def test_dask_gives_the_report_of_this_process(
    capsys: Cap, tmp_path: Path, cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acceptance check: eight ranks, rank 5's laplacian 1.3x slower; the whole document
    equal (medians, idle gaps, straggler), read relative to this process's folder."""
    ranks(tmp_path, slow=1.3)
    monkeypatch.chdir(tmp_path)
    here = analyze_json(capsys, "job")
    dask = analyze_json(capsys, "job", "--scheduler", cluster)
    assert dask.pop("engine") == {"scheduler": cluster, "workers": 2, "runs": RANKS}
    assert dask == here
    assert [s["rank"] for s in dask["ranks"]["stragglers"]] == [5]
    monkeypatch.setenv("ROOFSCOPE_SCHEDULER", cluster)  # the scheduler from the environment
    again = analyze_json(capsys, "job")
    assert again.pop("engine")["scheduler"] == cluster and again == here


@needs_dask
def test_a_path_a_worker_cannot_see(
    capsys: Cap, tmp_path: Path, cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task checks each path as its worker sees it: here the client's folder is given as
    one no worker has, so the relative paths are nowhere to the workers."""
    ranks(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(workers.os, "getcwd", lambda: str(tmp_path / "elsewhere"))
    rc, out, err = run(capsys, "analyze", "job", "--scheduler", cluster)
    assert (rc, out) == (1, "")
    line = error_line(err)
    worker = line.split("the Dask worker ")[1].split(" ")[0]
    assert line == (
        f"job/rank0/results.csv: the Dask worker {worker} cannot see this file; put the "
        "profiles on a file system every worker mounts at the same path"
    )


@needs_dask
@pytest.mark.parametrize("checked_before", [True, False])
def test_a_worker_with_another_roofscope(
    capsys: Cap, tmp_path: Path, cluster: str, monkeypatch: pytest.MonkeyPatch,
    checked_before: bool,
) -> None:  # fmt: skip
    """Checked before the tasks are sent, and by each task (a worker that joins later)."""
    if not checked_before:
        monkeypatch.setattr(workers, "check_workers", lambda client: None)
    monkeypatch.setattr(workers, "__version__", "0.0.1")  # this process; the workers: 0.1.0
    rc, out, err = run(capsys, "analyze", str(ranks(tmp_path)), "--scheduler", cluster)
    assert (rc, out) == (1, "")
    line = error_line(err)
    worker = line.removeprefix("the Dask worker ").split(" ")[0]
    assert worker.startswith("tcp://127.0.0.1:")
    assert line == (
        f"the Dask worker {worker} has roofscope 0.1.0, this process roofscope 0.0.1; install "
        "the same on every worker (pip install 'roofscope[dask]==0.0.1')"
    )


@needs_dask
def test_a_worker_without_roofscope(
    capsys: Cap, cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workers, "DISTRIBUTION", "roofscope-on-no-worker")
    rc, out, err = run(capsys, "analyze", str(TRACE), "--scheduler", cluster)
    assert (rc, out) == (1, "")
    line = error_line(err)
    worker = line.removeprefix("the Dask worker ").split(" ")[0]
    assert line == (
        f"the Dask worker {worker} has no roofscope installed, this process roofscope 0.1.0; "
        "install the same on every worker (pip install 'roofscope[dask]==0.1.0')"
    )


@needs_dask
def test_a_scheduler_without_workers(capsys: Cap, monkeypatch: pytest.MonkeyPatch) -> None:
    from distributed import LocalCluster

    monkeypatch.setattr(workers, "WORKER_WAIT", 1.0)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        rc, out, err = run(capsys, "analyze", str(TRACE), "--scheduler", empty.scheduler_address)
    assert (rc, out) == (1, "")
    assert error_line(err) == (
        f"--scheduler {empty.scheduler_address}: the scheduler has had no worker for 1 s; start "
        f"workers (`dask worker {empty.scheduler_address}`) or check that they reach it"
    )


@needs_dask
def test_no_scheduler_at_the_address(capsys: Cap, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "CONNECT_TIMEOUT", "1s")
    rc, out, err = run(capsys, "analyze", str(TRACE), "--scheduler", "tcp://127.0.0.1:9")
    assert (rc, out) == (1, "")
    line = error_line(err)
    assert line.startswith("--scheduler tcp://127.0.0.1:9: no Dask scheduler answered (")
    assert line.endswith("start one (`dask scheduler`) and its workers, or check the address")


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
    path relative to its own folder, which the worker, elsewhere, still reads."""
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
        here = analyze_json(capsys, "job")
        dask_doc = analyze_json(capsys, "job", "--scheduler", str(found))
        assert dask_doc.pop("engine") == {"scheduler": str(found), "workers": 1, "runs": RANKS}
        assert dask_doc == here
        assert kernels(dask_doc) == counted(TRACE, RANKS)
    finally:
        for p in (worker, scheduler):
            if p is not None:
                p.terminate()
                p.wait(30)
