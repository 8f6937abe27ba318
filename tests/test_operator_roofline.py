"""The roofline of a PyTorch trace from its own operators (issue 39): each GEMM kernel carries
exactly the FLOPs its operators' recorded shapes give, under the ceiling of its data type,
with a bound and an efficiency; the operator table; compiler annotations; --fp32-matmul.

Expected values are worked out here from the trace's events (decoded with the json module):
each kernel's launch by correlation id, the innermost operator of the launch's thread around
it, and ``2*M*N*K + M*N`` of ``aten::addmm``'s ``Input Dims`` (bias, mat1 [M, K], mat2 [K, N]).
"""

from __future__ import annotations

import gzip
import json
import re
from bisect import bisect_right
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import roofscope
from roofscope.errors import UsageError
from tests.conftest import SHARED_CORPUS, plain_html
from tests.test_kineto_ops import INDUCTOR_EVENTS

DATA = Path(__file__).parent / "data" / "kineto"
H100 = DATA / "h100_bert_small_metadata_first.json.gz"
MI300X = DATA / "mi300x_bert_small_metadata_first.json.gz"
NEGATIVE_QUEUE = (
    SHARED_CORPUS / "torch/hta-tests-data/negative_queue_length_values_check/rank0.json.gz"
)
LAUNCH = ("LaunchKernel", "ModuleLaunch", "ExtLaunch", "GraphLaunch")


def _events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    return [e for e in events if e.get("ph") == "X"]


def _operator_of_kernels(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    """(kernel event, innermost operator around its launch, or None): per thread, the
    operators by start; scanning back from the launch, the first that still runs at it (the
    operators of a thread nest, so none that starts later can hold it)."""
    by_tid: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e.get("cat") in ("cpu_op", "Operator"):
            by_tid[e["tid"]].append(e)
    starts = {}
    for tid, ops in by_tid.items():
        ops.sort(key=lambda o: (o["ts"], -o["dur"]))
        starts[tid] = [o["ts"] for o in ops]
    launch = {
        e["args"]["correlation"]: e
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver", "Runtime")
        and any(k in e["name"] for k in LAUNCH)
    }
    out = []
    for k in (e for e in events if e.get("cat") in ("kernel", "Kernel")):
        la = launch.get(k["args"].get("correlation"))
        ops = by_tid.get(la["tid"], []) if la is not None else []
        i = bisect_right(starts.get(la["tid"], []), la["ts"]) if la is not None else 0
        inner = next((o for o in reversed(ops[:i]) if la["ts"] <= o["ts"] + o["dur"]), None)
        out.append((k, inner))
    return out


def _addmm_flops(op: dict[str, Any]) -> int:
    _, (m, k), (k2, n) = op["args"]["Input Dims"][:3]
    assert k == k2
    return 2 * m * n * k + m * n


def _matmul_flops(op: dict[str, Any]) -> int | None:
    """aten::mm (2MNK), addmm (2MNK + MN, the bias) and bmm (2BMNK) of their Input Dims."""
    dims = op["args"]["Input Dims"]
    if op["name"] == "aten::mm":
        (m, k), (_, n) = dims[:2]
        return 2 * m * n * k
    if op["name"] == "aten::addmm":
        return _addmm_flops(op)
    if op["name"] == "aten::bmm":
        (b, m, k), (_, _, n) = dims[:2]
        return 2 * b * m * n * k
    return None


def _expected_gemms(path: Path) -> dict[str, tuple[int, int]]:
    """Per GEMM kernel (raw name): FLOPs of its addmm calls and its total duration in ns."""
    flops: dict[str, int] = defaultdict(int)
    time: dict[str, int] = defaultdict(int)
    for kernel, op in _operator_of_kernels(_events(path)):
        if op is not None and op["name"] == "aten::addmm":
            flops[kernel["name"]] += _addmm_flops(op)
            time[kernel["name"]] += round(kernel["dur"] * 1000)
    return {name: (flops[name], time[name]) for name in flops}


TRACE_DIFF = SHARED_CORPUS / "torch/hta-tests-data/trace_diff/test"
GEMM_TRACES = [
    pytest.param(H100, None, "bf16-matrix", 4, id="h100-bf16"),
    pytest.param(MI300X, None, "bf16-matrix", 4, id="mi300x-bf16"),
    pytest.param(
        NEGATIVE_QUEUE,
        "a100",
        "fp32-vector",
        None,
        id="a100-fp32",
        marks=pytest.mark.skipif(not NEGATIVE_QUEUE.exists(), reason="shared corpus not present"),
    ),
]


@pytest.mark.parametrize(("path", "gpu", "ceiling", "gemms"), GEMM_TRACES)
def test_every_gemm_kernel_carries_the_flops_of_its_operators_shapes(
    path: Path, gpu: str | None, ceiling: str, gemms: int | None
) -> None:
    expected = _expected_gemms(path)
    assert gemms is None or len(expected) == gemms  # bert: 512x512, x2048, 2048x, x30522
    report = roofscope.analyze(path, gpu=gpu).checkup
    roof = {k.name: k for k in report.roofline.result.kernels}
    raw_to_name = {raw: k.name for k in report.hotspots.kernels for raw in k.raw_names}
    assert expected
    for raw, (flops, time_ns) in expected.items():
        k = roof[raw_to_name[raw]]
        assert k.flops == {ceiling: pytest.approx(flops, rel=1e-12)}
        assert k.work_source == "shapes"
        assert k.ceiling == ceiling
        assert k.achieved_flops_s == pytest.approx(flops / (time_ns / 1e9), rel=1e-9)
        assert k.bound is not None and k.efficiency is not None
        assert k.efficiency == pytest.approx(k.achieved_flops_s / k.attainable_flops_s)


def test_the_h100_gemm_of_the_vocabulary_projection_worked_out_by_hand() -> None:
    """addmm [[30522], [141, 512], [512, 30522]], one call, 41.28 us in the trace:
    2*141*30522*512 + 141*30522 FLOPs; bytes 2 B each of bias, mat1, mat2 and the output;
    H100 SXM: 3.35 TB/s and 990 TFLOP/s bf16, so AI = 110 FLOP/B is under the ridge (295):
    memory-bound, attainable 3.35e12 * AI."""
    report = roofscope.analyze(H100).checkup
    [k] = [k for k in report.roofline.result.kernels if "256x128_64x3" in k.name]
    flops = 2 * 141 * 30522 * 512 + 141 * 30522
    nbytes = 2 * (30522 + 141 * 512 + 512 * 30522 + 141 * 30522)
    assert k.flops == {"bf16-matrix": flops}
    assert k.bytes == {"hbm": nbytes}
    assert k.achieved_flops_s == pytest.approx(flops / 41.28e-6)
    assert k.bound == "memory"
    assert k.attainable_flops_s == pytest.approx(3.35e12 * flops / nbytes)


@pytest.mark.parametrize("path", [H100, MI300X], ids=["h100", "mi300x"])
def test_the_operator_table_sums_the_kernels_each_operator_launched(path: Path) -> None:
    pairs = _operator_of_kernels(_events(path))
    calls: dict[tuple[str, str], set[int]] = defaultdict(set)
    time: dict[tuple[str, str], int] = defaultdict(int)
    for kernel, op in pairs:
        if op is not None and op["name"] == "aten::addmm":
            key = (op["name"], str(op["args"]["Input Dims"]))
            calls[key].add(id(op))
            time[key] += round(kernel["dur"] * 1000)
    total = sum(round(k["dur"] * 1000) for k, _ in pairs)
    report = roofscope.analyze(path).checkup
    assert report.operators is not None
    rows = {(r.name, r.dims): r for r in report.operators.rows}
    for key, ops in calls.items():
        row = rows[key]
        assert (row.calls, row.dispatches, row.time_ns) == (len(ops), len(ops), time[key])
        assert row.share == pytest.approx(time[key] / total)
    assert rows[("aten::addmm", "[[512], [141, 512], [512, 512], [], []]")].calls == 17
    assert report.operators.unlinked_dispatches == sum(op is None for _, op in pairs) == 0


def test_json_carries_the_operator_table_and_the_fp32_assumption() -> None:
    doc = json.loads(roofscope.analyze(H100).to_json())
    ops = doc["operators"]
    assert ops["fp32_matmul"] == "fp32-vector"  # PyTorch's default: no TF32
    first = ops["rows"][0]
    assert first["name"] == "aten::addmm"
    assert first["flops"] == 17 * (2 * 141 * 512 * 512 + 141 * 512)
    assert (
        first["input_types"]
        == "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'Scalar', 'Scalar']"
    )


@pytest.mark.skipif(not NEGATIVE_QUEUE.exists(), reason="shared corpus not present")
def test_fp32_gemms_go_under_fp32_by_default_and_under_tf32_when_told() -> None:
    """HTA's A100 trace: fp32 addmm (``float`` inputs). PyTorch's default float32 matmul
    precision is "highest": CUDA cores (fp32-vector); ``--fp32-matmul tf32`` places them
    under the tf32 tensor-core ceiling."""
    plain = roofscope.analyze(NEGATIVE_QUEUE, gpu="a100").checkup
    tf32 = roofscope.analyze(NEGATIVE_QUEUE, gpu="a100", fp32_matmul="tf32").checkup
    gemm = {
        k.name: k for k in plain.roofline.result.kernels if "sgemm" in k.name or "gemm" in k.name
    }
    assert gemm
    for name, k in gemm.items():
        assert k.ceiling == "fp32-vector"
        other = {t.name: t for t in tf32.roofline.result.kernels}[name]
        assert other.ceiling == "tf32-matrix"
        assert other.flops == {"tf32-matrix": k.flops["fp32-vector"]}


def test_an_unknown_fp32_matmul_is_refused_in_the_callers_words() -> None:
    with pytest.raises(UsageError, match=r"^fp32_matmul='bf16': expected one of fp32, tf32$"):
        roofscope.analyze(H100, fp32_matmul="bf16")


def test_a_kernels_own_annotation_wins_over_its_operators(tmp_path: Path) -> None:
    """Inductor's kernel_flop/kernel_num_gb: on the kernel (4096 FLOPs, 0.001 GB) and on the
    operator around its launch (2e9 FLOPs): the kernel's own counts."""
    trace = {
        "traceEvents": [
            *INDUCTOR_EVENTS,
            {"ph": "X", "cat": "cpu_op", "name": "triton_poi_fused_add_1", "pid": 1, "tid": 1,
             "ts": 30, "dur": 10, "args": {"kernel_num_gb": 0.002}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cuLaunchKernel", "pid": 1, "tid": 1,
             "ts": 32, "dur": 2, "args": {"correlation": 8}},
            {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_1", "pid": 0, "tid": 7,
             "ts": 40, "dur": 4, "args": {"correlation": 8, "device": 0, "stream": 7}},
        ]
    }  # fmt: skip
    path = tmp_path / "inductor.json"
    path.write_text(json.dumps(trace))
    report = roofscope.analyze(path, gpu="h100").checkup
    work = {k.name: k for k in report.roofline.result.kernels}
    mm, add = work["triton_tem_fused_mm_0"], work["triton_poi_fused_add_1"]
    assert mm.work_source == add.work_source == "annotations (Inductor kernel_flop/kernel_num_gb)"
    assert mm.flops == {"unknown": 4096.0}  # no data type: no compute ceiling
    assert mm.bytes == {"hbm": 1e6}
    assert add.flops is None and add.bytes == {"hbm": 2e6}
    assert add.achieved_bytes_s == {"hbm": pytest.approx(2e6 / 4e-6)}


def test_the_operator_table_in_text_at_80_columns_and_in_html() -> None:
    from roofscope.render.report.text import render_text

    report = roofscope.analyze(H100)
    text = render_text(report.checkup, width=80)
    start = text.index("Operators (the PyTorch operators")
    lines = text[start:].splitlines()
    assert all(len(line) <= 80 for line in lines[:14])
    assert lines[1].split() == ["Operator", "Input", "dims", "Calls", "Total", "[µs]", "Share"]
    assert lines[3].split() == ["addmm", "512,141x512,512x512", "17", "98.7", "32.1%"]
    flat = " ".join(text.split())
    assert "5 more operator signatures in the JSON report." in flat
    # all and eq: no formula for them (index_select's three shapes have one since
    # shapes/serving.py: the gathered rows, the index and the output)
    assert "no work known for 2 operator signatures (" in flat
    assert "of the kernel time: all, eq), why below" in flat
    assert re.search(r"\ball \([0-9.]+%\): no formula for this operator", flat)
    html = plain_html(report.to_html())
    assert (
        "<tr><td>aten::addmm</td><td>512, 141x512, 512x512</td><td>bf16 x3</td><td>17</td>"
        "<td>17</td><td>98.7 µs</td><td>32.1%</td><td>1.26 GFLOP</td><td>13.8 MB</td>"
    ) in html
    assert "<td>-</td><td>no work known: no formula for this operator</td></tr>" in html


@pytest.mark.parametrize(
    ("dims", "types", "shown", "typed"),
    [
        (
            "[[512], [141, 512], [512, 512], [], []]",
            "['c10::BFloat16'] * 3",
            "512, 141x512, 512x512",
            "bf16 x3",
        ),
        ("[[[4, 8], [8]], [2]]", "['GenericList', 'float']", "[4x8, 8], 2", "GenericList, fp32"),
        ("[[], []]", "['Scalar', 'Scalar']", "scalars", "-"),
        (None, None, "-", "-"),
        ("not a list", "['c10::Half', 'Scalar', '']", "not a list", "fp16"),
    ],
)
def test_recorded_inputs_as_a_person_reads_them(
    dims: str | None, types: str | None, shown: str, typed: str
) -> None:
    from roofscope.render.report.operators_text import element_types, shapes

    if types == "['c10::BFloat16'] * 3":
        types = str(["c10::BFloat16"] * 3 + ["Scalar", "Scalar"])
    assert shapes(dims) == shown
    assert element_types(types) == typed


AUGMENTED = DATA / "h100_bert_small_inductor_augmented.json.gz"
COMPILED = DATA / "torch_compile_triton_trace.json.gz"


def test_pytorchs_own_annotations_win_and_give_the_gemm_flops_without_the_bias() -> None:
    """The bert-small H100 trace annotated by PyTorch's own tool
    (``torch._inductor.analysis.profile_analysis --augment_trace``, torch 2.13.0): every
    kernel carries kernel_flop and kernel_num_gb, which roofscope uses over the shapes. Its
    GEMM count is 2*M*N*K (73,924,608 for 141x512x512), roofscope's own formula 2*M*N*K + M*N
    (the bias add): the annotation wins, and the data type comes from the operator."""
    events = _events(AUGMENTED)
    flops: dict[str, float] = defaultdict(float)
    nbytes: dict[str, float] = defaultdict(float)
    for e in events:
        if e.get("cat") == "kernel":
            flops[e["name"]] += float(e["args"]["kernel_flop"])
            nbytes[e["name"]] += float(e["args"]["kernel_num_gb"]) * 1e9
    report = roofscope.analyze(AUGMENTED).checkup
    raw_to_name = {raw: k.name for k in report.hotspots.kernels for raw in k.raw_names}
    roof = {k.name: k for k in report.roofline.result.kernels}
    gemm = next(raw for raw in flops if "wmma_tensorop_bf16_s161616gemm" in raw)
    k = roof[raw_to_name[gemm]]
    assert flops[gemm] == 17 * 2 * 141 * 512 * 512
    assert k.flops == {"bf16-matrix": pytest.approx(flops[gemm])}
    assert k.bytes == {"hbm": pytest.approx(nbytes[gemm])}
    assert k.work_source == "annotations (Inductor kernel_flop/kernel_num_gb)"
    placed = {raw for raw in flops if raw_to_name[raw] in roof}
    assert placed == set(flops)  # every kernel: annotated with bytes at least


def test_a_torch_compile_trace_on_mi300x_its_gemms_attention_and_triton_kernels() -> None:
    """TraceLens's torch_compile_triton trace (MI300X, bf16): aten::mm 32768x8192x2048 is
    2*32768*8192*2048 FLOPs (TraceLens: 1099.511627776 GFLOP, FLOPS/Byte 1560.38); the flash
    attention 4*8*16*4096*4096*128 (TraceLens: 1099.511627776 GFLOP, 298.5 TFLOP/s); an
    Inductor Triton kernel moves each of its buffers once."""
    report = roofscope.analyze(COMPILED).checkup
    roof = {k.name: k for k in report.roofline.result.kernels}
    attn = roof["attn_fwd"]
    assert attn.flops == {"bf16-matrix": 4 * 8 * 16 * 4096 * 4096 * 128}
    # TraceLens divides by a duration it rounded to the ns: equal to 1e-7
    assert attn.achieved_flops_s == pytest.approx(298.4957253368845e12, rel=1e-7)
    events = _events(COMPILED)
    [red] = [
        e
        for e in events
        if e.get("cat") == "kernel" and e["name"].startswith("triton_red_fused_add")
    ]
    k = roof[red["name"]]
    moved = 2 * (8 * 4096 * 2048 * 2 + 2048)  # two bf16 8x4096x2048 buffers and a 2048 weight
    assert k.bytes == {"hbm": moved}
    assert k.flops is None
    assert k.achieved_bytes_s["hbm"] == pytest.approx(moved / (float(red["dur"]) * 1e-6))
    gemms = [k for k in roof.values() if k.name.startswith("Cijk_")]
    assert len(gemms) == 3 and all(k.ceiling == "bf16-matrix" for k in gemms)
    for k in gemms:
        assert k.intensity["hbm"] == pytest.approx(1560.3809523809523) or k.intensity[
            "hbm"
        ] == pytest.approx(992.969696969697)


QWEN = DATA / "h100_qwen1.5_0.5b_chat.json.gz"


def test_the_issues_qwen_example_623_tflops_on_h100() -> None:
    """Issue 39: on the Qwen 0.5B H100 trace the bf16 GEMM kernel does 5.5e12 FLOPs in
    8.85 ms, about 623 TFLOP/s, 63 % of the 990 TFLOP/s bf16 ceiling. Worked out here from the
    trace's own Input Dims of the matmul operators that launched it."""
    flops: dict[str, int] = defaultdict(int)
    time: dict[str, int] = defaultdict(int)
    matmuls = 0
    for kernel, op in _operator_of_kernels(_events(QWEN)):
        if op is not None and (f := _matmul_flops(op)) is not None:
            flops[kernel["name"]] += f
            time[kernel["name"]] += round(kernel["dur"] * 1000)
            matmuls += 1
    assert matmuls == 169
    gemm = next(raw for raw in flops if raw.startswith("sm90_xmma_gemm_bf16bf16"))
    assert 5.5e12 <= flops[gemm] < 5.52e12 and 8.8e6 < time[gemm] < 8.9e6
    report = roofscope.analyze(QWEN).checkup
    [k] = [k for k in report.roofline.result.kernels if k.name.startswith("sm90_xmma_gemm_bf16")]
    assert k.flops == {"bf16-matrix": flops[gemm]}
    assert k.achieved_flops_s == pytest.approx(flops[gemm] / (time[gemm] / 1e9))
    assert 622e12 < k.achieved_flops_s < 624e12
    # the H100 SXM datasheet: BF16 Tensor Core 1,979 TFLOPS with sparsity, 989.5 dense
    assert k.efficiency == pytest.approx(k.achieved_flops_s / 989.5e12)
    assert k.bound == "compute" and round(k.efficiency, 3) == 0.629


RESNET = SHARED_CORPUS / "torch/kineto-tb-plugin-samples/resnet50_num_workers_0"


@pytest.mark.skipif(not RESNET.exists(), reason="shared corpus not present")
def test_resnet50_on_v100_no_kernel_beyond_the_hardware() -> None:
    """The HTA/TensorBoard ResNet-50 trace (V100, 2021: no Concrete Inputs): its convolutions
    get no work (stride and padding unrecorded), and a kernel whose shape-derived bytes run
    above the HBM bandwidth is served from cache, a low caveat, not 'the wrong GPU'."""
    report = roofscope.analyze(RESNET).checkup
    kernels = report.roofline.result.kernels
    assert not any(k.beyond_hardware for k in kernels)
    assert not any("conv" in k.name.lower() and k.flops for k in kernels)
    served = [k for k in kernels if k.cache_served]
    assert served and all(k.bound == "memory" for k in served)
    above = [f for f in report.findings if f.rule == "above-roof"]
    assert above and all(f.severity == "low" for f in above)
    assert "part of them came from cache" in above[0].summary
    assert not any(w.code == "above-roof" for w in report.warnings)


def test_the_grouped_query_joins_a_groups_distinct_formulas_from_a_bit_string() -> None:
    """operators._GROUPED gathers a group's formulas as a bit string over the sorted distinct
    formulas (no list of every dispatch's): decoded, the same text as ``string_agg(DISTINCT
    ... ORDER BY ...)``, with repeated and missing formulas and one holding the separator."""
    import duckdb

    from roofscope.analysis.ops import operators

    rows = [  # group, formula
        ("a", "2*M*N*K"), ("a", "2*M*N*K"), ("a", "annotation"), ("a", None),
        ("b", None), ("b", None), ("c", "x; y"), ("c", "a"),
    ]  # fmt: skip
    formulas = sorted({f for _, f in rows if f is not None})
    con = duckdb.connect()
    con.execute("CREATE TABLE l (g VARCHAR, formula VARCHAR)")
    con.executemany("INSERT INTO l VALUES (?, ?)", rows)
    bits = " ".join(operators._GROUPED.split()).split(", bitstring_agg")[1].split(" FROM")[0]
    bits = "bitstring_agg" + bits.replace("{formulas}", str(len(formulas))).replace("$10", "$1")
    got = con.execute(f"SELECT g, {bits} FROM l GROUP BY g ORDER BY g", [formulas]).fetchall()
    decoded = [(g, operators._formulas(b, formulas)) for g, b in got]
    distinct = con.execute(
        "SELECT g, string_agg(DISTINCT l.formula, '; ' ORDER BY l.formula) FROM l GROUP BY g "
        "ORDER BY g"
    ).fetchall()
    assert decoded == distinct == [("a", "2*M*N*K; annotation"), ("b", None), ("c", "a; x; y")]


@pytest.mark.parametrize("name", ["aten::mm", "my::op"], ids=["with-work", "without"])
def test_an_operator_call_of_two_kernels_counts_once(tmp_path: Path, name: str) -> None:
    """Two calls of one operator and shape (aten::mm, whose work a formula gives, or one
    without a formula): the first launches a GEMM and a split-K reduction, the second the
    GEMM alone; a third launch has no operator around it. The operator row: 2 calls, 3
    dispatches, their 5 + 1 + 4 µs; the unlinked launch's kernel apart."""

    def call(ts: int, corr: int, kernel: str, dur: int) -> list[dict[str, Any]]:
        return [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": ts, "dur": 1, "args": {"correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": ts + 100,
             "dur": dur, "args": {"correlation": corr, "device": 0, "stream": 7}},
        ]  # fmt: skip

    inputs = {"Input Dims": [[64, 32], [32, 16]], "Input type": ["float", "float"]}
    mm = {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "dur": 10,
          "args": inputs}  # fmt: skip
    events = [
        {**mm, "ts": 0}, *call(1, 1, "gemm", 5), *call(3, 2, "splitk_reduce", 1),
        {**mm, "ts": 20}, *call(21, 3, "gemm", 4), *call(40, 4, "copy", 2),
    ]  # fmt: skip
    path = tmp_path / "mm.json"
    path.write_text(json.dumps({"traceEvents": events}))
    table = roofscope.analyze(path, gpu="h100").checkup.operators
    assert table is not None
    [row] = table.rows
    assert (row.name, row.calls, row.dispatches, row.time_ns) == (name, 2, 3, 10_000)
    assert (table.unlinked_dispatches, table.unlinked_ns) == (1, 2_000)
