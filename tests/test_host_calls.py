"""Idle time explained by what the host did, from API traces beside a kernel trace: nsys
``cuda_api_trace`` (and ``nvtx_pushpop_trace``) CSV exports.

Real files: tests/data/nsys/host_{cuda_gpu_trace,cuda_api_trace,nvtx_pushpop_trace}.csv
(fractalyze/zisk-zorch, RTX 5090, Apache-2.0; tests/data/PROVENANCE.md). Expected values are
computed here from the files' own columns in plain Python. Synthetic files (written into
tmp_path) add a launch-then-synchronise loop, which the real export does not have.
"""

from __future__ import annotations

import csv
import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import roofscope
from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.io import host_calls
from roofscope.readers.nvidia.nsys_host import ApiTrace, NvtxTrace
from roofscope.readers.sniff import read_head
from tests.conftest import DATA
from tests.test_json_schema import analyze_json, assert_valid

NSYS = DATA / "nsys"
HOST = ("host_cuda_gpu_trace.csv", "host_cuda_api_trace.csv", "host_nvtx_pushpop_trace.csv")
GPU_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
)
API_HEADER = "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def export(tmp_path: Path) -> Path:
    for name in HOST:
        shutil.copy(NSYS / name, tmp_path / name)
    return tmp_path


def idle_finding(path: Path) -> dict[str, Any]:
    doc = roofscope.analyze(path).to_dict()
    return next(f for f in doc["findings"] if f["rule"] == "idle-gaps")


def idle_inside(kernels: list[tuple[int, int]], ranges: list[tuple[int, int]]) -> int:
    """The time inside the ranges (clipped to the kernels' span) that no kernel ran."""
    first, last = min(a for a, _ in kernels), max(b for _, b in kernels)
    total = 0
    for a, b in ranges:
        a, b = max(a, first), min(b, last)
        if b > a:
            busy = sum(max(0, min(b, e) - max(a, s)) for s, e in kernels)
            total += (b - a) - busy
    return total


def kernel_spans(path: Path) -> list[tuple[int, int]]:
    return [
        (int(r["Start (ns)"]), int(r["Start (ns)"]) + int(r["Duration (ns)"]))
        for r in rows(path)
        if r["GrdX"]
    ]


def test_module_loads_in_the_real_export_are_compile_time(tmp_path: Path) -> None:
    """Two cuModuleLoadFatBinary calls (20.9 ms and 4.8 ms): the first inside the kernels'
    span, with no kernel running in it; the second after the last kernel."""
    kernels = kernel_spans(NSYS / HOST[0])
    loads = [
        (int(r["Start (ns)"]), int(r["Start (ns)"]) + int(r["Duration (ns)"]))
        for r in rows(NSYS / HOST[1])
        if r["Name"].startswith("cuModuleLoad")
    ]
    assert len(loads) == 2
    expected = idle_inside(kernels, loads)
    assert expected == 20_863_051  # the first load whole: its Duration (ns) field
    found = idle_finding(export(tmp_path))
    assert found["evidence"]["compile_idle_s"] == pytest.approx(expected / 1e9, abs=1e-12)
    assert "sync_idle_s" not in found["evidence"]  # the export has no blocking call


def test_the_real_export_is_one_run_and_its_api_calls_are_listed(tmp_path: Path) -> None:
    doc = roofscope.analyze(export(tmp_path)).to_dict()
    roles = {Path(i["path"]).name: i["role"] for i in doc["inputs"]}
    assert roles["host_cuda_api_trace.csv"] == roles["host_nvtx_pushpop_trace.csv"] == "host-calls"
    api = rows(NSYS / HOST[1])
    calls = {a["name"]: a["calls"] for a in doc["activity"] if a["kind"] == "api"}
    assert calls == {n: sum(r["Name"] == n for r in api) for n in {r["Name"] for r in api}}
    assert doc["summary"]["dispatches"] == len(kernel_spans(NSYS / HOST[0]))


def test_xla_module_ranges_are_execution_not_compilation() -> None:
    """The real NVTX trace holds TSL:XlaModule (execution) and :host/* ranges: no compile."""
    path = NSYS / HOST[2]
    profile = Profile.empty()
    NvtxTrace().read(path, read_head(path), profile, role=Role.HOST_CALLS)
    assert profile.count("host_ranges") == 0
    assert profile.inputs[0].rows == len(rows(path)) == 7


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("cudaDeviceSynchronize", "sync"),
        ("cudaStreamSynchronize_v3020", "sync"),
        ("hipEventSynchronize", "sync"),
        ("cudaMemcpy", "sync"),
        ("cudaMemcpyAsync", None),
        ("cuModuleLoadFatBinary", "compile"),
        ("hipModuleLoadData", "compile"),
        ("nvrtcCompileProgram", "compile"),
        ("cuModuleGetFunction", None),
        ("cudaLaunchKernel", None),
    ],
)
def test_call_kinds(name: str, kind: str | None) -> None:
    assert host_calls.call_kind(name) == kind


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("CompiledKernel::compile", "compile"),
        ("FusionExecutor::compileFusion", "compile"),
        ("torch._dynamo.convert_frame._compile", "compile"),
        ("compile_fx_inner", "compile"),
        ("TSL:XlaModule:#hlo_module=jit_fn,program_id=471#", None),
        ("Torch-Compiled Region: 0/0", None),
        (":host/prove", None),
    ],
)
def test_range_kinds(name: str, kind: str | None) -> None:
    assert host_calls.range_kind(name) == kind


def loop_export(tmp_path: Path, synced: int, launches: int) -> Path:
    """``launches`` kernels of 10 µs, 100 µs apart; the first ``synced`` launches followed by
    a cudaGetLastError and a cudaDeviceSynchronize of 30 µs that starts 5 µs into the
    kernel ends (so 25 µs of each is idle GPU time)."""
    gpu, api = [GPU_HEADER], [API_HEADER]
    for i in range(launches):
        t = 1_000_000 + i * 100_000
        gpu.append(f"{t},10000,{i},1,1,1,64,1,1,16,0,0,,,,,NVIDIA H100 (0),1,,7,k{i % 2}")
        api.append(f"{t - 4000},3000,cudaLaunchKernel,0,{i},9,9,20,app")
        if i < synced:
            api.append(f"{t - 800},200,cudaGetLastError,0,0,9,9,20,app")
            api.append(f"{t + 5000},30000,cudaDeviceSynchronize,0,0,9,9,20,app")
    (tmp_path / "run_cuda_gpu_trace.csv").write_text("\n".join(gpu) + "\n")
    (tmp_path / "run_cuda_api_trace.csv").write_text("\n".join(api) + "\n")
    return tmp_path


def test_a_sync_after_every_launch_is_named(tmp_path: Path) -> None:
    doc = roofscope.analyze(loop_export(tmp_path, synced=30, launches=40)).to_dict()
    found = next(f for f in doc["findings"] if f["rule"] == "sync-per-launch")
    assert found["summary"].startswith("30 of 40 launches are followed by a synchronisation; ")
    assert found["evidence"]["synced_idle_s"] == pytest.approx(30 * 25_000 / 1e9)
    assert found["evidence"]["launches"] == 40
    idle = next(f for f in doc["findings"] if f["rule"] == "idle-gaps")
    assert idle["evidence"]["sync_idle_s"] == pytest.approx(30 * 25_000 / 1e9)


@pytest.mark.parametrize(("synced", "named"), [(20, True), (19, False)])
def test_half_the_launches_synced_is_the_threshold(
    tmp_path: Path, synced: int, named: bool
) -> None:
    doc = roofscope.analyze(loop_export(tmp_path, synced=synced, launches=40)).to_dict()
    found = [f for f in doc["findings"] if f["rule"] == "sync-per-launch"]
    assert bool(found) is named
    if named:
        ms = synced * 25_000 / 1e6  # 25 µs of each sync is idle GPU time
        assert found[0]["summary"].endswith(f"the GPU sat idle {ms:g} ms inside them")


def test_a_sync_not_after_a_launch_is_not_counted() -> None:
    calls = [
        (1, 0, 10, "cudaLaunchKernel"),
        (1, 20, 30, "cudaMemsetAsync"),
        (1, 40, 50, "cudaDeviceSynchronize"),
        (2, 25, 35, "cudaLaunchKernel"),  # another thread's launch
        (1, 60, 70, "cuLaunchKernel"),
        (1, 80, 90, "cuStreamSynchronize"),
    ]
    assert host_calls.syncs_after_launch(calls) == [(80, 90, "cuStreamSynchronize")]


def test_a_damaged_api_trace_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "x_cuda_api_trace.csv"
    path.write_text(
        f"{API_HEADER}\n100,5,cudaLaunchKernel,0,1,9,9,20,app\nabc,5,cudaFree,0,2,9,9,20,app\n"
    )
    with pytest.raises(InputError) as info:
        ApiTrace().read(path, read_head(path), Profile.empty(), role=Role.HOST_CALLS)
    message = str(info.value)
    assert "x_cuda_api_trace.csv:3:" in message and "'Start (ns)'" in message and "'abc'" in message
    assert "\n" not in message


# -- rocprofv3 hip_api_trace --------------------------------------------------------------------

V3_API = DATA / "api-trace-rocprofv3" / "decode_hip_api_trace.csv"
V3_KERNELS = DATA / "rocprofv3-layouts" / "gfx1151_decode_kernel_trace.csv"


def v3_export(tmp_path: Path, prefix: str = "gfx1151_decode") -> Path:
    shutil.copy(V3_KERNELS, tmp_path / f"{prefix}_kernel_trace.csv")
    shutil.copy(V3_API, tmp_path / f"{prefix}_hip_api_trace.csv")
    return tmp_path


def v3_spans(path: Path, column: str, names: set[str] | None = None) -> list[tuple[int, int]]:
    return [
        (int(r["Start_Timestamp"]), int(r["End_Timestamp"]))
        for r in rows(path)
        if names is None or r[column] in names
    ]


@pytest.mark.parametrize("prefix", ["decode", "gfx1151_decode"])
def test_hip_stream_syncs_of_the_real_trace(tmp_path: Path, prefix: str) -> None:
    """The llama.cpp decode trace (gfx1151): 4 hipStreamSynchronize inside the kernels' span;
    the idle time inside them, from the two files' own timestamps. A prefix with an
    underscore keeps the two files one run."""
    kernels = v3_spans(V3_KERNELS, "Kernel_Name")
    syncs = v3_spans(V3_API, "Function", {"hipStreamSynchronize"})
    assert len(syncs) == 4
    expected = idle_inside(kernels, syncs)
    assert expected == 19_177
    found = idle_finding(v3_export(tmp_path, prefix))
    assert found["evidence"]["sync_idle_s"] == pytest.approx(expected / 1e9, abs=1e-12)


def test_the_real_hip_trace_has_no_sync_per_launch(tmp_path: Path) -> None:
    """180 hipLaunchKernel, each followed by hipGetLastError and the next launch's
    __hipPushCallConfiguration, never directly by a synchronisation."""
    doc = roofscope.analyze(v3_export(tmp_path)).to_dict()
    calls = {a["name"]: a["calls"] for a in doc["activity"] if a["kind"] == "api"}
    assert calls["hipLaunchKernel"] == sum(r["Function"] == "hipLaunchKernel" for r in rows(V3_API))
    assert calls["hipLaunchKernel"] == 180
    assert not [f for f in doc["findings"] if f["rule"] == "sync-per-launch"]


def test_a_damaged_hip_api_trace_names_its_line(tmp_path: Path) -> None:
    from roofscope.readers.amd.rocprofv3_host import ApiTrace as V3ApiTrace

    path = tmp_path / "1_hip_api_trace.csv"
    header = '"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp",'
    path.write_text(f'{header}"End_Timestamp"\nHIP_RUNTIME_API_EXT,hipFree,1,1,1,10,x\n')
    with pytest.raises(InputError) as info:
        V3ApiTrace().read(path, read_head(path), Profile.empty(), role=Role.HOST_CALLS)
    message = str(info.value)
    assert "1_hip_api_trace.csv:2:" in message and "'End_Timestamp'" in message
    assert "\n" not in message


# -- Kineto: compile ranges ---------------------------------------------------------------------


def kineto_trace(tmp_path: Path, compiled: list[tuple[str, str, int, int]]) -> Path:
    """Ten 5 µs kernels 100 µs apart (pid 0) and host events (category, name, ts, dur)."""
    kernels = [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100 * i, "dur": 5,
         "args": {"device": 0, "stream": 7}}
        for i in range(10)
    ]  # fmt: skip
    host = [
        {"ph": "X", "cat": c, "name": n, "pid": 1, "tid": 1, "ts": t, "dur": d}
        for c, n, t, d in compiled
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": kernels + host}))
    return path


def test_a_compile_range_in_the_gaps_is_named_first(tmp_path: Path) -> None:
    """Dynamo's compile_inner from 105 to 800 µs (six 5 µs kernels run inside it) and a
    cuModuleLoadData in the next gap (805 to 895 µs): 755 of the 855 µs idle is compilation,
    so its remedy leads; the Torch-Compiled Region (running compiled code) is not counted."""
    host = [
        ("cpu_op", "_compile.compile_inner (dynamo_timed)", 105, 695),
        ("cuda_driver", "cuModuleLoadData", 805, 90),
        ("cpu_op", "Torch-Compiled Region: 0/0", 905, 90),  # execution, not compile
    ]
    kernels = [(100 * i, 100 * i + 5) for i in range(10)]
    expected = idle_inside(kernels, [(105, 800), (805, 895)])
    assert expected == 695 - 6 * 5 + 90
    found = idle_finding(kineto_trace(tmp_path, host))
    assert found["evidence"]["compile_idle_s"] == pytest.approx(expected * 1e-6, rel=1e-12)
    assert found["evidence"]["idle_s"] == pytest.approx(9 * 95e-6, rel=1e-12)
    assert found["prescription"].startswith("compile before the measured steps first")


@pytest.mark.parametrize(
    "name", ["sglang_qwen3_8b_decode_mi300x.json.gz", "inference_rank_1.json.gz"]
)
def test_real_traces_without_compilation_have_no_compile_time(name: str) -> None:
    assert "compile_idle_s" not in idle_finding(DATA / "kineto" / name)["evidence"]


def test_host_call_inputs_and_findings_fit_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The role host-calls, the api activity and the sync-per-launch finding are in
    report-v1's terms."""
    schema = json.loads(
        resources.files("roofscope").joinpath("schema", "report-v1.schema.json").read_text()
    )
    doc = analyze_json(capsys, str(loop_export(tmp_path, synced=30, launches=40)))
    assert {i["role"] for i in doc["inputs"]} == {"host-calls", "dispatches"}
    assert [f["rule"] for f in doc["findings"]].count("sync-per-launch") == 1
    assert_valid(Draft202012Validator(schema), doc)


NVTX_HEADER = (
    "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,"
    "NumChild,RangeId,ParentId,RangeStack,NameTree"
)


def test_a_module_load_inside_a_compile_range_counts_once(tmp_path: Path) -> None:
    """nvFuser's CompiledKernel::compile NVTX range (20 to 80 µs) holds the cuModuleLoadData
    it calls (50 to 70 µs), between kernels at 0-10 µs and 100-110 µs: the idle time inside
    compilation is the range's 60 µs, not 60 + 20."""
    gpu = [GPU_HEADER] + [
        f"{t},10000,{i},1,1,1,64,1,1,16,0,0,,,,,NVIDIA H100 (0),1,,7,k"
        for i, t in enumerate((0, 100_000))
    ]
    (tmp_path / "run_cuda_gpu_trace.csv").write_text("\n".join(gpu) + "\n")
    api = f"{API_HEADER}\n50000,20000,cuModuleLoadData,0,9,9,9,20,app\n"
    (tmp_path / "run_cuda_api_trace.csv").write_text(api)
    nvtx = f"{NVTX_HEADER}\n20000,80000,60000,0,60000,CompiledKernel::compile,9,9,0,0,1,,:1,x\n"
    (tmp_path / "run_nvtx_pushpop_trace.csv").write_text(nvtx)
    found = idle_finding(tmp_path)
    assert found["evidence"]["compile_idle_s"] == pytest.approx(60e-6, rel=1e-12)
    assert found["evidence"]["idle_s"] == pytest.approx(90e-6, rel=1e-12)
