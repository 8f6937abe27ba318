"""Kernel names a person can tell apart (issue 36, point 7): at every width, two different
kernels never show the same text, and the part that tells them apart stays.

The names are real: every kernel of the trimmed profiles under tests/data, the kernels of
the HTA trace_filter trace and of the Kokkos stats file that the issue names, and kernels
of LLM serving (vLLM, FlashInfer, aiter on MI300X, CUTLASS 3) as their profiles name them."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofscope.model.names import normalise, qualified_name
from roofscope.render.names import short_names
from tests.conftest import SHARED_CORPUS

DATA = Path(__file__).parent / "data"
PROFILES = ["kineto", "nsys", "omniperf-v1-mi100", "rocprofv3-layouts", "ncu"]

# torch/hta-tests-data/trace_filter (HolisticTraceAnalysis, MIT): three of its kernels that a
# middle cut showed alike as ``split_embedding_bac…,float,Half,2ul,32>``
_ACC = "at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, long>"
SPLIT_EMBEDDING = [
    f"void split_embedding_backward_codegen_rowwise_adagrad_{kind}_kernel_{per}_row_1"
    f"<c10::Half, float, c10::Half, 2ul, 32>({_ACC}, int, bool)"
    for kind, per in [
        ("unweighted", "cta_per"),
        ("unweighted", "warp_per"),
        ("weighted", "cta_per"),
    ]
]
# amd/dalg24-kokkos-rocprofv1 results.stats.csv: rocprof v1 cut each name at its first comma
KOKKOS = [
    "void Kokkos::Experimental::Impl::hip_parallel_launch_local_memory<Kokkos::Impl::"
    "ParallelFor<scatter_view_loop(Kokkos::View<int**>",
    "void Kokkos::Experimental::Impl::hip_parallel_launch_local_memory<Kokkos::Impl::"
    "ParallelFor<atomic_loop<Kokkos::Experimental::HIP>(Kokkos::Experimental::HIP const&",
    "void Kokkos::Experimental::Impl::hip_parallel_launch_local_memory<Kokkos::Impl::"
    "ParallelFor<Kokkos::Impl::ViewFill<Kokkos::View<int**",
    "void Kokkos::Experimental::Impl::hip_parallel_launch_local_memory<Kokkos::Impl::"
    "ParallelFor<Kokkos::Impl::ViewValueFunctor<Kokkos::Experimental::HIP",
    "void Kokkos::Experimental::Impl::hip_parallel_launch_local_memory<Kokkos::Impl::"
    "ParallelFor<Kokkos::Impl::Experimental::ResetDuplicates<Kokkos::Experimental::HIP",
    "Kokkos::(anonymous namespace)::init_lock_array_kernel_atomic()",
    "Kokkos::(anonymous namespace)::init_lock_array_kernel_threadid(int)",
    "Unknown command type",
]
# LLM serving kernels as public traces and reports name them
CUTLASS3 = (
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int,int,int>, "
    "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized"
    "<9, cute::tuple<cute::C<1>,cute::C<1>,cute::C<1> >, cutlass::gemm::"
    "KernelTmaWarpSpecializedPingpong>, cute::tuple<cute::C<{m}>,cute::C<{n}>,cute::C<64> >, "
    "cutlass::bfloat16_t, cute::TiledMMA<cute::MMA_Atom<cute::SM90::GMMA::"
    "MMA_64x{n}x16_F32BF16BF16_SS> >, cute::SM90_TMA_LOAD, cute::ComposedLayout<cute::Swizzle"
    "<3,4,3> > > > >(Params)"
)
LLM = [
    *(CUTLASS3.format(m=m, n=n) for m, n in [(128, 64), (128, 128), (64, 64), (256, 128)]),
    "_ZN5aiter50fmoe_bf16_pertokenMXfp4_g1u1_flat_novs_silu_16x128E",
    "_ZN5aiter50fmoe_bf16_pertokenMXfp4_g1u1_flat_novs_silu_16x256E",
    "_ZN5aiter49fmoe_bf16_pertokenMXfp4_g1u1_novs_silu_2tg_32x256E",
    "_ZN5aiter42pa_bf16_pertokenFp8_gqa10_1tg_4w_mtp3_msk1E",
    "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_",
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x3_tn_align8>"
    "(T1::Params)",
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x256_32x4_tn_align8>"
    "(T1::Params)",
    "void vllm::act_and_mul_kernel<c10::BFloat16, __nv_bfloat162, &vllm::silu_kernel<c10::"
    "BFloat16>, &vllm::packed_silu_kernel<__nv_bfloat162>, (bool)1, (bool)1, (bool)0, (bool)1>"
    "(T1 *, T1 const*, int)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    "flashinfer::comm::ulysses_pcie::UlyssesPcieBarrier(unsigned long *, flashinfer::comm::"
    "ulysses_pcie::PeerSignalPointers, int, int, unsigned long *)",
    *(f"void cutlass::device_kernel<{ns}::GemmKernel>({ns}::GemmKernel::Params)" for ns in "abc"),
]


@cache
def corpus_names() -> tuple[str, ...]:
    """Every kernel of the profiles in ``PROFILES``, as the check-up names them."""
    import roofscope

    names = {k.name for p in PROFILES for k in roofscope.analyze(DATA / p).kernels}
    return tuple(sorted(names | set(SPLIT_EMBEDDING) | set(KOKKOS) | set(LLM)))


def assert_apart(names: list[str], width: int | None) -> list[str]:
    shown = short_names(names, width)
    assert len(set(shown)) == len({normalise(n) for n in names}), shown
    assert width is None or all(len(s) <= width for s in shown), shown
    return shown


def test_the_corpus_has_many_names() -> None:
    assert len(corpus_names()) > 250


@settings(max_examples=150, deadline=None)
@given(data=st.data(), width=st.sampled_from([12, 16, 24, 30, 38, 40, 60, 80, 120]))
def test_names_shown_together_stay_apart(data: st.DataObject, width: int) -> None:
    every = corpus_names()
    names = data.draw(st.lists(st.sampled_from(every), min_size=2, max_size=40, unique=True))
    assert_apart(names, width)


def test_all_names_at_once_stay_apart_at_each_width() -> None:
    for width in (None, 16, 30, 38, 60, 100):
        assert_apart(list(corpus_names()), width)


def test_the_words_that_tell_split_embedding_kernels_apart_stay() -> None:
    for width in (30, 38, 60):
        unweighted_cta, unweighted_warp, weighted_cta = assert_apart(SPLIT_EMBEDDING, width)
        assert "unweighted" in unweighted_cta and "cta" in unweighted_cta
        assert "warp" in unweighted_warp
        assert "unweighted" not in weighted_cta and "weighted" in weighted_cta


def test_namespaces_stay_where_they_tell_kernels_apart() -> None:
    gemms = LLM[-3:]
    assert short_names(gemms) == [f"device_kernel<{ns}::GemmKernel>" for ns in "abc"]


def test_cutlass3_tile_shapes_stay() -> None:
    gemms = LLM[:4]
    for width in (38, 60, 120):
        shown = assert_apart(gemms, width)
        for s, (m, n) in zip(shown, [(128, 64), (128, 128), (64, 64), (256, 128)], strict=True):
            assert f"C<{m}>,C<{n}>" in s, s
        assert all(s.startswith("device_kernel<") for s in shown), shown


def test_kokkos_rows_and_its_pseudo_kernel() -> None:
    shown = assert_apart(KOKKOS, 40)
    assert shown[-1] == "Unknown command type"
    assert short_names(["Unknown command type"]) == ["Unknown command type"]


def test_aiter_names_with_bfloat16_demangle() -> None:
    """``DF16b`` (C++23 std::bfloat16_t), which libstdc++ 12 cannot demangle: by the Itanium
    grammar, I DF16b DF16b Li256E Li16E Lb1E Lb0E Lb1E Li1E E, returning void, taking T0_*
    (the second template argument)."""
    assert normalise(LLM[8]) == (
        "void aiter::add_rmsnorm_quant_kernel<__bf16, __bf16, 256, 16, true, false, true, 1>"
        "(__bf16*)"
    )
    assert normalise(LLM[4]) == "aiter::fmoe_bf16_pertokenMXfp4_g1u1_flat_novs_silu_16x128"


# SGLang's SiLU-and-mul kernel on MI300X (TraceLens sglang_decode, tests/data/kineto/
# sglang_qwen3_8b_decode_mi300x.json.gz): Clang 17 mangles its function-pointer template
# parameter with C++20's ``Tn`` (a parameter's declared type), which libstdc++ refuses
SGL_ACT = (
    "_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_"
    "ES3_S5_EEEEvPS3_PS4_i"
)


def test_a_symbol_the_demangler_refuses_keeps_its_qualified_name() -> None:
    """Read by the Itanium grammar: N, then the names 7 sgl_hip, 10 activation and
    18 act_and_mul_kernel, then I (template arguments), kept as written."""
    import cxxfilt

    with pytest.raises(cxxfilt.InvalidName):
        cxxfilt.demangle(SGL_ACT, external_only=False)
    rest = SGL_ACT.removeprefix("_ZN7sgl_hip10activation18act_and_mul_kernelI")
    assert normalise(SGL_ACT) == f"sgl_hip::activation::act_and_mul_kernel<{rest}>"
    assert short_names([SGL_ACT])[0].startswith("act_and_mul_kernel<14__hip_bfloat16")
    assert qualified_name("_ZNK3foo3barEv") == "foo::bar [Ev]"  # a const member's parameters
    assert qualified_name("_ZN99abc") is None  # a length past the end: no guess
    assert qualified_name("_Zxyz") is None


HTA_NCCL = SHARED_CORPUS / "torch/hta-tests-data/nccl_parser_config/nccl_data.json.gz"


@pytest.mark.skipif(not HTA_NCCL.exists(), reason="shared corpus not present")
def test_two_refused_symbols_stay_two_kernels() -> None:
    """HTA's nccl trace holds two cuDNN CUTLASS convolutions whose 1,644- and 1,677-character
    symbols libstdc++ refuses: their names keep what tells them apart."""
    with gzip.open(HTA_NCCL, "rt") as f:
        events = json.load(f)["traceEvents"]
    raw = {
        e["name"]
        for e in events
        if e.get("cat") == "kernel" and e["name"].startswith("_ZN19cutlass_cudnn")
    }
    assert len(raw) == 2
    names = {normalise(n) for n in raw}
    assert len(names) == 2
    assert all(n.startswith("cutlass_cudnn_train::Kernel<") for n in names)


def test_a_namespace_is_kept_where_it_alone_tells_two_kernels_apart() -> None:
    """vLLM's ``vllm::rotary_embedding_kernel`` (TraceLens' vLLM MI300X trace) and SGLang's
    ``rotary_embedding_kernel`` in the global namespace (its Qwen3 trace), same arguments:
    read together, only the namespace separates them."""
    args = "<c10::BFloat16, true>(long const*, c10::BFloat16*, int)"
    vllm, sglang = (
        f"void vllm::rotary_embedding_kernel{args}",
        f"void rotary_embedding_kernel{args}",
    )
    shown = short_names([vllm, sglang], None)
    assert shown[0] != shown[1]
    assert "vllm::" in shown[0] and "vllm::" not in shown[1]
    assert short_names([sglang], None) == ["rotary_embedding_kernel<BFloat16,true>"]
