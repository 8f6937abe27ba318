"""Work given by the user: ``--work NAME=FLOPS:BYTES[@DTYPE]`` or ``--work FILE.toml``.

Inline values are totals for the kernel, FP32 vector work on HBM unless the suffix names
another data type (``@fp16``) or unit (``@fp16-matrix``). A work file lists rules, the first
whose regex is found in a kernel's name wins::

    [constants]
    N = 4096

    [[kernel]]
    match = "gemm"                 # regex, searched in the normalised kernel name
    per = "call"                   # "call" (default) or "total"
    dtype = "fp16-matrix"          # optional: the ceiling the flops run on (default fp32-vector)
    flops = "2 * N * N * N"        # number, or arithmetic over constants and launch fields
    bytes = "3 * N * N * 2"        # HBM bytes; or a table: bytes = { hbm = "...", l2 = "..." }

Per call, expressions may use the launch fields of each dispatch (``grid_size``,
``workgroup_size``, ``lds_bytes``, ``scratch_bytes``, ``arch_vgpr``, ``accum_vgpr``, ``sgpr``,
``wave_size``); the kernel's total is the sum over its launches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from roofscope.analysis.work.expr import ExprError, evaluate, names_in
from roofscope.catalogue.ceilings import DTYPES, LEVELS, UNITS
from roofscope.catalogue.tomlfile import line_of, read_toml
from roofscope.errors import InputError, UsageError
from roofscope.model import words
from roofscope.model.schema import LAUNCH_COLUMNS

# a kernel's total FLOPs or bytes: a GPU at 1 EFLOP/s for 11 days; beyond it a number is a
# typo or an overflow, and its rates would not be finite
PLAUSIBLE_WORK = 1e24
LAUNCH_FIELDS = tuple(c for c in LAUNCH_COLUMNS if c not in ("tid", "queue", "stream"))
_INLINE = re.compile(r"^(?P<name>[^=]+)=(?P<flops>[^:@]+):(?P<bytes>[^:@]+)(?:@(?P<dtype>\S+))?$")


class Rule(msgspec.Struct, frozen=True):
    """One way of computing a kernel's work; ``match`` selects the kernels."""

    match: re.Pattern[str]
    per: str  # "call" | "total"
    flops: Mapping[str, str]  # ceiling name -> expression
    bytes: Mapping[str, str]  # level -> expression
    origin: str  # where it was written, for messages and provenance
    exact: bool = False  # inline rules match a whole name (or its base name)
    constants: Mapping[str, float] = msgspec.field(default_factory=dict)
    given: str | None = None  # an inline rule's text as the caller wrote it (NAME=FLOPS:BYTES)

    def matches(self, kernel: str) -> bool:
        if self.exact:
            return self.match.fullmatch(kernel) is not None or (
                self.match.fullmatch(base_name(kernel)) is not None
            )
        return self.match.search(kernel) is not None


def base_name(kernel: str) -> str:
    """``void ns::gemm<float, 4>(float*, int)`` -> ``gemm``: the function's own name."""
    cut = min((i for i in (kernel.find("<"), kernel.find("(")) if i > 0), default=len(kernel))
    return kernel[:cut].strip().split(" ")[-1].split("::")[-1]


def ceiling_name(text: str, *, where: str) -> str:
    """``fp16`` -> ``fp16-vector``; ``fp16-matrix`` stays; anything else is an error."""
    dtype, _, unit = text.strip().lower().partition("-")
    if dtype not in DTYPES or (unit and unit not in UNITS):
        raise UsageError(
            f"{where}: data type {text!r} is not one of "
            f"{', '.join(DTYPES)} (optionally -vector or -matrix)"
        )
    return f"{dtype}-{unit or 'vector'}"


def parse_inline(text: str) -> Rule:
    """``NAME=FLOPS:BYTES[@DTYPE]`` (totals for the kernel)."""
    m = _INLINE.match(text.strip())
    where = f"--work {text!r}"
    if m is None:
        raise UsageError(f"{where}: expected NAME=FLOPS:BYTES[@DTYPE], e.g. gemm=2.6e10:6e8@fp16")
    for part in ("flops", "bytes"):
        try:
            value = float(m.group(part))
        except ValueError:
            raise UsageError(f"{where}: {part} {m.group(part)!r} is not a number") from None
        if not (math.isfinite(value) and 0 <= value <= PLAUSIBLE_WORK):
            raise UsageError(
                f"{where}: {part} must be a number from 0 to {words.sig(PLAUSIBLE_WORK)}"
            )
    dtype = ceiling_name(m.group("dtype") or "fp32", where=where)
    return Rule(
        match=re.compile(re.escape(m.group("name").strip())),
        per="total",
        flops={dtype: m.group("flops")},
        bytes={"hbm": m.group("bytes")},
        origin=f"--work {m.group('name').strip()}",
        exact=True,
        given=text,
    )


def read_work_file(path: Path) -> list[Rule]:
    """The rules of a work file, every expression checked before any is used."""
    shown = str(path)
    text, doc = read_toml(path, "work file")
    constants = doc.get("constants", {})
    if not isinstance(constants, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in constants.values()
    ):
        raise InputError(
            shown,
            "[constants] must map names to numbers",
            "write e.g. N = 4096",
            line=line_of(text, "[constants]"),
        )
    kernels = doc.get("kernel", [])
    if not isinstance(kernels, list) or not kernels:
        raise InputError(
            shown, "has no [[kernel]] rules", "add [[kernel]] tables with match/flops/bytes"
        )
    rules = [_rule(shown, text, i, k, constants) for i, k in enumerate(kernels)]
    _refuse_unknown(
        shown, text, doc, {"constants", "kernel"}, "has unknown table",
        "use [constants] and [[kernel]] only",
    )  # fmt: skip
    return rules


def _rule(shown: str, text: str, index: int, k: object, constants: Mapping[str, float]) -> Rule:
    where = f"[[kernel]] #{index + 1}"
    if not isinstance(k, dict) or not isinstance(k.get("match"), str):
        raise InputError(
            shown,
            f'{where} has no match = "REGEX"',
            "give each rule a match",
            line=_nth(text, "[[kernel]]", index),
        )
    try:
        pattern = re.compile(k["match"])
    except re.error as e:
        raise InputError(
            shown,
            f"{where}: match {k['match']!r} is not a regex ({e})",
            "fix the pattern",
            line=line_of(text, k["match"]),
        ) from None
    per = k.get("per", "call")
    if per not in ("call", "total"):
        raise InputError(
            shown,
            f"{where}: per = {per!r}",
            'use per = "call" or per = "total"',
            line=line_of(text, "per"),
        )
    dtype = ceiling_name(str(k.get("dtype", "fp32")), where=f"{shown}: {where}")
    allowed = set(constants) | ({"calls", *LAUNCH_FIELDS} if per == "call" else {"calls"})
    flops = _exprs(shown, text, where, k.get("flops"), dtype, allowed, kind="flops")
    nbytes = _exprs(shown, text, where, k.get("bytes"), "hbm", allowed, kind="bytes")
    keys = {"match", "per", "dtype", "flops", "bytes"}
    _refuse_unknown(
        shown, text, k, keys, f"{where} has unknown key", "use match, per, dtype, flops, bytes"
    )
    return Rule(pattern, per, flops, nbytes, origin=f"{shown} {where}", constants=constants)


def _refuse_unknown(
    shown: str, text: str, found: Mapping[str, object], allowed: set[str], what: str, remedy: str
) -> None:
    """One line naming the unknown tables or keys (``what`` their singular noun phrase, ``has
    unknown table``), and the first one's line."""
    unknown = sorted(set(found) - allowed)
    if unknown:
        named = f"{words.plural(len(unknown), what)} {', '.join(unknown)}"
        raise InputError(shown, named, remedy, line=line_of(text, unknown[0]))


def _exprs(
    shown: str,
    text: str,
    where: str,
    value: object,
    default_key: str,
    allowed: set[str],
    *,
    kind: str,
) -> dict[str, str]:
    if value is None:
        return {}
    table = value if isinstance(value, dict) else {default_key: value}
    out: dict[str, str] = {}
    for key, expr in table.items():
        name = key
        if kind == "flops" and isinstance(value, dict):
            name = ceiling_name(key, where=f"{shown}: {where}")
        elif kind == "bytes" and key not in LEVELS:
            raise InputError(
                shown,
                f"{where}: bytes level {key!r}",
                f"use one of {', '.join(LEVELS)}",
                line=line_of(text, key),
            )
        source = str(expr) if isinstance(expr, int | float) and not isinstance(expr, bool) else expr
        if not isinstance(source, str):
            raise InputError(
                shown,
                f"{where}: {kind} {expr!r} is neither a number nor an expression",
                "write a number or a quoted expression",
                line=line_of(text, kind),
            )
        try:
            used = names_in(source)
        except ExprError as e:
            raise InputError(
                shown,
                f"{where}: {kind} {source[:60]!r}: {e}",
                "use plain arithmetic",
                line=line_of(text, source),
            ) from None
        if used - allowed:
            raise InputError(
                shown,
                f"{where}: {kind} uses unknown {words.plural(len(used - allowed), 'name')} "
                f"{', '.join(sorted(used - allowed))}",
                "define them under [constants]; per-call rules may also use "
                + ", ".join(LAUNCH_FIELDS),
                line=line_of(text, source),
            )
        out[name] = source
    return out


def _nth(text: str, needle: str, index: int) -> int | None:
    seen = -1
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith(needle):
            seen += 1
            if seen == index:
                return number
    return None


def evaluate_rule(
    rule: Rule, launches: Sequence[Mapping[str, float | None]], calls: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Total FLOPs per ceiling and bytes per level for a kernel of ``calls`` dispatches.

    ``launches`` has one mapping per distinct launch shape, with its ``dispatches`` count;
    only per-call expressions that use launch fields need them.
    """

    def total(expr: str) -> float:
        known = {"calls": float(calls), **rule.constants}
        if rule.per == "total":
            return evaluate(expr, known)
        needed = names_in(expr) & set(LAUNCH_FIELDS)
        if not needed:
            return evaluate(expr, known) * calls
        if not launches:
            raise ExprError(f"the input gives no launch fields ({', '.join(sorted(needed))})")
        out = 0.0
        for shape in launches:
            missing = sorted(n for n in needed if shape.get(n) is None)
            if missing:
                raise ExprError(f"the input does not give {', '.join(missing)}")
            values = {n: float(shape[n] or 0) for n in needed}
            out += evaluate(expr, {**known, **values}) * float(shape.get("dispatches") or 0)
        return out

    flops = {k: _plausible(total(e), f"{k} FLOPs") for k, e in rule.flops.items()}
    return flops, {k: _plausible(total(e), f"{k} bytes") for k, e in rule.bytes.items()}


def _plausible(value: float, what: str) -> float:
    """A kernel's total work: finite, not negative, and at most :data:`PLAUSIBLE_WORK`."""
    if not (math.isfinite(value) and 0 <= value <= PLAUSIBLE_WORK):
        raise ExprError(
            f"{what} come to {words.sized(value)} for the kernel, outside 0 to "
            f"{words.sig(PLAUSIBLE_WORK)}"
        )
    return value
