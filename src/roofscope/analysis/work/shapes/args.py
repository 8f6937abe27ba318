"""Work from shapes, the common part: the call, its result, its inputs read one at a time
(``Args``), the data types and their ceilings. The formulas are in the sibling modules, the
registry in ``__init__``."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import msgspec


class OpCall(msgspec.Struct, frozen=True):
    """One cpu_op event's args, as JSON-decoded from the trace."""

    name: str  # "aten::addmm"
    dims: Sequence[Any]  # args["Input Dims"]: per input a list of ints, [] or a list of lists
    types: Sequence[str]  # args["Input type"]: "c10::BFloat16", "float", "Scalar", "", ...
    concrete: Sequence[Any] = ()  # args["Concrete Inputs"]: literal strings ("", "1", "True")
    step: str = ""  # the serving step range around the call whose name gives sequence sums


class OpWork(msgspec.Struct, frozen=True):
    flops: float  # 0.0 for pure data movement
    bytes: float  # minimum bytes read + written: operands once each, output once
    ceiling: str | None  # "bf16-matrix", "fp32-vector", ...; None for memory-only ops
    formula: str  # which formula and its source, in short words


class NoWork(msgspec.Struct, frozen=True):
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


class Args(msgspec.Struct, frozen=True):
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
        return dtype_bytes(self.dtype(i), i)

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
        return ceiling_of(self.dtype(i), unit, self.fp32_matmul)


def ceiling_of(dtype: str, unit: str, fp32_matmul: str) -> str:
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


def dtype_bytes(dtype: str, i: int) -> int:
    if dtype not in DTYPES:
        raise Unreadable(
            f"input {i} has type {dtype!r}, whose element size roofscope does not know"
        )
    return DTYPES[dtype][0]


def broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy/PyTorch broadcasting (torch docs, "Broadcasting semantics")."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise Unreadable(f"shapes {list(shapes)} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def promoted(args: Args, inputs: Sequence[int]) -> str:
    """The result type of tensor inputs; 0-dim tensors (wrapped numbers) do not promote."""
    ranked = [args.dtype(i) for i in inputs if args.shape(i)] or [args.dtype(inputs[0])]
    known = [t for t in ranked if t in PROMOTION]
    if len(known) < len(ranked):
        raise Unreadable(f"no result type known for {ranked}")
    return max(known, key=PROMOTION.index)


def dtype_literal(args: Args, i: int, default: str) -> str:
    """A ScalarType argument (``dtype=``, ``out_dtype=``) from Concrete Inputs, else default."""
    text = args.literal(i)
    if not text:
        return default
    if not text.isdigit() or int(text) not in SCALAR_TYPES:
        raise Unreadable(f"input {i}: expected a ScalarType code, got {text!r}")
    return SCALAR_TYPES[int(text)]
