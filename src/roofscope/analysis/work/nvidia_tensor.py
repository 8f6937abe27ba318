"""Tensor-core work per data type from Nsight Compute's operation counters.

ncu counts tensor-core math in one unit, "# of math ops executed in Tensor path" (``ncu
--query-metrics``; NVIDIA forum thread 285256): one op is one FLOP (IOP for integers), a
multiply-add counting 2. Checked on tests/data/ncu/roofscope-profile-h200: a 4096^3 bf16
GEMM gives ``sm__ops_path_tensor_src_bf16_dst_fp32.sum`` = 137,438,953,472 = 2 * 4096^3.
The same ops are counted in several partitions, which must never be added together:

- by source type: ``sm__ops_path_tensor_src_<t>.sum``;
- by source and destination: ``..._src_<t>_dst_<d>.sum``;
- by sparsity: ``..._src_<t>[_dst_<d>]_sparsity_{on,off}.sum``;
- by instruction (ncu's HierarchicalTensorRoofline section): ``sm__ops_path_tensor_op_<i>_
  src_<t>[_dst_<d>][_sparsity_{on,off}].sum``, ``<i>`` = hmma, hgmma, imma, igmma, qgmma,
  bmma, utchmma, ... in the same unit (``--metrics`` exports of LLM kernels on H100/H200
  often carry only these: ``op_hgmma_src_bf16_dst_fp32_sparsity_off``).

A data type is counted from the coarsest partition the file has; aggregates over several
source types (``src_fp16_bf16_tf32_dst_fp32``) are never read. Within a finer partition
the collected parts are summed: ops of an instruction or destination whose counter was not
collected are not counted. ``sm__inst_executed_pipe_tensor*`` counts instructions, whose
FLOPs depend on the instruction's shape (HMMA.16816 4096, HMMA.1688 2048): not work.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from roofscope.analysis.counters import Array, Counters, Formula, Missing

PREFIX = "sm__ops_path_tensor_"
_NAME = re.compile(
    r"sm__ops_path_tensor_(?:op_(?P<op>[a-z0-9]+)_)?src_(?P<src>[a-z]+[0-9]+)"
    r"(?:_dst_(?P<dst>[a-z]+[0-9]+))?(?:_sparsity_(?P<sparsity>on|off))?\.sum"
)


def tensor(source: str, *destinations: str) -> Formula:
    """Tensor-core ops with inputs of ``source``: the aggregate ``src_<source>.sum``, else
    the per-destination parts (``destinations`` all required, other collected ones added),
    else the sparsity parts, else the per-instruction parts."""
    base = f"{PREFIX}src_{source}"

    def ops(c: Counters) -> Array:
        if f"{base}.sum" in c or not destinations:
            return c[f"{base}.sum"] if f"{base}.sum" in c else _finer(c, source, f"{base}.sum")
        declared = [f"{base}_dst_{d}.sum" for d in destinations]
        if all(n in c for n in declared):
            plain = [m.string for m in _matches(c, source, None) if _fineness(m) == 1]
            return _total(c, sorted({*declared, *plain}))
        return _finer(c, source, f"{base}.sum")

    return ops


def _finer(c: Counters, source: str, wanted: str) -> Array:
    """The sparsity parts of ``source``, else its per-instruction parts; else ``wanted``
    is :class:`Missing`."""
    sparse = [m for m in _matches(c, source, None) if m["sparsity"]]
    names = _coarsest(sparse) or _per_op(c, source)
    if not names:
        raise Missing(wanted)
    return _total(c, names)


def _per_op(c: Counters, source: str) -> list[str]:
    """Each instruction's coarsest partition of ``source``, for every instruction."""
    ops = sorted({m["op"] for m in _matches(c, source) if m["op"]})
    return [n for o in ops for n in _coarsest(_matches(c, source, o))]


def _matches(c: Counters, source: str, op: str | bool | None = True) -> list[re.Match[str]]:
    """The counters of ``source``: all (``op`` True), without instruction (None), or of
    instruction ``op``."""
    found = [m for m in map(_NAME.fullmatch, c.names()) if m and m["src"] == source]
    return [m for m in found if op is True or m["op"] == op]


def _fineness(m: re.Match[str]) -> int:
    return (m["dst"] is not None) + 2 * (m["sparsity"] is not None)


def _coarsest(found: Sequence[re.Match[str]]) -> list[str]:
    """The names of the coarsest partition among ``found`` (one partition, never two)."""
    if not found:
        return []
    least = min(map(_fineness, found))
    return sorted(m.string for m in found if _fineness(m) == least)


def _total(c: Counters, names: Sequence[str]) -> Array:
    arrays = [c[n] for n in names]
    return sum(arrays[1:], arrays[0])
