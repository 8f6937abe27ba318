"""GEMM formulas: aten::mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm."""

from __future__ import annotations

import math
from collections.abc import Sequence

from roofscope.analysis.work.shapes.args import (
    Args,
    OpWork,
    Unreadable,
    broadcast,
    dtype_bytes,
    dtype_literal,
)

# --- GEMM: C = A·B is M·N·K multiply-adds, 2·M·N·K FLOPs; a bias or beta·C adds M·N
# (each operator's semantics as in PyTorch's native_functions.yaml and torch docs).


def gemm(
    args: Args,
    a: int,
    *,
    batch: int,
    m: int,
    n: int,
    k: int,
    epilogue: int,
    reads: Sequence[int],
    out_dtype: str,
    words: str,
) -> OpWork:
    """2·batch·M·N·K plus ``epilogue`` adds; bytes: operands ``reads`` once, C once (an
    ``out=`` tensor after them, as aten::mm.out records, is the output, not an input)."""
    inputs = sum(args.tensor_bytes(i) for i in reads)
    out = batch * m * n * dtype_bytes(out_dtype, 0)
    flops = 2 * batch * m * n * k + epilogue
    return OpWork(float(flops), float(inputs + out), args.ceiling(a, "matrix"), words)


def same_k(args: Args, k: int, k2: int) -> None:
    if k != k2:
        raise Unreadable(f"inner sizes {k} and {k2} differ: not a matrix product")


def _matrices(args: Args, a: int, b: int, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    sa, sb = args.shape(a), args.shape(b)
    if len(sa) != rank or len(sb) != rank:
        raise Unreadable(f"expected {rank}-D operands, got {list(sa)} and {list(sb)}")
    if args.dtype(a) != args.dtype(b):
        raise Unreadable(f"operands of types {args.dtype(a)} and {args.dtype(b)}")
    return sa, sb


def _beta_applies(args: Args, i: int) -> bool:
    """addmm/baddbmm: beta·self is added unless beta is 0 (then self is ignored)."""
    return args.literal(i) not in ("0", "0.")


def mm(args: Args) -> OpWork:
    """aten::mm(self [M, K], mat2 [K, N]) -> [M, N]."""
    return _product(args, 0, 2, "GEMM 2·M·N·K (aten::mm)")


def addmm(args: Args) -> OpWork:
    """aten::addmm(self, mat1 [M, K], mat2 [K, N], beta, alpha) = beta·self + alpha·mat1·mat2."""
    return _product(args, 1, 2, "GEMM 2·M·N·K + M·N bias (aten::addmm semantics)")


def bmm(args: Args) -> OpWork:
    """aten::bmm(self [B, M, K], mat2 [B, K, N]) -> [B, M, N]."""
    return _product(args, 0, 3, "batched GEMM 2·B·M·N·K (aten::bmm)")


def baddbmm(args: Args) -> OpWork:
    """aten::baddbmm(self, batch1 [B, M, K], batch2 [B, K, N], beta, alpha)."""
    return _product(args, 1, 3, "batched GEMM 2·B·M·N·K + B·M·N (aten::baddbmm)")


def _product(args: Args, a: int, rank: int, words: str) -> OpWork:
    """The product of the ``rank``-D operands ``a`` and ``a + 1`` ([B,] M, K and [B,] K, N);
    where ``a`` is 1, operand 0 is the ``self`` added unless beta (argument 3) is 0."""
    (*batch, m, k), (*batch2, k2, n) = _matrices(args, a, a + 1, rank)
    same_k(args, k, k2)
    if batch:
        same_k(args, batch[0], batch2[0])
    b = batch[0] if batch else 1
    bias = b * m * n if a == 1 and _beta_applies(args, 3) else 0
    reads = (0, 1, 2) if bias else (a, a + 1)
    return gemm(
        args, a, batch=b, m=m, n=n, k=k, epilogue=bias, reads=reads,
        out_dtype=args.dtype(a), words=words,
    )  # fmt: skip


def matmul(args: Args) -> OpWork:
    """aten::matmul: a 1-D operand gains a size-1 dim, batch dims broadcast (torch.matmul)."""
    sa, sb = args.shape(0), args.shape(1)
    if not sa or not sb or args.dtype(0) != args.dtype(1):
        raise Unreadable(f"matmul of {list(sa)} and {list(sb)} ({args.dtype(0)}, {args.dtype(1)})")
    sa, sb = (sa if len(sa) > 1 else (1, *sa)), (sb if len(sb) > 1 else (*sb, 1))
    same_k(args, sa[-1], sb[-2])
    batch = math.prod(broadcast([sa[:-2], sb[:-2]]))
    words = "GEMM 2·batch·M·N·K (torch.matmul broadcasting)"
    return gemm(
        args,
        0,
        batch=batch,
        m=sa[-2],
        n=sb[-1],
        k=sa[-1],
        epilogue=0,
        reads=(0, 1),
        out_dtype=args.dtype(0),
        words=words,
    )


def linear(args: Args) -> OpWork:
    """aten::linear(input [..., K], weight [N, K], bias [N]?) = input·weightᵀ + bias."""
    x, w = args.shape(0), args.shape(1)
    if not x or len(w) != 2 or args.dtype(0) != args.dtype(1):
        raise Unreadable(f"linear of {list(x)} and {list(w)} ({args.dtype(0)}, {args.dtype(1)})")
    same_k(args, x[-1], w[1])
    m, n = math.prod(x[:-1]), w[0]
    bias = m * n if args.is_tensor(2) and args.shape(2) else 0
    return gemm(
        args,
        0,
        batch=1,
        m=m,
        n=n,
        k=w[1],
        epilogue=bias,
        reads=(0, 1, 2),
        out_dtype=args.dtype(0),
        words="GEMM 2·M·N·K + M·N bias (aten::linear: x·wᵀ + b)",
    )


def scaled_mm(args: Args) -> OpWork:
    """aten::_scaled_mm(self [M, K], mat2 [K, N], scale_a, scale_b, bias?, scale_result?,
    out_dtype?, use_fast_accum): fp8 operands, output out_dtype (default self's type)."""
    sa, sb = args.shape(0), args.shape(1)
    if len(sa) != 2 or len(sb) != 2:
        raise Unreadable(f"expected 2-D operands, got {list(sa)} and {list(sb)}")
    (m, k), (k2, n) = sa, sb
    same_k(args, k, k2)
    bias = m * n if args.is_tensor(4) and args.shape(4) else 0
    out = dtype_literal(args, 6, args.dtype(0))
    return gemm(
        args,
        0,
        batch=1,
        m=m,
        n=n,
        k=k,
        epilogue=bias,
        reads=range(6),
        out_dtype=out,
        words="scaled GEMM 2·M·N·K (+ M·N bias) (aten::_scaled_mm)",
    )
