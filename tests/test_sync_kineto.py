"""Issue 38, point 5 on PyTorch traces: the device/stream synchronisations that are the next
runtime call after a kernel launch on the same thread (readers/torch/kineto_syncs.py) become
"sync-after-launch" host ranges, and the launches are counted, so the sync-per-launch rule
and the idle analysis see a Kineto trace as they see an nsys or rocprofv3 API trace. The
counts and the idle time are worked out here from each trace's own events."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from roofscope.analysis.input_wait import launch_syncs
from roofscope.model.access import host_ranges, query
from roofscope.readers.load import load
from tests.conftest import DATA, SHARED_CORPUS, run_json, union
from tests.test_diagnosis import findings

KINETO = DATA / "kineto"
HTA = SHARED_CORPUS / "torch/hta-tests-data/nccl_parser_config/nccl_data.json.gz"
REAL = [  # TraceLens traces (tests/data/PROVENANCE.md): one sync right after a launch each
    KINETO / "torch_compile_triton_trace.json.gz",  # MI300X, torch.compile'd Triton kernels
    KINETO / "h100_qwen1.5_0.5b_chat.json.gz",  # H100, Qwen1.5-0.5B-Chat
    KINETO / "mi300x_bert_small_metadata_first.json.gz",  # MI300X, BERT small
    KINETO / "mi250_minitoy_train_ROCm6_2_kineto.json.gz",  # MI250, a toy training loop
]
RUNTIME = {"cuda_runtime", "cuda_driver", "Runtime"}
COPIES = {"gpu_memcpy", "gpu_memset"}  # copy-engine time, not idle
Event = dict[str, Any]
Cap = pytest.CaptureFixture[str]


def events(path: Path) -> list[Event]:
    doc = json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def ns(us: object) -> int:
    return round(Decimal(str(us)) * 1000)


def is_launch(name: str) -> bool:  # cudaLaunchKernel, hipExtModuleLaunchKernel, ...
    return "LaunchKernel" in name


def is_sync(name: str) -> bool:  # device or stream, the ones a launch-then-wait loop uses
    return name.endswith(("DeviceSynchronize", "StreamSynchronize"))


def after_launch(trace: list[Event]) -> list[Event]:
    """The syncs whose previous runtime call on their thread (error queries skipped) is a
    kernel launch, in time order per thread."""
    calls = sorted((e for e in trace if e["cat"] in RUNTIME), key=lambda e: (e["tid"], e["ts"]))
    last: dict[Any, str] = {}
    found = []
    for e in calls:
        if e["name"] in {"cudaGetLastError", "hipGetLastError"}:
            continue
        if is_sync(e["name"]) and is_launch(last.get(e["tid"], "")):
            found.append(e)
        last[e["tid"]] = e["name"]
    return found


def out_of_order(calls: list[Event]) -> int:
    """The calls that start before the call written before them on their thread."""
    last: dict[Any, Decimal] = {}
    n = 0
    for e in calls:
        n += e["ts"] < last.get(e["tid"], e["ts"])
        last[e["tid"]] = e["ts"]
    return n


def idle_inside(trace: list[Event], calls: list[Event]) -> int:
    """The GPU's idle time inside the calls: clipped to the kernels' span, less the kernels
    and copies (memcpys, memsets) within them (one device in each of these traces)."""
    kernels = union(
        [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in trace if e["cat"] == "kernel"]
    )
    first, last = kernels[0][0], kernels[-1][1]
    copies = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in trace if e["cat"] in COPIES]
    inside = union(
        [(max(ns(e["ts"]), first), min(ns(e["ts"]) + ns(e["dur"]), last)) for e in calls]
    )
    inside = [(a, b) for a, b in inside if b > a]
    work = union(kernels + copies)
    overlap = sum(max(0, min(y, q) - max(x, p)) for x, y in inside for p, q in work)
    return sum(b - a for a, b in inside) - overlap


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split(".")[0])
def test_syncs_right_after_a_launch_in_real_traces(path: Path) -> None:
    """Each trace's launches (runtime events named *LaunchKernel*) and the one device
    synchronisation that directly follows one, with its name, times and idle time."""
    trace = events(path)
    launches = sum(1 for e in trace if e["cat"] in RUNTIME and is_launch(e["name"]))
    synced = after_launch(trace)
    assert len(synced) == 1
    profile = load([str(path)])
    found = launch_syncs(profile)
    assert found is not None
    assert (found.launches, found.synced) == (launches, 1)
    assert found.idle_ns == idle_inside(trace, synced)
    ranges = query(
        profile, host_ranges(profile, "sync-after-launch"), "SELECT name, start_ns, end_ns FROM d"
    )
    (s,) = synced
    assert ranges.fetchall() == [(s["name"], ns(s["ts"]), ns(s["ts"]) + ns(s["dur"]))]


def test_h100_qwen_sync_holds_idle_time() -> None:
    """The H100 Qwen trace's cudaDeviceSynchronize after its last launch waits 2.17 ms, of
    which 118,878 ns the GPU sat idle: 1 of 1,029 launches, far from the rule's half."""
    trace = events(REAL[1])
    (s,) = after_launch(trace)
    assert s["name"] == "cudaDeviceSynchronize"
    assert idle_inside(trace, [s]) == 118_878
    found = launch_syncs(load([str(REAL[1])]))
    assert found is not None and (found.launches, found.synced) == (1029, 1)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split(".")[0])
def test_one_sync_after_many_launches_is_no_finding(capsys: Cap, path: Path) -> None:
    assert not findings(run_json(capsys, str(path)), "sync-per-launch")


# -- synthetic edge cases on top ----------------------------------------------------------


def _loop(tmp_path: Path, between: str | None = None, stride: int = 100) -> Path:
    """Ten iterations on thread 1: cudaLaunchKernel at 100 i (2 µs), a 5 µs kernel at
    100 i + 5, cudaDeviceSynchronize from 100 i + 3 to 100 i + 12; ``between``, a call at
    100 i + 2.5, between launch and sync."""
    out: list[Event] = []
    for i in range(10):
        t = stride * i
        out.append(_call("cudaLaunchKernel", t, 2, {"correlation": i + 1}))
        if between:
            out.append(_call(between, t + 2.5, 0.25, {}))
        out.append(_call("cudaDeviceSynchronize", t + 3, 9, {}))
        args = {"device": 0, "stream": 7, "correlation": i + 1}
        out.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": t + 5,
                    "dur": 5, "args": args})  # fmt: skip
    path = tmp_path / "loop.json"
    path.write_text(json.dumps({"traceEvents": out}))
    return path


def _call(name: str, ts: float, dur: float, args: dict[str, Any]) -> Event:
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1, "ts": ts,
            "dur": dur, "args": args}  # fmt: skip


def test_a_sync_after_every_launch_is_the_finding(tmp_path: Path, capsys: Cap) -> None:
    """10 of 10 launches synced; idle inside the syncs: the first and the last clipped to
    the kernels' span 5 .. 910 µs (7 - 5 = 2 µs each), the eight others 9 - 5 µs each."""
    (f,) = findings(run_json(capsys, str(_loop(tmp_path))), "sync-per-launch")
    idle_us = 2 + 8 * 4 + 2
    assert (f["evidence"]["launches"], f["evidence"]["synced_launches"]) == (10, 10)
    assert f["evidence"]["synced_idle_s"] == pytest.approx(idle_us * 1e-6, rel=1e-12)
    assert f["gain_share"] == pytest.approx(idle_us / 905, rel=1e-12)
    assert f["summary"].startswith("10 of 10 launches are followed by a synchronisation")


def test_an_error_query_between_launch_and_sync_is_skipped(tmp_path: Path, capsys: Cap) -> None:
    (f,) = findings(run_json(capsys, str(_loop(tmp_path, "cudaGetLastError"))), "sync-per-launch")
    assert f["evidence"]["synced_launches"] == 10


def test_another_call_between_launch_and_sync_breaks_the_pair(tmp_path: Path, capsys: Cap) -> None:
    """A cudaMemcpyAsync after each launch: the sync follows the copy, not the launch."""
    doc = run_json(capsys, str(_loop(tmp_path, "cudaMemcpyAsync")))
    assert not findings(doc, "sync-per-launch")
    # no launch was followed by a sync: nothing to count
    assert launch_syncs(load([str(_loop(tmp_path, "cudaMemcpyAsync"))])) is None


def test_calls_written_out_of_time_order_are_paired_in_time(tmp_path: Path, capsys: Cap) -> None:
    """Kineto writes a thread's runtime calls a CUPTI buffer at a time, not always in time
    order (HTA's test traces): the same loop with its runtime events written last to first
    gives the same pairs."""
    path = _loop(tmp_path)
    doc = json.loads(path.read_text())
    runtime = [e for e in doc["traceEvents"] if e["cat"] == "cuda_runtime"]
    kernels = [e for e in doc["traceEvents"] if e["cat"] == "kernel"]
    path.write_text(json.dumps({"traceEvents": runtime[::-1] + kernels}))
    (f,) = findings(run_json(capsys, str(path)), "sync-per-launch")
    assert (f["evidence"]["launches"], f["evidence"]["synced_launches"]) == (10, 10)


@pytest.mark.skipif(not HTA.is_file(), reason="needs ../shared/corpus")
def test_hta_trace_out_of_file_order() -> None:
    """HTA's nccl_parser_config trace: three threads' runtime calls in runs written out of
    time order; the pairs equal those of the calls sorted by time per thread."""
    trace = events(HTA)
    calls = [e for e in trace if e["cat"] in RUNTIME]
    assert out_of_order(calls) == 3  # a run written before an earlier one, on each thread
    synced = after_launch(trace)
    profile = load([str(HTA)])
    found = launch_syncs(profile)
    launches = sum(1 for e in calls if is_launch(e["name"]))
    assert found is not None and (found.launches, found.synced) == (launches, len(synced))


def test_one_launch_and_one_sync_is_no_loop(tmp_path: Path, capsys: Cap) -> None:
    """A single launch and the synchronisation after it (a program's end): 1 of 1, below
    the rule's two synchronised launches."""
    path = _loop(tmp_path)
    doc = json.loads(path.read_text())
    doc["traceEvents"] = doc["traceEvents"][:3]
    path.write_text(json.dumps(doc))
    assert not findings(run_json(capsys, str(path)), "sync-per-launch")


def test_syncs_with_no_idle_time_in_them_are_no_finding(tmp_path: Path, capsys: Cap) -> None:
    """Each sync ends as its kernel ends (100 i + 3 .. 100 i + 10, the kernel 100 i + 5 ..
    100 i + 10) and the first starts before the kernels' span: no idle time inside them."""
    path = _loop(tmp_path)
    doc = json.loads(path.read_text())
    for e in doc["traceEvents"]:
        if e["name"] == "cudaDeviceSynchronize":
            e["ts"], e["dur"] = e["ts"] + 2, 5
    path.write_text(json.dumps(doc))
    assert not findings(run_json(capsys, str(path)), "sync-per-launch")
