"""Start-up: each command imports only what it needs (issue 25).

Each case runs ``python -m roofscope ...`` in a fresh interpreter and reads the modules
loaded by its end: ``--version`` answers before Typer loads, the help loads neither DuckDB
nor numpy, and ``analyze`` of a small file loads no renderer, reader, engine or library its
output does not use.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from roofscope import __version__
from roofscope.analysis.timeline import DEFAULT_GAP_NS
from roofscope.cli.options import DEFAULT_GAP_US
from roofscope.model.names import normalise
from tests.conftest import DATA, DEMO, SHARED_CORPUS

ANALYSIS = {"duckdb", "_duckdb", "numpy", "pandas", "pyarrow", "polars"}
RICH_HEAVY = {"rich.console", "rich.table", "rich.text", "rich.markup", "rich.progress"}
ELSEWHERE = {"jinja2", "vl_convert", "distributed", "dask", "matplotlib", "playwright"}
SMALL = str(DATA / "rocprofv3-layouts" / "2025-08_kernel_trace.csv")
DEMO_TRACE = DEMO / "results.csv"


def imported(*args: str) -> tuple[str, set[str]]:
    """The stdout of ``python -m roofscope ARGS`` and every module loaded by its end."""
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", AS_MAIN, *args], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r"^modules: (.*)$", done.stderr, re.M)
    assert found, done.stderr[-2000:]
    return done.stdout, set(found.group(1).split())


# ``python -m roofscope ARGS`` (its main: the console script's os._exit would skip the rest),
# then the names in sys.modules (importlib.import_module, which the reader registry uses,
# escapes -X importtime's log)
AS_MAIN = """
import sys
from roofscope.cli.app import main
try:
    code = main(sys.argv[1:])
finally:
    sys.stderr.write("\\nmodules: " + " ".join(sorted(sys.modules)) + "\\n")
raise SystemExit(code)
"""


def _loaded(modules: set[str], forbidden: set[str]) -> set[str]:
    """The forbidden modules (or their submodules) among ``modules``."""
    return {m for m in modules if m in forbidden or m.split(".")[0] in forbidden}


def test_version_loads_no_library() -> None:
    out, modules = imported("--version")
    assert out == f"roofscope {__version__}\n"
    assert _loaded(modules, ANALYSIS | RICH_HEAVY | ELSEWHERE | {"typer", "rich"}) == set()


@pytest.mark.parametrize("args", [("--help",), ("analyze", "--help"), ("compare", "--help")])
def test_help_loads_no_analysis(args: tuple[str, ...]) -> None:
    out, modules = imported(*args)
    assert "usage: roofscope" in out
    assert _loaded(modules, ANALYSIS | ELSEWHERE | {"rich", "typer", "click"}) == set()
    assert not any(m.startswith("roofscope.") and m.split(".")[1] in _STAGES for m in modules)


_STAGES = {"analysis", "readers", "model", "render", "report", "diagnosis", "catalogue"}


def test_analyze_json_loads_no_renderer_it_does_not_use() -> None:
    out, modules = imported("analyze", SMALL, "--json")
    assert out.startswith("{")
    assert _loaded(modules, RICH_HEAVY | ELSEWHERE | {"rich"}) == set()
    assert _renderers(modules) == {"roofscope.render.report.json"}
    other_readers = {"kineto", "nsys_sqlite", "nsys_csv", "ncu_csv", "rocpd", "rocprof_compute"}
    assert {m for m in modules if m.split(".")[-1] in other_readers} == set()
    assert "cxxfilt" not in modules  # no mangled name in it: the demangler stays unloaded
    # one process reads one profile and compares nothing
    assert _loaded(modules, {"multiprocessing", "concurrent", "roofscope.verify"}) == set()
    # no Dask engine without --scheduler; no TOML without a work or ceilings file
    assert _loaded(modules, {"roofscope.checkup.workers", "distributed", "tomllib"}) == set()


@pytest.mark.parametrize(
    "path",
    [
        DATA / "rocprof-compute-mi200",  # a trimmed copy of vcopy MI200
        SHARED_CORPUS / "amd" / "rocprof-compute-vcopy-2025" / "MI200",  # the whole workload
    ],
)
def test_a_counter_workload_loads_no_numpy(path: Path) -> None:
    """numpy's import took 58-75 ms of vcopy MI200's 0.46 s: its counter formulas run over
    plain-Python columns (analysis/metrics/column.py), and its tables load through DuckDB."""
    if not path.is_dir():
        pytest.skip(f"{path} is not beside the project")
    out, modules = imported("analyze", str(path), "--json")
    assert json.loads(out)["kernels"][0]["roofline"]["work_source"] == "counters"
    assert _loaded(modules, {"numpy"}) == set()


@pytest.mark.parametrize(
    "path",
    [
        DATA / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz",  # staged as lists
        DATA / "rocprofv3-layouts" / "2025-08_kernel_trace.csv",  # read by DuckDB
    ],
)
def test_a_small_trace_loads_no_numpy(path: Path) -> None:
    """numpy takes 37 ms to load: a small trace's rows go to DuckDB as lists and its
    timeline is one query, so its check-up never loads it."""
    out, modules = imported("analyze", str(path), "--json")
    assert json.loads(out)["summary"]["dispatches"] > 0
    assert _loaded(modules, {"numpy"}) == set()


@pytest.mark.parametrize(
    "args",
    [
        ("analyze", SMALL),
        ("analyze", str(DATA / "kineto" / "inference_rank_1.json.gz")),
        ("analyze", str(DATA / "rocprof-compute-mi200")),
        ("compare", SMALL, SMALL),
    ],
)
def test_duckdb_runs_as_its_compiled_module_alone(args: tuple[str, ...]) -> None:
    """The duckdb package's Python layer (its relations and expressions, its version read
    through importlib.metadata: 60 ms of every command) stays unloaded: roofscope composes
    its SQL text itself (model/relation.py) and runs it on the compiled ``_duckdb``."""
    out, modules = imported(*args, "--json")
    assert out.startswith("{")
    assert "_duckdb" in modules
    assert _loaded(modules, {"duckdb"}) == set()


def test_a_kernel_summary_loads_no_numpy_nor_the_raw_pass_reader() -> None:
    """Detecting a CSV asks the rocprof-compute reader; its raw-pass code (rocprof-compute
    3.9's out/ databases: rocpd, numpy) loads only for such a workload. It loaded for every
    CSV once that reader existed: an nsys summary's check-up took 0.44 s, not 0.36 s."""
    out, modules = imported(
        "analyze", str(DATA / "nsys" / "decode_cuda_gpu_kern_sum.csv"), "--json"
    )
    assert json.loads(out)["summary"]["kernels"] > 0
    assert _loaded(modules, {"numpy", "roofscope.readers.amd.compute.rocprof_compute_raw"}) == set()
    assert _loaded(modules, {"roofscope.readers.amd.rocpd"}) == set()


def test_a_gzipped_trace_loads_no_reader_of_plain_files() -> None:
    """Only Kineto's reader reads gzip: detecting a .json.gz trace imports no other."""
    out, modules = imported("analyze", str(DATA / "kineto" / "inference_rank_1.json.gz"), "--json")
    assert json.loads(out)["inputs"][0]["format"] == "kineto"
    loaded = {m.split(".")[-1] for m in modules if m.startswith("roofscope.readers.")}
    others = {"rocprof_v1_csv", "rocprof_v1_stats", "rocprof_v1_json", "rocprofv3", "csvload"}
    others |= {"rocprofv3_counters", "summary_csv", "rocprof_compute", "rocpd", "nsys_csv"}
    others |= {"rocprofv3_agent_info"}
    assert "kineto" in loaded and loaded & others == set()
    # a trace without counters loads none of the counter formulas
    formulas = {"derived", "formula", "sol", "achieved", "counters", "nvidia", "rocprof_v1"}
    analyses = {m.split(".")[-1] for m in modules if m.startswith("roofscope.analysis.")}
    assert analyses & formulas == set()


def test_analyze_text_loads_no_chart_or_html() -> None:
    out, modules = imported("analyze", SMALL)
    assert "Kernel" in out or "kernel" in out
    assert _loaded(modules, ELSEWHERE) == set()
    assert _renderers(modules) == {"roofscope.render.report.text"}


def _renderers(modules: set[str]) -> set[str]:
    """The output formats loaded: the modules of render/ that write a whole document."""
    formats = {"report.json", "report.text", "report.html", "charts.hotspots", "charts.png"}
    formats |= {"charts.timeline", "charts.roofline", "compare.out", "compare.html"}
    return {m for m in modules if m.removeprefix("roofscope.render.") in formats}


def test_option_default_matches_the_analysis() -> None:
    """The CLI declares the gap default without importing the analysis (numpy, DuckDB)."""
    assert DEFAULT_GAP_US * 1000 == DEFAULT_GAP_NS


# ``python -m roofscope ARGS``, then the OpenBLAS thread setting it ran with
BLAS_AT_EXIT = """
import os, sys
from roofscope.cli.app import main
try:
    code = main(sys.argv[1:])
finally:
    sys.stderr.write("\\nblas: " + os.environ.get("OPENBLAS_NUM_THREADS", "unset") + "\\n")
raise SystemExit(code)
"""


@pytest.mark.parametrize(("given", "used"), [(None, "1"), ("3", "3")])
def test_analyze_runs_numpy_on_one_blas_thread(given: str | None, used: str) -> None:
    """OpenBLAS's thread per core spins at numpy's import; a user's own setting is kept."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env |= {"OPENBLAS_NUM_THREADS": given} if given else {}
    done = subprocess.run(
        [sys.executable, "-c", BLAS_AT_EXIT, "analyze", SMALL, "--json"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.endswith(f"\nblas: {used}\n")


def test_the_console_script_flushes_closes_and_exits_with_the_code(tmp_path: Path) -> None:
    """``python -m roofscope`` leaves by os._exit once the output is out: the whole JSON
    (the demo trace's 4 kernels, counted from its CSV), the exit code of an error with its
    one line, and a reader that stops early (``| head``) gets no traceback."""
    env = {**os.environ, "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "roofscope", "analyze"]
    done = subprocess.run([*cmd, str(DEMO_TRACE), "--json"], capture_output=True, env=env)
    assert done.returncode == 0 and done.stderr == b""
    with DEMO_TRACE.open(newline="") as f:
        names = {normalise(r["KernelName"]) for r in csv.DictReader(f)}
    assert {k["name"] for k in json.loads(done.stdout)["kernels"]} == names and len(names) == 4
    missing = subprocess.run([*cmd, str(tmp_path / "none.csv")], capture_output=True, env=env)
    assert missing.returncode == 1 and missing.stdout == b""
    assert missing.stderr.decode().count("\n") == 1
    assert missing.stderr.startswith(b"roofscope: error: ")
    with subprocess.Popen(
        [*cmd, str(DEMO_TRACE), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(10) == b'{\n  "schem'
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=60) in (0, 1) and b"Traceback" not in err


def test_close_spilled_closes_only_a_profile_that_may_have_spilled(tmp_path: Path) -> None:
    from roofscope.model.profile import Profile, close_spilled

    kept, spilled = Profile.empty(), Profile.empty()
    kept.con.execute(f"SET temp_directory = '{tmp_path / 'never-made'}'")
    spilled.con.execute(f"SET temp_directory = '{tmp_path}'")  # the folder a spill makes
    close_spilled()
    assert kept.con.execute("SELECT 1").fetchall() == [(1,)]
    with pytest.raises(duckdb.ConnectionException):
        spilled.con.execute("SELECT 1")
    kept.con.close()


def _threads(profile: object) -> int:
    con = profile.con  # type: ignore[attr-defined]
    ((n,),) = con.execute("SELECT current_setting('threads')").fetchall()
    return int(n)


def test_a_small_input_runs_duckdb_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ONE_THREAD_BYTES of input DuckDB gets one thread (its threads per core would have
    nothing to share out); from that size on, its own default, a thread per core."""
    from roofscope.readers import load as load_module
    from roofscope.readers.load import load

    size = Path(SMALL).stat().st_size
    default = int(duckdb.connect().execute("SELECT current_setting('threads')").fetchall()[0][0])
    assert _threads(load([SMALL])) == 1
    monkeypatch.setattr(load_module, "ONE_THREAD_BYTES", size)  # the file is that size: not under
    assert _threads(load([SMALL])) == default


# the modules of the readers that recognise a JSON object only, and what they load
JSON_READING = {
    "roofscope.readers.torch.kineto",
    "roofscope.readers.amd.rocprofv3_json",
    "roofscope.readers.io.json_stream",
    "isal",
}


def test_a_folder_of_csvs_loads_no_json_reader_nor_numpy(tmp_path: Path) -> None:
    """Each CSV of a folder is asked of every text reader: a CSV is no JSON object, so the
    JSON readers are not imported for it (their gzip and stream decoder: 25-30 ms), and the
    ncu reader, asked about the CSV nobody knows, loads numpy only to read (40-75 ms)."""
    (tmp_path / "kernel_trace.csv").write_bytes(Path(SMALL).read_bytes())
    (tmp_path / "losses.csv").write_text("step,loss\n1,0.5\n", encoding="utf-8")
    out, modules = imported("analyze", str(tmp_path), "--json")
    with Path(SMALL).open(encoding="utf-8", newline="") as f:
        assert json.loads(out)["summary"]["dispatches"] == len(list(csv.DictReader(f)))
    assert "roofscope.readers.nvidia.ncu_csv" in modules  # it was asked about losses.csv
    assert _loaded(modules, JSON_READING | {"numpy"}) == set()


def test_a_workload_folder_loads_no_json_reader() -> None:
    """vcopy MI200's folder holds CSVs and a log no reader knows: none of them is a JSON
    object, so neither the Kineto nor the rocprofv3 JSON reader is imported."""
    folder = DATA / "rocprof-compute-mi200"
    out, modules = imported("analyze", str(folder), "--json")
    with (folder / "timestamps.csv").open(encoding="utf-8", newline="") as f:
        assert json.loads(out)["summary"]["dispatches"] == len(list(csv.DictReader(f)))
    assert "roofscope.readers.amd.compute.rocprof_compute" in modules
    assert _loaded(modules, JSON_READING) == set()
