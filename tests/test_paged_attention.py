"""Paged attention of LLM serving from the step's sequence-length sums (issue 39, point 2).

The traces are AMD TraceLens's (MIT; AMD-AGI/TraceLens @ 171dd74721ca1ec45709e5805b68ae1f65e27811,
tests/data/PROVENANCE.md). Every expected count is worked out here from the step range's
name and the operator's recorded Input Dims, by TraceLens's model as its
docs/conceptual/inference-analysis.md states it (per request: 2·H_Q·(d_qk + d_v)·N_Q·N_KV,
less the causal half of N_Q² for a context request; elements Q + O and the N_KV keys and
values read), and compared with TraceLens's own perf report of the same trace
(tests/traces/inference/*/perf_csvs/InferenceAttention_fwd.csv, GFLOPS_first and
"Data Moved (MB)_first", MB there meaning MiB).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

import roofscope
from roofscope.analysis.work.shapes import NoWork, OpCall, OpWork, work_or_reason
from roofscope.analysis.work.shapes.steps import Damaged, step_sums
from tests.conftest import DATA

BF16, INT = "c10::BFloat16", "int"
UNIFIED = "vllm::unified_attention_with_output"
MIB = 2**20
PIECEWISE = DATA / "kineto" / "vllm_mi300x_piecewise_graph_execution.json.gz"
LAYER = DATA / "kineto" / "sglang_qwen3_8b_prefill_layer_mi300x.json.gz"
DECODE = DATA / "kineto" / "vllm_mi300x_unnamed_graph_execution.json.gz"
DECODE_CAPTURE = DATA / "graph_capture" / "vllm_decode_full_bs32_capture.json.gz"
# the step range around LAYER's layer in the whole trace (TraceLens's
# tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz), verbatim
SGLANG_STEP = {
    "ph": "X", "cat": "user_annotation", "pid": 251, "tid": 251,
    "name": "execute_15360_context_15(sq15360sk15360sqsq15728640sqsk15728640)"
    "_generation_0(sq0sk0sqsq0sqsk0)",
    "ts": 4909913692199.694, "dur": 522741.423,
    "args": {"External id": 219581, "Record function id": 0, "Ev Idx": 33212},
}  # fmt: skip


def events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        found: list[dict[str, Any]] = json.load(f)["traceEvents"]
    return found


def numbers(name: str) -> dict[str, int]:
    """The step name's sums, read here with a regex of the test's own."""
    found = {}
    for kind, body in re.findall(r"(context|generation)_\d+\(([^)]*)\)", name):
        for key, value in re.findall(r"(sqsq|sqsk|sq|sk)(\d+)", body):
            found[f"{kind[0]}_{key}"] = int(value)
    return found


def expected(s: dict[str, int], hq: int, hkv: int, d: int, dv: int, size: int) -> tuple[int, int]:
    pairs2 = 2 * s["c_sqsk"] - s["c_sqsq"] + 2 * s["g_sqsk"]  # twice the pairs attended
    flops = hq * (d + dv) * pairs2
    moved = ((s["c_sq"] + s["g_sq"]) * hq + (s["c_sk"] + s["g_sk"]) * hkv) * (d + dv) * size
    return flops, moved


def roof_kernel(path: Path, part: str) -> Any:
    roof = roofscope.analyze(path).checkup.roofline.result.kernels
    [kernel] = [k for k in roof if part in k.name]
    return kernel


# --- real traces


def test_vllm_mixed_chunked_step_matches_tracelens() -> None:
    """vLLM gpt-oss, piecewise graphs, MI300X: one step of 9 context requests (chunked:
    Σ N_KV 8430 > Σ N_Q 8155) and 37 decodes; 24 unified_attention_with_output calls of q
    [8192, 64, 64], k, v [8192, 8, 64]. TraceLens: 65.010180096 GFLOP, 211.826171875 MB."""
    trace = events(PIECEWISE)
    [step] = [e["name"] for e in trace if e.get("cat") == "user_annotation"]
    calls = [e for e in trace if e.get("name") == "vllm::unified_attention_with_output"]
    (t, hq, d), (_, hkv, _), (_, _, dv) = (calls[0]["args"]["Input Dims"][i] for i in range(3))
    sums = numbers(step)
    assert sums["c_sk"] > sums["c_sq"] and sums["g_sq"] == 37 and t == 8192
    flops, moved = expected(sums, hq, hkv, d, dv, 2)
    assert (flops, moved / MIB) == (65_010_180_096, 211.826171875)  # TraceLens's row
    kernel = roof_kernel(PIECEWISE, "kernel_unified_attention_2d")
    assert kernel.flops == {"bf16-matrix": len(calls) * flops}
    assert kernel.bytes == {"hbm": len(calls) * moved}
    doc = roofscope.analyze(PIECEWISE).to_dict()
    [row] = [r for r in doc["operators"]["rows"] if r["name"] == calls[0]["name"]]
    assert (row["flops"], row["bytes"], row["work_unknown"]) == (24 * flops, 24 * moved, None)
    assert len(calls) == 24


def test_sglang_causal_prefill_step_matches_tracelens(tmp_path: Path) -> None:
    """SGLang Qwen3-8B prefill on MI300X: one decoder layer's aiter::mha_batch_prefill (q
    [15360, 32, 128], the cache [835874, 8, 128], cu_seqlens_q [16]) inside the trace's own
    step range (re-inserted: the trimmed copy kept only the events wholly in the layer).
    15 first chunks, causal; TraceLens: 128.84901888 GFLOP, 300.0 MB."""
    trace = events(LAYER)
    path = tmp_path / "layer_step.json"
    doc = json.loads(gzip.decompress(LAYER.read_bytes()))
    doc["traceEvents"].append(SGLANG_STEP)
    path.write_text(json.dumps(doc))
    [call] = [e for e in trace if e.get("name") == "aiter::mha_batch_prefill"]
    (t, hq, d), (_, hkv, _), (_, _, dv), (seqlens,) = call["args"]["Input Dims"][:4]
    sums = numbers(SGLANG_STEP["name"])
    assert sums["c_sq"] == sums["c_sk"] == t and seqlens == 15 + 1
    flops, moved = expected(sums, hq, hkv, d, dv, 2)
    assert (flops, moved / MIB) == (128_849_018_880, 300.0)  # TraceLens's row
    assert flops == 4 * hq * d * 15 * 1024 * 1024 / 2  # 15 requests of 1024, causal
    kernel = roof_kernel(path, "FmhaBatchPrefill")
    assert (kernel.flops, kernel.bytes) == ({"bf16-matrix": flops}, {"hbm": moved})
    assert kernel.bound == "compute"


def test_vllm_decode_graph_gets_its_captured_calls_step(tmp_path: Path) -> None:
    """vLLM gpt-oss full-graph decode (MI300X) with its capture trace: the 24 captured
    unified_attention_with_output calls (q [32, 64, 64], k, v [32, 8, 64]) replayed inside
    the one step range, 32 decodes over 55086 keys. TraceLens: 0.902529024 GFLOP, 108.08984375
    MB. The same replay inside two steps of other sums gives no count."""
    capture = events(DECODE_CAPTURE)
    calls = [e for e in capture if e.get("name") == UNIFIED]
    (t, hq, d), (_, hkv, _), (_, _, dv) = (calls[0]["args"]["Input Dims"][i] for i in range(3))
    [step] = [e for e in events(DECODE) if e.get("cat") == "user_annotation"]
    sums = numbers(step["name"])
    assert sums["c_sq"] == 0 and sums["g_sq"] == t == 32
    flops, moved = expected(sums, hq, hkv, d, dv, 2)
    assert (flops, moved / MIB) == (902_529_024, 108.08984375)  # TraceLens's row
    assert flops == 4 * hq * d * sums["g_sk"]  # N_Q = 1 each
    doc = roofscope.analyze(DECODE, graph_capture=DECODE_CAPTURE).to_dict()
    [row] = [r for r in doc["operators"]["rows"] if r["name"] == UNIFIED]
    assert (row["flops"], row["bytes"]) == (len(calls) * flops, len(calls) * moved)
    # the step replayed again later (its graph launch, the launch's kernels and flows, the
    # step range renamed to other sums): one captured call, two steps: no count
    trace = json.loads(gzip.decompress(DECODE.read_bytes()))
    [launch] = [e for e in trace["traceEvents"] if e.get("name") == "hipGraphLaunch"]
    replay = [e for e in trace["traceEvents"] if _correlation(e) == _correlation(launch)]
    later = [_shifted(e, 10_000.0) for e in [*replay, step]]
    later[-1]["name"] = step["name"].replace("sk55086", "sk55000")
    trace["traceEvents"] += later
    path = tmp_path / "two_steps.json"
    path.write_text(json.dumps(trace))
    doc = roofscope.analyze(path, graph_capture=DECODE_CAPTURE).to_dict()
    [row] = [r for r in doc["operators"]["rows"] if r["name"] == UNIFIED]
    assert row["flops"] is None and row["bytes"] is None


def _correlation(event: dict[str, Any]) -> Any:
    args = event.get("args") or {}
    return args.get("correlation", args.get("external id") if event.get("ph") in "sf" else None)


def _shifted(event: dict[str, Any], by: float) -> dict[str, Any]:
    """A copy ``by`` µs later; a launch's correlation id (and its kernels' and flow's) + 1."""
    copy = json.loads(json.dumps(event))
    copy["ts"] = copy["ts"] + by
    args = copy.get("args") or {}
    for key in ("correlation", "External id", "external id"):
        if key in args and copy.get("cat") != "user_annotation":
            args[key] += 1_000_000
    if copy.get("ph") in ("s", "f"):
        copy["id"] = copy["id"] + 1_000_000
    return copy


def test_without_a_step_range_the_reason_stays() -> None:
    """The same layer as trimmed (no step range around it): no work, and why."""
    doc = roofscope.analyze(LAYER).to_dict()
    [row] = [r for r in doc["operators"]["rows"] if r["name"] == "aiter::mha_batch_prefill"]
    assert row["flops"] is None and row["bytes"] is None
    assert "no step range around the call gives their sums" in row["work_unknown"]


def test_a_damaged_step_range_gives_no_work(tmp_path: Path) -> None:
    """The piecewise trace with its step's name damaged (a digit lost from a sum): the
    attention gets no work rather than a wrong one."""
    doc = json.loads(gzip.decompress(PIECEWISE.read_bytes()))
    [step] = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation"]
    step["name"] = step["name"].replace("sqsk7671310", "sqsk767131")  # sqsk < sqsq
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(doc))
    roof = roofscope.analyze(path).checkup.roofline.result.kernels
    assert not [k for k in roof if "unified_attention" in k.name]
    doc = roofscope.analyze(path).to_dict()
    [row] = [r for r in doc["operators"]["rows"] if r["name"] == UNIFIED]
    assert row["flops"] is None and row["bytes"] is None


# --- the formula on synthetic calls: each request written out, the sums taken here

UNIFIED_DIMS = [[64, 32, 128], [64, 8, 128], [64, 8, 128], [64, 32, 128], [], [], [], [0]]
UNIFIED_TYPES = [BF16] * 4 + ["", "", ""] + [BF16]


def vllm_step(context: list[tuple[int, int]], generation: list[tuple[int, int]]) -> str:
    def part(reqs: list[tuple[int, int]]) -> str:
        sq, sk = sum(q for q, _ in reqs), sum(k for _, k in reqs)
        sqsq, sqsk = sum(q * q for q, _ in reqs), sum(q * k for q, k in reqs)
        return f"{len(reqs)}(sq{sq}sk{sk}sqsq{sqsq}sqsk{sqsk})"

    tokens = sum(q for q, _ in context + generation)
    return f"execute_{tokens}_context_{part(context)}_generation_{part(generation)}"


def call(step: str, name: str = UNIFIED, dims: list[Any] | None = None) -> OpWork | NoWork:
    types = UNIFIED_TYPES if name == UNIFIED else [BF16] * 3
    return work_or_reason(OpCall(name, dims or UNIFIED_DIMS, types, [""] * 8, step))


def test_a_mixed_step_sums_its_requests_one_by_one() -> None:
    """Two context requests (a first chunk of 20, a third chunk of 10 after 30 cached) and
    three decodes (one speculative, N_Q 3): each request's work by the doc's formula."""
    context, generation = [(20, 20), (10, 40)], [(1, 100), (1, 7), (3, 50)]
    per = 2 * 32 * (128 + 128)
    flops = sum(per * (q * k - q * q / 2) for q, k in context)
    flops += sum(per * q * k for q, k in generation)
    moved = sum((q * 32 + k * 8) * 256 * 2 for q, k in context + generation)
    w = call(vllm_step(context, generation))
    assert isinstance(w, OpWork)
    assert (w.flops, w.bytes, w.ceiling) == (flops, moved, "bf16-matrix")


def test_sglang_detailed_steps_read_as_vllms() -> None:
    """SGLang's detailed step[...] (TraceLens annotation_utils.py's examples) gives the
    same sums as vLLM's name for the same requests."""
    mixed = "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40"
    mixed += " g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]"
    assert step_sums(mixed) == step_sums(vllm_step([(5, 8)], [(1, 12)]))
    decode = "step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]"
    sums = step_sums(decode)
    assert (sums.generation.requests, sums.generation.sq, sums.context.requests) == (64, 128, 0)


@pytest.mark.parametrize(
    ("step", "words"),
    [
        ("", "no step range around the call"),
        ("execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_64(sq64sk1000", "expected execute_T"),
        ("execute_65_context_0(sq0sk0sqsq0sqsk0)_generation_64(sq64sk1000sqsq64sqsk1000)",
         "65 tokens, but sq 0 + 64"),
        ("execute_64_context_1(sq60sk60sqsq3600sqsk3000)_generation_4(sq4sk9sqsq4sqsk9)",
         "impossible sums"),
        ("execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_64(sq64sk10sqsq64sqsk640)",
         "impossible sums"),
        ("execute_128_context_0(sq0sk0sqsq0sqsk0)_generation_128(sq128sk999sqsq128sqsk999)",
         "the step's 128 query tokens exceed the call's 64"),
        ("step[DECODE bs=4 g_sq=4 g_sk=40]", "expected g_sq, g_sk, g_sqsq, g_sqsk"),
    ],
)  # fmt: skip
def test_a_damaged_or_foreign_step_says_why(step: str, words: str) -> None:
    found = call(step)
    assert isinstance(found, NoWork) and words in found.reason, found


def test_the_parser_raises_damaged_with_the_grammar() -> None:
    with pytest.raises(Damaged, match="expected step\\[KIND"):
        step_sums("step[DECODE bs=x g_sq=1]")


PREFILL = "aiter::mha_batch_prefill"
PREFILL_DIMS = [[64, 32, 128], [5000, 8, 128], [5000, 8, 128], [3], [3], [40]]
PREFILL_CONCRETE = ["", "", "", "", "", "", "32", "40", "0.", "0.088", "0.", "False", "True"]


def prefill(step: str, concrete: list[str], dims: list[Any] = PREFILL_DIMS) -> OpWork | NoWork:
    types = [BF16] * 3 + [INT] * 3 + ["Scalar"] * 12
    return work_or_reason(OpCall(PREFILL, dims, types, concrete, step))


def test_aiter_batch_prefill_checks_mask_window_and_requests() -> None:
    """Two chunked prefills (32 queries after 8 cached each): work; is_causal False, a
    sliding window, or cu_seqlens_q of another request count: no work, and why."""
    step = vllm_step([(32, 40), (32, 40)], [])
    w = prefill(step, [*PREFILL_CONCRETE, "-1", "-1"])
    assert isinstance(w, OpWork)
    assert w.flops == 2 * 2 * 32 * 256 * (32 * 40 - 32 * 32 / 2)
    assert w.bytes == 2 * (32 * 32 + 40 * 8) * 256 * 2
    acausal = [*PREFILL_CONCRETE[:12], "False", "-1", "-1"]
    windowed = [*PREFILL_CONCRETE, "128", "0"]
    many = [*PREFILL_DIMS[:3], [5], *PREFILL_DIMS[4:]]
    for found, words in [
        (prefill(step, acausal), "is_causal False with context requests"),
        (prefill(step, windowed), "sliding window"),
        (prefill(step, [*PREFILL_CONCRETE, "-1", "-1"], many), "cu_seqlens_q [5] for the step's 2"),
    ]:
        assert isinstance(found, NoWork) and words in found.reason, found
