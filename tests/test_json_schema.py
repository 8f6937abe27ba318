"""`roofscope analyze --json` output validates against the shipped schema (report-v1).

The schema closes every object (additionalProperties false), so a key added to or dropped
from ``render/report/json.py`` without a matching schema change fails here.
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from roofscope.cli.app import main
from roofscope.render.report.json import SCHEMA_VERSION
from tests.conftest import DATA

DEMO = (
    Path(__file__).resolve().parents[1]
    / "src"
    / "roofscope"
    / "data"
    / "demo"
    / "finite-difference"
)

# rocprofv3 kernel_trace.csv, 2025 layout (header as in rocprofiler-sdk's documentation).
V3_TRACE_HEADER = (
    '"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
    '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size",'
    '"Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X",'
    '"Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"\n'
)
V3_TRACE_ROWS = [
    (
        "void addition_kernel<float>(float*, float const*, float const*, int, int)",
        1550151853029637,
        1550151853042437,
    ),
    (
        "divide_kernel(float*, float const*, float const*, int, int)",
        1550151853064037,
        1550151853075237,
    ),
    (
        "void addition_kernel<float>(float*, float const*, float const*, int, int)",
        1550151853095637,
        1550151853108037,
    ),
]
V3_COPY = (
    '"Kind","Direction","Stream_Id","Source_Agent_Id","Destination_Agent_Id","Correlation_Id",'
    '"Start_Timestamp","End_Timestamp"\n'
    '"MEMORY_COPY","MEMORY_COPY_HOST_TO_DEVICE",0,"Agent 0","Agent 4",1,'
    "1550151852987172,1550151853002212\n"
)
V3_STATS_HEADER = (
    '"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"\n'
)
V3_HIP_STATS = (
    V3_STATS_HEADER
    + '"hipStreamCreateWithFlags",4,262497406,65624351.500000,85.15,3991286,249121840,'
    "122332531.343496\n" + '"hipGetDeviceCount",1,32505687,32505687.000000,10.54,32505687,32505687,'
    "0.00000000e+00\n"
)


def v3_trace() -> str:
    lines = [V3_TRACE_HEADER]
    for i, (name, start, end) in enumerate(V3_TRACE_ROWS, start=1):
        lines.append(
            f'"KERNEL_DISPATCH","Agent 4",1,1,834304,{i},{10 + i},"{name}",{i},{start},{end},'
            "0,0,8,0,16,64,1,1,1024,1024,1\n"
        )
    return "".join(lines)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    text = (
        resources.files("roofscope")
        .joinpath("schema", "report-v1.schema.json")
        .read_text(encoding="utf-8")
    )
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def analyze_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = main(["analyze", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    doc: dict[str, Any] = json.loads(out)
    return doc


def assert_valid(validator: jsonschema.Draft202012Validator, doc: dict[str, Any]) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_schema_version_matches_renderer(validator: jsonschema.Draft202012Validator) -> None:
    assert validator.schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}


def test_demo_folder(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = analyze_json(capsys, str(DEMO))
    assert_valid(validator, doc)
    lines = len((DEMO / "results.sysinfo.txt").read_text(encoding="utf-8").splitlines())
    assert [(Path(f["path"]).name, f["role"], f["rows"]) for f in doc["inputs"]] == [
        ("results.csv", "dispatches", 1004),
        ("results.sysinfo.txt", "metadata", lines),  # rocminfo: the GPU
        ("results.stats.csv", "cross-check", 4),
    ]
    assert doc["summary"]["dispatches"] == 1004
    assert doc["devices"] and doc["summary"]["wall_s"] is not None


def test_demo_folder_with_selection(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = analyze_json(capsys, str(DEMO), "--kernel", "laplacian", "--device", "8")
    assert_valid(validator, doc)
    assert doc["selection"] == {"kernel": "laplacian", "device": 8}
    assert doc["summary"]["dispatches"] == 1001


def test_demo_command(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert_valid(validator, json.loads(out))


def test_rocprofv3_kernel_trace(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "834304_kernel_trace.csv"
    trace.write_text(v3_trace(), encoding="utf-8")
    doc = analyze_json(capsys, str(trace))
    assert_valid(validator, doc)
    assert doc["inputs"] == [
        {"path": str(trace), "format": "rocprofv3-kernel-trace", "rows": 3, "role": "dispatches"}
    ]
    assert doc["run"]["producer"] == "rocprofv3"
    assert [d["device"] for d in doc["devices"]] == [4]
    assert doc["summary"]["kernels"] == 2


def test_rocprofv3_folder_with_copies_and_api_stats(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Trace, memory copies and HIP API stats of one process: every array is filled."""
    (tmp_path / "834304_kernel_trace.csv").write_text(v3_trace(), encoding="utf-8")
    (tmp_path / "834304_memory_copy_trace.csv").write_text(V3_COPY, encoding="utf-8")
    (tmp_path / "834304_hip_api_stats.csv").write_text(V3_HIP_STATS, encoding="utf-8")
    doc = analyze_json(capsys, str(tmp_path))
    assert_valid(validator, doc)
    assert sorted(f["role"] for f in doc["inputs"]) == ["api-summary", "copies", "dispatches"]
    assert {a["kind"] for a in doc["activity"]} == {"api", "copy"}


@pytest.mark.parametrize(
    ("name", "text", "fmt"),
    [
        (
            "kernels.csv",
            "Name,Count,TotalTimeNs,AverageTimeNs\n"
            '"void k<float>(float*, int)",4,4000,1000\n'
            "copy_kernel,2,500,250\n",
            "summary-csv",
        ),
        (
            "results.stats.csv",
            '"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
            '"void k<float>(float*, int) [clone .kd]",4,4000,1000,88.88\n'
            '"copy_kernel.kd",2,500,250,11.11\n',
            "rocprof-v1-stats",
        ),
    ],
)
def test_summary_only(
    validator: jsonschema.Draft202012Validator,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    name: str,
    text: str,
    fmt: str,
) -> None:
    """No dispatch timestamps: the timeline fields are null and there are no devices."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    doc = analyze_json(capsys, str(path))
    assert_valid(validator, doc)
    assert doc["inputs"] == [
        {"path": str(path), "format": fmt, "rows": 2, "role": "kernel-summary"}
    ]
    summary = doc["summary"]
    assert summary["dispatches"] == 6
    assert summary["kernel_time_s"] == pytest.approx(4.5e-6)
    for key in (
        "wall_s",
        "busy_s",
        "idle_s",
        "idle_share",
        "gaps",
        "gap_total_s",
        "gap_threshold_s",
    ):
        assert summary[key] is None, key
    assert doc["devices"] == []
    assert all(k["median_s"] is None for k in doc["kernels"])


# -- the schema rejects drift ---------------------------------------------------------------


@pytest.fixture
def demo_doc(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return analyze_json(capsys, str(DEMO))


@pytest.mark.parametrize(
    ("where", "key"),
    [((), "warnings"), (("summary",), "dispatches"), (("kernels", 0), "cumulative_share")],
)
def test_schema_rejects_missing_key(
    validator: jsonschema.Draft202012Validator,
    demo_doc: dict[str, Any],
    where: tuple[Any, ...],
    key: str,
) -> None:
    doc = copy.deepcopy(demo_doc)
    obj: Any = doc
    for step in where:
        obj = obj[step]
    del obj[key]
    errors = list(validator.iter_errors(doc))
    assert [(e.validator, list(e.absolute_path)) for e in errors] == [("required", list(where))]
    assert f"'{key}' is a required property" in errors[0].message


@pytest.mark.parametrize("where", [(), ("run",), ("kernels", 0), ("devices", 0)])
def test_schema_rejects_extra_key(
    validator: jsonschema.Draft202012Validator, demo_doc: dict[str, Any], where: tuple[Any, ...]
) -> None:
    doc = copy.deepcopy(demo_doc)
    obj: Any = doc
    for step in where:
        obj = obj[step]
    obj["unexpected"] = 1
    errors = list(validator.iter_errors(doc))
    assert [(e.validator, list(e.absolute_path)) for e in errors] == [
        ("additionalProperties", list(where))
    ]
    assert "'unexpected' was unexpected" in errors[0].message


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("schema_version",), "2"),
        (("summary", "dispatches"), -1),
        (("summary", "idle_share"), 1.5),
        (("kernels", 0, "share"), -0.1),
        (("kernels", 0, "cumulative_share"), 1.01),
        (("kernels", 0, "calls"), 2.5),
        (("kernels", 0, "total_s"), "2.6"),
        (("inputs", 0, "role"), "something-else"),
    ],
)
def test_schema_rejects_bad_values(
    validator: jsonschema.Draft202012Validator,
    demo_doc: dict[str, Any],
    path: tuple[Any, ...],
    value: object,
) -> None:
    doc = copy.deepcopy(demo_doc)
    obj: Any = doc
    for step in path[:-1]:
        obj = obj[step]
    obj[path[-1]] = value
    errors = list(validator.iter_errors(doc))
    assert [list(e.absolute_path) for e in errors] == [list(path)]


def test_schema_allows_cumulative_share_rounding(
    validator: jsonschema.Draft202012Validator, demo_doc: dict[str, Any]
) -> None:
    doc = copy.deepcopy(demo_doc)
    doc["kernels"][-1]["cumulative_share"] = 1.0000000000000002
    assert_valid(validator, doc)


def test_roofline_reports(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str]
) -> None:
    """With work and ceilings (the roofline issue's example), and with counters (traffic)."""
    summary = DATA / "summary" / "kernels.csv"
    work = ["--work", "vector_add=1.0e9:8.0e8", "--work", "mat_mul=2.6e10:6.0e8@fp16"]
    doc = analyze_json(capsys, str(summary), *work, "--gpu", "mi250x")
    assert_valid(validator, doc)
    assert doc["kernels"][0]["roofline"]["efficiency"] is not None
    assert doc["kernels"][-1]["roofline"] is None  # layer_norm: no work given
    counters = DATA / "rocprofv1-mi250x" / "laplacian" / "data_movement.csv"
    doc = analyze_json(capsys, str(counters))
    assert_valid(validator, doc)
    assert doc["traffic"]["quantities"]["hbm"]["unit"] == "B"


def test_demo_counters_command(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped Omniperf workload: metrics, occupancy, roofline and findings all present."""
    assert main(["demo", "counters", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert_valid(validator, doc)
    assert doc["device"]["key"] == "mi300a"
    assert all(k["metrics"] and k["occupancy"] and k["roofline"] for k in doc["kernels"])
    assert {f["rule"] for f in doc["findings"]} >= {"warm-up-dominates", "low-active-threads"}
    assert main(["demo", "nothing"]) == 2
    assert "choose one of trace, counters" in capsys.readouterr().err


def test_ncu_rule_findings(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nsight Compute's rules as findings (ncu-*) validate: kebab-case rules, evidence of
    strings and numbers (tests/test_profiler_rules.py checks their values)."""
    for path in (
        DATA / "ncu" / "llm-perf-opt-rtx5090" / "kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3",
        DATA / "ncu" / "superbench-cublaslt-ncu" / "cublaslt_ncu.log",
        DATA / "ncu" / "leleucas-opanalysis-a100" / "conv2d_result.csv",
    ):
        doc = analyze_json(capsys, str(path))
        assert_valid(validator, doc)
        assert any(f["rule"].startswith("ncu-") for f in doc["findings"])


def test_rocprof_compute_per_pass_workload_with_cross_pass_ratios(
    validator: jsonschema.Draft202012Validator, capsys: pytest.CaptureFixture[str]
) -> None:
    """The 17 per-pass files of rocprof-compute 3.6+: metrics with the optional cross_pass."""
    doc = analyze_json(
        capsys, str(Path(__file__).parent / "data" / "rocprof-compute-rdna35-passes")
    )
    assert_valid(validator, doc)
    assert "cross_pass" in doc["kernels"][0]["metrics"]["GPUBusy (recomputed)"]


def test_rocprof_compute_raw_pass_folders(
    validator: jsonschema.Draft202012Validator,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """The raw out/<pass> layout (built from those 17 passes): the pass folders as inputs."""
    from tests import rocpd_passes

    doc = analyze_json(capsys, str(rocpd_passes.build(tmp_path)))
    assert_valid(validator, doc)
    assert doc["kernels"][0]["metrics"]["GPUBusy (recomputed)"]["cross_pass"] == {
        "GRBM_COUNT": "pmc_perf_0",
        "GRBM_GUI_ACTIVE": "pmc_perf_3",
    }
