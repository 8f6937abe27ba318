"""Work per kernel from hardware counters (docs/formats/amd-counters.md, "FLOPs",
"Bytes per memory level", "Derived metrics").

Each quantity is a Python function of per-dispatch counter arrays; one whose counters were
not all collected is unknown, never 0 (rocprof-compute silently counts such a group as 0).

- FLOPs: ``64 * (ADD + MUL + 2*FMA + TRANS)`` per VALU data type (64 lanes per wave, FMA = 2)
  and ``512 * SQ_INSTS_VALU_MFMA_MOPS_<T>`` per matrix data type (the MOPS counters count
  ops / 512). INT8 matrix OPs are kept apart from FLOPs, and so are the integer VALU
  IOPs, ``64 * SQ_INSTS_VALU_INT32`` and ``64 * SQ_INSTS_VALU_INT64`` (one op per lane per
  instruction, as rocprof-compute's VALU IOPs).
- HBM bytes (L2-fabric): on gfx908/gfx90a ``32*RDREQ_32B + 64*(RDREQ - RDREQ_32B)`` read and
  ``64*WRREQ_64B + 32*(WRREQ - WRREQ_64B)`` written (``TCC_EA_*_sum``); on gfx94x/gfx950 the
  ``TCC_EA0_*`` counters with 128-byte ``TCC_BUBBLE`` reads. Without them, rocprof v1's
  ``FETCH_SIZE`` and ``WRITE_SIZE`` (KiB).
- L2 bytes: ``64 * (TCP_TCC_READ_REQ + WRITE_REQ + ATOMIC_WITH_RET + ATOMIC_WITHOUT_RET)``;
  vL1D: ``64 * TCP_TOTAL_CACHE_ACCESSES`` (the roofline's factor; the gfx942 speed-of-light
  panel uses 128); LDS: ``(SQ_LDS_IDX_ACTIVE - SQ_LDS_BANK_CONFLICT) * 4 * 32 banks``.

Per kernel, totals are sums over its dispatches; for every quantity the mean over timed
dispatches of each one's own rate (value / duration) is kept beside, as rocprof-compute's
speed-of-light panel reports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from roofscope.analysis.counters import Array, Counters, Formula, dispatch_counters, evaluate
from roofscope.analysis.metrics.column import Mask, everything, summed, where
from roofscope.analysis.work import nvidia
from roofscope.analysis.work.model import ALL, Work
from roofscope.model.profile import Profile


def _valu(dtype: str) -> Formula:
    def flops(c: Counters) -> Array:
        p = f"SQ_INSTS_VALU_{{}}_{dtype}"
        return 64 * (
            c[p.format("ADD")] + c[p.format("MUL")] + 2 * c[p.format("FMA")] + c[p.format("TRANS")]
        )

    return flops


def _mfma(dtype: str) -> Formula:
    return lambda c: 512 * c[f"SQ_INSTS_VALU_MFMA_MOPS_{dtype}"]


FLOPS: dict[str, Formula] = {
    "fp64-vector": _valu("F64"),
    "fp32-vector": _valu("F32"),
    "fp16-vector": _valu("F16"),
    "fp64-matrix": _mfma("F64"),
    "fp32-matrix": _mfma("F32"),
    "fp16-matrix": _mfma("F16"),
    "bf16-matrix": _mfma("BF16"),
    "fp8-matrix": _mfma("F8"),
    "int8-matrix": _mfma("I8"),
    # integer VALU work, one op per lane per instruction (rocprof-compute's VALU IOPs)
    "int32-vector": lambda c: 64 * c["SQ_INSTS_VALU_INT32"],
    "int64-vector": lambda c: 64 * c["SQ_INSTS_VALU_INT64"],
}


def _hbm_read(c: Counters) -> Array:
    if "TCC_BUBBLE_sum" in c or "TCC_EA0_RDREQ_sum" in c:  # gfx94x, gfx950
        bubble, r32 = c["TCC_BUBBLE_sum"], c["TCC_EA0_RDREQ_32B_sum"]
        return 128 * bubble + 32 * r32 + 64 * (c["TCC_EA0_RDREQ_sum"] - bubble - r32)
    if "TCC_EA_RDREQ_sum" in c:  # gfx908, gfx90a
        r32 = c["TCC_EA_RDREQ_32B_sum"]
        return 32 * r32 + 64 * (c["TCC_EA_RDREQ_sum"] - r32)
    return 1024 * c["FETCH_SIZE"]


def _hbm_write(c: Counters) -> Array:
    for prefix in ("TCC_EA0_", "TCC_EA_"):
        if f"{prefix}WRREQ_sum" in c:
            w64 = c[f"{prefix}WRREQ_64B_sum"]
            return 64 * w64 + 32 * (c[f"{prefix}WRREQ_sum"] - w64)
    return 1024 * c["WRITE_SIZE"]


def _l2(c: Counters) -> Array | float:
    kinds = ("READ_REQ", "WRITE_REQ", "ATOMIC_WITH_RET_REQ", "ATOMIC_WITHOUT_RET_REQ")
    return 64 * summed(c[f"TCP_TCC_{k}_sum"] for k in kinds)


BYTES: dict[str, Formula] = {
    "hbm-read": _hbm_read,
    "hbm-write": _hbm_write,
    "l2": _l2,
    "vl1d": lambda c: 64 * c["TCP_TOTAL_CACHE_ACCESSES_sum"],
    "lds": lambda c: (c["SQ_LDS_IDX_ACTIVE"] - c["SQ_LDS_BANK_CONFLICT"]) * 4 * 32,
}


def counter_work(profile: Profile, sources: Sequence[int]) -> dict[int, Work]:
    """Work per name_id (and for all dispatches together under :data:`ALL`) from the
    counters of these sources' dispatches; empty when they have no counters."""
    table = dispatch_counters(profile, sources)
    if table is None:
        return {}
    table.counters.read_ahead(lambda c: quantities(c, profile.run.arch))
    flops, nbytes = quantities(table.counters, profile.run.arch)
    dur = table.duration_ns
    out: dict[int, Work] = {}
    for name_id, mask in [*table.by_kernel(), (ALL, everything(table.size))]:
        out[name_id] = Work(
            flops={k: v[mask].sum() for k, v in flops.items()} or None,
            bytes={k: v[mask].sum() for k, v in nbytes.items()},
            source="counters",
            rates=_mean_rates({**flops, **nbytes}, dur, mask),
            dispatches=mask.count(),
            time_ns=where(mask, dur, 0.0).nansum(),
        )
    return out


def quantities(counters: Counters, arch: str | None) -> tuple[dict[str, Array], dict[str, Array]]:
    """FLOPs (IOPs) by compute ceiling name and bytes by memory level, as arrays aligned on
    the counters' arrays; the quantities whose counters were not all collected are absent.
    Every formula is linear in the counters (a sum of counters times constants), so the
    quantity of summed counters is the sum of the quantities (cluster/roof.py relies on it)."""
    arch = arch or ""
    # Nsight Compute metrics (``unit__counter.rollup``, work/nvidia.py); older ncu CSVs
    # give no compute capability, so the names decide
    if arch.startswith("sm_") or any("__" in n for n in counters.names()):
        flops = evaluate(nvidia.flops_for(arch), counters)
        nbytes = evaluate(nvidia.BYTES, counters)
    else:
        flops = evaluate(FLOPS, counters)
        nbytes = evaluate(BYTES, counters)
    if "hbm-read" in nbytes and "hbm-write" in nbytes:
        nbytes["hbm"] = nbytes["hbm-read"] + nbytes["hbm-write"]
    return flops, nbytes


def _mean_rates(values: Mapping[str, Array], dur: Array, mask: Mask) -> dict[str, float]:
    timed = mask & (dur > 0)
    if not timed.any():
        return {}
    return {k: (v[timed] / dur[timed]).mean() * 1e9 for k, v in values.items()}
