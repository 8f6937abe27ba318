"""Whose kernel a kernel is: communication (collectives, expert-parallel all-to-all, custom
all-reduce) or a vendor or framework library (GEMM, attention, generated Triton), told from
its normalised name (model/names.py). A library's kernel is not the user's code: what the
user can change is the call (shapes, data type, layout, which op or backend, fusion), never
the kernel's registers or loops. Each pattern names where its names were seen.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache


class Library(StrEnum):
    """The library families whose kernels the diagnosis advises on as a call, not as code."""

    GEMM = "gemm"  # cuBLAS/cuBLASLt, CUTLASS, rocBLAS/hipBLASLt (Tensile), TensorRT-LLM GEMMs
    COMPOSABLE_KERNEL = "composable-kernel"  # AMD's CK and CK-tile, and aiter built on them
    ATTENTION = "attention"  # FlashAttention, TensorRT-LLM FMHA, PyTorch ROCm's attn_fwd
    TRITON = "triton"  # kernels that torch.compile (Inductor) generated
    PYTORCH = "pytorch"  # PyTorch's own ATen kernels (at::native::...)


# Collective and point-to-point communication: their time is spent waiting on and moving data
# between GPUs, not computing, and is reported apart from compute kernels.
_COMMUNICATION = re.compile(
    "|".join(
        (
            # NCCL and RCCL: ncclDevKernel_AllReduce_..., ncclKernel_..., void rccl::...
            r"\b(?:nccl|rccl)\w*|^(?:nccl|rccl)",
            # DeepEP (deepseek-ai/DeepEP csrc/kernels): deep_ep::intranode::dispatch, ...
            # internode_ll::combine; DeepSeek's training trace (deepseek-ai/profile-data
            # train.json) names them dpsk::ep::internode::{dispatch,combine,notify_dispatch,
            # cached_notify}. get_dispatch_layout (dpsk::ep::cuda::) is local work.
            r"\b(?:deep_ep|dpsk::ep)::(?:intranode|internode|internode_ll)::",
            # PyTorch symmetric memory (c10d symm_mem): multimem_all_reduce_kernel (B200,
            # AMD-AGI/TraceLens tests/traces/b200/eager_trace.json.gz), one/two-shot kernels
            r"\bmultimem_\w*all_(?:reduce|gather)|\b(?:one|two)_shot_all_reduce",
            # custom all-reduce of vLLM, SGLang and aiter (custom_all_reduce.cuh):
            # vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, ...)
            r"\bcross_device_reduce_\dstage",
            # TensorRT-LLM and FlashInfer: oneShotAllReduceKernel, twoShotAllReduceKernel,
            # allreduce_fusion_kernel_oneshot_lamport, lamport_initialize_kernel
            r"\b(?:one|two)ShotAllReduce|\ballreduce_fusion_kernel|lamport",
            # MSCCL++ kernels take its device handles (mscclpp::MemoryChannelDeviceHandle*)
            r"\bmscclpp::",
        )
    ),
    re.IGNORECASE | re.ASCII,
)

# Library families, first match wins (attention before CUTLASS: FlashAttention 3 kernels are
# cutlass::device_kernel<flash::FlashAttnBwd<...>>). Names seen in AMD-AGI/TraceLens @171dd74
# tests/traces (MIT) and deepseek-ai/profile-data train.json, quoted in
# tests/test_library_advice.py.
_LIBRARIES: tuple[tuple[Library, re.Pattern[str]], ...] = (
    # FlashAttention 2 (flash_fwd_kernel, flash_fwd_splitkv_kernel), 3 (flash::compute_attn_ws,
    # flash::FlashAttnBwd), TensorRT-LLM's fmhaSm100aKernel_... (B200)
    # PyTorch's SDPA on ROCm (AOTriton): attn_fwd, bwd_kernel_dk_dv (TraceLens mi300 Qwen)
    (
        Library.ATTENTION,
        re.compile(r"^(?:void\s+)?flash_(?:fwd|bwd)|\bflash::|^fmhaSm\d+|^attn_fwd$"),
    ),
    # cuBLAS/cuBLASLt: nvjet_tst_64x64_... (Hopper/Blackwell), sm90_xmma_gemm_..._cublas,
    # ampere_bf16_s16816gemm_...; CUTLASS: cutlass::Kernel<...>, cutlass_80_tensorop_...,
    # cutlass3x_sm100_tensorop_... (superbench's cuBLASLt run, tests/data/ncu);
    # rocBLAS/hipBLASLt: Tensile's Cijk_Alik_Bljk_...; TensorRT-LLM's trtllm-gen batched
    # GEMMs: bmm_MxE4m3_..._sm100f
    (
        Library.GEMM,
        re.compile(
            r"^nvjet_|^sm\d+_xmma_|^(?:volta|turing|ampere|hopper)_\w*gemm|^Cijk_|^rocblas_"
            r"|^(?:void\s+)?cutlass(?:3x)?(?:::|_)|cublas|^bmm_\w+_sm\d+\w?$"
        ),
    ),
    # CK: ck::kernel_gemm_xdl_cshuffle_v3<...>, ck_tile::kentry<...>; aiter's kernels
    # (aiter::add_rmsnorm_quant_kernel<...>)
    (Library.COMPOSABLE_KERNEL, re.compile(r"\bck(?:_tile)?::|^kernel_gemm_xdl|\baiter::")),
    # torch.compile Inductor: triton_poi_fused_..., triton_red_fused_..., triton_per_fused_...
    (Library.TRITON, re.compile(r"^triton_")),
    # PyTorch's own kernels, eager mode: void at::native::vectorized_elementwise_kernel<...>,
    # at::native::(anonymous namespace)::CatArrayBatchedCopy<...> (normalised names keep the
    # namespace where the short name would not tell)
    (Library.PYTORCH, re.compile(r"\bat::native::")),
)


@lru_cache(maxsize=65536)
def is_communication(kernel: str) -> bool:
    """Whether a (normalised) kernel name is a collective, all-to-all or point-to-point
    communication kernel (NCCL/RCCL, DeepEP, symmetric-memory and custom all-reduce, MSCCL++)."""
    return folded_found(_COMMUNICATION, kernel)


def folded_found(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``pattern``, compiled ``IGNORECASE | ASCII``, is found in ``text`` as though
    compiled ``IGNORECASE`` alone: on printable ASCII text (nearly every kernel name) ``\\w``,
    ``\\b``, ``\\s`` and the case folding are the same either way, and there the text is
    lowered and searched by the pattern lowered (:func:`_lowered`), which needs no folding:
    300 names of 264 characters over the category patterns took 68 ms folded by Unicode,
    47 ms by ASCII, 36 -> 22 ms lowered. Other text gets the Unicode pattern, compiled once
    when first asked."""
    if text.isascii() and text.isprintable():
        return _lowered(pattern).search(text.lower()) is not None
    return _unicode(pattern).search(text) is not None


# an escape whose meaning its lower case changes (\W is not \w, \B not \b, \A a bell)
_CASED_ESCAPE = re.compile(r"\\[A-Z]")


@lru_cache(maxsize=64)
def _lowered(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` for lowered ASCII text: its text lowered, without IGNORECASE (a literal or
    a class's letter then matches the lowered text where it matched either case); as it is
    where lowering would change an escape's meaning (it still matches lowered text right)."""
    if _CASED_ESCAPE.search(pattern.pattern):
        return pattern
    return re.compile(pattern.pattern.lower(), pattern.flags & ~re.IGNORECASE)


@lru_cache(maxsize=64)
def _unicode(pattern: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(pattern.pattern, pattern.flags & ~re.ASCII)


@lru_cache(maxsize=65536)
def library_of(kernel: str) -> Library | None:
    """The library family a (normalised) kernel name belongs to, or None for the user's own
    kernels and those no pattern knows."""
    for library, pattern in _LIBRARIES:
        if pattern.search(kernel):
            return library
    return None
