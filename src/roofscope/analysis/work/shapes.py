"""Work from shapes: the FLOPs and bytes of one PyTorch operator from the shapes a Kineto
trace recorded (``record_shapes=True``), and the compute ceiling it runs under.

Pure functions, no I/O. Each formula is written once, with its source; the list is
docs/work-from-shapes.md, what the args hold docs/formats/pytorch-kineto.md, "Operator
shapes". ``op_work`` gives ``None`` where no formula applies; ``work_or_reason`` says why (no
formula for the operator, shapes missing or unreadable, an unknown data type, a causal mask
whose alignment the shapes do not settle).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OpCall:
    """One cpu_op event's args, as JSON-decoded from the trace."""

    name: str  # "aten::addmm"
    dims: Sequence[Any]  # args["Input Dims"]: per input a list of ints, [] or a list of lists
    types: Sequence[str]  # args["Input type"]: "c10::BFloat16", "float", "Scalar", "", ...
    concrete: Sequence[Any] = ()  # args["Concrete Inputs"]: literal strings ("", "1", "True")


@dataclass(frozen=True)
class OpWork:
    flops: float  # 0.0 for pure data movement
    bytes: float  # minimum bytes read + written: operands once each, output once
    ceiling: str | None  # "bf16-matrix", "fp32-vector", ...; None for memory-only ops
    formula: str  # which formula and its source, in short words


@dataclass(frozen=True)
class NoWork:
    reason: str  # why no work: "no formula for aten::foo", "input 1 holds dims [-1, 4]"


class Unreadable(ValueError):
    """The recorded args do not give the operator's shapes; the message says how."""


FP32_MATMUL = {"tf32": "tf32-matrix", "fp32-vector": "fp32-vector", "fp32-matrix": "fp32-matrix"}
MAX_DIM = 2**40  # a larger dimension is a damaged record, not a tensor
MAX_ELEMENTS = 2**50

# Bytes per element and the ceiling's data type of each "Input type" PyTorch writes
# (c10::toString of the ScalarType, C++ names for the plain types; c10/core/ScalarType.h).
DTYPES: dict[str, tuple[int, str | None]] = {
    "double": (8, "fp64"),
    "float": (4, "fp32"),
    "c10::Half": (2, "fp16"),
    "c10::BFloat16": (2, "bf16"),
    "c10::Float8_e4m3fn": (1, "fp8"),
    "c10::Float8_e5m2": (1, "fp8"),
    "c10::Float8_e4m3fnuz": (1, "fp8"),
    "c10::Float8_e5m2fnuz": (1, "fp8"),
    "bool": (1, None),
    "unsigned char": (1, "int8"),
    "signed char": (1, "int8"),
    "short int": (2, None),
    "int": (4, "int32"),
    "long int": (8, "int64"),
    "long": (8, "int64"),  # older traces (trace_diff, V100)
    "c10::complex<float>": (8, None),
    "c10::complex<double>": (16, None),
}
# Types that hold no tensor: the dims entry is [] (or a list of lists for TensorList).
NOT_TENSOR = frozenset(
    {"", "Scalar", "ScalarList", "GenericList", "TensorList", "Int", "Bool", "Device", "None"}
)
# ScalarType codes as Concrete Inputs writes a dtype argument (c10/core/ScalarType.h order).
SCALAR_TYPES = {
    0: "unsigned char", 1: "signed char", 2: "short int", 3: "int", 4: "long int",
    5: "c10::Half", 6: "float", 7: "double", 11: "bool", 15: "c10::BFloat16",
    23: "c10::Float8_e5m2", 24: "c10::Float8_e4m3fn", 25: "c10::Float8_e5m2fnuz",
    26: "c10::Float8_e4m3fnuz",
}  # fmt: skip
# Result type of mixed inputs, lowest to highest (torch.result_type's category order).
PROMOTION: tuple[str, ...] = (
    *("bool", "unsigned char", "signed char", "short int", "int", "long int"),
    *("c10::Float8_e4m3fn", "c10::Float8_e5m2", "c10::BFloat16", "c10::Half", "float", "double"),
)


@dataclass(frozen=True)
class Args:
    """An OpCall's inputs read one at a time; every reader raises Unreadable."""

    call: OpCall
    fp32_matmul: str

    def dtype(self, i: int) -> str:
        if i >= len(self.call.types):
            raise Unreadable(f"input {i} has no recorded type")
        name = str(self.call.types[i])
        return name if name in DTYPES or f"c10::{name}" not in DTYPES else f"c10::{name}"

    def is_tensor(self, i: int) -> bool:
        types = self.call.types
        return 0 <= i < len(types) and i < len(self.call.dims) and str(types[i]) not in NOT_TENSOR

    def shape(self, i: int) -> tuple[int, ...]:
        dims, types = self.call.dims, self.call.types
        if i >= min(len(dims), len(types)):
            raise Unreadable(f"input {i} is missing: {len(dims)} Input Dims, {len(types)} types")
        if not self.is_tensor(i):
            raise Unreadable(f"input {i} is not a tensor (Input type {types[i]!r})")
        return _dims(self.call.dims[i], i)

    def element_bytes(self, i: int) -> int:
        return _dtype_bytes(self.dtype(i), i)

    def tensor_bytes(self, i: int) -> int:
        return math.prod(self.shape(i)) * self.element_bytes(i) if self.is_tensor(i) else 0

    def literal(self, i: int) -> str:
        concrete = self.call.concrete
        return str(concrete[i]).strip() if 0 <= i < len(concrete) else ""

    def flag(self, i: int) -> bool:
        text = self.literal(i)
        if text not in ("True", "False"):
            raise Unreadable(f"input {i}: expected True or False in Concrete Inputs, got {text!r}")
        return text == "True"

    def ints(self, i: int) -> tuple[int, ...]:
        text = self.literal(i)
        if not re.fullmatch(r"\[?\s*-?\d+(\s*,\s*-?\d+)*\s*\]?|\[\s*\]", text):
            raise Unreadable(f"input {i}: expected integers in Concrete Inputs, got {text!r}")
        return tuple(int(v) for v in re.findall(r"-?\d+", text))

    def ceiling(self, i: int, unit: str) -> str:
        """The ceiling of input ``i``'s data type on ``unit`` ("matrix" or "vector")."""
        return _ceiling(self.dtype(i), unit, self.fp32_matmul)


def _ceiling(dtype: str, unit: str, fp32_matmul: str) -> str:
    kind = DTYPES.get(dtype, (0, None))[1]
    if kind is None or (kind.startswith("int") and unit == "matrix"):
        raise Unreadable(f"no {unit} ceiling for type {dtype!r}")
    if unit == "vector" and kind in ("bf16", "fp16", "fp8"):
        return "fp32-vector"  # PyTorch computes in at::opmath_type: float for half types
    return FP32_MATMUL[fp32_matmul] if (kind, unit) == ("fp32", "matrix") else f"{kind}-{unit}"


def _dims(value: Any, i: int) -> tuple[int, ...]:
    ok = isinstance(value, list) and all(type(v) is int for v in value)
    if not ok or any(v < 0 or v > MAX_DIM for v in value):
        raise Unreadable(f"input {i} holds dims {value!r}: expected a list of sizes 0 to 2^40")
    if math.prod(value) > MAX_ELEMENTS:
        raise Unreadable(f"input {i} holds dims {value!r}: more than 2^50 elements")
    return tuple(value)


def _dtype_bytes(dtype: str, i: int) -> int:
    if dtype not in DTYPES:
        raise Unreadable(
            f"input {i} has type {dtype!r}, whose element size roofscope does not know"
        )
    return DTYPES[dtype][0]


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy/PyTorch broadcasting (torch docs, "Broadcasting semantics")."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise Unreadable(f"shapes {list(shapes)} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _promoted(args: Args, inputs: Sequence[int]) -> str:
    """The result type of tensor inputs; 0-dim tensors (wrapped numbers) do not promote."""
    ranked = [args.dtype(i) for i in inputs if args.shape(i)] or [args.dtype(inputs[0])]
    known = [t for t in ranked if t in PROMOTION]
    if len(known) < len(ranked):
        raise Unreadable(f"no result type known for {ranked}")
    return max(known, key=PROMOTION.index)


def _dtype_literal(args: Args, i: int, default: str) -> str:
    """A ScalarType argument (``dtype=``, ``out_dtype=``) from Concrete Inputs, else default."""
    text = args.literal(i)
    if not text:
        return default
    if not text.isdigit() or int(text) not in SCALAR_TYPES:
        raise Unreadable(f"input {i}: expected a ScalarType code, got {text!r}")
    return SCALAR_TYPES[int(text)]


def work_or_reason(call: OpCall, *, fp32_matmul: str = "tf32") -> OpWork | NoWork:
    """The work of ``call``, or why it has none. ``fp32_matmul`` is the ceiling an fp32
    matmul, convolution or attention runs under: "tf32" (PyTorch's
    ``set_float32_matmul_precision("high")`` / ``allow_tf32``; cuDNN convolutions' default),
    "fp32-vector" (IEEE fp32 on the vector units: NVIDIA with TF32 off) or "fp32-matrix"
    (AMD's fp32 matrix instructions)."""
    if fp32_matmul not in FP32_MATMUL:
        raise ValueError(f"fp32_matmul={fp32_matmul!r}: expected one of {sorted(FP32_MATMUL)}")
    formula = _formula(call.name)
    if formula is None:
        return NoWork(f"no formula for {call.name}")
    lists = (call.dims, call.types, call.concrete)
    if not all(isinstance(v, list | tuple) for v in lists):
        return NoWork(f"{call.name}: Input Dims, Input type and Concrete Inputs must be lists")
    try:
        return formula(Args(call, fp32_matmul))
    except Unreadable as error:
        return NoWork(f"{call.name}: {error}")


def has_formula(name: str) -> bool:
    """Whether an operator of this name has a formula (its inputs are worth decoding)."""
    return _formula(name) is not None


def _formula(name: str) -> Callable[[Args], OpWork] | None:
    return FORMULAS.get(name) or (triton_buffers if INDUCTOR.match(name) else None)


def op_work(call: OpCall, *, fp32_matmul: str = "tf32") -> OpWork | None:
    """The work of ``call``; None where no formula applies (``work_or_reason`` says why)."""
    work = work_or_reason(call, fp32_matmul=fp32_matmul)
    return work if isinstance(work, OpWork) else None


# --- GEMM: C = A·B is M·N·K multiply-adds, 2·M·N·K FLOPs; a bias or beta·C adds M·N
# (each operator's semantics as in PyTorch's native_functions.yaml and torch docs).


def _gemm(
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
    out = batch * m * n * _dtype_bytes(out_dtype, 0)
    flops = 2 * batch * m * n * k + epilogue
    return OpWork(float(flops), float(inputs + out), args.ceiling(a, "matrix"), words)


def _same_k(args: Args, k: int, k2: int) -> None:
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
    (m, k), (k2, n) = _matrices(args, 0, 1, 2)
    _same_k(args, k, k2)
    return _gemm(
        args,
        0,
        batch=1,
        m=m,
        n=n,
        k=k,
        epilogue=0,
        reads=(0, 1),
        out_dtype=args.dtype(0),
        words="GEMM 2·M·N·K (aten::mm)",
    )


def addmm(args: Args) -> OpWork:
    """aten::addmm(self, mat1 [M, K], mat2 [K, N], beta, alpha) = beta·self + alpha·mat1·mat2."""
    (m, k), (k2, n) = _matrices(args, 1, 2, 2)
    _same_k(args, k, k2)
    bias = m * n if _beta_applies(args, 3) else 0
    return _gemm(
        args,
        1,
        batch=1,
        m=m,
        n=n,
        k=k,
        epilogue=bias,
        reads=(0, 1, 2) if bias else (1, 2),
        out_dtype=args.dtype(1),
        words="GEMM 2·M·N·K + M·N bias (aten::addmm semantics)",
    )


def bmm(args: Args) -> OpWork:
    """aten::bmm(self [B, M, K], mat2 [B, K, N]) -> [B, M, N]."""
    (b, m, k), (b2, k2, n) = _matrices(args, 0, 1, 3)
    _same_k(args, k, k2)
    _same_k(args, b, b2)
    return _gemm(
        args,
        0,
        batch=b,
        m=m,
        n=n,
        k=k,
        epilogue=0,
        reads=(0, 1),
        out_dtype=args.dtype(0),
        words="batched GEMM 2·B·M·N·K (aten::bmm)",
    )


def baddbmm(args: Args) -> OpWork:
    """aten::baddbmm(self, batch1 [B, M, K], batch2 [B, K, N], beta, alpha)."""
    (b, m, k), (b2, k2, n) = _matrices(args, 1, 2, 3)
    _same_k(args, k, k2)
    _same_k(args, b, b2)
    bias = b * m * n if _beta_applies(args, 3) else 0
    return _gemm(
        args,
        1,
        batch=b,
        m=m,
        n=n,
        k=k,
        epilogue=bias,
        reads=(0, 1, 2) if bias else (1, 2),
        out_dtype=args.dtype(1),
        words="batched GEMM 2·B·M·N·K + B·M·N (aten::baddbmm)",
    )


def matmul(args: Args) -> OpWork:
    """aten::matmul: a 1-D operand gains a size-1 dim, batch dims broadcast (torch.matmul)."""
    sa, sb = args.shape(0), args.shape(1)
    if not sa or not sb or args.dtype(0) != args.dtype(1):
        raise Unreadable(f"matmul of {list(sa)} and {list(sb)} ({args.dtype(0)}, {args.dtype(1)})")
    sa, sb = (sa if len(sa) > 1 else (1, *sa)), (sb if len(sb) > 1 else (*sb, 1))
    _same_k(args, sa[-1], sb[-2])
    batch = math.prod(_broadcast([sa[:-2], sb[:-2]]))
    words = "GEMM 2·batch·M·N·K (torch.matmul broadcasting)"
    return _gemm(
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
    _same_k(args, x[-1], w[1])
    m, n = math.prod(x[:-1]), w[0]
    bias = m * n if args.is_tensor(2) and args.shape(2) else 0
    return _gemm(
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
    _same_k(args, k, k2)
    bias = m * n if args.is_tensor(4) and args.shape(4) else 0
    out = _dtype_literal(args, 6, args.dtype(0))
    return _gemm(
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


# --- Attention: S = Q·Kᵀ and O = P·V are 2·Sq·Sk·D FLOPs each per batch and query head,
# 4·B·H·Sq·Sk·D in all (softmax not counted), halved under a causal mask when Sq == Sk;
# the backward pass is 2.5 times the forward (FlashAttention-2, Dao 2023, and
# flash-attention's benchmarks/benchmark_flash_attention.py). K and V may have fewer heads
# than Q (grouped-query attention); a causal mask with Sq != Sk aligns differently by
# backend (top-left in SDPA, bottom-right in FlashAttention 2.1 on), so it gives no count.


@dataclass(frozen=True)
class Attention:
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


# --- Convolution: each output element is a dot product of Cin/groups · prod(kernel) pairs,
# 2 · N · Cout · prod(out spatial) · (Cin/groups) · prod(kernel) FLOPs, plus one add per
# output element for a bias; out = (in + 2·pad - dil·(k-1) - 1) // stride + 1 (torch.nn.Conv2d
# docs); a transposed convolution runs the same products from the input side.


@dataclass(frozen=True)
class Conv:
    stride: int  # indices of stride, padding, dilation, groups and transposed among the inputs
    padding: int
    dilation: int
    groups: int
    transposed: int = -1
    bias: int = 2  # index of the bias tensor, -1: the operator takes none

    def __call__(self, args: Args) -> OpWork:
        x, w = args.shape(0), args.shape(1)
        if len(x) < 3 or len(w) != len(x) or args.dtype(0) != args.dtype(1):
            raise Unreadable(f"convolution of {list(x)} by {list(w)}")
        groups = self.each(args, self.groups, 1, 1)[0]
        transposed = self.transposed >= 0 and args.flag(self.transposed)
        out = self.out_spatial(args, x[2:], w[2:], transposed)
        if math.prod(out) > MAX_ELEMENTS:
            raise Unreadable(f"output size {list(out)}: more than 2^50 elements")
        cout = w[1] * groups if transposed else w[0]
        flops = 2 * x[0] * math.prod(w) * math.prod(x[2:] if transposed else out)
        bias = x[0] * cout * math.prod(out) if self.bias >= 0 and args.is_tensor(self.bias) else 0
        moved = args.tensor_bytes(0) + args.tensor_bytes(1) + args.tensor_bytes(self.bias)
        moved += x[0] * cout * math.prod(out) * args.element_bytes(0)
        words = "convolution 2·N·Cout·prod(out)·(Cin/groups)·prod(kernel) + bias (torch.nn.ConvNd)"
        return OpWork(float(flops + bias), float(moved), args.ceiling(0, "matrix"), words)

    def out_spatial(self, args: Args, size: tuple[int, ...], kernel: tuple[int, ...],
                    transposed: bool) -> tuple[int, ...]:  # fmt: skip
        n = len(size)
        stride, dil = self.each(args, self.stride, n, 1), self.each(args, self.dilation, n, 1)
        text = args.literal(self.padding).strip("'\"")
        if text == "same" and set(stride) == {1}:  # conv2d.padding: out = in, stride 1 only
            return size
        pad = (0,) * n if text == "valid" else self.each(args, self.padding, n, 0)
        if transposed:
            extra = self.each(args, self.transposed + 1, n, 0)
            sides = zip(size, stride, pad, dil, kernel, extra, strict=True)
            return tuple((i - 1) * s - 2 * p + d * (k - 1) + e + 1 for i, s, p, d, k, e in sides)
        sides5 = zip(size, stride, pad, dil, kernel, strict=True)
        out = tuple((i + 2 * p - d * (k - 1) - 1) // s + 1 for i, s, p, d, k in sides5)
        if min(out) < 1:
            raise Unreadable(
                f"output size {list(out)} from input {list(size)}, kernel {list(kernel)}"
            )
        return out

    @staticmethod
    def each(args: Args, i: int, n: int, default: int) -> tuple[int, ...]:
        """A per-dimension list; one value stands for every dimension. An input that Concrete
        Inputs do not hold (traces before PyTorch 2.1 record none) is unknown, never its
        default: ResNet-50's first convolution (stride 2, padding 3) read with stride 1 and
        no padding counted 3.8x its FLOPs (HTA's resnet50 trace, V100: 300 % of the peak)."""
        if not args.literal(i):
            raise Unreadable(f"input {i} is not in Concrete Inputs: stride, padding unknown")
        values = args.ints(i)
        if len(values) not in (1, n) or min(values) < (1 if default else 0):
            raise Unreadable(f"input {i}: {args.literal(i)!r} for {n} spatial dimensions")
        return values * n if len(values) == 1 else values


# --- Elementwise, reductions, normalisations: memory-bound by nature; bytes are every tensor
# input read once and the output written once. FLOPs are a small count per element, on the
# vector units in at::opmath_type (float for half types): 1 per output element for arithmetic
# (add, mul, silu, gelu, ...), 0 for data movement (copy, to, clone, fill); 1 per input
# element for a reduction; 5 per element for softmax (max, subtract, exp, sum, divide);
# layer, group and batch norm 5 per element with affine parameters, 4 without, and RMSNorm
# 4 and 3 (fvcore's norm counter convention, fvcore/nn/jit_handles.py).


def _tensors(args: Args) -> list[int]:
    return [i for i in range(len(args.call.types)) if args.is_tensor(i)]


def _moved(args: Args, inputs: Sequence[int], out_elements: int, out_dtype: str) -> float:
    read = sum(args.tensor_bytes(i) for i in inputs)
    return float(read + out_elements * _dtype_bytes(out_dtype, 0))


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
    inputs = _tensors(args)
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


@dataclass(frozen=True)
class Elementwise:
    flops_per: int  # 1 for arithmetic, 0 for data movement
    reads: bool = True  # fill_/zero_ only write

    def __call__(self, args: Args) -> OpWork:
        inputs = _tensors(args)
        if args.call.types and str(args.call.types[0]) == "TensorList":
            raise Unreadable("input 0 is a TensorList: Kineto records its shapes, not its type")
        if not inputs:
            raise Unreadable("no tensor among the inputs")
        inplace = args.call.name.endswith("_")
        inputs, written = _out_argument(args, inputs)
        out = args.shape(0) if inplace else _broadcast([args.shape(i) for i in inputs])
        if written is not None and args.shape(written) != out:
            raise Unreadable(f"input {written}: an out= tensor of another shape than the result")
        dtype = args.dtype(0) if inplace else self.out_dtype(args, inputs)
        if args.call.name in ("aten::copy_", "aten::fill_", "aten::zero_"):
            inputs = inputs[1:]  # self is written, not read
        moved = _moved(args, inputs if self.reads else [], math.prod(out), dtype)
        flops = self.flops_per * math.prod(out)
        ceiling = _ceiling(dtype, "vector", args.fp32_matmul) if flops else None
        what = "arithmetic: 1 FLOP per element" if flops else "data movement"
        return OpWork(float(flops), moved, ceiling, f"elementwise {what}, inputs + output bytes")

    @staticmethod
    def out_dtype(args: Args, inputs: Sequence[int]) -> str:
        if args.call.name in ("aten::to", "aten::_to_copy"):
            if not args.literal(1):
                raise Unreadable("the target dtype is not in Concrete Inputs (input 1)")
            return _dtype_literal(args, 1, "")
        return _promoted(args, inputs)


@dataclass(frozen=True)
class Reduction:
    dtype_at: int = 3  # index of the dtype argument; -1: none

    def __call__(self, args: Args) -> OpWork:
        shape = args.shape(0)
        dims = args.ints(1) if args.literal(1) not in ("", "[]") else tuple(range(len(shape)))
        if any(not -len(shape) <= d < len(shape) for d in dims):
            raise Unreadable(f"dims {list(dims)} for a tensor of shape {list(shape)}")
        kept = [n for axis, n in enumerate(shape) if axis not in {d % len(shape) for d in dims}]
        dtype = _dtype_literal(args, self.dtype_at, args.dtype(0))
        moved = _moved(args, [0], math.prod(kept), dtype)
        ceiling = _ceiling(args.dtype(0), "vector", args.fp32_matmul)
        return OpWork(
            float(math.prod(shape)), moved, ceiling, "reduction: 1 FLOP per input element"
        )


@dataclass(frozen=True)
class PerElement:
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
        moved = _moved(args, [0, *present], math.prod(shape), dtype)
        words = f"{self.flops_per + (self.affine_adds if affine else 0)} FLOPs per element"
        return OpWork(
            float(flops), moved, _ceiling(args.dtype(0), "vector", args.fp32_matmul), words
        )


FORMULAS: dict[str, Callable[[Args], OpWork]] = {
    "aten::mm": mm,
    "aten::addmm": addmm,
    "aten::bmm": bmm,
    "aten::baddbmm": baddbmm,
    "aten::matmul": matmul,
    "aten::linear": linear,
    "vllm::rocm_unquantized_gemm": linear,  # vLLM: F.linear(x, weight, bias) on ROCm
    "aiter::gemm_a16w16": linear,  # aiter: A [M, K] · B [N, K]ᵀ, bias, out dtype
    "aten::_scaled_mm": scaled_mm,
    "aten::_scaled_dot_product_flash_attention": Attention(0, 4, heads_first=True),
    "aten::_scaled_dot_product_efficient_attention": Attention(0, 6, heads_first=True),
    "aten::_scaled_dot_product_cudnn_attention": Attention(0, 6, heads_first=True),
    "aten::scaled_dot_product_attention": Attention(0, 5, heads_first=True),
    "aten::_flash_attention_forward": Attention(0, 8, heads_first=False),
    "flash_attn::_flash_attn_forward": Attention(0, 5, heads_first=False),
    "aten::_scaled_dot_product_flash_attention_backward": Attention(1, 11, True, backward=True),
    "aten::_scaled_dot_product_efficient_attention_backward": Attention(1, 11, True, True),
    "aten::_scaled_dot_product_cudnn_attention_backward": Attention(1, 14, True, backward=True),
    "aten::_flash_attention_backward": Attention(1, 11, heads_first=False, backward=True),
    "flash_attn::_flash_attn_backward": Attention(1, 11, heads_first=False, backward=True),
    "aten::convolution": Conv(stride=3, padding=4, dilation=5, groups=8, transposed=6),
    "aten::_convolution": Conv(stride=3, padding=4, dilation=5, groups=8, transposed=6),
    "aten::conv1d": Conv(stride=3, padding=4, dilation=5, groups=6),
    "aten::conv2d": Conv(stride=3, padding=4, dilation=5, groups=6),
    "aten::conv3d": Conv(stride=3, padding=4, dilation=5, groups=6),
    "aten::cudnn_convolution": Conv(stride=3, padding=2, dilation=4, groups=5, bias=-1),
    "aten::miopen_convolution": Conv(stride=4, padding=3, dilation=5, groups=6),
    "aten::sum": Reduction(),
    "aten::mean": Reduction(),
    "aten::amax": Reduction(dtype_at=-1),
    "aten::amin": Reduction(dtype_at=-1),
    "aten::softmax": PerElement((), 5),
    "aten::log_softmax": PerElement((), 5),
    "aten::_softmax": PerElement((), 5, half_to_float=2),
    "aten::_log_softmax": PerElement((), 5, half_to_float=2),
    "aten::layer_norm": PerElement((2, 3), 4),
    "aten::native_layer_norm": PerElement((2, 3), 4),
    "aten::rms_norm": PerElement((2,), 3),
    "aten::_fused_rms_norm": PerElement((2,), 3),
    "aten::group_norm": PerElement((2, 3), 4),
    "aten::native_group_norm": PerElement((1, 2), 4),
    "aten::batch_norm": PerElement((1, 2, 3, 4), 4),
    "aten::native_batch_norm": PerElement((1, 2, 3, 4), 4),
    "aten::cudnn_batch_norm": PerElement((1, 2, 3, 4), 4),
    "aten::miopen_batch_norm": PerElement((1, 2, 3, 4), 4),
    "aten::cat": Elementwise(0),
}
ARITHMETIC = "add add_ sub sub_ rsub mul mul_ div div_ neg pow pow_ rsqrt sqrt exp exp_ log"
ARITHMETIC += " relu relu_ silu silu_ gelu sigmoid tanh clamp clamp_ clamp_min clamp_min_ where"
for _op in ARITHMETIC.split():
    FORMULAS[f"aten::{_op}"] = Elementwise(1)
for _op in ["copy_", "to", "_to_copy", "clone", "contiguous"]:
    FORMULAS[f"aten::{_op}"] = Elementwise(0)
for _op in ["fill_", "zero_"]:
    FORMULAS[f"aten::{_op}"] = Elementwise(0, reads=False)
