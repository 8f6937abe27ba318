"""The ranges the user named as a level (analysis/ranges.py, from the Kineto reader's
``user_ranges`` and ``range_launches``): per range name its calls, kernels and their GPU time,
checked against a plain walk over the trace's own events, decoded here with the json module,
and against the ``gpu_user_annotation`` spans Kineto itself wrote on the GPU timeline."""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import roofscope
from roofscope.analysis.ranges import Ranges
from roofscope.errors import InputError
from roofscope.render.report.text import render_text

from .conftest import SHARED_CORPUS

DATA = Path(__file__).parent / "data" / "kineto"
MI250 = DATA / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"  # ProfilerStep, Optimizer.step
H100 = DATA / "h100_bert_small_metadata_first.json.gz"  # one ProfilerStep
SGLANG = DATA / "sglang_qwen3_8b_decode_mi300x.json.gz"  # step[DECODE bs=32] in execute_...
B200 = DATA / "b200_eager_rank0_of_8_trimmed.json.gz"  # no user_annotation
HTA = SHARED_CORPUS / "torch" / "hta-tests-data"
DDP = HTA / "ns_resolution_trace" / "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
NCCL = HTA / "nccl_parser_config" / "nccl_data.json.gz"
RUNTIME = ("cuda_runtime", "cuda_driver", "Runtime")
STEP = re.compile(r"ProfilerStep#\d+")


def _events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]  # times exactly
    return [e for e in events if e.get("ph") == "X"]


def _ns(value: Decimal | int) -> int:
    return round(Decimal(value) * 1000)


def _expected(path: Path) -> dict[str, tuple[int, int, int]]:
    """Per range name: (ranges holding a kernel's launch, kernels, their summed ns), by a
    plain double loop: a launch is a runtime event whose correlation a kernel carries, and a
    range holds it when it starts inside the range on the range's thread (ProfilerStep#N: on
    any thread of its process)."""
    events = _events(path)
    kernels: defaultdict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e.get("cat") in ("kernel", "Kernel"):
            kernels[e["args"]["correlation"]].append(e)
    launches = [
        e
        for e in events
        if e.get("cat") in RUNTIME and e.get("args", {}).get("correlation") in kernels
    ]
    calls: defaultdict[str, int] = defaultdict(int)
    held: defaultdict[str, dict[int, int]] = defaultdict(dict)
    for r in (e for e in events if e.get("cat") == "user_annotation"):
        step = STEP.fullmatch(r["name"]) is not None
        name = "ProfilerStep" if step else r["name"]
        inside = [
            la
            for la in launches
            if la["pid"] == r["pid"]
            and (step or la["tid"] == r["tid"])
            and _ns(r["ts"]) <= _ns(la["ts"]) <= _ns(r["ts"]) + _ns(r["dur"])
        ]
        for la in inside:
            for k in kernels[la["args"]["correlation"]]:
                held[name][id(k)] = _ns(k["dur"])
        calls[name] += bool(inside)
    return {n: (calls[n], len(ks), sum(ks.values())) for n, ks in held.items()}


def _ranges(path: Path) -> Ranges:
    ranges = roofscope.analyze(path).checkup.ranges
    assert ranges is not None
    return ranges


def _measured(ranges: Ranges) -> dict[str, tuple[int, int, int]]:
    return {r.name: (r.calls, r.dispatches, round(r.time_ns)) for r in ranges.rows}


@pytest.mark.parametrize("path", [MI250, H100, SGLANG], ids=["mi250", "h100", "sglang"])
def test_each_range_name_holds_the_kernels_launched_inside_it(path: Path) -> None:
    assert _measured(_ranges(path)) == _expected(path)


def test_mi250_step_and_optimizer_ranges() -> None:
    """The MI250 training step: one ProfilerStep holding all 14 kernels (the trace's two
    ProfilerStep events, the second holding no launch), Optimizer.step#SGD.step its one
    multi_tensor_apply kernel, nested inside the step."""
    ranges = _ranges(MI250)
    step, opt = ranges.rows
    assert (step.name, step.calls, step.dispatches) == ("ProfilerStep", 1, 14)
    assert step.share == 1.0 and step.mean_ns == step.time_ns
    assert (opt.name, opt.calls, opt.dispatches, opt.time_ns) == (
        "Optimizer.step#SGD.step",
        1,
        1,
        8481,
    )
    assert ranges.nested and ranges.outside_dispatches == 0


def test_the_gpu_user_annotation_spans_the_same_kernels() -> None:
    """Kineto's own gpu_user_annotation for Optimizer.step#SGD.step spans, on the GPU, the
    kernels its launches ran: their count and time equal the range's."""
    events = _events(MI250)
    (span,) = [
        e
        for e in events
        if e.get("cat") == "gpu_user_annotation" and e["name"] == "Optimizer.step#SGD.step"
    ]
    lo, hi = _ns(span["ts"]), _ns(span["ts"]) + _ns(span["dur"])
    ran = [
        _ns(e["dur"])
        for e in events
        if e.get("cat") == "kernel" and lo <= _ns(e["ts"]) and _ns(e["ts"]) + _ns(e["dur"]) <= hi
    ]
    opt = next(r for r in _ranges(MI250).rows if r.name == "Optimizer.step#SGD.step")
    assert (opt.dispatches, opt.time_ns) == (len(ran), sum(ran))


def test_sglang_decode_step_nested_in_the_model_runner_range() -> None:
    """SGLang's step[DECODE bs=32] sits inside vLLM-style execute_32_...: each counts its own
    kernels, so their shares overlap (the outer one holds all 555 kernels)."""
    ranges = _ranges(SGLANG)
    outer, inner = ranges.rows
    assert outer.name.startswith("execute_32_context_0") and inner.name == "step[DECODE bs=32]"
    assert (outer.dispatches, inner.dispatches) == (555, 550)
    assert outer.share == 1.0 and ranges.nested
    text = render_text(roofscope.analyze(SGLANG).checkup, width=80)
    assert "User ranges" in text and "step[DECODE bs=32]" in text
    assert "a kernel counts in every range" in text.replace("\n    ", " ")


def test_a_trace_without_user_ranges_has_no_ranges_key() -> None:
    doc = roofscope.analyze(B200).to_dict()
    assert "ranges" not in doc
    assert "ranges" in roofscope.analyze(MI250).to_dict()


needs_corpus = pytest.mark.skipif(not HTA.exists(), reason="the shared corpus is not here")


@needs_corpus
@pytest.mark.parametrize("path", [DDP, NCCL], ids=["ddp", "nccl"])
def test_hta_ddp_traces_against_a_plain_walk(path: Path) -> None:
    """HTA's DDP traces (MIT): ProfilerStep#N on the main thread, the backward's kernels
    launched by the autograd thread: the steps hold every kernel of the process."""
    ranges = _ranges(path)
    assert _measured(ranges) == _expected(path)
    step = next(r for r in ranges.rows if r.name == "ProfilerStep")
    hot = roofscope.analyze(path).checkup.hotspots
    assert step.time_ns == hot.total_ns and ranges.outside_dispatches == 0


@needs_corpus
def test_hta_nccl_ranges_against_their_gpu_user_annotation() -> None:
    """Each nccl:all_reduce record_function launches one NCCL kernel; Kineto's 15
    gpu_user_annotation spans of that name each hold one kernel of their stream (a span
    starts 1 us before its kernel, ends 0.5 us after it): those kernels are the range's."""
    events = _events(NCCL)
    spans = [
        (e["pid"], e["tid"], _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]))
        for e in events
        if e.get("cat") == "gpu_user_annotation" and e["name"] == "nccl:all_reduce"
    ]
    ran = [
        _ns(k["dur"])
        for k in events
        if k.get("cat") == "kernel"
        and any(
            (k["pid"], k["tid"]) == (pid, tid)
            and lo <= _ns(k["ts"]) <= _ns(k["ts"]) + _ns(k["dur"]) <= hi
            for pid, tid, lo, hi in spans
        )
    ]
    row = next(r for r in _ranges(NCCL).rows if r.name == "nccl:all_reduce")
    assert (row.calls, row.dispatches, row.time_ns) == (len(spans), len(ran), sum(ran))
    assert len(spans) == len(ran) == 15


def test_profiler_steps_are_one_row_with_their_mean(tmp_path: Path) -> None:
    """Synthetic: two steps of 10 and 30 us kernels, a launch on another thread inside a
    record_function range (not its), and a range holding no launch (not kept)."""
    events = [
        _x("user_annotation", "ProfilerStep#7", 0, 100, tid=1),
        _x("user_annotation", "ProfilerStep#8", 100, 100, tid=1),
        _x("user_annotation", "attention layer 12", 110, 50, tid=1),
        _x("user_annotation", "idle", 300, 10, tid=1),
        _launch(10, 1, tid=1),
        _launch(120, 2, tid=1),
        _launch(130, 3, tid=2),  # the autograd thread: in step 8, not in the layer
        _kernel(20, 10, 1),
        _kernel(140, 30, 2),
        _kernel(180, 5, 3),
    ]
    path = tmp_path / "steps.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    ranges = _ranges(path)
    assert _measured(ranges) == {
        "ProfilerStep": (2, 3, 45_000),
        "attention layer 12": (1, 1, 30_000),
    }
    assert ranges.rows[0].mean_ns == 22_500


def _x(cat: str, name: str, ts: int, dur: int, *, tid: int, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def _launch(ts: int, correlation: int, *, tid: int) -> dict[str, Any]:
    return _x("cuda_runtime", "cudaLaunchKernel", ts, 2, tid=tid, correlation=correlation)


def _kernel(ts: int, dur: int, correlation: int) -> dict[str, Any]:
    event = _x("kernel", f"k{correlation}", ts, dur, tid=7, correlation=correlation, device=0)
    event["pid"] = 0
    return event


def test_text_and_html_name_the_steps_and_escape_the_names(tmp_path: Path) -> None:
    """The text says the step count and the mean step's kernel time; the HTML table shows a
    range named with markup as text."""
    events = [
        _x("user_annotation", "ProfilerStep#1", 0, 100, tid=1),
        _x("user_annotation", "ProfilerStep#2", 100, 100, tid=1),
        _x("user_annotation", "<b>decode</b>", 110, 50, tid=1),
        _launch(10, 1, tid=1),
        _launch(120, 2, tid=1),
        _kernel(20, 10, 1),
        _kernel(140, 30, 2),
    ]
    path = tmp_path / "steps.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    report = roofscope.analyze(path)
    text = render_text(report.checkup, width=80)
    assert "ProfilerStep: 2 steps, 20 µs of kernel time a step on average." in text
    html = report.to_html()
    assert "&lt;b&gt;decode&lt;/b&gt;" in html and "<b>decode</b>" not in html
    assert '<table id="ranges">' in html


SAXPY = Path(__file__).parent / "data" / "nsys" / "saxpy-mpi-a100-nvtx.sqlite"


def _nvtx_expected(path: Path) -> dict[str, tuple[int, int, int]]:
    """Per NVTX push/pop range name: (ranges holding a launch, kernels, their summed ns), by a
    plain loop over the export's rows: a launch is a runtime row whose correlationId a kernel
    carries, inside the range on its thread (a launch's two runtime rows count once)."""
    con = sqlite3.connect(path)
    kernels = con.execute(
        "SELECT correlationId, end - start FROM CUPTI_ACTIVITY_KIND_KERNEL"
    ).fetchall()
    launches = con.execute(
        "SELECT globalTid, start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"
    ).fetchall()
    ranges = con.execute(
        "SELECT n.start, n.end, coalesce(n.text, s.value), n.globalTid FROM NVTX_EVENTS n "
        "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType = 59"
    ).fetchall()
    out: dict[str, tuple[int, int, int]] = {}
    for start, end, name, tid in ranges:
        inside = {c for t, s, c in launches if t == tid and start <= s <= end}
        mine = [d for c, d in kernels if c in inside]
        if mine:
            calls, n, total = out.get(name, (0, 0, 0))
            out[name] = (calls + 1, n + len(mine), total + sum(mine))
    return out


def test_nsys_sqlite_nvtx_ranges_hold_their_launches_kernels() -> None:
    """pipit's MPI saxpy on A100 (nsys 2022.2): each of the five `saxpy` NVTX ranges holds one
    launch (two runtime rows, cudaLaunchKernel and cudaLaunchKernel_v7000) of one kernel;
    MPI_Send/MPI_Recv ranges launch nothing and are not kept."""
    ranges = _ranges(SAXPY)
    assert _measured(ranges) == _nvtx_expected(SAXPY)
    (saxpy,) = ranges.rows
    assert (saxpy.name, saxpy.calls, saxpy.dispatches, saxpy.share) == ("saxpy", 5, 5, 1.0)
    assert ranges.outside_dispatches == 0 and not ranges.nested


def test_a_damaged_nvtx_range_time_is_one_line(tmp_path: Path) -> None:
    """docs/bad-inputs.md class 124: a push/pop range whose start is no whole number names the
    table, its rowid and the column."""
    damaged = tmp_path / "saxpy.sqlite"
    damaged.write_bytes(SAXPY.read_bytes())
    con = sqlite3.connect(damaged)
    (rowid,) = con.execute("SELECT min(rowid) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()
    con.execute("UPDATE NVTX_EVENTS SET start = 'soon' WHERE rowid = ?", (rowid,))
    con.commit()
    con.close()
    with pytest.raises(InputError, match=f"NVTX_EVENTS rowid {rowid}: start is 'soon'"):
        roofscope.analyze(damaged)
