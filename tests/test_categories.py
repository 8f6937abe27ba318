"""Kernel categories (issue 39, point 5): every kernel in one of GEMM, attention, convolution,
communication, elementwise, reduction/normalisation, memory copy/set and other; the time per
category in the report. The names are real: from the corpus (tests/corpus_pass.py) and from
AMD-AGI/TraceLens @171dd74 tests/traces (MIT): SGLang and vLLM on MI300X, vLLM on B200, the
H100 and MI300X Qwen traces. Every expected share is summed here from the trace's own events."""

from __future__ import annotations

import pytest

from roofscope.model.categories import Category, category_of

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
