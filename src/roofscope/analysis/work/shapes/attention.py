"""Attention formulas: SDPA and the flash kernels, forward and backward."""

from __future__ import annotations

from typing import Any

import msgspec

from roofscope.analysis.work.shapes.args import Args, OpWork, Unreadable

# --- Attention: S = Q·Kᵀ and O = P·V are 2·Sq·Sk·D FLOPs each per batch and query head,
# 4·B·H·Sq·Sk·D in all (softmax not counted), halved under a causal mask when Sq == Sk;
# the backward pass is 2.5 times the forward (FlashAttention-2, Dao 2023, and
# flash-attention's benchmarks/benchmark_flash_attention.py). K and V may have fewer heads
# than Q (grouped-query attention); a causal mask with Sq != Sk aligns differently by
# backend (top-left in SDPA, bottom-right in FlashAttention 2.1 on), so it gives no count.


class Attention(msgspec.Struct, frozen=True):
    q: int  # index of the query among the inputs
    causal: int  # index of is_causal in Concrete Inputs
    heads_first: bool  # [B, H, S, D] (SDPA) rather than [B, S, H, D] (flash kernels)
    backward: bool = False

    def __call__(self, args: Args) -> OpWork:
        (b, hq, sq, d), (b2, hk, sk, _), (b3, hv, sv, dv) = (self.bhsd(args, i) for i in range(3))
        if len({b, b2, b3}) > 1 or hk != hv or sk != sv or not hk or hq % hk:
            raise Unreadable(f"query, key and value shapes {self.shapes(args)} do not match")
        causal = self.causal >= 0 and args.flag(self.causal)
        if causal and sq != sk:
            raise Unreadable(f"causal with {sq} queries and {sk} keys: alignment unknown")
        flops = (
            2 * b * hq * sq * sk * (d + dv) * (2.5 if self.backward else 1) / (2 if causal else 1)
        )
        return OpWork(flops, self.bytes(args, b * hq * sq * dv), args.ceiling(self.q, "matrix"),
                      self.words(causal))  # fmt: skip

    def bhsd(self, args: Args, i: int) -> tuple[int, int, int, int]:
        shape = args.shape(self.q + i)
        if len(shape) != 4:
            raise Unreadable(f"expected 4-D query, key and value, got {self.shapes(args)}")
        b, x, y, d = shape
        return (b, x, y, d) if self.heads_first else (b, y, x, d)

    def shapes(self, args: Args) -> list[Any]:
        dims = args.call.dims
        return [dims[i] if i < len(dims) else None for i in range(self.q, self.q + 3)]

    def bytes(self, args: Args, out_elements: int) -> float:
        """Forward: q, k, v read, o written. Backward: q, k, v, o and do read, dq, dk, dv
        written (the softmax statistics, B·H·Sq floats, left out)."""
        qkv = sum(args.tensor_bytes(self.q + i) for i in range(3))
        o = out_elements * args.element_bytes(self.q)
        return float(2 * qkv + 2 * o if self.backward else qkv + o)

    def words(self, causal: bool) -> str:
        base = "attention 4·B·H·Sq·Sk·D" + (" / 2 causal" if causal else "")
        return base + (" x 2.5 backward" if self.backward else "") + " (FlashAttention-2 count)"
