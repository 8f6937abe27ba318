"""Vector ceilings the catalogue does not list, derived from its FP32 vector peak.

Vendors publish an FP32 vector peak but no integer or packed-FP16 vector peak, while the
counters of AMD's gfx9 GPUs count both kinds of work (work/counters.py). A gfx9 CU issues
one vector instruction per lane (64 lanes) per clock. Its FP32 vector peak is that rate
times the FLOPs of an FMA: 128 FLOP/clk/CU on gfx906/gfx908/gfx90a, 256 on gfx942/gfx950
where the published figure counts packed FP32 (the catalogue's arch table, data/gpus/archs.csv,
from ROCm docs ``conceptual/gpu-arch/mi100.md``, ``mi250.md``, ``mi300.md``). Each rule is a
factor on the FP32 vector ceiling in effect (the catalogue's, a measured or the user's),
so the derived ceiling is as trustworthy as that one, and its source says so.

- ``int32-vector`` and ``int64-vector``: 64 IOP/clk/CU (fp32-vector / 2 on CDNA1/2). The
  counters give one op per lane per instruction (rocprof-compute's VALU IOPs, ``64 *
  (SQ_INSTS_VALU_INT32 + SQ_INSTS_VALU_INT64)``), and an instruction issues at most once
  per lane per clock. rocprof-compute 3.3.0 divides by the FP32 FMA peak (128/clk/CU)
  instead, which puts a VALU-saturated integer kernel at 50 %: on Omniperf's MI200
  workload ``benchmark_func<int, 256, 8u, 512u>`` keeps the VALU 99 % busy and reaches
  10.29 TIOP/s against 10.52 (= 21.05 / 2, the measured FP32 peak).
- ``fp16-vector``: 128 counted FLOP/clk/CU (fp32-vector x 1 on CDNA1/2). A packed
  ``v_pk_fma_f16`` does 2 FP16 FMAs per lane per clock, twice the FP32 vector rate in
  FLOPs (packed FP16 vector 256 FLOP/clk/CU on gfx906), but
  ``SQ_INSTS_VALU_FMA_F16`` counts a packed instruction once, as 64 x 2 FLOPs. On the same
  workload the ``__half2`` and ``float`` kernels issue the same 262144 FMA instructions
  (the ``__half2`` one does twice the FMAs), and at 98 % VALU busy reach 20.55 and 20.66
  TFLOP/s as counted: against counted FLOPs the ceiling is the FP32 FMA issue rate.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec.structs import replace

from roofscope.catalogue.ceilings import Ceiling

# FP32 vector FLOP/clk/CU of the published peak (data/gpus/archs.csv; gfx940/gfx941 are MI300
# pre-production targets of gfx942's rates; tests/test_from_attributes.py checks they agree)
FP32_PER_CLOCK = {
    "gfx906": 128,
    "gfx908": 128,
    "gfx90a": 128,
    "gfx940": 256,
    "gfx941": 256,
    "gfx942": 256,
    "gfx950": 256,
}
SOURCE = (
    "64 VALU lanes/clk/CU; fp32-vector is {fp32} FLOP/clk/CU on {arch} "
    "(ROCm docs conceptual/gpu-arch/mi100.md, mi250.md, mi300.md)"
)


PREFIX = "derived: fp32-vector x "  # how every derived ceiling's source begins
SHORT = (
    "derived from fp32-vector by the VALU's rates per clock (each rule: --json, roofscope devices)"
)


class Rule(msgspec.Struct, frozen=True):
    dtype: str
    per_clock: int  # ops per clock per CU, as the counters count them
    why: str


RULES = (
    Rule("int32", 64, "one op per lane per instruction (rocprof-compute's VALU IOPs)"),
    Rule("int64", 64, "one op per lane per instruction, at most one instruction per clock"),
    Rule(
        "fp16",
        128,
        "packed FP16 (v_pk_fma_f16) does 2x the FP32 FMAs, but SQ_INSTS_VALU_FMA_F16 counts "
        "a packed instruction once, as 64 x 2 FLOPs",
    ),
)


def derived(ceilings: Sequence[Ceiling], arch: str | None) -> list[Ceiling]:
    """The vector ceilings of :data:`RULES` that ``ceilings`` lack, from their
    ``fp32-vector`` (per scope); none for an arch whose VALU rates are not known here."""
    arch = (arch or "").split(":", 1)[0].lower()
    fp32 = FP32_PER_CLOCK.get(arch)
    if fp32 is None:
        return []
    have = {(c.scope, c.name) for c in ceilings}
    out = []
    for base in (c for c in ceilings if c.name == "fp32-vector"):
        for rule in RULES:
            if (base.scope, f"{rule.dtype}-vector") in have:
                continue
            factor = f"{rule.per_clock}/{fp32}"
            source = (
                f"{PREFIX}{factor}: {rule.why}; "
                f"{SOURCE.format(fp32=fp32, arch=arch)}; fp32-vector from {base.source}"
            )
            value = base.value * rule.per_clock / fp32
            out.append(replace(base, value=value, source=source, dtype=rule.dtype))
    return out
