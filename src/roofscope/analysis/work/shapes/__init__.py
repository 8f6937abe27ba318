"""Work from shapes: the FLOPs and bytes of one PyTorch operator from the shapes a Kineto
trace recorded (``record_shapes=True``), and the compute ceiling it runs under.

Pure functions, no I/O. Each formula is written once, with its source; the list is
docs/work-from-shapes.md, what the args hold docs/formats/pytorch-kineto.md, "Operator
shapes". ``op_work`` gives ``None`` where no formula applies; ``work_or_reason`` says why (no
formula for the operator, shapes missing or unreadable, an unknown data type, a causal mask
whose alignment the shapes do not settle).
"""

from __future__ import annotations

from collections.abc import Callable

from roofscope.analysis.work.shapes.args import (
    DTYPES,
    FP32_MATMUL,
    Args,
    NoWork,
    OpCall,
    OpWork,
    Unreadable,
)
from roofscope.analysis.work.shapes.attention import Attention
from roofscope.analysis.work.shapes.conv import Conv
from roofscope.analysis.work.shapes.gemm import addmm, baddbmm, bmm, linear, matmul, mm, scaled_mm
from roofscope.analysis.work.shapes.memory import (
    INDUCTOR,
    Elementwise,
    PerElement,
    Reduction,
    triton_buffers,
)
from roofscope.analysis.work.shapes.quant_gemm import QUANT_GEMMS
from roofscope.analysis.work.shapes.serving import SERVING

__all__ = [
    "DTYPES",
    "FORMULAS",
    "FP32_MATMUL",
    "NoWork",
    "OpCall",
    "OpWork",
    "Unreadable",
    "has_formula",
    "op_work",
    "work_or_reason",
]


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
FORMULAS.update(SERVING)  # serving.py: vLLM, SGLang, aiter custom ops and ATen gathers
FORMULAS.update(QUANT_GEMMS)  # quant_gemm.py: fp8 and int8 GEMMs of vLLM, SGLang, aiter
