"""Work per kernel from Nsight Compute metrics (formats-nvidia-torch.md section 5.3).

Formulas over the per-dispatch counters that the ncu reader stores under raw metric names
(SI units: bytes, counts), in the style of :mod:`roofscope.analysis.work.counters`: a formula whose
metrics were not all collected is unknown (:class:`Missing`), never 0.

FLOPs (``pred_on`` thread-instruction counts of the SASS ops):

- ``fp64-vector`` = 2*DFMA + DADD + DMUL and ``fp32-vector`` = 2*FFMA + FADD + FMUL: the same
  in NERSC's hierarchical roofline and in ncu's own SpeedOfLight_RooflineChart section.
- ``fp16-vector`` = 4*HFMA + 2*HADD + 2*HMUL: **ncu's** half-precision roofline counting
  (SpeedOfLight_HierarchicalHalfRooflineChart), not NERSC's 2*HFMA + HADD + HMUL. Half math is
  issued as packed HFMA2/HADD2/HMUL2 (two lanes per thread instruction) and NVIDIA's fp16 peak
  is stated for the packed lanes (``hfma.peak_sustained x 4``); counting the same way keeps
  achieved and peak on one scale, where NERSC's count would read 2x low against a datasheet
  fp16 peak.
- Tensor cores, per data type, from the operation counters of ncu >= 2023,
  ``sm__ops_path_tensor_src_<in>[_dst_<out>].sum``, which count operations (one FMA = 2; the
  fp8 count of a GEMM equals 2*M*N*K): ``fp16-matrix``, ``bf16-matrix``, ``tf32-matrix``,
  ``fp8-matrix``, ``fp64-matrix`` and ``int8-matrix`` (integer ops, kept under its own key as
  in work/counters.py). A data type's aggregate over destinations (``src_fp16``) is used
  when collected; otherwise the sum of all of its per-destination parts, each required. An
  aggregate over several data types (``src_fp16_bf16_tf32_dst_fp32``) is never used nor
  added to its parts.
- Older ncu: ``k * sm__inst_executed_pipe_tensor.sum`` where k is the FLOPs of one warp-level
  tensor instruction. It is known only for sm_70 (V100 HMMA.884: k = 512, fp16 inputs);
  :func:`flops_for` adds it there and nowhere else: on other architectures the factor depends
  on the instruction shape, which the counter does not tell, so the work stays unknown.

Bytes (NERSC's hierarchical roofline metrics, identical to ncu's older hierarchical
sections): ``hbm`` = ``dram__bytes.sum`` (else ``dram__bytes_read.sum`` +
``dram__bytes_write.sum``, else the ``dram__bytes_op_read/op_write.sum`` pair that ncu 2026
wrote on an RTX 5070), ``hbm-read``/``hbm-write`` when the parts are there, ``l2`` =
``lts__t_bytes.sum``, ``l1`` = ``l1tex__t_bytes.sum``. ncu >= 2023's sections measure L2/L1
traffic differently (lts2xbar cycles x 32, LSU writeback cycles x 128); those are not used.
"""

from __future__ import annotations

from roofscope.analysis.counters import Array, Counters, Formula, Missing


def sass(op: str) -> str:
    """The thread-level predicated-on instruction count of one SASS op (``ffma``)."""
    return f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"


def _vector(p: str, fma: int, other: int) -> Formula:
    """``fma*<p>FMA + other*(<p>ADD + <p>MUL)`` for the op prefix ``p`` (d, f, h)."""
    return lambda c: fma * c[sass(f"{p}fma")] + other * (c[sass(f"{p}add")] + c[sass(f"{p}mul")])


def tensor(source: str, *destinations: str) -> Formula:
    """Tensor-core ops with inputs of ``source``: the aggregate ``src_<source>.sum`` when
    collected, else the sum of the per-destination parts (all required)."""
    base = f"sm__ops_path_tensor_src_{source}"

    def ops(c: Counters) -> Array:
        if f"{base}.sum" in c or not destinations:
            return c[f"{base}.sum"]
        parts = [c[f"{base}_dst_{d}.sum"] for d in destinations]
        return sum(parts[1:], parts[0])

    return ops


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

    def fp16_matrix(c: Counters) -> Array:
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
