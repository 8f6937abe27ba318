"""Work from shapes (issue 39, point 2): each operator's FLOPs, bytes and ceiling from the
Input Dims, Input type and Concrete Inputs a Kineto trace recorded.

The shapes are real: copied from AMD TraceLens's test traces (MIT; repository AMD-AGI/TraceLens
at 171dd74721ca1ec45709e5805b68ae1f65e27811, tests/traces/...), named at each test, and read
from tests/data/kineto/h100_bert_small_metadata_first.json.gz (that repository's
tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz, byte for byte). Every
expected count is worked out here by hand from the shapes, and where TraceLens published its
own count for the same op (its perf report CSVs beside the traces) that number is asserted too.
"""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from typing import Any

import pytest

from roofscope.analysis.work.shapes import (
    FORMULAS,
    NoWork,
    OpCall,
    OpWork,
    op_work,
    work_or_reason,
)
from tests.conftest import DATA

BF16, F32, FP8 = "c10::BFloat16", "float", "c10::Float8_e4m3fn"
MIB = 2**20


def work(
    name: str, dims: list[Any], types: list[str], concrete: list[str] | None = None, **options: str
) -> OpWork:
    result = op_work(OpCall(name, dims, types, concrete or []), **options)
    assert result is not None, work_or_reason(OpCall(name, dims, types, concrete or []))
    return result


def reason(name: str, dims: list[Any], types: list[str], concrete: list[str] | None = None) -> str:
    call = OpCall(name, dims, types, concrete or [])
    result = work_or_reason(call)
    assert isinstance(result, NoWork) and op_work(call) is None
    return result.reason


# --- GEMM family


def test_mm_qwen_h100_mlp_up_projection() -> None:
    # h100/Qwen_Qwen1.5-0.5B-Chat: aten::mm [[8944, 1024], [1024, 2816]] bf16, 48 calls
    w = work("aten::mm", [[8944, 1024], [1024, 2816]], [BF16, BF16], ["", ""])
    assert w.flops == 2 * 8944 * 2816 * 1024 == 51.581550592e9  # TraceLens GFLOPS_first
    assert w.bytes == (8944 * 1024 + 1024 * 2816 + 8944 * 2816) * 2 == 71.0078125 * MIB
    assert w.ceiling == "bf16-matrix"


def test_addmm_adds_the_bias_once_per_output_element() -> None:
    # Qwen H100: aten::addmm [[1024], [8944, 1024], [1024, 1024], [], []], beta = alpha = 1
    dims = [[1024], [8944, 1024], [1024, 1024], [], []]
    w = work("aten::addmm", dims, [BF16, BF16, BF16, "Scalar", "Scalar"], ["", "", "", "1", "1"])
    assert w.flops == 2 * 8944 * 1024 * 1024 + 8944 * 1024 == 18.766086144e9  # TraceLens
    assert w.bytes == (1024 + 8944 * 1024 + 1024 * 1024 + 8944 * 1024) * 2 == 36.939453125 * MIB
    assert "bias" in w.formula and w.ceiling == "bf16-matrix"


def test_addmm_with_beta_zero_neither_reads_nor_adds_self() -> None:
    dims = [[4], [3, 5], [5, 4], [], []]
    w = work("aten::addmm", dims, [BF16, BF16, BF16, "Scalar", "Scalar"], ["", "", "", "0", "1"])
    assert w.flops == 2 * 3 * 4 * 5
    assert w.bytes == (3 * 5 + 5 * 4 + 3 * 4) * 2


def test_mm_out_tensor_is_written_not_read() -> None:
    # inference/xdit_flux.1: aten::mm.out, [[768, 15360], [15360, 3072], [768, 3072]]
    w = work("aten::mm", [[768, 15360], [15360, 3072], [768, 3072]], [BF16, BF16, BF16])
    assert w.flops == 2 * 768 * 3072 * 15360
    assert w.bytes == (768 * 15360 + 15360 * 3072 + 768 * 3072) * 2 == 122683392  # TraceLens


def test_bmm_fp32_runs_under_tf32_unless_told_otherwise() -> None:
    # Qwen H100: aten::bmm [[1, 32, 1], [1, 1, 559]] float (rotary embedding frequencies)
    dims, types = [[1, 32, 1], [1, 1, 559]], [F32, F32]
    w = work("aten::bmm", dims, types)
    assert w.flops == 2 * 1 * 32 * 559 * 1
    assert w.bytes == (32 + 559 + 32 * 559) * 4
    assert w.ceiling == "tf32-matrix"
    assert work("aten::bmm", dims, types, fp32_matmul="fp32-vector").ceiling == "fp32-vector"
    assert work("aten::bmm", dims, types, fp32_matmul="fp32-matrix").ceiling == "fp32-matrix"
    with pytest.raises(ValueError, match="fp32_matmul='fp16'"):
        op_work(OpCall("aten::bmm", dims, types), fp32_matmul="fp16")


def test_baddbmm() -> None:
    dims = [[2, 3, 4], [2, 3, 5], [2, 5, 4], [], []]
    w = work("aten::baddbmm", dims, [BF16] * 3 + ["Scalar"] * 2, ["", "", "", "1", "1"])
    assert w.flops == 2 * 2 * 3 * 4 * 5 + 2 * 3 * 4
    assert w.bytes == (2 * 3 * 4 + 2 * 3 * 5 + 2 * 5 * 4 + 2 * 3 * 4) * 2


def test_linear_vllm_b200_with_bias() -> None:
    # b200/eager_trace (vLLM, gpt-oss): aten::linear [[888, 2880], [640, 2880], [640]]
    w = work("aten::linear", [[888, 2880], [640, 2880], [640]], [BF16, BF16, BF16])
    assert w.flops == 2 * 888 * 640 * 2880 + 888 * 640
    assert w.bytes == (888 * 2880 + 640 * 2880 + 640 + 888 * 640) * 2
    no_bias = work("aten::linear", [[4, 7, 16], [8, 16], []], [F32, F32, ""])
    assert no_bias.flops == 2 * (4 * 7) * 8 * 16  # leading dims fold into M


def test_matmul_lm_head_and_broadcast_batch() -> None:
    # b200/eager_trace: aten::matmul [[1, 2880], [2880, 25136]] (the LM head of one token)
    w = work("aten::matmul", [[1, 2880], [2880, 25136]], [BF16, BF16])
    assert w.flops == 2 * 1 * 25136 * 2880
    broadcast = work("aten::matmul", [[2, 1, 3, 4], [5, 4, 6]], [BF16, BF16])
    assert broadcast.flops == 2 * (2 * 5) * 3 * 6 * 4
    assert broadcast.bytes == (2 * 3 * 4 + 5 * 4 * 6 + 2 * 5 * 3 * 6) * 2
    assert work("aten::matmul", [[4], [4, 6]], [BF16, BF16]).flops == 2 * 6 * 4


def test_vllm_and_aiter_gemms_have_linear_semantics() -> None:
    # inference/vllm_decode_full (MI300X): vllm::rocm_unquantized_gemm, bias [5120]
    w = work("vllm::rocm_unquantized_gemm", [[32, 2880], [5120, 2880], [5120]], [BF16] * 3)
    assert w.flops == 2 * 32 * 5120 * 2880 + 32 * 5120 == 0.94388224e9  # TraceLens
    # inference/sglang_decode (MI300X): aiter::gemm_a16w16 [[32, 4096], [6144, 4096], [], ...]
    dims = [[32, 4096], [6144, 4096], [], [], [], [], []]
    types = [BF16, BF16, "", "Scalar", "", "", ""]
    w = work("aiter::gemm_a16w16", dims, types, ["", "", "", "15", "", "", ""])
    assert w.flops == 2 * 32 * 6144 * 4096 == 1.610612736e9  # TraceLens
    assert w.bytes == (32 * 4096 + 6144 * 4096 + 32 * 6144) * 2 == 48.625 * MIB


def test_scaled_mm_fp8_with_out_dtype() -> None:
    # no public trace with aten::_scaled_mm shapes was found: the signature's own layout
    dims = [[16, 32], [32, 8], [], [], [], [], [], []]
    types = [FP8, "c10::Float8_e5m2", F32, F32, "", "", "Scalar", "Scalar"]
    w = work("aten::_scaled_mm", dims, types, ["", "", "", "", "", "", "15", "False"])
    assert w.flops == 2 * 16 * 8 * 32
    assert w.bytes == 16 * 32 + 32 * 8 + 4 + 4 + 16 * 8 * 2  # scales are 0-dim floats
    assert w.ceiling == "fp8-matrix"
    fp8_out = work("aten::_scaled_mm", dims[:4], types[:4])
    assert fp8_out.bytes == 16 * 32 + 32 * 8 + 4 + 4 + 16 * 8  # out_dtype absent: self's


def test_gemm_shapes_that_do_not_multiply() -> None:
    assert "inner sizes 5 and 6" in reason("aten::mm", [[3, 5], [6, 4]], [BF16, BF16])
    assert "types" in reason("aten::mm", [[3, 5], [5, 4]], [BF16, F32])
    assert "2-D" in reason("aten::mm", [[3, 5, 1], [5, 4]], [BF16, BF16])


# --- attention


def test_sdpa_flash_causal_qwen_h100() -> None:
    # Qwen H100: aten::_scaled_dot_product_flash_attention [16, 16, 559, 64] x3, is_causal True
    qkv = [[16, 16, 559, 64]] * 3 + [[]] * 4
    types = [BF16] * 3 + ["Scalar"] * 4
    w = work(
        "aten::_scaled_dot_product_flash_attention",
        qkv,
        types,
        ["", "", "", "0.", "True", "False", "0.125"],
    )
    assert w.flops == 4 * 16 * 16 * 559 * 559 * 64 / 2 == 10.239377408e9  # TraceLens
    assert w.bytes == 4 * 16 * 16 * 559 * 64 * 2 == 69.875 * MIB  # q, k, v read, o written
    assert w.ceiling == "bf16-matrix" and "causal" in w.formula


def test_flash_attention_forward_is_batch_seq_heads_dim() -> None:
    # h100/Falconsai (ViT): the same call seen twice, SDPA [4, 12, 197, 64] and below it
    # aten::_flash_attention_forward [4, 197, 12, 64] with is_causal at input 8
    expected = 4 * 4 * 12 * 197 * 197 * 64
    sdpa = work(
        "aten::_scaled_dot_product_flash_attention",
        [[4, 12, 197, 64]] * 3 + [[]] * 4,
        [BF16] * 3 + ["Scalar"] * 4,
        ["", "", "", "0.", "False", "False", "0.125"],
    )
    dims = [[4, 197, 12, 64]] * 3 + [[]] * 12
    types = (
        [BF16] * 3 + ["", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"] + [""] * 4
    )
    concrete = ["", "", "", "", "", "197", "197", "0.", "False", "False", "0.125", "", "", "", ""]
    flash = work("aten::_flash_attention_forward", dims, types, concrete)
    assert sdpa.flops == flash.flops == expected
    assert sdpa.bytes == flash.bytes == 4 * 4 * 12 * 197 * 64 * 2
    public = work(
        "aten::scaled_dot_product_attention",
        [[4, 12, 197, 64]] * 3 + [[]] * 5,
        [BF16] * 3 + ["", "Scalar", "Scalar", "", "Scalar"],
        ["", "", "", "", "0.", "False", "", "False"],
    )
    assert public.flops == expected


def test_grouped_query_attention_reads_fewer_kv_heads() -> None:
    q, kv = [1, 32, 128, 128], [1, 8, 128, 128]
    w = work(
        "aten::_scaled_dot_product_efficient_attention",
        [q, kv, kv, [], [], [], [], []],
        [BF16] * 3 + ["", "Scalar", "Scalar", "Scalar", ""],
        ["", "", "", "", "False", "0.", "False", ""],
    )
    assert w.flops == 4 * 1 * 32 * 128 * 128 * 128
    assert w.bytes == (32 * 128 * 128 + 2 * 8 * 128 * 128 + 32 * 128 * 128) * 2
    assert "do not match" in reason(
        "aten::_scaled_dot_product_efficient_attention",
        [q, [1, 5, 128, 128], [1, 5, 128, 128]],
        [BF16] * 3,
        ["", "", "", "", "False", "0.", "False"],
    )


def test_causal_with_unequal_lengths_gives_no_count() -> None:
    dims = [[1, 8, 1, 64], [1, 8, 300, 64], [1, 8, 300, 64]]
    text = reason(
        "aten::_scaled_dot_product_flash_attention",
        dims,
        [BF16] * 3,
        ["", "", "", "0.", "True", "False", ""],
    )
    assert "causal with 1 queries and 300 keys" in text


def test_flash_attn_backward_is_two_and_a_half_forwards() -> None:
    # flash_attn::_flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p,
    # softmax_scale, causal, ...): [B, S, H, D] layout, causal at input 11
    t = [2, 512, 16, 128]
    dims = [t, t, t, t, t, [2, 16, 512], t, t, t, [], [], []]
    types = [BF16] * 5 + [F32] + [BF16] * 3 + ["Scalar"] * 3
    concrete = [""] * 9 + ["0.", "0.088", "True"]
    w = work("flash_attn::_flash_attn_backward", dims, types, concrete)
    assert w.flops == 2.5 * 4 * 2 * 16 * 512 * 512 * 128 / 2
    one = 2 * 512 * 16 * 128 * 2  # one [B, S, H, D] bf16 tensor
    assert w.bytes == 5 * one + 3 * one  # q, k, v, out, dout read; dq, dk, dv written


def test_sdpa_efficient_backward_reads_is_causal_at_input_11() -> None:
    # (grad_out, query, key, value, attn_bias, out, logsumexp, philox_seed, philox_offset,
    # dropout_p, grad_input_mask, is_causal, scale): [B, H, S, D]
    t = [4, 8, 256, 64]
    dims = [t, t, t, t, [], t, [4, 8, 256], [], [], [], [], [], []]
    types = [BF16] * 4 + [""] + [BF16, F32, "long int", "long int"] + ["Scalar"] * 4
    concrete = [""] * 9 + ["0.", "[True, True, True, False]", "True", ""]
    w = work("aten::_scaled_dot_product_efficient_attention_backward", dims, types, concrete)
    assert w.flops == 2.5 * 4 * 4 * 8 * 256 * 256 * 64 / 2
    assert w.bytes == 8 * (4 * 8 * 256 * 64 * 2)


def test_tracelens_bert_small_h100_every_gemm_and_sdpa_call() -> None:
    """Every addmm and SDPA call in the real trace: FLOPs from its own Input Dims, worked
    out here in plain Python, and TraceLens's published count of each shape (its
    gaunernst_bert-small-uncased__1016001_perf_report_csvs GEMM.csv and SDPA_fwd.csv)."""
    with gzip.open(DATA / "kineto" / "h100_bert_small_metadata_first.json.gz", "rt") as f:
        events = json.load(f)["traceEvents"]
    wanted = ("aten::addmm", "aten::_scaled_dot_product_flash_attention")
    calls = [e for e in events if e.get("cat") == "cpu_op" and e["name"] in wanted]
    tracelens = {  # (name, Input Dims) -> (GFLOPS_first, Data Moved (MB)_first)
        ("aten::addmm", "[[512], [141, 512], [512, 512], [], []]"): (0.0739968, 0.7763671875),
        ("aten::addmm", "[[30522], [141, 512], [512, 30522], [], []]"): (
            4.41119205,
            38.211021423339844,
        ),
        ("aten::addmm", "[[512], [141, 2048], [2048, 512], [], []]"): (0.295770624, 2.689453125),
        ("aten::addmm", "[[2048], [141, 512], [512, 2048], [], []]"): (0.2959872, 2.6923828125),
        (
            "aten::_scaled_dot_product_flash_attention",
            "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]",
        ): (0.040716288, 0.55078125),
    }
    seen: Counter[tuple[str, str]] = Counter()
    for e in calls:
        a = e["args"]
        w = work(e["name"], a["Input Dims"], a["Input type"], a["Concrete Inputs"])
        assert w.flops == by_hand(e["name"], a["Input Dims"], a["Concrete Inputs"])
        gflops, mb = tracelens[(e["name"], str(a["Input Dims"]))]
        assert w.flops == pytest.approx(gflops * 1e9, rel=1e-12)
        assert w.bytes == pytest.approx(mb * MIB, rel=1e-12)
        seen[(e["name"], str(a["Input Dims"]))] += 1
    # TraceLens's name_count of each shape: every call of the trace is accounted for
    assert [seen[key] for key in tracelens] == [17, 1, 4, 4, 4]


def by_hand(name: str, dims: list[list[int]], concrete: list[str]) -> float:
    if name == "aten::addmm":
        (m, k), (_, n) = dims[1], dims[2]
        return 2 * m * n * k + m * n
    (b, h, s, d), causal = dims[0], concrete[4] == "True"
    return 4 * b * h * s * s * d / (2 if causal else 1)


# --- convolution


CONV_TYPES = [BF16] * 3 + ["ScalarList"] * 3 + ["Scalar", "ScalarList", "Scalar"]


def test_convolution_vit_patch_embedding_falconsai_h100() -> None:
    # h100/Falconsai: aten::convolution [[4, 3, 224, 224], [768, 3, 16, 16], [768]] stride 16
    dims = [[4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]
    concrete = ["", "", "", "[16, 16]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]
    w = work("aten::convolution", dims, CONV_TYPES, concrete)
    out = 14 * 14  # (224 - 16) // 16 + 1 = 14
    assert w.flops == 2 * 4 * 768 * out * 3 * 16 * 16 + 4 * 768 * out
    assert w.flops - 4 * 768 * out == 0.924844032e9  # TraceLens counts no bias add
    assert w.bytes == (4 * 3 * 224 * 224 + 768 * 3 * 16 * 16 + 768 + 4 * 768 * out) * 2
    assert w.ceiling == "bf16-matrix"
    # the same call one level down: cudnn_convolution(self, weight, padding, stride, dilation,
    # groups, benchmark, deterministic, allow_tf32), no bias
    cudnn = work(
        "aten::cudnn_convolution",
        dims[:2] + [[]] * 7,
        [BF16, BF16, "ScalarList", "ScalarList", "ScalarList"] + ["Scalar"] * 4,
        ["", "", "[0, 0]", "[16, 16]", "[1, 1]", "1", "False", "False", "True"],
    )
    assert cudnn.flops == 0.924844032e9


def test_miopen_convolution_flux_vae_on_mi300x() -> None:
    # inference/xdit_flux.1_aiter_sage: aten::miopen_convolution(self, weight, bias, padding,
    # stride, dilation, groups, ...) [[1, 16, 32, 32], [512, 16, 3, 3], [512]], padding 1
    dims = [[1, 16, 32, 32], [512, 16, 3, 3], [512]] + [[]] * 6
    types = [BF16] * 3 + ["ScalarList"] * 3 + ["Scalar"] * 3
    concrete = ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False"]
    w = work("aten::miopen_convolution", dims, types, concrete)
    assert w.flops == 2 * 1 * 512 * 32 * 32 * 16 * 3 * 3 + 512 * 32 * 32


def test_convolution_stride_padding_dilation_groups_and_transposed() -> None:
    dims = [[1, 8, 10, 10], [4, 2, 3, 3], [], [], [], [], [], [], []]
    concrete = ["", "", "", "[2, 2]", "[1, 1]", "[2, 2]", "False", "[0, 0]", "4"]
    w = work("aten::convolution", dims, [*CONV_TYPES[:2], "", *CONV_TYPES[3:]], concrete)
    side = (10 + 2 * 1 - 2 * (3 - 1) - 1) // 2 + 1  # = 4
    assert w.flops == 2 * 1 * 4 * side * side * 2 * 3 * 3
    # transposed: weight [Cin, Cout/groups, k, k]; out = (in - 1)·s - 2p + d·(k - 1) + op + 1
    dims = [[2, 6, 5, 5], [6, 3, 4, 4], [], [], [], [], [], [], []]
    concrete = ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[0, 0]", "1"]
    t = work("aten::convolution", dims, [*CONV_TYPES[:2], "", *CONV_TYPES[3:]], concrete)
    out = (5 - 1) * 2 - 2 * 1 + (4 - 1) + 0 + 1  # = 10
    assert t.flops == 2 * 2 * 6 * 5 * 5 * 3 * 4 * 4
    assert t.bytes == (2 * 6 * 25 + 6 * 3 * 16 + 2 * 3 * out * out) * 2


def test_conv2d_same_padding_keeps_the_size() -> None:
    dims = [[1, 4, 9, 9], [8, 4, 3, 3], [], [], [], [], []]
    types = [F32, F32, "", "ScalarList", "str", "ScalarList", "Scalar"]
    w = work("aten::conv2d", dims, types, ["", "", "", "[1, 1]", "same", "[1, 1]", "1"])
    assert w.flops == 2 * 1 * 8 * 81 * 4 * 9
    assert w.ceiling == "tf32-matrix"


# --- elementwise, reductions, normalisations


def test_add_broadcasts_vit_position_embedding() -> None:
    # h100/Falconsai: aten::add [[4, 197, 768], [1, 197, 768], []] bf16, alpha 1
    w = work("aten::add", [[4, 197, 768], [1, 197, 768], []], [BF16, BF16, "Scalar"], ["", "", "1"])
    assert w.flops == 4 * 197 * 768
    assert w.bytes == (4 * 197 * 768 + 197 * 768 + 4 * 197 * 768) * 2
    assert w.ceiling == "fp32-vector"  # bf16 arithmetic runs in float (at::opmath_type)


def test_inplace_add_writes_self() -> None:
    # h100/Falconsai: aten::add_ [[4, 768, 14, 14], [1, 768, 1, 1], []] (the conv bias)
    w = work("aten::add_", [[4, 768, 14, 14], [1, 768, 1, 1], []], [BF16, BF16, "Scalar"])
    assert w.bytes == (4 * 768 * 196 + 768 + 4 * 768 * 196) * 2
    assert w.flops == 4 * 768 * 196


def test_wrapped_number_does_not_promote() -> None:
    # Qwen H100: aten::mul [[1, 559, 64], []] ['float', 'double']: a Python float as 0-dim
    w = work("aten::mul", [[1, 559, 64], []], [F32, "double"])
    assert w.bytes == 559 * 64 * 4 + 8 + 559 * 64 * 4
    assert w.ceiling == "fp32-vector"


def test_where_and_data_movement() -> None:
    # h100/owlv2: aten::where [[1, 1, 1], [], [1, 5184, 1]] ['bool', 'Scalar', bf16]
    w = work("aten::where", [[1, 1, 1], [], [1, 5184, 1]], ["bool", "Scalar", BF16])
    assert w.bytes == 1 + 5184 * 2 + 5184 * 2
    # b200: aten::copy_ [[1, 512], [1, 512], []] int: src read, self written, no FLOPs
    c = work("aten::copy_", [[1, 512], [1, 512], []], ["int", "int", "Scalar"], ["", "", "True"])
    assert (c.flops, c.bytes, c.ceiling) == (0.0, 512 * 4 * 2, None)
    # b200: aten::to [[1], ...] with dtype 3 (Int); _to_copy bf16 -> float (6)
    to = work(
        "aten::to",
        [[1], [], [], [], [], [], [], []],
        ["int", "Scalar", "Scalar", "", "", "Scalar", "Scalar", ""],
        ["", "3", "0", "", "", "False", "False", ""],
    )
    assert to.bytes == 4 + 4
    up = work("aten::_to_copy", [[8, 16], [], []], [BF16, "Scalar", "Scalar"], ["", "6", "0"])
    assert up.bytes == 8 * 16 * 2 + 8 * 16 * 4
    fill = work("aten::fill_", [[10, 3], []], ["long int", "Scalar"], ["", "-1"])
    assert fill.bytes == 10 * 3 * 8 and fill.flops == 0
    assert "target dtype" in reason("aten::to", [[4], [], []], [F32, "Scalar", ""], ["", "", ""])


def test_reductions_mean_and_sum() -> None:
    # Qwen H100 RMSNorm by hand: aten::mean [[16, 559, 1024], [], [], []] float over [-1]
    w = work(
        "aten::mean",
        [[16, 559, 1024], [], [], []],
        [F32, "ScalarList", "Scalar", ""],
        ["", "[-1]", "True", ""],
    )
    assert w.flops == 16 * 559 * 1024
    assert w.bytes == (16 * 559 * 1024 + 16 * 559) * 4
    # mi300/resnet_act_checkpoint: aten::sum [[10, 1000], ...] over [0]
    s = work(
        "aten::sum",
        [[10, 1000], [], [], []],
        [BF16, "ScalarList", "Scalar", ""],
        ["", "[0]", "True", ""],
    )
    assert s.bytes == (10 * 1000 + 1000) * 2
    full = work(
        "aten::sum", [[6, 7], [], [], []], [F32, "ScalarList", "Scalar", ""], ["", "", "False", ""]
    )
    assert full.bytes == (42 + 1) * 4


def test_softmax_and_norms() -> None:
    # h100/timesformer: aten::_softmax [[3136, 12, 8, 8], [], []] bf16, half_to_float False
    n = 3136 * 12 * 8 * 8
    w = work(
        "aten::_softmax",
        [[3136, 12, 8, 8], [], []],
        [BF16, "Scalar", "Scalar"],
        ["", "-1", "False"],
    )
    assert (w.flops, w.bytes) == (5 * n, 2 * n * 2)
    # h100/Falconsai: aten::layer_norm [[4, 197, 768], [], [768], [768], [], []]
    ln = work(
        "aten::layer_norm",
        [[4, 197, 768], [], [768], [768], [], []],
        [BF16, "ScalarList", BF16, BF16, "Scalar", "Scalar"],
        ["", "[768]", "", "", "1e-12", "True"],
    )
    assert ln.flops == 5 * 4 * 197 * 768
    assert ln.bytes == (2 * 4 * 197 * 768 + 2 * 768) * 2
    # perf_model/normalization: aten::rms_norm [[8, 16, 32, 32], [], [32, 32], []] float
    rms = work("aten::rms_norm", [[8, 16, 32, 32], [], [32, 32], []], [F32, "ScalarList", F32, ""])
    assert rms.flops == 4 * 8 * 16 * 32 * 32
    assert rms.bytes == (2 * 8 * 16 * 1024 + 1024) * 4
    # mi300/resnet: aten::batch_norm [[10, 512, 7, 7], [512] x 4] bf16
    bn = work(
        "aten::batch_norm",
        [[10, 512, 7, 7], [512], [512], [512], [512], [], [], [], []],
        [BF16] * 5 + ["Scalar"] * 4,
        ["", "", "", "", "", "True", "0.1", "1e-05", "True"],
    )
    assert bn.flops == 5 * 10 * 512 * 49
    assert bn.bytes == (2 * 10 * 512 * 49 + 4 * 512) * 2
    # V100 trace_diff (older Kineto: no Concrete Inputs): aten::layer_norm [[1024, 512], ...]
    old = work(
        "aten::layer_norm",
        [[1024, 512], [], [512], [512], [], []],
        [F32, "", F32, F32, "Scalar", "Scalar"],
    )
    assert old.bytes == (2 * 1024 * 512 + 2 * 512) * 4


# --- what gives no work, and why


def test_no_formula_and_unreadable_shapes_say_why() -> None:
    assert reason("aten::view", [[2, 3], []], [F32, "ScalarList"]) == "no formula for aten::view"
    assert "input 0 is missing: 2 Input Dims, 0 types" in reason("aten::mm", [[2, 3], [3, 4]], [])
    assert "input 0 is missing: 0 Input Dims" in reason("aten::mm", [], [])
    assert "not a tensor (Input type 'Scalar')" in reason("aten::mm", [[], [3]], ["Scalar", F32])
    assert "TensorList" in reason(
        "aten::cat", [[[4, 1, 768], [4, 196, 768]], []], ["TensorList", "Scalar"]
    )
    assert "element size roofscope does not know" in reason(
        "aten::mm", [[2, 3], [3, 4]], ["c10::Float4_e2m1fn_x2"] * 2
    )
    assert "dims [-1, 3]" in reason("aten::mm", [[-1, 3], [3, 4]], [BF16, BF16])
    assert "2^40" in reason("aten::mm", [[2**60, 3], [3, 4]], [BF16, BF16])
    assert "2^50" in reason("aten::mm", [[2**30, 2**30], [2**30, 4]], [BF16, BF16])
    assert "sizes" in reason("aten::mm", [["2", 3], [3, 4]], [BF16, BF16])
    assert "sizes" in reason("aten::mm", [[True, 3], [3, 4]], [BF16, BF16])
    assert "expected True or False" in reason(
        "aten::_scaled_dot_product_flash_attention",
        [[1, 1, 4, 8]] * 3,
        [BF16] * 3,
        ["", "", "", "0.", "maybe"],
    )
    assert "do not broadcast" in reason("aten::add", [[2, 3], [4, 3]], [F32, F32])
    assert "no matrix ceiling for type 'long int'" in reason(
        "aten::mm", [[2, 3], [3, 4]], ["long int"] * 2
    )


def test_damaged_args_never_raise() -> None:
    """Every formula on random damaged args (seeded): work or a reason, never an exception."""
    rng = random.Random(39)
    dims = [[], [0], [1], [3], [2, 3], [3, 2], [1, 2, 3], [2, 1, 3, 4], [0, 0, 0, 0], [-1]]
    dims += [[2**41], "x", None, [[1, 2], [3]], [True], [1.5], [2, 2, 2, 2, 2]]
    types = [BF16, F32, FP8, "double", "int", "long int", "bool", "Scalar", "", "TensorList"]
    types += ["weird", None, 3]
    concrete = ["", "0", "1", "True", "False", "[1, 1]", "[]", "[0]", "same", "15", "99", "-1"]
    concrete += ["[-5]", "[10000000000000000000]", "abc", None, 7]
    for name in FORMULAS:
        for _ in range(150):
            call = OpCall(
                name,
                [rng.choice(dims) for _ in range(rng.randint(0, 14))],
                [rng.choice(types) for _ in range(rng.randint(0, 14))],  # type: ignore[misc]
                [rng.choice(concrete) for _ in range(rng.randint(0, 14))],
            )
            assert isinstance(work_or_reason(call), OpWork | NoWork)
    assert "must be lists" in reason("aten::mm", None, None)  # type: ignore[arg-type]


# --- Inductor's Triton launchers


def test_an_inductor_triton_kernel_moves_each_buffer_once() -> None:
    """TraceLens's torch_compile_triton trace: triton_poi_fused__unsafe_view_mul_silu_2 with
    Input Dims [[8, 4096, 8192], [32768, 8192], [], []] (bf16): 2 B x both buffers, no FLOPs
    known (memory only); a template (triton_tem_: a GEMM) has no formula."""
    w = work(
        "triton_poi_fused__unsafe_view_mul_silu_2",
        [[8, 4096, 8192], [32768, 8192], [], []],
        [BF16, BF16, "Scalar", "Scalar"],
        ["", "", "268435456", ""],
    )
    assert (w.flops, w.bytes, w.ceiling) == (0.0, 2 * (8 * 4096 * 8192 + 32768 * 8192), None)
    assert reason("triton_tem_fused_mm_0", [[64, 64]], [BF16]) == (
        "no formula for triton_tem_fused_mm_0"
    )
    assert "no tensor" in reason("triton_per_fused_0", [[], []], ["Scalar", "Scalar"])


def test_a_convolution_without_its_concrete_inputs_has_no_work() -> None:
    """Traces before PyTorch 2.1 record no Concrete Inputs: stride and padding unknown, so no
    count, never the defaults (HTA's ResNet-50, V100: conv1 [32, 3, 224, 224] * [64, 3, 7, 7]
    is stride 2, padding 3; read as stride 1, padding 0 it counted 218x218 outputs, not
    112x112, 3.8 times the FLOPs)."""
    dims = [[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]
    types = [F32, F32, "GenericList", "GenericList", "GenericList", "bool", "bool", "bool", "bool"]
    assert "not in Concrete Inputs" in reason("aten::cudnn_convolution", dims, types)
    concrete = ["", "", "[3, 3]", "[2, 2]", "[1, 1]", "1", "False", "False", "True"]
    w = work("aten::cudnn_convolution", dims, types, concrete)
    assert w.flops == 2 * 32 * 64 * 112 * 112 * 3 * 7 * 7


def test_an_out_argument_is_written_not_read() -> None:
    """clamp_min.out(self, min, *, out) as HTA's ResNet-50 records it: [[x], [], [x]]; the
    bytes are x read and out written once (counting out as read too put the kernel at 1.23
    TB/s on a 0.9 TB/s V100)."""
    x = [32, 256, 56, 56]
    w = work("aten::clamp_min", [x, [], x], [F32, "Int", F32])
    assert w.bytes == 2 * 32 * 256 * 56 * 56 * 4
    assert w.flops == 32 * 256 * 56 * 56
    same = work("aten::add", [x, x, []], [F32, F32, "Scalar"])  # two inputs, no out=
    assert same.bytes == 3 * 32 * 256 * 56 * 56 * 4
