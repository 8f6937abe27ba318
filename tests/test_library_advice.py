"""Kernels that are not the user's code (model/libraries.py, diagnosis/libraries.py):
communication kernels are told apart and get no compute or memory verdict, their share of
the kernel time is in the summary; library kernels' verdicts prescribe what the caller
controls, never kernel-source changes (registers, loops). Names are real, each quoted with
where it was seen."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from roofscope.diagnosis.libraries import ADVICE
from roofscope.model.libraries import Library, is_communication, library_of
from roofscope.model.names import normalise
from tests.conftest import SHARED_CORPUS, run_json
from tests.corpus_pass import corpus

DATA = Path(__file__).parent / "data"
B200 = DATA / "kineto" / "b200_eager_rank0_of_8_trimmed.json.gz"
NCU_CUBLAS = DATA / "ncu" / "llm-perf-opt-rtx5090"

# deepseek-ai/profile-data @ 4496024 : train.json (DeepSeek-V3 training step, H800; no
# licence: the names alone are quoted); DeepEP's kernels hold 46% of its kernel time
DEEPEP = (
    "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, "
    "bool const*, int4 const*, float const*, int4 const*, int4 const*, int const*, int const*)",
    "void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*, int, int, "
    "int const*, int const*, int*, void*, void**, int**, int, int, int, int*, bool, int)",
    "void dpsk::ep::internode::dispatch<false, 8, false, 8>(int4*, float*, long*, float*, "
    "dpsk::ep::internode::SourceMeta*, int4 const*, float const*, long const*, float const*)",
    "void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int, int const*)",
)
DEEPSEEK_COMPUTE = (
    # local work: which expert each token goes to, not communication
    "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, "
    "int, int, int, int)",
    "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>"
    "(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)",
)

COMMUNICATION = (
    *DEEPEP,
    # AMD-AGI/TraceLens @ 171dd74 (MIT) : tests/traces/b200/eager_trace.json.gz
    "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, "
    "unsigned long, unsigned int**, unsigned long, unsigned long)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    # HolisticTraceAnalysis tests/data (MIT), the shared corpus's torch traces
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
    # SGLang's and vLLM's custom all-reduce, as quoted in public profiling notes (code search)
    "void sglang::cross_device_reduce_1stage<__half, 8>(sglang::RankData*, sglang::RankSignals, "
    "sglang::Signal*, __half*, int, int)",
    "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals",
    "void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals",
    # TensorRT-LLM / FlashInfer kernels, by their declared names (customAllReduceKernels.cu,
    # allReduceFusionKernels.cu)
    "oneShotAllReduceKernel",
    "twoShotAllReduceKernel",
    "allreduce_fusion_kernel_oneshot_lamport",
    # an MSCCL++ kernel, as declared (extern "C" __global__ ... allgather)
    "allgather(mscclpp::SmChannelDeviceHandle*, mscclpp::SmChannelDeviceHandle*)",
)

NOT_COMMUNICATION = (
    *DEEPSEEK_COMPUTE,
    # TraceLens b200 eager trace
    "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
    "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*)",
    "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "
    "(vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*)",
    "laplacian_kernel",
)


@pytest.mark.parametrize("name", COMMUNICATION)
def test_communication_kernels_are_recognised(name: str) -> None:
    assert is_communication(normalise(name))


@pytest.mark.parametrize("name", NOT_COMMUNICATION)
def test_compute_kernels_are_not_communication(name: str) -> None:
    assert not is_communication(normalise(name))


LIBRARIES = (
    # TraceLens b200 eager trace (cuBLAS nvjet, TensorRT-LLM trtllm-gen GEMM and FMHA)
    ("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", Library.GEMM),
    (
        "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_"
        "TN_transOut_schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
        Library.GEMM,
    ),
    (
        "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
        Library.ATTENTION,
    ),
    # deepseek-ai/profile-data train.json (names only)
    (
        "sm90_xmma_gemm_bf16f32_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
        "segment_k_off_kernel__5x_cublas",
        Library.GEMM,
    ),
    (
        "void cutlass::device_kernel<flash::FlashAttnBwd<flash::CollectiveMainloopBwd<2, "
        "cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> > > > >(flash::FlashAttnBwd::Params)",
        Library.ATTENTION,
    ),
    (DEEPSEEK_COMPUTE[1], Library.GEMM),
    # TraceLens tests/traces/inference/sglang_prefilldecode (MI300X): hipBLASLt, CK, aiter
    (
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1_AFC1_AFEM1",
        Library.GEMM,
    ),
    (
        "_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernelEEEvT0_",
        Library.COMPOSABLE_KERNEL,
    ),
    (
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_"
        "S4_diiiiiiib",
        Library.COMPOSABLE_KERNEL,
    ),
    # TraceLens tests/traces/inference/vllm_prefilldecode_piecewise: Inductor's Triton
    ("triton_poi_fused_constant_pad_nd_moe_forward_0", Library.TRITON),
    # HolisticTraceAnalysis tests/data (the shared corpus): cuBLAS and CUTLASS
    ("volta_sgemm_128x32_tn", Library.GEMM),
    ("ampere_sgemm_32x32_sliced1x4_tn", Library.GEMM),
    (
        "void cutlass::Kernel<cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8>"
        "(cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_tn_align8::Params)",
        Library.GEMM,
    ),
    # CodeGandee/llm-perf-opt ncu (MIT): a cuBLAS GEMV and FlashAttention 2
    (
        "enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, "
        "float, 0, 1, 1, 0, 7, 0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const "
        "__nv_bfloat16>>>(T13, T14)",
        Library.GEMM,
    ),
    (
        "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, "
        "cutlass::bfloat16_t>, false>(Flash_fwd_params)",
        Library.ATTENTION,
    ),
    # PyTorch's SDPA on ROCm (AOTriton's attn_fwd: TraceLens mi300 Qwen1.5-0.5B) and
    # PyTorch's own eager kernels: their code is PyTorch's, not the user's
    ("attn_fwd", Library.ATTENTION),
    (
        "void at::native::elementwise_kernel_manual_unroll<128, 8, at::native::gpu_kernel_impl_"
        "nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
        "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::"
        "TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::"
        "{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} "
        "const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<>)",
        Library.PYTORCH,
    ),
    ("_attn_fwd", None),  # Triton's fused-attention tutorial, the user's own copy
    # the user's own kernels
    ("laplacian_kernel", None),
    (NOT_COMMUNICATION[2], None),
    (
        "void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<"
        "cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true> >(moe::dev::finalize::KernelParams)",
        None,
    ),
)


@pytest.mark.parametrize(("name", "library"), LIBRARIES)
def test_library_kernels_are_recognised(name: str, library: Library | None) -> None:
    assert library_of(normalise(name)) is library


def _kineto_kernels(path: Path) -> dict[str, float]:
    """The file's own kernel totals in µs, by name: plain Python over its events."""
    doc = json.loads(gzip.decompress(path.read_bytes()))
    sums: dict[str, float] = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            sums[e["name"]] = sums.get(e["name"], 0.0) + e["dur"]
    return sums


def test_b200_all_reduce_share_is_in_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """TraceLens's B200 trace: PyTorch's symmetric-memory all-reduce (19.5%) and one NCCL
    all-gather are communication; the summary's time and share equal the file's sums, and
    the text's kernel-time line says the share."""
    sums = _kineto_kernels(B200)
    comm = {n: us for n, us in sums.items() if "multimem_all_reduce" in n or n.startswith("nccl")}
    assert len(comm) == 2
    doc = run_json(capsys, str(B200))
    assert {k["name"] for k in doc["kernels"] if k["communication"]} == set(comm)
    share = sum(comm.values()) / sum(sums.values())
    assert doc["summary"]["communication_s"] == pytest.approx(sum(comm.values()) / 1e6, rel=1e-9)
    assert doc["summary"]["communication_share"] == pytest.approx(share, rel=1e-9)
    assert round(share, 3) == 0.197  # below the 20% of a communication-share finding
    assert not [f for f in doc["findings"] if f["rule"] == "communication-share"]
    from roofscope.cli.app import main

    assert main(["analyze", str(B200)]) == 0
    assert f"; {share:.1%} of it in communication kernels." in capsys.readouterr().out


def test_no_communication_is_a_zero_share(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(NCU_CUBLAS))
    assert doc["summary"]["communication_s"] == 0
    assert doc["summary"]["communication_share"] == 0


WORK = """
[[kernel]]
match = "multimem_all_reduce"
per = "total"
flops = "1e6"
bytes = "1e9"

[[kernel]]
match = "^bmm_MxE4m3"
per = "total"
flops = "1e9"
bytes = "1e9"

[[kernel]]
match = "fused_add_rms_norm"
per = "total"
flops = "1e6"
bytes = "NORM_BYTES"
"""
# the B200's HBM3E, 7.7 TB/s (NVIDIA's HGX B200 specifications): 1.44 GB over the norm's 72
# dispatches is 20 MB each, 2.6 µs at the roof: enough work per launch that the access
# pattern is what holds it; 1 GB (13.9 MB, 1.8 µs) is too little work per launch
B200_HBM = 7.7e12
NORM_CALLS = 72


def test_b200_verdicts_by_whose_kernel(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """With work given to three B200 kernels, each far below its memory roof: the all-reduce
    gets no verdict, the trtllm-gen GEMM the GEMM library's advice (no kernel-source
    advice), vLLM's own RMSNorm kernel the access-pattern advice."""
    work = tmp_path / "work.toml"
    work.write_text(WORK.replace("NORM_BYTES", "1.44e9"))
    doc = run_json(capsys, str(B200), "--work", str(work))
    # the roofline's verdicts (the launch-too-small ones on fmha and nvjet, 32 and 140 blocks
    # for 148 SMs, are tests/test_launch_busy.py's)
    verdicts = {
        f["kernel"]: f
        for f in doc["findings"]
        if f["kind"] == "bottleneck" and f["rule"] != "launch-too-small"
    }
    assert len(verdicts) == 2 and not [k for k in verdicts if "multimem" in k]
    (gemm,) = [f for k, f in verdicts.items() if k.startswith("bmm_MxE4m3")]
    assert gemm["rule"] == "memory-far-below-roof"
    assert gemm["prescription"] == ADVICE[Library.GEMM]
    assert gemm["evidence"]["library"] == "gemm"
    (norm,) = [f for k, f in verdicts.items() if "fused_add_rms_norm" in k]
    assert norm["prescription"].startswith("fix the access pattern")
    assert "library" not in norm["evidence"]


def test_cublas_gemv_gets_no_register_advice(capsys: pytest.CaptureFixture[str]) -> None:
    """llm-perf-opt's ncu capture of a cuBLAS GEMV: ncu's theoretical-occupancy rule (limited
    by registers) used to carry "use fewer registers per thread"; now the GEMM call's advice."""
    doc = run_json(capsys, str(NCU_CUBLAS))
    (f,) = [f for f in doc["findings"] if f["rule"] == "ncu-theoretical-occupancy"]
    assert "cublasGemvParamsEx" in f["kernel"]
    assert f["prescription"] == ADVICE[Library.GEMM]
    assert "register" not in f["prescription"]


def _kineto(path: Path, kernels: list[tuple[str, int]]) -> Path:
    events = []
    for i, (name, dur) in enumerate(kernels):
        args = {"device": 0, "stream": 7}
        events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": 0,
                "tid": 7,
                "ts": 1000 + 1000 * i,
                "dur": dur,
                "args": args,
            }
        )
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def test_deepep_share_is_the_finding(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """DeepSeek's training trace's kernel names (deepseek-ai/profile-data, names only) in a
    trace written here: DeepEP's dispatch, combine and notify kernels are communication,
    its layout kernel and the grouped GEMM are not; the finding's share is theirs."""
    durations = [400, 300, 200, 100, 50, 950]
    trace = _kineto(
        tmp_path / "t.json", list(zip([*DEEPEP, *DEEPSEEK_COMPUTE], durations, strict=True))
    )
    doc = run_json(capsys, str(trace))
    comm = {normalise(n) for n in DEEPEP}
    assert {k["name"] for k in doc["kernels"] if k["communication"]} == comm
    (f,) = [f for f in doc["findings"] if f["rule"] == "communication-share"]
    assert f["evidence"]["communication_share"] == pytest.approx(1000 / 2000)
    assert "50.0% of the kernel time" in f["summary"]
    assert doc["summary"]["communication_share"] == pytest.approx(0.5)


# kernel-source advice a library's caller cannot follow
SOURCE_ADVICE = re.compile(
    r"\b(?:registers?|vgprs?|launch bounds|unroll\w*|pad shared|coalesce|lds)\b"
)


@pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="the shared corpus is not here")
def test_no_library_kernel_gets_source_advice_in_the_corpus() -> None:
    """Every corpus profile: no bottleneck verdict about a library kernel prescribes changes
    to the kernel's source, and no communication kernel gets a roofscope verdict (Nsight
    Compute's own rule findings, ``ncu-*``, point at its sections and stay)."""
    found = [v for r in corpus() for v in r.library]
    assert found  # the corpus has library kernels with verdicts (llm-perf-opt's)
    for kernel, rule, prescription in found:
        assert library_of(kernel) or rule.startswith("ncu-"), (kernel, rule)
        assert not SOURCE_ADVICE.search(prescription.lower()), (kernel, rule, prescription)


def test_a_dispatch_too_small_to_reach_its_roof_is_told_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """vLLM's RMSNorm with 1 GB over its 72 dispatches: each would take 1.8 µs at the B200's
    HBM roof, under the 2 µs any launch costs, so the advice is more work per launch, not
    the access pattern; the time at the roof is worked out from the trace's own durations."""
    work = tmp_path / "work.toml"
    work.write_text(WORK.replace("NORM_BYTES", "1e9"))
    doc = run_json(capsys, str(B200), "--work", str(work))
    durations = [d for n, d in _kineto_durations(B200) if "fused_add_rms_norm" in n]
    assert len(durations) == NORM_CALLS
    mean_us = sum(durations) / len(durations)
    at_roof_us = 1e9 / NORM_CALLS / B200_HBM * 1e6  # efficiency x mean = bytes / roof
    (norm,) = [f for f in doc["findings"] if f["kernel"] and "fused_add_rms_norm" in f["kernel"]]
    assert norm["rule"] == "memory-far-below-roof"
    assert norm["evidence"]["dispatch_at_roof_ns"] == pytest.approx(at_roof_us * 1000)
    assert norm["prescription"].startswith("give each launch more work")
    assert (
        f"would take {at_roof_us:.3g} µs at the roof against its {mean_us:.3g} µs"
        in (norm["summary"])
    )


def _kineto_durations(path: Path) -> list[tuple[str, float]]:
    """Each kernel event's name and duration in µs, as the file writes them."""
    doc = json.loads(gzip.decompress(path.read_bytes()))
    return [
        (e["name"], e["dur"])
        for e in doc["traceEvents"]
        if e.get("ph") == "X" and e.get("cat") == "kernel"
    ]


VCOPY_MI350 = SHARED_CORPUS / "amd/rocprof-compute-vcopy-2025/MI350"


@pytest.mark.skipif(not VCOPY_MI350.exists(), reason="shared corpus not present")
def test_a_long_dispatch_with_few_bytes_keeps_the_access_advice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """rocprof-compute's vcopy on an MI350: its bytes would take under 2 µs at the roof, but
    each dispatch takes 18.5 µs (pmc_perf.csv's End_Timestamp - Start_Timestamp): no launch
    costs that much, so the access pattern is what holds it."""
    import csv

    with (VCOPY_MI350 / "pmc_perf.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    mean_ns = sum(float(r["End_Timestamp"]) - float(r["Start_Timestamp"]) for r in rows) / len(rows)
    assert mean_ns > 10_000
    doc = run_json(capsys, str(VCOPY_MI350))
    (vcopy,) = [f for f in doc["findings"] if f["rule"] == "memory-far-below-roof"]
    assert vcopy["evidence"]["dispatch_at_roof_ns"] < 2_000
    assert vcopy["prescription"].startswith("fix the access pattern")
    assert "too little work" not in vcopy["summary"]
