"""Kernel categories (issue 39, point 5): every kernel in one of GEMM, attention, convolution,
communication, elementwise, reduction/normalisation, memory copy/set and other; the time per
category in the report. The names are real: from the corpus (tests/corpus_pass.py) and from
AMD-AGI/TraceLens @171dd74 tests/traces (MIT): SGLang and vLLM on MI300X, vLLM on B200, the
H100 and MI300X Qwen traces. Every expected share is summed here from the trace's own events."""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofscope
from roofscope.analysis.categories import categories
from roofscope.analysis.hotspots import Aggregate, ranked
from roofscope.analysis.roofline import Roofline
from roofscope.model.categories import Category, category_of
from roofscope.model.libraries import _lowered, folded_found
from roofscope.render.report.text import render_text
from tests.conftest import DATA, plain_html
from tests.corpus_pass import corpus

G, A, C, X = Category.GEMM, Category.ATTENTION, Category.CONVOLUTION, Category.COMMUNICATION
E, R, M, U = Category.ELEMENTWISE, Category.REDUCTION, Category.MEMORY, Category.OTHER  # U: none

NAMES = [
    # GEMM: cuBLAS(Lt), nvjet, CUTLASS, Tensile, TensorRT-LLM, Triton MoE, the user's own
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
     "execute_segment_k_off_kernel__5x_cublas", G),  # H100 Qwen
    ("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", G),  # B200 vLLM
    ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1", G),
    ("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_"
     "TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f", G),
    ("_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", G),  # vLLM Triton MoE, MI300X
    ("volta_sgemm_64x64_nt", G),
    ("ampere_gcgemm_64x64_nt", G),
    ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_32x4_nn_"
     "align8>(T1::Params)", G),
    ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, "
     "false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>>>", G),
    ("void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>"
     "(cublasSplitKParams<float>, float const*)", G),
    ("unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)", G),
    ("triton_tem_fused_mm_0", G),
    ("fused_moe_kernel", G),
    # attention
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
     "false, cutlass::bfloat16_t>>", A),  # H100 Qwen (SDPA)
    ("attn_fwd", A),  # MI300X Qwen
    ("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", A),
    ("_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernelINS_40BlockFmha", A),
    ("void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16>", A),
    ("void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128>", A),
    ("kernel_unified_attention_3d", A),  # vLLM MI300X
    ("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<>)", A),
    ("void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64>>", A),
    # convolution: cuDNN's, not its GEMM-looking names
    ("sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x32x32", C),
    ("volta_scudnn_128x64_relu_interior_nn_v1", C),
    ("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)", C),
    ("void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int)", C),
    ("void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>", C),
    ("void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4"
     "_nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4::"
     "Params)", C),
    ("_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11", C),
    ("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::"
     "winograd_nonfused::WinogradDataParams<float, float>)", C),
    ("cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)", C),
    ("void fft2d_r2c_32x32<float, false, 0u, false>(float2*, float const*, int)", C),
    # communication (model/libraries.py)
    ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", X),
    ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::"
     "BFloat16*, unsigned long)", X),
    # elementwise
    ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
     "silu_kernel(at::TensorIteratorBase&)::{lambda()#1}>", E),
    ("void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_"
     "nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16>>>", E),
    ("_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2"
     "_ES3_S5_EEEEvPS3_PS4_i", E),
    ("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)", E),
    ("triton_poi_fused__unsafe_view_mul_silu_2", E),
    ("void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>", E),
    ("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float>", E),
    ("loop_multiply_fusion", E),  # XLA
    # reduction/normalisation
    ("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_", R),
    ("void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, long)", R),
    ("_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27", R),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
     "ArgMaxOps<float>, unsigned int, long, 4, 4> >", R),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>", R),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>", R),
    ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct)", R),
    ("triton_red_fused_add_mean_mul_pow_rsqrt_0", R),
    ("void at::native::sbtopk::gatherTopK<float, unsigned int, 1, false>", R),
    ("void rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel<rocprim::ROCPRIM_400200_NS::"
     "detail::wrapped_scan_config<>>", R),
    ("void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<>>", R),
    ("void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int)", R),
    # memory copy/set
    ("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::"
     "native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}>>", M),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous "
     "namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>", M),
    ("void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>"
     ", std::array<char*, 1ul> >", M),
    ("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char>", M),
    ("void (anonymous namespace)::store_kvcache<2048l, 4, false, long>(StoreKVCacheParams)", M),
    ("void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int)", M),
    ("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>(int)", M),
    ("__amd_rocclr_fillBufferAligned", M),
    # other: nothing in the name says what it does
    ("void (anonymous namespace)::resolve_future_token_ids_kernel<long>(long*, long const*)", U),
    ("triton__0d1d2d3d", U),
    ("evalTwiddleFirstKernel(gl64_t *, gl64_t *, unsigned int)", U),
]  # fmt: skip


@pytest.mark.parametrize(("kernel", "want"), NAMES)
def test_a_real_kernel_name_has_its_category(kernel: str, want: Category) -> None:
    assert category_of(kernel) is want


def test_fbgemm_is_not_a_gemm() -> None:
    """FBGEMM's embedding and sparse kernels name ``fbgemm_gpu``: no GEMM in them."""
    name = "void fbgemm_gpu::permute_2D_data_kernel<true, int, int, float>(int, int, int)"
    assert category_of(name) is Category.MEMORY


@pytest.mark.parametrize(
    ("operator", "want"),
    [
        ("aten::mm", G),
        ("aten::addmm", G),
        ("aten::_scaled_mm", G),
        ("aten::_scaled_dot_product_flash_attention", A),
        ("aten::_scaled_dot_product_efficient_attention_backward", A),
        ("aten::convolution", C),
        ("aten::cudnn_convolution", C),
        ("aten::add_.Tensor", E),  # the overload does not matter
        ("aten::silu", E),
        ("aten::layer_norm", R),
        ("aten::_softmax", R),
        ("aten::copy_", M),
        ("aten::cat", M),
        ("aten::nonzero", U),
    ],
)
def test_the_operator_decides_where_the_name_cannot(operator: str, want: Category) -> None:
    """Old Triton names (``triton__0d1d2d``, hta-tests-data) say nothing of their work."""
    assert category_of("triton__0d1d2d", operator) is want


def test_the_name_wins_over_the_operator() -> None:
    """An operator launches helpers of other kinds: aten::linear's cuBLAS split-K reduction
    is part of the GEMM, aten::mm's output fill is a fill."""
    assert category_of("volta_sgemm_64x64_nt", "aten::add") is Category.GEMM
    fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
    assert category_of(fill, "aten::mm") is Category.MEMORY


# -- the time per category on real traces, summed here from the trace's events ------------

SGLANG = DATA / "kineto" / "sglang_qwen3_8b_decode_mi300x.json.gz"
B200 = DATA / "kineto" / "b200_eager_rank0_of_8_trimmed.json.gz"

# Each kernel of the two traces by a piece of its name, classified by hand; every kernel
# must match exactly one piece.
BY_HAND = {
    SGLANG: {
        "Cijk_": G,
        "paged_attention_ll4mi_": A,
        "add_rmsnorm_quant_kernel": R,
        "direct_copy_kernel_cuda": M,
        "act_and_mul_kernel": E,
        "rotary_embedding_kernel": E,
        "store_kvcache": M,
        "ArgMaxOps": R,
        "vectorized_gather_kernel": M,
        "multi_tensor_apply_kernel": M,  # torch._foreach_copy_: CopyFunctor, at::native::Copy
        "bfloat16tofloat32_copy_kernel_cuda": M,
        "resolve_future_token_ids_kernel": U,
        "neg_kernel_cuda": E,
        "clamp_position_kernel": U,
        "create_flashinfer_kv_indices_triton": U,
        "wrapped_scan_config": R,
        "arange_cuda_out": E,
    },
    B200: {
        "bmm_": G,
        "nvjet_": G,
        "multimem_all_reduce_kernel": X,
        "ncclDevKernel_AllGather": X,
        "fused_add_rms_norm_kernel": R,
        "vllm::rms_norm_kernel<": R,
        "direct_copy_kernel_cuda": M,
        "fmhaSm100aKernel": A,
        "moe::dev::finalize": R,
        "moe::dev::routing": R,
        "quantize_with_block_size": E,
        "scaled_fp8_quant_kernel": E,
        "reshape_and_cache_flash_kernel": M,
        "rotary_embedding_kernel": E,
        "FillFunctor": M,
        "masked_fill_kernel": M,
        "_copy_page_indices_kernel": M,
        "vectorized_gather_kernel": M,
        "index_kernel_impl": M,
        "CUDAFunctorOnSelf_add<int>": E,
        "triton_poi_fused_add_bitwise": E,
    },
}


def _by_hand(path: Path) -> dict[Category, tuple[set[str], int, int]]:
    """Per category: the kernel names, their calls and their time in ns (Kineto's ``dur`` is
    in µs; each dispatch's ns as roofscope reads it: int(dur x 1000))."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f, parse_float=Decimal)
    names: dict[Category, set[str]] = defaultdict(set)
    calls: dict[Category, int] = defaultdict(int)
    ns: dict[Category, int] = defaultdict(int)
    for e in doc["traceEvents"]:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        (cat,) = [c for piece, c in BY_HAND[path].items() if piece in e["name"]]
        names[cat].add(e["name"])
        calls[cat] += 1
        ns[cat] += int(Decimal(e["dur"]) * 1000)
    return {c: (names[c], calls[c], ns[c]) for c in names}


@pytest.mark.parametrize("path", [SGLANG, B200], ids=["sglang-mi300x", "vllm-b200"])
def test_each_category_holds_the_time_of_its_kernels(path: Path) -> None:
    want = _by_hand(path)
    report = roofscope.analyze(path).checkup
    whole = sum(ns for _, _, ns in want.values())
    got = {r.category: r for r in report.categories.rows}
    named = {raw: k.name for k in report.hotspots.kernels for raw in k.raw_names}
    assert set(got) == set(want)
    for cat, (names, calls, ns) in want.items():
        r = got[cat]
        assert (r.kernels, r.calls, r.total_ns) == (len(names), calls, ns)
        assert r.share == pytest.approx(ns / whole, rel=1e-12)
        assert {report.categories.of[named[n]] for n in names} == {cat}
    assert [r.total_ns for r in report.categories.rows] == sorted(
        (ns for _, _, ns in want.values()), reverse=True
    )


def test_the_sglang_decode_is_mostly_gemm_and_attention() -> None:
    """The numbers an engineer reads first, from the trace's own events: GEMM 5,782 of 9,765
    µs of kernel time (59.2 %), paged attention 2,128 µs (21.8 %), all else 19.0 %."""
    want = _by_hand(SGLANG)
    whole = sum(ns for _, _, ns in want.values())
    assert (want[G][2], want[A][2], whole) == (5_782_257, 2_127_869, 9_765_437)
    assert round(100 * want[G][2] / whole, 1) == 59.2
    assert round(100 * want[A][2] / whole, 1) == 21.8


def test_the_json_lists_each_kernel_category_and_the_time_per_category() -> None:
    want = _by_hand(B200)
    doc = roofscope.analyze(B200).to_dict()
    rows = {r["category"]: r for r in doc["categories"]}
    assert rows["communication"]["total_s"] == want[X][2] / 1e9
    assert rows["communication"]["calls"] == want[X][1]
    assert rows["communication"]["efficiency"] is None  # no kernel has known work
    kinds = {k["name"]: k["category"] for k in doc["kernels"]}
    assert {kinds[n] for n in want[G][0]} == {"gemm"}


def test_the_text_table_fits_80_columns_and_the_html_has_it() -> None:
    report = roofscope.analyze(SGLANG)
    text = render_text(report.checkup, width=80)
    start = text.index("Kernel time by category:")
    lines = text[start:].splitlines()[1:]
    table = lines[: next(i for i, line in enumerate(lines) if not line.startswith("  "))]
    assert len(table) == 2 + 6 and all(len(line) <= 80 for line in table)
    # its operators' shapes place a few copy and elementwise kernels: the roofline's columns
    assert table[0].split() == [
        "Category", "Kernels", "Calls", "Total", "[µs]", "Share", "Eff.", "Placed", "[µs]",
    ]  # fmt: skip
    assert table[2].split() == ["GEMM", "5", "145", "5,782", "59.2%", "-", "-"]  # 5,782.257 µs
    html = plain_html(report.to_html())
    assert '<table id="categories">' in html
    assert "<tr><td>GEMM</td><td>5</td><td>145</td><td>5.78 ms</td><td>59.2% <span" in html


# -- the efficiency of a category under the roofline ---------------------------------------

NCU = DATA / "ncu" / "roofscope-profile-h200"


def test_a_category_efficiency_is_time_weighted_over_its_placed_kernels() -> None:
    """An H200 ncu export with counters (roofscope profile): each kernel's efficiency is the
    roofline's; its category's is sum(efficiency x time) / sum(time) over those placed."""
    report = roofscope.analyze(NCU).checkup
    time = {k.name: k.total_ns or 0.0 for k in report.hotspots.kernels}
    placed = [
        (category_of(k.name), k.efficiency, time[k.name])
        for k in report.roofline.result.kernels
        if k.efficiency is not None
    ]
    assert {c for c, _, _ in placed} == {G, E, M}
    for r in report.categories.rows:
        mine = [(e, t) for c, e, t in placed if c is r.category]
        assert r.placed_ns == sum(t for _, t in mine)
        if mine:
            weighted = sum(e * t for e, t in mine) / sum(t for _, t in mine)
            assert r.efficiency == pytest.approx(weighted, rel=1e-12)
        else:
            assert r.efficiency is None


def test_unknown_times_give_no_time_or_share() -> None:
    """A kernel whose time the input does not give (a summary of calls alone) leaves its
    category's time and share unknown, never 0."""
    part = Aggregate(calls=3, timed=0, total=None, minimum=None, maximum=None, sumsq=None,
                     median=None, raw=("volta_sgemm_64x64_nt",))  # fmt: skip
    hot = ranked([("volta_sgemm_64x64_nt", part)])
    roof = Roofline(ceilings=(), kernels=(), ridge={}, main_ceiling=None)
    (row,) = categories(hot, roof).rows
    assert (row.category, row.calls, row.total_ns, row.share) == (G, 3, None, None)
    assert (row.placed_ns, row.efficiency) == (0.0, None)


# -- every corpus Kineto trace and Nsight export -------------------------------------------

# The kernels of the corpus's Kineto traces and nsys/ncu exports that no name pattern places,
# by a piece of their name, each with why.
UNCATEGORISED = {
    # at::cuda::sleep, a benchmark's wait: no work at all
    "spin_kernel": "torch/hta-tests-data",
    # torch.unique's inverse indices, torch.repeat_interleave's index computation
    "fill_reverse_indices_kernel": "nvidia/llm-perf-opt-rtx5090",
    "compute_cuda_kernel<long>": "torch/hta-tests-data",
    # a number-theoretic transform (zisk's prover), no ML kernel
    "evalTwiddle": "nvidia/zisk-zorch-nsys-rtx5090",
    # TorchScript/nvFuser's fusion: its name is a hash
    "fused__autocast_to__": "nvidia/llm-perf-opt-rtx5090",
    # Triton before 2.1 named kernels by their signature alone (triton__0d1d2d): the
    # operator (category_of's second argument) decides, once kernels are linked to it
    "triton__0d1d": "torch/hta-tests-data",
    # FBGEMM's sparse-feature bookkeeping: index checks, bucketing, offsets (DLRM)
    "bounds_check_indices_kernel": "torch/hta-tests-data",
    "_block_bucketize_sparse_features": "torch/hta-tests-data",
    "_offsets_range_cuda_kernel": "torch/hta-tests-data",
}


def test_the_corpus_kernels_in_no_category_are_the_listed_ones() -> None:
    found = {(c.key, name) for c in corpus() for name in c.uncategorised}
    unlisted = sorted(n for _, n in found if not any(p in n for p in UNCATEGORISED))
    assert not unlisted, unlisted
    seen = {p for p in UNCATEGORISED for key, n in found if p in n}
    assert seen == set(UNCATEGORISED)  # each entry still needed
    for piece, where in UNCATEGORISED.items():
        assert any(key.startswith(where) for key, n in found if piece in n), piece


def _unicode_folded() -> list[tuple[re.Pattern[str], re.Pattern[str]]]:
    """Each name pattern (ASCII-folded, as compiled) with its IGNORECASE-only twin."""
    from roofscope.model import categories as cats
    from roofscope.model import libraries

    pats = [p for _, p in cats._NAMES] + [libraries._COMMUNICATION]
    return [(p, re.compile(p.pattern, re.IGNORECASE)) for p in pats]


# text where ASCII and Unicode folding differ: U+017F and U+212A fold to s and k, an accented
# letter is a word character only to Unicode, U+001C is whitespace only to Unicode
FOLDING = ["\u017foftmax", "\u212aernel_gemm", "éflash::fwd", "void\x1cfft2d_r2c", "NCCL\tkernel"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ncclgemFLASH_:\u017f\u212aé \x1c\tsoftmaxK"), max_size=30))
def test_folded_found_finds_what_unicode_folding_finds(text: str) -> None:
    """The category and communication patterns are compiled IGNORECASE | ASCII for speed, and
    searched lowered in lowered ASCII text; folded_found finds exactly where the IGNORECASE
    pattern finds, on any text."""
    for fast, slow in _unicode_folded():
        assert folded_found(fast, text) == (slow.search(text) is not None)


def test_folded_found_on_text_where_the_foldings_differ() -> None:
    names = [n for n, _ in NAMES] + FOLDING + [n.upper() for n, _ in NAMES]
    for fast, slow in _unicode_folded():
        for text in names:
            assert folded_found(fast, text) == (slow.search(text) is not None), (fast, text)


def test_a_pattern_with_a_cased_escape_is_not_lowered() -> None:
    """Lowered, \\W would be \\w and \\B \\b: such a pattern searches the lowered text as it is
    (still case-folded), and finds what it found."""
    cased = re.compile(r"gemm\W|\Bnccl", re.IGNORECASE | re.ASCII)
    assert _lowered(cased) is cased
    assert folded_found(cased, "GEMM kernel") and folded_found(cased, "xNCCL")
    assert not folded_found(cased, "gemm_kernel") and not folded_found(cased, "nccl")
    plain = re.compile(r"FillFunctor|\bflash_", re.IGNORECASE | re.ASCII)
    assert _lowered(plain).pattern == r"fillfunctor|\bflash_"
    assert not _lowered(plain).flags & re.IGNORECASE
    assert category_of("\u017foftmax_kernel") is Category.REDUCTION  # U+017F folds to s
