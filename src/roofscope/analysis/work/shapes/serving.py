"""Serving ops: the custom operators of vLLM, SGLang and aiter that an LLM serving trace spends
its time in (RMSNorm with and without the residual add, SiLU-and-mul, rotary embedding, KV
cache stores, fp8 quantisation), and the ATen gathers around them; and, for the operators whose
recorded inputs do not give their work (MoE, paged attention, collectives), why.

Bytes follow the package's rule: each operand read once, each output written once, a tensor
updated in place read and written. FLOPs are a small count per element on the vector units,
as for the ATen elementwise ops (memory.py). Each operator's argument order is its C++
signature, cited at its entry.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec

from roofscope.analysis.work.shapes.args import Args, OpWork, Unreadable, ceiling_of
from roofscope.analysis.work.shapes.attention import Attention
from roofscope.analysis.work.shapes.memory import Elementwise, PerElement
from roofscope.analysis.work.shapes.paged import PAGED_ATTENTION


class Fused(msgspec.Struct, frozen=True):
    """A fused memory-bound kernel: tensors ``reads`` read once, ``writes`` written once,
    ``inplace`` read and written; ``flops_per`` FLOPs per element of input ``count``."""

    count: int
    reads: tuple[int, ...]
    writes: tuple[int, ...] = ()
    inplace: tuple[int, ...] = ()
    new_outs: int = 0  # the op returns this many new tensors of input ``count``'s shape, type
    flops_per: int = 0
    check: Callable[[Args], None] | None = None
    words: str = ""

    def __call__(self, args: Args) -> OpWork:
        if self.check is not None:
            self.check(args)
        moved = sum(args.tensor_bytes(i) for i in (*self.reads, *self.writes))
        moved += 2 * sum(args.tensor_bytes(i) for i in self.inplace)
        moved += self.new_outs * args.tensor_bytes(self.count)
        flops = self.flops_per * math.prod(args.shape(self.count))
        ceiling = ceiling_of(args.dtype(self.count), "vector", args.fp32_matmul) if flops else None
        return OpWork(float(flops), float(moved), ceiling, self.words)


def _same_shape(*inputs: int) -> Callable[[Args], None]:
    def check(args: Args) -> None:
        shapes = [args.shape(i) for i in inputs]
        if len(set(shapes)) > 1:
            raise Unreadable(f"inputs {list(inputs)} of shapes {[list(s) for s in shapes]}")

    return check


def _norm(x: int, weight: int, *others: int) -> Callable[[Args], None]:
    """x and ``others`` of one shape [..., H], the weight [H]."""
    same = _same_shape(x, *others)

    def check(args: Args) -> None:
        same(args)
        shape, w = args.shape(x), args.shape(weight)
        if not shape or w != shape[-1:]:
            raise Unreadable(f"weight {list(w)} for rows of {list(shape)}: expected [H]")

    return check


def _halves(out: int, x: int) -> Callable[[Args], None]:
    """act_and_mul: out [..., d] from input [..., 2d]."""

    def check(args: Args) -> None:
        o, i = args.shape(out), args.shape(x)
        if not o or not i or o[:-1] != i[:-1] or 2 * o[-1] != i[-1]:
            raise Unreadable(f"output {list(o)} from input {list(i)}: expected [..., d], [..., 2d]")

    return check


RMS = "RMSNorm 4 FLOPs per element"
ADD_RMS = "residual add + RMSNorm 5 FLOPs per element"
ACT_MUL = "act(x[:d]) * x[d:] 2 FLOPs per output element"

# vLLM csrc/layernorm_kernels.cu (signatures in csrc/ops.h): rms_norm(out, input, weight, eps);
# fused_add_rms_norm(input, residual, weight, eps) adds residual into input's sum, writes the
# sum back to residual and the norm to input: both updated in place.
VLLM_RMS_NORM = Fused(0, (1, 2), writes=(0,), flops_per=4, check=_norm(1, 2, 0), words=RMS)
VLLM_FUSED_ADD_RMS_NORM = Fused(
    0, (2,), inplace=(0, 1), flops_per=5, check=_norm(0, 2, 1), words=ADD_RMS
)
# aiter/ops/rmsnorm.py: rmsnorm(out, input, weight, eps); add_rmsnorm and
# rmsnorm2d_fwd_with_add(out, input, residual_in, residual_out, weight, eps, ...);
# rms_norm(input, weight, eps, ...) returns the output.
AITER_RMSNORM = VLLM_RMS_NORM
AITER_ADD_RMSNORM = Fused(
    1, (1, 2, 4), writes=(0, 3), flops_per=5, check=_norm(1, 4, 0, 2, 3), words=ADD_RMS
)
AITER_RMS_NORM = Fused(0, (0, 1), new_outs=1, flops_per=4, check=_norm(0, 1), words=RMS)
# vLLM vllm/_aiter_ops.py: rocm_aiter_rms_norm(x, weight, eps) calls aiter's rms_norm;
# rocm_aiter_rmsnorm2d_fwd_with_add(x, residual, weight, eps) -> (out, residual_out), both
# new (torch.empty_like), calls aiter's rmsnorm2d_fwd_with_add(out, x, residual,
# residual_out, weight, eps).
VLLM_AITER_ADD_RMSNORM = Fused(
    0, (0, 1, 2), new_outs=2, flops_per=5, check=_norm(0, 2, 1), words=ADD_RMS
)
# vLLM csrc/activation_kernels.cu and sgl-kernel csrc/elementwise/activation.cu:
# silu_and_mul(out [..., d], input [..., 2d]) = silu(input[..., :d]) * input[..., d:].
ACT_AND_MUL = Fused(0, (1,), writes=(0,), flops_per=2, check=_halves(0, 1), words=ACT_MUL)
# vLLM csrc/quantization/fp8/common.cu: static_scaled_fp8_quant(out fp8, input, scale [1]):
# out = clamp(input / scale), one FLOP per element.
FP8_QUANT = Fused(
    1, (1, 2), writes=(0,), flops_per=1, check=_same_shape(0, 1),
    words="x / scale to fp8 1 FLOP per element",
)  # fmt: skip


def rotary(args: Args) -> OpWork:
    """vLLM csrc/pos_encoding_kernels.cu and sgl-kernel's rotary_embedding(positions [T],
    query [T, Hq·D], key [T, Hk·D] or None, head_size, cos_sin_cache [max_pos, rot], is_neox):
    the first ``rot`` of each head's D rotated in place, a pair (x, y) -> (x·cos - y·sin,
    y·cos + x·sin) 6 FLOPs, 3 per element; the T cache rows of the positions read once."""
    tokens, rot = math.prod(args.shape(0)), args.shape(4)[-1]
    head = args.ints(3)[0] if args.ints(3) else 0
    heads = [_heads(args, i, tokens, head) for i in (1, 2) if args.is_tensor(i)]
    if not 0 < rot <= head or len(args.shape(4)) != 2:
        raise Unreadable(f"cos_sin_cache {list(args.shape(4))} for head_size {head}")
    rotated = tokens * sum(heads) * rot
    cache = tokens * rot * args.element_bytes(4)
    moved = args.tensor_bytes(0) + 2 * rotated * args.element_bytes(1) + cache
    ceiling = ceiling_of(args.dtype(1), "vector", args.fp32_matmul)
    words = "rotary embedding 3 FLOPs per rotated element, in place"
    return OpWork(float(3 * rotated), float(moved), ceiling, words)


def _heads(args: Args, i: int, tokens: int, head: int) -> int:
    elements = math.prod(args.shape(i))
    if not tokens or not head or elements % (tokens * head):
        raise Unreadable(f"input {i} {list(args.shape(i))}: not {tokens} tokens of heads of {head}")
    return elements // (tokens * head)


def cache_store(args: Args) -> OpWork:
    """The new tokens' keys and values written into a KV cache at their slots: SGLang's
    store_cache(k [T, X], v, k_cache [slots, X], v_cache, loc [T]) (sgl-kernel
    csrc/memory/store.cu) and vLLM's reshape_and_cache_flash(key [T, Hk, D], value,
    key_cache [blocks, block_size, Hk, D], value_cache, slot_mapping [T], kv_cache_dtype,
    k_scale, v_scale) (csrc/cache_kernels.cu): k, v and the slots read, T rows of each cache
    written in the cache's type (fp8 caches are recorded as "unsigned char"); no FLOPs."""
    k = args.shape(0)
    rows = [args.shape(i)[len(args.shape(i)) - len(k) + 1 :] for i in (2, 3)]
    if args.shape(1) != k or any(r != k[1:] for r in rows) or args.shape(4) != k[:1]:
        raise Unreadable(f"k, v, caches, slots {[args.call.dims[i] for i in range(5)]}")
    read = sum(args.tensor_bytes(i) for i in (0, 1, 4, 6, 7) if args.is_tensor(i))
    written = math.prod(k) * (args.element_bytes(2) + args.element_bytes(3))
    return OpWork(
        0.0, float(read + written), None, "KV cache store: k, v, slots read, rows written"
    )


def index_select(args: Args) -> OpWork:
    """aten::index_select(self, dim, index [n]) (out= after them): the n slices read, the
    index read, the output written; data movement."""
    shape, index = args.shape(0), args.shape(2)
    dim = args.ints(1)[0] if args.ints(1) else 0
    if len(index) > 1 or not -len(shape) <= dim < len(shape) or not shape:
        raise Unreadable(f"index {list(index)} along dim {dim} of {list(shape)}")
    out = math.prod(shape) // max(shape[dim], 1) * math.prod(index)
    moved = 2 * out * args.element_bytes(0) + args.tensor_bytes(2)
    return OpWork(0.0, float(moved), None, "gather: the slices read, index read, output written")


def argmax(args: Args) -> OpWork:
    """aten::argmax(self, dim?, keepdim) and argmin: a reduction, 1 FLOP per input element;
    the output int64 indices (one per kept element, one in all when dim is None)."""
    shape = args.shape(0)
    dims = args.ints(1) if args.literal(1) not in ("", "None") else ()
    if len(dims) > 1 or any(not -len(shape) <= d < len(shape) for d in dims):
        raise Unreadable(f"dim {args.literal(1)!r} for a tensor of shape {list(shape)}")
    out = math.prod(shape) // shape[dims[0]] if dims and shape[dims[0]] else 1
    moved = args.tensor_bytes(0) + out * 8
    ceiling = ceiling_of(args.dtype(0), "vector", args.fp32_matmul)
    return OpWork(float(math.prod(shape)), float(moved), ceiling, "reduction: 1 FLOP per element")


FLASH_BSHD = Attention(0, 5, heads_first=False)


def aiter_mha(args: Args) -> OpWork:
    """aiter::mha_fwd and fmha_v3_fwd(q, k, v [B, S, H, D], dropout_p, softmax_scale,
    is_causal, window_size_left, window_size_right, ...) (aiter/ops/mha.py): flash attention
    in flash_attn's layout; a sliding window (not -1) attends fewer keys than the shapes say."""
    window = (args.literal(6), args.literal(7))
    if window != ("-1", "-1"):
        raise Unreadable(f"window sizes {list(window)}: expected -1, -1 (no sliding window)")
    return FLASH_BSHD(args)


def flash_varlen(args: Args) -> OpWork:
    """flash_attn::_flash_attn_varlen_forward(q [Tq, Hq, D], k [Tk, Hk, D], v, cu_seqlens_q,
    cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal, ...)
    (flash_attn/flash_attn_interface.py): the lengths are in cu_seqlens, whose values are not
    recorded; with one sequence (cu_seqlens of 2 entries) they are Tq and Tk."""
    if args.shape(3) != (2,) or args.shape(4) != (2,):
        raise Unreadable(
            f"cu_seqlens {list(args.shape(3))}: more than one sequence, whose lengths are "
            "not recorded"
        )
    window = (args.literal(10), args.literal(11))
    if len(args.call.types) > 10 and window != ("-1", "-1"):
        raise Unreadable(f"window sizes {list(window)}: expected -1, -1 (no sliding window)")
    (sq, hq, d), (sk, hk, _), (sv, hv, dv) = (_thd(args, i) for i in range(3))
    if sk != sv or hk != hv or not hk or hq % hk:
        raise Unreadable(f"query, key and value shapes {list(args.call.dims[:3])} do not match")
    causal = args.flag(9)
    if causal and sq != sk:
        raise Unreadable(f"causal with {sq} queries and {sk} keys: alignment unknown")
    flops = 2 * hq * sq * sk * (d + dv) / (2 if causal else 1)
    moved = sum(args.tensor_bytes(i) for i in range(3)) + sq * hq * dv * args.element_bytes(0)
    words = "attention 4·H·Sq·Sk·D" + (" / 2 causal" if causal else "") + ", one sequence"
    return OpWork(flops, float(moved), args.ceiling(0, "matrix"), words)


def _thd(args: Args, i: int) -> tuple[int, int, int]:
    shape = args.shape(i)
    if len(shape) != 3:
        raise Unreadable(f"input {i} {list(shape)}: expected [tokens, heads, D]")
    return shape[0], shape[1], shape[2]


class Unknown(msgspec.Struct, frozen=True):
    """An operator whose recorded inputs do not give its work: ``why`` says what is missing."""

    why: str

    def __call__(self, args: Args) -> OpWork:
        raise Unreadable(self.why)


MOE = Unknown("the expert weights are not among the inputs (hidden states, router logits)")
EXPERTS = Unknown(
    "which experts the tokens chose (topk_ids' values) is not recorded: the expert weights "
    "read lie between top-k and min(E, T·top-k) experts'"
)
GROUPED = Unknown(
    "which groups hold rows (offs' values) is not recorded: the weights read lie between one "
    "and all G groups'"
)
COLLECTIVE = Unknown("communication: its time is the interconnect's, it has no roofline ceiling")
# vLLM vllm/model_executor/layers/attention/attention.py: unified_kv_cache_update(key, value,
# layer_name) looks the layer's KV cache and slot mapping up by name (get_attention_context)
# and writes key and value into it (the backend's do_kv_cache_update).
KV_UPDATE = Unknown(
    "the KV cache and the slots are not among its inputs (key, value, the layer's name): its "
    "kernel's work is the cache store's inside it (reshape_and_cache_flash), where recorded"
)
# torch/csrc/autograd/functions/accumulate_grad.h: the new gradient is taken as the
# parameter's .grad (no copy) when it has none, else added to it (an aten::add_ inside).
ACCUMULATE = Unknown(
    "whether the parameter already had a gradient is not recorded: the new one is either "
    "taken without a copy or added by the aten::add_ inside, which counts it"
)
# torch/csrc/distributed/c10d/reducer.cpp: DDP's bucket ops, one tensor recorded:
# mul_out divides the gradient by the world size (out = grad · scalar, 1 FLOP per element),
# copy_bucket_to_grad copies the reduced bucket's view into the gradient.
DDP_MUL = Elementwise(1)
DDP_COPY = Elementwise(0)

SERVING: dict[str, Callable[[Args], OpWork]] = {
    "_C::rms_norm": VLLM_RMS_NORM,
    "_C::fused_add_rms_norm": VLLM_FUSED_ADD_RMS_NORM,
    "aiter::rmsnorm": AITER_RMSNORM,
    "aiter::add_rmsnorm": AITER_ADD_RMSNORM,
    "aiter::rmsnorm2d_fwd_with_add_ck": AITER_ADD_RMSNORM,
    "aiter::rms_norm": AITER_RMS_NORM,
    "_C::silu_and_mul": ACT_AND_MUL,
    "_C::gelu_and_mul": ACT_AND_MUL,
    "sgl_kernel::silu_and_mul": ACT_AND_MUL,
    "sgl_kernel::gelu_and_mul": ACT_AND_MUL,
    "_C::static_scaled_fp8_quant": FP8_QUANT,
    "_C::rotary_embedding": rotary,
    "sgl_kernel::rotary_embedding": rotary,
    "sglang::store_cache": cache_store,
    "_C_cache_ops::reshape_and_cache_flash": cache_store,
    "aten::index_select": index_select,
    "aten::argmax": argmax,
    "aten::argmin": argmax,
    "aiter::mha_fwd": aiter_mha,
    "aiter::fmha_v3_fwd": aiter_mha,
    "flash_attn::_flash_attn_varlen_forward": flash_varlen,
    "vllm::moe_forward": MOE,
    "vllm::moe_forward_shared": MOE,
    "vllm::outplace_fused_experts": EXPERTS,
    "vllm::inplace_fused_experts": EXPERTS,
    "aiter::fused_moe": EXPERTS,
    "aten::_grouped_mm": GROUPED,
    **PAGED_ATTENTION,  # paged.py: from the step's sequence-length sums
    "vllm::all_reduce": COLLECTIVE,
    "vllm::all_gather": COLLECTIVE,
    "vllm::reduce_scatter": COLLECTIVE,
    "symm_mem::multimem_all_reduce_": COLLECTIVE,
    "vllm::rocm_aiter_rms_norm": AITER_RMS_NORM,
    "vllm::rocm_aiter_rmsnorm2d_fwd_with_add": VLLM_AITER_ADD_RMSNORM,
    "vllm::unified_kv_cache_update": KV_UPDATE,
    # aiter aiter/ops/groupnorm.py: _groupnorm_run(x, num_groups, weight, bias, eps), as
    # aten::group_norm(input, num_groups, weight, bias, eps)
    "aiter::_groupnorm_run": PerElement((2, 3), 4),
    "c10d::allreduce_": COLLECTIVE,
    "c10d::broadcast_": COLLECTIVE,
    "c10d::_allgather_base_": COLLECTIVE,
    "c10d::allgather_": COLLECTIVE,
    "c10d::_reduce_scatter_base_": COLLECTIVE,
    "c10d::reduce_scatter_": COLLECTIVE,
    "c10d::alltoall_base_": COLLECTIVE,
    "record_param_comms": COLLECTIVE,
    "torch::autograd::AccumulateGrad": ACCUMULATE,
    "torch::distributed::reducer::mul_out": DDP_MUL,
    "torch.distributed.ddp.reducer::copy_bucket_to_grad": DDP_COPY,
}
