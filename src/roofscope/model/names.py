"""Kernel identity: the normalised name under which dispatches of one kernel are grouped.

Profilers decorate the same kernel differently: rocprof v1 appends `` [clone .kd]`` or
``.kd``, rocprofv2 via Omniperf `` (.kd)``, some producers keep the mangled ``_Z`` symbol.
The normalised name strips those suffixes and demangles, so that names from different
tools and versions join; the raw name is always kept beside it.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

_SUFFIX = re.compile(r"(?:\s*\[clone \.kd\]|\s*\(\.kd\)|\.kd)$")


@cache
def _cxxfilt() -> Any:
    """libstdc++'s demangler, the same as c++filt, loaded at the first mangled name: finding
    the library costs some 25 ms that profiles of demangled names need not pay; None where
    libstdc++ cannot be loaded."""
    try:
        import cxxfilt
    except Exception:  # pragma: no cover - only where libstdc++ cannot be loaded
        return None
    return cxxfilt


# C++23 extended floating-point types, which libstdc++ before 13 cannot demangle (aiter's
# kernels on MI300X: ``_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16b...``): retried as the
# vendor types the compilers name them (``__bf16``, ``_Float16``).
_EXTENDED_FLOAT = re.compile(r"DF16b|DF(\d+)_")


def _vendor_type(m: re.Match[str]) -> str:
    name = "__bf16" if m.group(1) is None else f"_Float{m.group(1)}"
    return f"u{len(name)}{name}"


def demangle(symbol: str) -> str:
    """The demangled form of an Itanium ``_Z`` symbol; where the demangler refuses it, its
    qualified name with the rest as written (:func:`qualified_name`), else the symbol
    itself."""
    if not symbol.startswith("_Z") or (demangler := _cxxfilt()) is None:
        return symbol
    for attempt in (symbol, _EXTENDED_FLOAT.sub(_vendor_type, symbol)):
        try:
            return str(demangler.demangle(attempt, external_only=False))
        except Exception:
            continue
    return qualified_name(symbol) or symbol


_NESTED = re.compile(r"_ZN[rVKRO]*")
_LENGTH = re.compile(r"\d+")


def qualified_name(symbol: str) -> str | None:
    """``ns::name<rest>`` from a symbol's leading length-prefixed names and the rest of the
    symbol as written (template arguments, parameters), for the symbols libstdc++'s demangler
    refuses: Clang 17's C++20 manglings such as ``Tn`` (a template
    parameter's declared type), in SGLang's ``_ZN7sgl_hip10activation18act_and_mul_kernelI
    14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i`` (MI300X); None where
    the symbol starts with no name."""
    nested = _NESTED.match(symbol)
    at = nested.end() if nested else 2
    parts = []
    while (length := _LENGTH.match(symbol, at)) is not None:
        size, at = int(length.group()), length.end()
        if size == 0 or at + size > len(symbol):
            return None
        parts.append(symbol[at : at + size])
        at += size
    if not parts:
        return None
    qualified, rest = "::".join(parts), symbol[at:]
    # the rest kept as written: two symbols that differ only there stay two kernels
    if rest.startswith("I"):
        return f"{qualified}<{rest[1:]}>"
    return f"{qualified} [{rest}]" if rest else qualified


@lru_cache(maxsize=65536)
def normalise(raw: str) -> str:
    """Strip tool suffixes, surrounding quotes and whitespace, then demangle."""
    name = raw.strip()
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1].strip()
    name = _SUFFIX.sub("", name).strip()
    return demangle(name)
