"""Quantised GEMM custom operators of LLM serving (vLLM, SGLang, aiter): fp8 or int8 operands
with their scales, a 16- or 32-bit output. 2·M·N·K FLOPs (+ M·N for a bias) under the
matrix ceiling of the operands' type (fp8-matrix, int8-matrix); bytes: each recorded operand
(operands, scales, bias, zero points) read once, the output written once. Each operator's
argument order is its schema, cited at its entry."""

from __future__ import annotations

import math

import msgspec

from roofscope.analysis.work.shapes.args import (
    DTYPES,
    Args,
    OpWork,
    Unreadable,
    dtype_bytes,
    dtype_literal,
)
from roofscope.analysis.work.shapes.gemm import same_k


class ScaledGemm(msgspec.Struct, frozen=True):
    """a [M, K] times b ([K, N], or [N, K] where ``b_nk``), then the scales; ``out`` is the
    index of an out tensor (written, not read; -1: the op returns one of type ``out_dtype``,
    a ScalarType argument's index), ``bias`` the index of an optional bias (-1: none);
    ``reads`` the indices of every tensor read."""

    reads: tuple[int, ...]
    a: int = 0
    b_nk: bool = False
    out: int = -1
    out_dtype: int = -1
    bias: int = -1
    words: str = ""

    def __call__(self, args: Args) -> OpWork:
        (m, k), (k2, n) = _operands(args, self.a, self.b_nk)
        same_k(args, k, k2)
        bias = m * n if self.bias >= 0 and args.is_tensor(self.bias) else 0
        read = sum(args.tensor_bytes(i) for i in self.reads if args.is_tensor(i))
        written = m * n * dtype_bytes(self.result_type(args, m, n), 0)
        flops = 2 * m * n * k + bias
        ceiling = f"{_operand_kind(args, self.a)}-matrix"
        return OpWork(float(flops), float(read + written), ceiling, self.words)

    def result_type(self, args: Args, m: int, n: int) -> str:
        if self.out >= 0:
            if math.prod(args.shape(self.out)) != m * n:
                raise Unreadable(f"out {list(args.shape(self.out))} for a [{m}, {n}] product")
            return args.dtype(self.out)
        if not args.literal(self.out_dtype):
            raise Unreadable(f"out_dtype (input {self.out_dtype}) is not in Concrete Inputs")
        return dtype_literal(args, self.out_dtype, "")


def _operands(args: Args, a: int, b_nk: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    sa, sb = args.shape(a), args.shape(a + 1)
    if len(sa) != 2 or len(sb) != 2:
        raise Unreadable(f"expected 2-D operands, got {list(sa)} and {list(sb)}")
    return (sa[0], sa[1]), ((sb[1], sb[0]) if b_nk else (sb[0], sb[1]))


def _operand_kind(args: Args, a: int) -> str:
    """fp8 or int8: the matrix ceiling of the operands (both of one type)."""
    types = {args.dtype(a), args.dtype(a + 1)}
    kinds = {DTYPES.get(t, (0, None))[1] for t in types}
    if len(types) > 1 or (kinds != {"fp8"} and types != {"signed char"}):
        raise Unreadable(f"operands of types {sorted(types)}: expected fp8 or int8 (signed char)")
    return "fp8" if kinds == {"fp8"} else "int8"


SCALED = "scaled GEMM 2·M·N·K (+ M·N bias)"
# vLLM csrc/torch_bindings.cpp: cutlass_scaled_mm(Tensor! out, Tensor a [M, K], Tensor b
# [K, N], Tensor a_scales, Tensor b_scales, Tensor? bias); cutlass_scaled_mm_azp(out, a, b,
# a_scales, b_scales, azp_adj [N], azp? [M], bias?): the zero-point terms are read, their
# M·N correction is not counted (as the scales').
CUTLASS_SCALED_MM = ScaledGemm((1, 2, 3, 4, 5), a=1, out=0, bias=5, words=SCALED)
CUTLASS_SCALED_MM_AZP = ScaledGemm((1, 2, 3, 4, 5, 6, 7), a=1, out=0, bias=7, words=SCALED)
# sgl-kernel csrc/common_extension.cc: int8_scaled_mm and fp8_scaled_mm(Tensor mat_a [M, K],
# Tensor mat_b [K, N], Tensor scales_a, Tensor scales_b, ScalarType out_dtype, Tensor? bias)
# -> Tensor; fp8_blockwise_scaled_mm(mat_a, mat_b, scales_a, scales_b, out_dtype) -> Tensor.
SGL_SCALED_MM = ScaledGemm((0, 1, 2, 3, 5), out_dtype=4, bias=5, words=SCALED)
SGL_BLOCKWISE_MM = ScaledGemm((0, 1, 2, 3), out_dtype=4, words="block-scaled GEMM 2·M·N·K")
# aiter aiter/ops/gemm_op_a8w8.py: gemm_a8w8(XQ [M, K], WQ [N, K], x_scale, w_scale, bias?,
# dtype, splitK) -> Y [M, N] = XQ·WQᵀ scaled.
AITER_GEMM_A8W8 = ScaledGemm((0, 1, 2, 3, 4), b_nk=True, out_dtype=5, bias=4, words=SCALED)

QUANT_GEMMS = {
    "_C::cutlass_scaled_mm": CUTLASS_SCALED_MM,
    "_C::cutlass_scaled_mm_azp": CUTLASS_SCALED_MM_AZP,
    "sgl_kernel::fp8_scaled_mm": SGL_SCALED_MM,
    "sgl_kernel::int8_scaled_mm": SGL_SCALED_MM,
    "sgl_kernel::fp8_blockwise_scaled_mm": SGL_BLOCKWISE_MM,
    "aiter::gemm_a8w8": AITER_GEMM_A8W8,
}
