"""What a kernel does, in the words an ML engineer asks in ("how much is GEMM?"): every kernel
in exactly one ``Category``, told from its normalised name (model/names.py) and, where the
name alone cannot tell, from the PyTorch operator that launched it. Communication is
model/libraries.py's; a vendor GEMM library's kernel (libraries.Library.GEMM) is a GEMM unless
its name says convolution or attention. Each pattern names where its names were seen: the
corpus (tests/corpus_pass.py) and AMD-AGI/TraceLens @171dd74 tests/traces (MIT), quoted in
tests/test_categories.py.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache

from roofscope.model.libraries import Library, folded_found, is_communication, library_of


class Category(StrEnum):
    """What a kernel does; the order is the order the report lists them in."""

    GEMM = "gemm"
    ATTENTION = "attention"
    CONVOLUTION = "convolution"
    COMMUNICATION = "communication"
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction-normalisation"  # reductions, scans, sorts, top-k, norms, softmax
    MEMORY = "memory-copy-set"  # copies, fills, concatenation, gathers, layout transposes
    OTHER = "other"

    @property
    def label(self) -> str:
        """How the text and HTML views name it (the JSON has the value)."""
        return _LABELS.get(self, self.value)


_LABELS = {
    Category.GEMM: "GEMM",
    Category.REDUCTION: "reduction/norm",
    Category.MEMORY: "memory copy/set",
}


def _any(*alternatives: str) -> re.Pattern[str]:
    """One pattern, searched with libraries.folded_found (case folded: lowered on ASCII)."""
    return re.compile("|".join(alternatives), re.IGNORECASE | re.ASCII)


# First match wins: attention and convolution before GEMM (FlashAttention 3 runs in
# cutlass::device_kernel, cuDNN's convolutions are implicit GEMMs), copies and norms before
# elementwise (at::native::vectorized_elementwise_kernel<4, FillFunctor<float>> is a fill).
_NAMES: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (
        Category.ATTENTION,
        _any(
            # FlashAttention 2/3 and PyTorch's copy: flash_fwd_kernel, flash::flash_fwd_splitkv_
            # kernel, pytorch_flash::flash_fwd_kernel (H100 Qwen trace)
            r"\bflash_(?:fwd|bwd)|\bflash::|\bflash_attn",
            # FMHA: fmha_cutlassF_bf16_aligned_64x64_rf_sm80 (PyTorch mem-efficient SDPA),
            # fmhaSm100aKernel_... (TensorRT-LLM, B200), ck_tile FmhaBatchPrefillWithPagedKV
            # CacheKernel (SGLang MI300X), CK fmha_fwd
            r"fmha",
            # Triton attention: attn_fwd (MI300X Qwen), kernel_unified_attention_2d (vLLM),
            # paged_attention_ll4mi_QKV_mfma16_kernel (vLLM ROCm), SGLang's _fwd_kernel,
            # _fwd_grouped_kernel_stage1; cuDNN's cudnn_generated_fort_native_sdpa_...
            r"attn_(?:fwd|bwd)|attention|^_fwd_(?:grouped_)?kernel|native_sdpa|flash_?mla",
            # FlashInfer: BatchPrefillWithPagedKVCacheKernel, BatchDecodeWithPagedKVCacheKernel
            r"Batch(?:Prefill|Decode)With\w*KVCache",
        ),
    ),
    (
        Category.CONVOLUTION,
        _any(
            # cuDNN: sm80_xmma_fprop_implicit_gemm_..., volta_scudnn_128x64_relu_...,
            # cudnn::cnn::wgrad_alg0_engine, cudnn::detail::dgrad_engine, implicit_convolve_
            # sgemm, cudnn::winograd_nonfused::winogradForwardData4x4, cutlass_cudnn_infer::
            # Kernel<cutlass_tensorop_s1688fprop_...>, cask_cudnn::computeOffsetsKernel
            r"_(?:fprop|dgrad|wgrad)_|(?:fprop|dgrad|wgrad)_optimized|scudnn|convolve"
            r"|cudnn::(?:cnn|detail|winograd)|winograd|\bwgrad_alg|cutlass_?\w*cudnn|cask_cudnn"
            r"|ImplicitGemmConv|im2col|col2im|conv2d|conv3d|convolution",
            # cuDNN's FFT algorithms: fft2d_r2c_32x32, fft2d_c2r_32x32 (trace_diff, V100)
            r"^(?:void\s+)?fft2d_",
            # MIOpen: naive_conv_fwd_nchw, igemm_fwd_gtc_..., MIOpenConvUni
            r"naive_conv|\bigemm_|MIOpenConv",
        ),
    ),
    (
        Category.GEMM,
        _any(
            # the user's own: gemm_naive_kernel, gemm_tiled_kernel<32> (RTX 5070); cuBLAS's
            # gemv2T_kernel_val, gemvNSP_kernel, gemmk1_kernel, internal::gemvx::kernel,
            # magma_sgemmEx_kernel, sgemm_largek_lds64, splitKreduce_kernel, ampere_sgemm_...;
            # not FBGEMM (fbgemm_gpu::permute_2D_data_kernel: embedding tables, no GEMM)
            r"(?<!fb)gemm|gemv|splitKreduce",
            # Triton: _matmul_ogs_NNT_bf16xbf16xmxfp4_... (vLLM MoE), triton_tem_fused_mm_0,
            # fused_moe_kernel (vLLM/SGLang MoE grouped GEMM)
            r"_matmul_ogs|\bmatmul_kernel|^triton_tem_fused_(?:add)?b?mm|fused_moe_kernel",
            # cuBLASLt's epilogue: epilogue::impl::globalKernel<...>(..., cublasLtEpilogue_t, ...)
            r"cublasLtEpilogue",
        ),
    ),
    (
        Category.REDUCTION,
        _any(
            # norms: vectorized_layer_norm_kernel, LayerNormForwardCUDAKernel, GammaBeta
            # BackwardCUDAKernel, RowwiseMomentsCUDAKernel, layer_norm_grad_input_kernel,
            # vllm::rms_norm_kernel, fused_add_rms_norm_kernel, aiter add_rmsnorm_quant_kernel,
            # ck_tile Rmsnorm2dFwd, cudnn::bn_fw_tr_1C11_kernel_NCHW, bn_bw_1C11
            r"layer_?norm|rms_?norm|group_?norm|batch_?norm|GammaBeta|RowwiseMoments"
            r"|\bbn_(?:fw|bw)_",
            # softmax and losses: softmax_warp_forward, cunn_SoftMaxForward, nll_loss_forward_
            # reduce_cuda_kernel_2d, cunn_ClassNLLCriterion_updateOutput_kernel
            r"softmax|nll_?loss|NLLCriterion|cross_entropy",
            # reductions, scans, sorts and selections: at::native::reduce_kernel (sum, mean,
            # max, argmax, norm), cub::DeviceScanKernel, DeviceRadixSortOnesweepKernel,
            # bitonicSortKVInPlace, sbtopk::gatherTopK (before memory's gather), rocprim's
            # trampoline_kernel<wrapped_scan_config<...>> (SGLang MI300X),
            # _topk_forward (vLLM), reduce_segments, cublasLt's ReduceSplitK, pooling windows
            r"reduce|Scan(?:Init)?Kernel|\b(?:hip)?cub::|\brocprim::|Sort|topk|argmax|pool(?:ing)?_"
            r"|_pool\b|adaptive_\w*pool|^triton_(?:red|per)_",
            # FBGEMM's embedding backward sums each row's gradients (then its optimiser step):
            # split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1,
            # split_embedding_codegen_grad_indice_weights_kernel (param-et-replay-inputs)
            r"split_embedding_(?:backward|codegen_grad)",
            # MoE routing and combining: the router's top-k and expert histograms, each token's
            # expert outputs summed: moe::dev::routing::routingIndicesHistogramKernel,
            # moe::dev::finalize::finalizeKernelVecLoad (TensorRT-LLM, B200 vLLM);
            # _combined_routing_compute, _sum_bitmatrix_rows, _finalize_matmul_scatter_bf16
            # (vLLM's Triton MoE, MI300X)
            r"moe::dev::(?:routing|finalize)|_combined_routing_compute|_sum_bitmatrix"
            r"|_finalize_matmul",
        ),
    ),
    (
        Category.MEMORY,
        _any(
            # PyTorch: CatArrayBatchedCopy, direct_copy_kernel_cuda, bfloat16_copy_kernel_cuda,
            # copy_device_to_device, FillFunctor, recat_copy_async_kernel, input_concatenate_
            # fusion_2 (XLA); AMD blits: __amd_rocclr_copyBuffer, __amd_rocclr_fillBufferAligned
            r"copy|FillFunctor|fill_kernel|concat|memcpy|memset|__amd_rocclr_fill",
            # gathers, scatters and index selects: indexSelectLargeIndex, vectorized_gather_
            # kernel, index_elementwise_kernel<... index_kernel_impl>, _scatter_gather_
            # elementwise_kernel, masked_scatter
            r"indexSelect|gather|scatter|index_kernel|index_put|embedding_codegen_forward",
            # layout transposes: cudnn::ops::nchwToNhwcKernel, permute_2D_data_kernel,
            # permute_pooled_embs_kernel, MIOpen's batched_transpose_16x32_half and
            # transpose_NCHW2CNHW_V2_2D_WG_off64 (around its convolutions, MI300X ResNet);
            # KV-cache writes: vllm::reshape_and_cache_flash_kernel, store_kvcache (SGLang)
            r"nchwToNhwc|nhwcToNchw|\bpermute_|^(?:batched_)?transpose_|reshape_and_cache"
            r"|to_dense_representation|store_kvcache",
        ),
    ),
    (
        Category.ELEMENTWISE,
        _any(
            # PyTorch's TensorIterator kernels: vectorized_elementwise_kernel, unrolled_
            # elementwise_kernel, elementwise_kernel_manual_unroll, elementwise_kernel_with_
            # index; Inductor's pointwise triton_poi_fused_...; multi_tensor_apply_kernel
            # (foreach ops and fused optimisers)
            r"elementwise|^triton_poi_|multi_tensor_apply",
            # activations, rotary embeddings, dropout, quantisation: act_and_mul_kernel (SGLang),
            # silu_and_mul, gelu, vllm::rotary_embedding_kernel, fused_dropout_kernel_vec,
            # scaled_fp8_quant_kernel, quantize_with_block_size, _FP8rowwise_to_float,
            # upsample_linear1d_out_frame, saxpy_kernel, XLA's loop_multiply_fusion
            r"act_and_mul|silu|gelu|swiglu|rotary|\brope|dropout|quant|fp8|upsample|axpy"
            r"|^loop_\w*fusion",
            # cuDNN's scaling of a tensor by beta: cudnn::ops::scalePackedTensor_kernel
            r"scalePackedTensor",
        ),
    ),
)


def _ops(names: str) -> frozenset[str]:
    return frozenset(names.split())


# The PyTorch operator that launched a kernel decides where its name cannot: its aten name
# without the namespace and overload (aten::addmm, aten::_scaled_dot_product_flash_attention).
_OPERATORS: tuple[tuple[Category, frozenset[str]], ...] = (
    (
        Category.GEMM,
        _ops(
            "mm addmm bmm baddbmm addbmm matmul linear _scaled_mm _scaled_grouped_mm "
            "_grouped_mm addmv mv dot einsum _int_mm"
        ),
    ),
    (
        Category.ATTENTION,
        _ops(
            "scaled_dot_product_attention _scaled_dot_product_flash_attention "
            "_scaled_dot_product_efficient_attention _scaled_dot_product_cudnn_attention "
            "_flash_attention_forward _efficient_attention_forward "
            "_scaled_dot_product_flash_attention_backward "
            "_scaled_dot_product_efficient_attention_backward "
            "_scaled_dot_product_cudnn_attention_backward _flash_attention_backward "
            "_efficient_attention_backward"
        ),
    ),
    (
        Category.CONVOLUTION,
        _ops(
            "convolution _convolution conv1d conv2d conv3d conv_transpose1d conv_transpose2d "
            "conv_transpose3d cudnn_convolution cudnn_convolution_transpose "
            "miopen_convolution convolution_backward"
        ),
    ),
    (
        Category.MEMORY,
        _ops(
            "copy_ _to_copy to contiguous clone cat stack fill_ zero_ zeros ones full "
            "empty_like index_select gather scatter embedding index index_put_"
        ),
    ),
    (
        Category.REDUCTION,
        _ops(
            "sum mean max min amax amin argmax argmin topk sort cumsum prod norm "
            "linalg_vector_norm var std softmax _softmax log_softmax _log_softmax layer_norm "
            "native_layer_norm rms_norm _fused_rms_norm group_norm native_group_norm "
            "batch_norm native_batch_norm cudnn_batch_norm nll_loss cross_entropy_loss "
            "max_pool2d avg_pool2d adaptive_avg_pool2d"
        ),
    ),
    (
        Category.ELEMENTWISE,
        _ops(
            "add add_ sub mul mul_ div div_ neg pow rsqrt sqrt exp log relu relu_ gelu silu "
            "sigmoid tanh where masked_fill masked_fill_ clamp dropout native_dropout "
            "_foreach_add_ _foreach_mul_ _fused_adam_ _fused_adamw_ abs sin cos"
        ),
    ),
)


@lru_cache(maxsize=65536)
def category_of(kernel: str, operator: str | None = None) -> Category:
    """The category of a (normalised) kernel name; ``operator``, the PyTorch operator that
    launched it (``aten::mm``), decides where the name alone gives ``OTHER``."""
    by_name = _by_name(kernel)
    if by_name is not Category.OTHER or operator is None:
        return by_name
    return _by_operator(operator)


def _by_name(kernel: str) -> Category:
    if is_communication(kernel):
        return Category.COMMUNICATION
    for category, pattern in _NAMES:
        if folded_found(pattern, kernel) or (category is Category.GEMM and _gemm_library(kernel)):
            return category
    return Category.OTHER


def _gemm_library(kernel: str) -> bool:
    """A GEMM library's kernel (model/libraries.py): cuBLAS(Lt), nvjet, CUTLASS, Tensile's
    Cijk_*, TensorRT-LLM's bmm_*; convolution and attention are told apart before."""
    return library_of(kernel) is Library.GEMM


def _by_operator(operator: str) -> Category:
    """The category of an aten operator name: ``aten::addmm``, ``aten::add_.Tensor``."""
    bare = operator.rpartition("::")[2].partition(".")[0]
    for category, names in _OPERATORS:
        if bare in names:
            return category
    return Category.OTHER
