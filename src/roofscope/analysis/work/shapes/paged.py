"""Paged attention of LLM serving: the work of one call from its heads and head sizes (its
recorded q, k, v shapes) and its step's sequence-length sums (the step range's name,
:mod:`roofscope.analysis.work.shapes.steps`).

The model is TraceLens's (docs/conceptual/inference-analysis.md, "Paged attention"), summed
over requests, B = 1 each: a context request's N_Q queries attend causally to themselves and
fully to the N_KV - N_Q keys cached before its chunk, 2·H_Q·(d_qk + d_v)·(N_Q·N_KV - N_Q²/2)
FLOPs; a generation request's attend to all N_KV keys, 2·H_Q·(d_qk + d_v)·N_Q·N_KV. Bytes:
each request's queries read and outputs written (N_Q·H_Q·(d_qk + d_v) elements) and its N_KV
keys and values read from the cache (N_KV·H_KV·(d_qk + d_v) elements). Every layer's call in
a step does this work: a sliding-window layer attends fewer keys, which its call does not
record (gpt-oss alternates them), so its count is an upper bound.
"""

from __future__ import annotations

import math

import msgspec

from roofscope.analysis.work.shapes.args import Args, OpWork, Unreadable
from roofscope.analysis.work.shapes.steps import Damaged, StepSums, step_sums

NO_STEP = (
    "the sequence lengths are not recorded (in tensors whose values a trace omits) and no "
    "step range around the call gives their sums readably (vLLM's execute_..._context_..., "
    "SGLang's detailed step[...]): the attention's FLOPs and the KV cache bytes read are unknown"
)


def paged_flops(sums: StepSums, heads: int, d_qk: int, d_v: int) -> float:
    """2·H_Q·(d_qk + d_v)·(Σ_c N_Q·N_KV - Σ_c N_Q²/2 + Σ_g N_Q·N_KV)."""
    pairs = sums.context.sqsk - sums.context.sqsq / 2 + sums.generation.sqsk
    return 2.0 * heads * (d_qk + d_v) * pairs


def paged_bytes(
    sums: StepSums, shape: tuple[int, int, int, int], sizes: tuple[int, int, int]
) -> int:
    """Σ N_Q·H_Q·(d_qk·q + d_v·o) + Σ N_KV·H_KV·(d_qk + d_v)·kv bytes; ``shape``: H_Q, H_KV,
    d_qk, d_v; ``sizes``: the element sizes of q, the output and the KV cache."""
    heads, kv_heads, d_qk, d_v = shape
    q, o, kv = sizes
    queries = sums.context.sq + sums.generation.sq
    keys = sums.context.sk + sums.generation.sk
    return queries * heads * (d_qk * q + d_v * o) + keys * kv_heads * (d_qk + d_v) * kv


class Paged(msgspec.Struct, frozen=True):
    """A paged-attention operator: q [T, H_Q, d] at 0, k (new tokens or the cache) [.., H_KV,
    d] at ``k``, v after it, the output [T, H_Q, d_v] at ``out`` (None: returned, q's shape);
    ``window``: the Concrete Inputs of its sliding window, which must read -1, -1;
    ``causal``: that of is_causal, True where the step has context requests; ``seqlens``:
    cu_seqlens_q, one entry per request of the step and one more."""

    k: int = 1
    out: int | None = None
    window: tuple[int, int] | None = None
    causal: int | None = None
    seqlens: int | None = None

    def __call__(self, args: Args) -> OpWork:
        sums = self.sums(args)
        tokens, heads, d_qk = _heads(args, 0)
        _, kv_heads, d_k = _heads(args, self.k)
        _, v_heads, d_v = _heads(args, self.k + 1)
        if d_k != d_qk or v_heads != kv_heads or not kv_heads or heads % kv_heads:
            raise Unreadable(f"q, k, v shapes {list(args.call.dims[: self.k + 2])} do not match")
        if sums.tokens > tokens:
            raise Unreadable(f"the step's {sums.tokens} query tokens exceed the call's {tokens}")
        out = 0 if self.out is None else self.out
        sizes = (args.element_bytes(0), args.element_bytes(out), args.element_bytes(self.k))
        moved = paged_bytes(sums, (heads, kv_heads, d_qk, d_v), sizes)
        flops = paged_flops(sums, heads, d_qk, d_v)
        words = "paged attention 2·H·(d+dv)·(Σ sq·sk - Σ ctx sq²/2), step sums (TraceLens)"
        return OpWork(flops, float(moved), args.ceiling(0, "matrix"), words)

    def sums(self, args: Args) -> StepSums:
        if not args.call.step:
            raise Unreadable(NO_STEP)
        window = tuple(args.literal(i) for i in self.window or ())
        if window and window != ("-1", "-1"):
            raise Unreadable(f"window sizes {list(window)}: expected -1, -1 (no sliding window)")
        try:
            sums = step_sums(args.call.step)
        except Damaged as error:
            raise Unreadable(str(error)) from None
        if self.causal is not None and sums.context.requests and not args.flag(self.causal):
            raise Unreadable("is_causal False with context requests: their mask is unknown")
        requests = sums.context.requests + sums.generation.requests
        if self.seqlens is not None and args.shape(self.seqlens) != (requests + 1,):
            raise Unreadable(
                f"cu_seqlens_q {list(args.shape(self.seqlens))} for the step's {requests} requests"
            )
        return sums


def _heads(args: Args, i: int) -> tuple[int, int, int]:
    shape = args.shape(i)
    if len(shape) != 3 or not math.prod(shape[1:]):
        raise Unreadable(f"input {i} {list(shape)}: expected [tokens, heads, head size]")
    return shape[0], shape[1], shape[2]


# vLLM vllm/attention/layer.py: unified_attention(query, key, value, layer_name) -> output;
# unified_attention_with_output(query, key, value, output, layer_name, ...): q, k, v of the
# step's new tokens [T, H, d], the cache looked up by layer name (its type taken as k's).
# aiter aiter/ops/mha.py: mha_batch_prefill(q [T, H_Q, d], k_cache [slots, H_KV, d],
# v_cache, cu_seqlens_q, kv_indptr, kv_page_indices, max_seqlen_q, max_seqlen_k, dropout_p,
# softmax_scale, logits_soft_cap, zero_tensors, is_causal, window_size_left,
# window_size_right, ...) -> (out like q, ...).
PAGED_ATTENTION = {
    "vllm::unified_attention": Paged(),
    "vllm::unified_attention_with_output": Paged(out=3),
    "aiter::mha_batch_prefill": Paged(window=(13, 14), causal=12, seqlens=3),
}
