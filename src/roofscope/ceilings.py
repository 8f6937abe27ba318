"""Roofline ceilings: one peak rate each, with where it came from and what it covers.

A ceiling is either compute (FLOP/s, OP/s for integers) for one data type on the vector or
the matrix units, or memory bandwidth (B/s) of one level (``hbm``, ``l2``, ``lds``, ``vl1d``,
``mall``). Values are SI (not GFLOP/s, not GB/s). ``origin`` orders them when several give
the same ceiling: a user's value beats a measured one, which beats the catalogue's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Kind = Literal["compute", "memory"]
Origin = Literal["user", "measured", "catalogue"]

DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
UNITS = ("vector", "matrix")
LEVELS = ("hbm", "mall", "l2", "vl1d", "lds")
PRECEDENCE: dict[str, int] = {"user": 0, "measured": 1, "catalogue": 2}


@dataclass(frozen=True)
class Ceiling:
    kind: Kind
    value: float  # FLOP/s, OP/s (int8) or B/s
    source: str  # e.g. "catalogue: AMD Instinct MI100 [peaks] ROCm docs", "user: --peak-bw"
    origin: Origin
    scope: str = "device"  # "device", or the partition it covers: "gcd", "xcd"
    dtype: str | None = None  # compute: one of DTYPES
    unit: str | None = None  # compute: "vector" | "matrix"
    level: str | None = None  # memory: one of LEVELS

    @property
    def key(self) -> tuple[str, str | None, str | None, str | None]:
        """What the ceiling is a peak of; two ceilings with one key compete by origin."""
        return (self.kind, self.dtype, self.unit, self.level)

    @property
    def name(self) -> str:
        if self.kind == "memory":
            return str(self.level)
        return f"{self.dtype}-{self.unit}"

    @property
    def unit_of_value(self) -> str:
        if self.kind == "memory":
            return "B/s"
        return "OP/s" if self.dtype == "int8" else "FLOP/s"


def resolve(*layers: Iterable[Ceiling]) -> list[Ceiling]:
    """One ceiling per key: the user's over a measured one over the catalogue's."""
    best: dict[tuple[str, str | None, str | None, str | None], Ceiling] = {}
    for c in (c for layer in layers for c in layer):
        held = best.get(c.key)
        if held is None or PRECEDENCE[c.origin] < PRECEDENCE[held.origin]:
            best[c.key] = c
    return sorted(best.values(), key=_order)


def _order(c: Ceiling) -> tuple[int, int, int, int]:
    if c.kind == "compute":
        return (0, DTYPES.index(c.dtype or "fp32"), UNITS.index(c.unit or "vector"), 0)
    return (1, 0, 0, LEVELS.index(c.level or "hbm"))
