"""Memory-bound formulas: elementwise, reductions, softmax and norms, Inductor kernels."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import msgspec

from roofscope.analysis.work.shapes.args import (
    Args,
    OpWork,
    Unreadable,
    broadcast,
    ceiling_of,
    dtype_bytes,
    dtype_literal,
    promoted,
)

# --- Elementwise, reductions, normalisations: memory-bound by nature; bytes are every tensor
# input read once and the output written once. FLOPs are a small count per element, on the
# vector units in at::opmath_type (float for half types): 1 per output element for arithmetic
# (add, mul, silu, gelu, ...), 0 for data movement (copy, to, clone, fill); 1 per input
# element for a reduction; 5 per element for softmax (max, subtract, exp, sum, divide);
# layer, group and batch norm 5 per element with affine parameters, 4 without, and RMSNorm
# 4 and 3 (fvcore's norm counter convention, fvcore/nn/jit_handles.py).


def tensors(args: Args) -> list[int]:
    return [i for i in range(len(args.call.types)) if args.is_tensor(i)]


def moved_bytes(args: Args, inputs: Sequence[int], out_elements: int, out_dtype: str) -> float:
    read = sum(args.tensor_bytes(i) for i in inputs)
    return float(read + out_elements * dtype_bytes(out_dtype, 0))


# Inductor's pointwise, reduction and persistent-reduction Triton kernels: its launcher records
# a range named after the kernel whose inputs are the kernel's buffers (TraceLens's
# torch_compile_triton trace: triton_red_fused_add_mean_mul_pow_rsqrt_0 with Input Dims
# [[8, 4096, 2048], [2048], [8, 4096, 2048], [], []]). Templates (triton_tem_, a GEMM) are
# not among them: their FLOPs are not in the buffers.
INDUCTOR = re.compile(r"^triton_(?:poi|red|per)_")


def triton_buffers(args: Args) -> OpWork:
    """An Inductor Triton kernel's compulsory traffic: each buffer argument read or written
    once (Inductor's own ``estimate_kernel_num_bytes`` counts each buffer once, an in-out
    buffer twice); its FLOPs are not recorded: memory only."""
    inputs = tensors(args)
    if not inputs:
        raise Unreadable("no tensor among the inputs")
    moved = float(sum(args.tensor_bytes(i) for i in inputs))
    return OpWork(0.0, moved, None, "Inductor Triton kernel: each buffer once (bytes only)")


# ops whose functional forms put a tensor after a scalar (where.ScalarSelf, pow.Scalar): a
# trailing tensor of theirs is no out= argument
_SCALAR_BEFORE_TENSOR = frozenset({"aten::where", "aten::pow"})


def _out_argument(args: Args, inputs: list[int]) -> tuple[list[int], int | None]:
    """The tensors read, and the ``out=`` tensor (written, not read) where the call has one:
    its last input, a tensor after a non-tensor (``clamp_min.out(self, min, *, out)`` is
    recorded as ``[[32, 256, 56, 56], [], [32, 256, 56, 56]]``; counting it as read gave
    HTA's resnet50 trace 1.23 TB/s on a 0.9 TB/s V100)."""
    last = len(args.call.types) - 1
    if (
        len(inputs) >= 2
        and inputs[-1] == last
        and not args.is_tensor(last - 1)
        and args.call.name not in _SCALAR_BEFORE_TENSOR
    ):
        return inputs[:-1], last
    return inputs, None


class Elementwise(msgspec.Struct, frozen=True):
    flops_per: int  # 1 for arithmetic, 0 for data movement
    reads: bool = True  # fill_/zero_ only write

    def __call__(self, args: Args) -> OpWork:
        inputs = tensors(args)
        if args.call.types and str(args.call.types[0]) == "TensorList":
            raise Unreadable("input 0 is a TensorList: Kineto records its shapes, not its type")
        if not inputs:
            raise Unreadable("no tensor among the inputs")
        inplace = args.call.name.endswith("_")
        inputs, written = _out_argument(args, inputs)
        out = args.shape(0) if inplace else broadcast([args.shape(i) for i in inputs])
        if written is not None and args.shape(written) != out:
            raise Unreadable(f"input {written}: an out= tensor of another shape than the result")
        dtype = args.dtype(0) if inplace else self.out_dtype(args, inputs)
        if args.call.name in ("aten::copy_", "aten::fill_", "aten::zero_"):
            inputs = inputs[1:]  # self is written, not read
        moved = moved_bytes(args, inputs if self.reads else [], math.prod(out), dtype)
        flops = self.flops_per * math.prod(out)
        ceiling = ceiling_of(dtype, "vector", args.fp32_matmul) if flops else None
        what = "arithmetic: 1 FLOP per element" if flops else "data movement"
        return OpWork(float(flops), moved, ceiling, f"elementwise {what}, inputs + output bytes")

    @staticmethod
    def out_dtype(args: Args, inputs: Sequence[int]) -> str:
        if args.call.name in ("aten::to", "aten::_to_copy"):
            if not args.literal(1):
                raise Unreadable("the target dtype is not in Concrete Inputs (input 1)")
            return dtype_literal(args, 1, "")
        return promoted(args, inputs)


class Reduction(msgspec.Struct, frozen=True):
    dtype_at: int = 3  # index of the dtype argument; -1: none

    def __call__(self, args: Args) -> OpWork:
        shape = args.shape(0)
        dims = args.ints(1) if args.literal(1) not in ("", "[]") else tuple(range(len(shape)))
        if any(not -len(shape) <= d < len(shape) for d in dims):
            raise Unreadable(f"dims {list(dims)} for a tensor of shape {list(shape)}")
        kept = [n for axis, n in enumerate(shape) if axis not in {d % len(shape) for d in dims}]
        dtype = dtype_literal(args, self.dtype_at, args.dtype(0))
        moved = moved_bytes(args, [0], math.prod(kept), dtype)
        ceiling = ceiling_of(args.dtype(0), "vector", args.fp32_matmul)
        return OpWork(
            float(math.prod(shape)), moved, ceiling, "reduction: 1 FLOP per input element"
        )


class PerElement(msgspec.Struct, frozen=True):
    """Output of the input's shape: softmax and the normalisations."""

    params: tuple[int, ...]  # indices of weight, bias (and running statistics)
    flops_per: int
    affine_adds: int = 1  # FLOPs per element when the weight is present
    half_to_float: int = -1  # _softmax's flag: the output is float

    def __call__(self, args: Args) -> OpWork:
        shape, present = args.shape(0), [i for i in self.params if args.is_tensor(i)]
        affine = any(args.shape(i) for i in present)
        dtype = (
            "float" if self.half_to_float >= 0 and args.flag(self.half_to_float) else args.dtype(0)
        )
        flops = math.prod(shape) * (self.flops_per + (self.affine_adds if affine else 0))
        moved = moved_bytes(args, [0, *present], math.prod(shape), dtype)
        words = f"{self.flops_per + (self.affine_adds if affine else 0)} FLOPs per element"
        return OpWork(
            float(flops), moved, ceiling_of(args.dtype(0), "vector", args.fp32_matmul), words
        )
