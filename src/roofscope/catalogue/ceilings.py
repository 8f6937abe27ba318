"""Roofline ceilings: one peak rate each, with where it came from and what it covers.

A ceiling is either compute (FLOP/s, IOP/s for integers) for one data type on the vector or
the matrix units, or memory bandwidth (B/s) of one level (``hbm``, ``l2``, ``lds``, ``vl1d``,
``mall``). Values are SI (not GFLOP/s, not GB/s). ``origin`` orders them when several give
the same ceiling: a user's value beats a measured one, which beats the catalogue's.

A measured ceiling (rocprof-compute's ``roofline.csv``) and a ceilings file (what ``roofscope
peaks`` writes, or a user's own) are what a benchmark reached, a lower bound of what the
hardware can do (:attr:`Ceiling.lower_bound`); ``--peak-flops``/``--peak-bw`` and the
catalogue state the peak itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Literal

import msgspec

from roofscope.catalogue.tomlfile import line_of, read_toml
from roofscope.errors import InputError, UsageError

Kind = Literal["compute", "memory"]
Origin = Literal["user", "measured", "catalogue"]

DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int32", "int64")
INTEGER = ("int8", "int32", "int64")
UNITS = ("vector", "matrix")
LEVELS = ("hbm", "mall", "l2", "vl1d", "lds")
PRECEDENCE: dict[str, int] = {"user": 0, "measured": 1, "catalogue": 2}


class Ceiling(msgspec.Struct, frozen=True):
    kind: Kind
    value: float  # FLOP/s, IOP/s (integers) or B/s
    source: str  # e.g. "catalogue: AMD Instinct MI100 [peaks] ROCm docs", "user: --peak-bw"
    origin: Origin
    scope: str = "device"  # "device", or the partition it covers: "gcd", "xcd"
    dtype: str | None = None  # compute: one of DTYPES
    unit: str | None = None  # compute: "vector" | "matrix"
    level: str | None = None  # memory: one of LEVELS
    from_file: bool = False  # a ceilings file (--ceilings): most often a benchmark's result

    @property
    def lower_bound(self) -> bool:
        """What a benchmark reached (measured, or a ceilings file), not the hardware's peak."""
        return self.origin == "measured" or self.from_file

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
        return "IOP/s" if self.dtype in INTEGER else "FLOP/s"


def is_integer(name: str) -> bool:
    """Whether the compute ceiling (or work key) ``name``, e.g. ``int32-vector``, counts
    integer operations rather than FLOPs."""
    return name.split("-", 1)[0] in INTEGER


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


PLAUSIBLE_PEAK = 1e18  # FLOP/s or B/s: 1 EFLOP/s, 1 EB/s, beyond any single GPU by 50x


def plausible_peak(value: float) -> bool:
    """A peak a GPU can have: finite, positive and below :data:`PLAUSIBLE_PEAK`. Beyond it a
    value is a typo or damage, and it would turn every efficiency into 0 or overflow."""
    return math.isfinite(value) and 0 < value <= PLAUSIBLE_PEAK


def _shown(value: object) -> str:
    """A peak as an error names it, never an exponent: ``10,000,000,000,000,000,000``,
    ``0.00001``, past 21 digits its size (``a 301-digit number``); a value that is no number
    as TOML gave it to Python. (model/words.py words the rest of the messages, but the
    catalogue sits below model.)"""
    if not isinstance(value, float):
        return repr(value)
    if not math.isfinite(value):
        return str(value)  # inf
    if abs(value) >= 1e21:
        return f"a {math.floor(math.log10(abs(value))) + 1}-digit number"
    return f"{value:,.0f}" if abs(value) >= 1 else format(Decimal(repr(value)), "f")


def user_ceilings(peak_flops: float | None, peak_bw: float | None) -> list[Ceiling]:
    """``--peak-flops`` (FP32 vector) and ``--peak-bw`` (HBM), in FLOP/s and B/s."""
    for option, value in (("--peak-flops", peak_flops), ("--peak-bw", peak_bw)):
        if value is not None and not plausible_peak(value):
            raise UsageError(
                f"{option} {_shown(value)}: expected a peak in SI units between 0 and "
                f"{_shown(PLAUSIBLE_PEAK)}, e.g. `22.6e12` FLOP/s or `1.6e12` B/s"
            )
    out = []
    if peak_flops is not None:
        out.append(
            Ceiling(
                "compute", peak_flops, "user: --peak-flops", "user", dtype="fp32", unit="vector"
            )
        )
    if peak_bw is not None:
        out.append(Ceiling("memory", peak_bw, "user: --peak-bw", "user", level="hbm"))
    return out


def read_ceilings_file(path: Path) -> list[Ceiling]:
    """A ceilings file: ``[ceilings]`` maps ``fp32-vector``-style names (FLOP/s) and memory
    levels (B/s) to values; an optional ``scope`` ("device", "gcd", "xcd") and a free-form
    ``[provenance]`` table (what ``roofscope peaks`` writes) are kept in the source."""
    shown = str(path)
    text, doc = read_toml(path, "ceilings file")
    table = doc.get("ceilings")
    if not isinstance(table, dict) or not table:
        raise InputError(
            shown,
            "has no [ceilings] table",
            'add e.g. `[ceilings] hbm = 1.6e12` and `"fp32-vector" = 22.6e12`',
        )
    scope = str(doc.get("scope", "device"))
    method = (
        doc.get("provenance", {}).get("method") if isinstance(doc.get("provenance"), dict) else None
    )
    source = f"user: {shown}" + (f" ({method})" if method else "")
    out = []
    for key, value in table.items():
        line = line_of(text, key)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not plausible_peak(value)
        ):
            raise InputError(
                shown,
                f"ceiling {key} = {_shown(value)} is not a peak (a positive number up to "
                f"{_shown(PLAUSIBLE_PEAK)})",
                "give FLOP/s or B/s in SI units, e.g. `1.6e12`",
                line=line,
            )
        name = key.strip().lower()
        if name in LEVELS:
            out.append(
                Ceiling("memory", float(value), source, "user", scope, level=name, from_file=True)
            )
            continue
        dtype, _, unit = name.partition("-")
        if dtype not in DTYPES or unit not in UNITS:
            raise InputError(
                shown,
                f"unknown ceiling {key!r}",
                f"use a memory level ({', '.join(LEVELS)}) or DTYPE-UNIT "
                f"({', '.join(DTYPES)} x vector|matrix)",
                line=line,
            )
        out.append(
            Ceiling("compute", float(value), source, "user", scope, dtype, unit, from_file=True)
        )
    return out
