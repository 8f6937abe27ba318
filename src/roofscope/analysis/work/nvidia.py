"""Work per kernel from Nsight Compute metrics (docs/formats/nsight-compute.md, "Roofline
formulas").

Formulas over the per-dispatch counters that the ncu reader stores under raw metric names
(SI units: bytes, counts), in the style of :mod:`roofscope.analysis.work.counters`: a formula whose
metrics were not all collected is unknown (:class:`Missing`), never 0.

- FLOPs from the ``pred_on`` SASS thread-instruction counts: ``fp64-vector`` = 2*DFMA + DADD +
  DMUL, ``fp32-vector`` = 2*FFMA + FADD + FMUL, ``fp16-vector`` = 4*HFMA + 2*HADD + 2*HMUL
  (ncu's packed-lane counting, on the scale of NVIDIA's fp16 peak, not NERSC's).
- Tensor cores per data type from ``sm__ops_path_tensor_[op_<instr>_]src_<in>[_dst_<out>]
  [_sparsity_<on|off>].sum`` (ncu >= 2023; one op = one FLOP; never an aggregate over several
  data types; :mod:`roofscope.analysis.work.nvidia_tensor`); older ncu's
  ``k * sm__inst_executed_pipe_tensor.sum`` only on sm_70 (k = 512), where k is known.
- Bytes: ``hbm`` = ``dram__bytes.sum`` (or its read + write parts), ``l2`` =
  ``lts__t_bytes.sum``, ``l1`` = ``l1tex__t_bytes.sum`` (NERSC's hierarchical metrics).
"""

from __future__ import annotations

from roofscope.analysis.counters import Array, Counters, Formula, Missing
from roofscope.analysis.work.nvidia_tensor import tensor


def sass(op: str) -> str:
    """The thread-level predicated-on instruction count of one SASS op (``ffma``)."""
    return f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"


def _sass(c: Counters, op: str) -> Array:
    """``sm__`` or ``smsp__`` SASS count of ``op``: one total (every SM's sub-partitions)."""
    name = sass(op)
    smsp = f"smsp__{name.removeprefix('sm__')}"
    return c[smsp] if name not in c and smsp in c else c[name]


def _vector(p: str, fma: int, other: int) -> Formula:
    """``fma*<p>FMA + other*(<p>ADD + <p>MUL)`` for the op prefix ``p`` (d, f, h)."""
    return lambda c: fma * _sass(c, f"{p}fma") + other * (_sass(c, f"{p}add") + _sass(c, f"{p}mul"))


FLOPS: dict[str, Formula] = {
    "fp64-vector": _vector("d", 2, 1),
    "fp32-vector": _vector("f", 2, 1),
    "fp16-vector": _vector("h", 4, 2),
    "fp64-matrix": tensor("fp64"),
    "fp16-matrix": tensor("fp16", "fp16", "fp32"),
    "bf16-matrix": tensor("bf16", "fp32"),
    "tf32-matrix": tensor("tf32", "fp32"),
    "fp8-matrix": tensor("fp8", "fp16", "fp32"),
    "int8-matrix": tensor("int8", "int32"),
}

TENSOR_INSTRUCTION = "sm__inst_executed_pipe_tensor.sum"
# FLOPs per warp-level tensor instruction, where one instruction shape is all there is
FLOPS_PER_TENSOR_INSTRUCTION = {"sm_70": 512}


def flops_for(arch: str | None) -> dict[str, Formula]:
    """:data:`FLOPS`, with ``fp16-matrix`` from tensor instructions where the operation
    counters are absent and the architecture fixes the factor (sm_70 only)."""
    k = FLOPS_PER_TENSOR_INSTRUCTION.get(arch or "")
    if k is None:
        return dict(FLOPS)
    ops = FLOPS["fp16-matrix"]

    def fp16_matrix(c: Counters) -> Array | float:
        try:
            return ops(c)
        except Missing:
            return k * c[TENSOR_INSTRUCTION]

    return {**FLOPS, "fp16-matrix": fp16_matrix}


def _pair(c: Counters, read: str, write: str) -> Array | None:
    return c[read] + c[write] if read in c and write in c else None


def _hbm(c: Counters) -> Array:
    if "dram__bytes.sum" in c:
        return c["dram__bytes.sum"]
    for read, write in _DRAM_PAIRS:
        if (both := _pair(c, read, write)) is not None:
            return both
    raise Missing("dram__bytes.sum")


_DRAM_PAIRS = (
    ("dram__bytes_read.sum", "dram__bytes_write.sum"),
    ("dram__bytes_op_read.sum", "dram__bytes_op_write.sum"),
)


def _dram(side: int) -> Formula:
    def part(c: Counters) -> Array:
        for pair in _DRAM_PAIRS:
            if pair[side] in c:
                return c[pair[side]]
        raise Missing(_DRAM_PAIRS[0][side])

    return part


BYTES: dict[str, Formula] = {
    "hbm": _hbm,
    "hbm-read": _dram(0),
    "hbm-write": _dram(1),
    "l2": lambda c: c["lts__t_bytes.sum"],
    "vl1d": lambda c: c["l1tex__t_bytes.sum"],
}
