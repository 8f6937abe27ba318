"""Advice a user can act on, for kernels that are not the user's code (model/libraries.py).

A communication kernel gets no compute or memory verdict: its time is the interconnect's and
the other ranks' (the program's communication-share finding speaks for it). A library
kernel's verdicts keep their summary and evidence, but prescribe what the caller controls
(shapes, data type, layout, which op or backend, fusion) instead of changes to the kernel's
source, which the user cannot make.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace

from roofscope.diagnosis.evidence import KernelView
from roofscope.diagnosis.findings import Finding
from roofscope.model.libraries import Library, library_of

ADVICE = {
    Library.GEMM: (
        "a library GEMM (cuBLAS/cuBLASLt, hipBLASLt/Tensile, CUTLASS): its tiles and code are "
        "the library's, so change the call: shapes it tiles well (M, N and K multiples of 128; "
        "batch small-M calls, e.g. more tokens per step), a lower-precision data type (bf16, "
        "fp8) where accuracy allows, contiguous operands in the layout it expects (no "
        "transposed copies), tuned algorithms (PyTorch TunableOp, cuBLASLt/hipBLASLt "
        "autotuning), and bias and activation fused into its epilogue"
    ),
    Library.COMPOSABLE_KERNEL: (
        "a Composable Kernel or aiter op: its code is the library's, so change the call: a "
        "tuned configuration for these shapes (aiter's tuned GEMM tables, another CK "
        "instance), the data type and shapes, and the fused variant of neighbouring ops "
        "the library offers"
    ),
    Library.ATTENTION: (
        "an attention library kernel (FlashAttention, TensorRT-LLM FMHA, PyTorch's AOTriton on "
        "ROCm): its code is the "
        "library's, so change the call: a head dimension and data type it has fast paths "
        "for, packed variable-length batches instead of padding, the KV-cache block size "
        "and layout, or another backend (FlashAttention 3 on Hopper, FlashInfer, aiter on "
        "MI300)"
    ),
    Library.PYTORCH: (
        "one of PyTorch's own kernels (eager mode): its code is PyTorch's, so change what "
        "runs it: fuse the neighbouring elementwise and normalisation ops (torch.compile), "
        "drop copies and layout changes (.contiguous(), .to(), cat) the model does not "
        "need, and use in-place or lower-precision tensors where accuracy allows"
    ),
    Library.TRITON: (
        "a kernel torch.compile generated: change what it compiles: the model's code "
        "(fusible ops side by side, no graph breaks), mode='max-autotune' so that Inductor "
        "tunes its configurations, the data type, and static shapes"
    ),
}


def advised(view: KernelView, verdicts: Sequence[Finding]) -> list[Finding]:
    """The kernel's verdicts as advice its owner can act on: none for a communication
    kernel, the call's advice for a library kernel, unchanged for the user's own."""
    if view.stats.communication:
        return []
    library = library_of(view.stats.name)
    if library is None:
        return list(verdicts)
    return [as_call(f, library) for f in verdicts]


def as_call(f: Finding, library: Library) -> Finding:
    """A bottleneck verdict on a library kernel, prescribing what the caller controls."""
    if f.kind != "bottleneck":
        return f
    return replace(
        f, prescription=ADVICE[library], evidence={**f.evidence, "library": library.value}
    )
