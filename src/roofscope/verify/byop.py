"""Kernels matched through the PyTorch operators that launched them, where their names do not
match: an MI300X trace (``Cijk_*``, ``attn_fwd``) and an H100 trace (``sm90_xmma_*``,
``cutlass::*``, ``flash_fwd_kernel``) of one model share no kernel name, but they share their
operators (``aten::addmm`` of the same input dims and types).

Where both sides are traces with an operator table, each operator signature (name, input
dims, input types) found on both sides pairs the kernels it launched that name matching left
unpaired: the i-th of the baseline's with the i-th of the candidate's, in the order the
operator table lists them (the kernel with the longest dispatch first), so a signature that
launches one kernel a call pairs that kernel, and one that launches several pairs the
longest with the longest. Signatures are visited in the order of the baseline's operator
table (most GPU time first; the first run of each side); a kernel already paired (launched
by several signatures) is not paired again. What is left stays added or removed.
"""

from __future__ import annotations

import msgspec

from roofscope.analysis.ops.operators import OperatorRow, Operators
from roofscope.verify.match import Matching, Pair

BY_OPERATOR = "operator"  # a Pair's ``how``: the names differ, the operator is the same

Signature = tuple[str, str | None, str | None]  # operator name, input dims, input types


class _Left(msgspec.Struct, frozen=True):
    """The kernels name matching left unpaired, each side, in their original order."""

    removed: list[str]
    added: list[str]


def signature(row: OperatorRow) -> Signature:
    return (row.name, row.dims, row.types)


def by_operator(matching: Matching, base: Operators | None, new: Operators | None) -> Matching:
    """``matching`` with the unpaired kernels that the same operator signature launched on
    both sides paired ``by operator``; unchanged where a side has no operator table."""
    if base is None or new is None or not matching.removed or not matching.added:
        return matching
    left = _Left(list(matching.removed), list(matching.added))
    theirs = {signature(r): r for r in new.rows}
    pairs: list[Pair] = []
    for row in base.rows:
        other = theirs.get(signature(row))
        if other is not None:
            pairs += _pair_kernels(row, other, left)
    if not pairs:
        return matching
    return Matching(matching.pairs + tuple(pairs), tuple(left.removed), tuple(left.added))


def _pair_kernels(base: OperatorRow, new: OperatorRow, left: _Left) -> list[Pair]:
    olds = [k for k in base.kernels if k in left.removed]
    news = [k for k in new.kernels if k in left.added]
    pairs = [Pair(b, n, BY_OPERATOR, None) for b, n in zip(olds, news, strict=False)]
    for p in pairs:
        left.removed.remove(p.base)
        left.added.remove(p.new)
    return pairs
