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


def demangle(symbol: str) -> str:
    """The demangled form of an Itanium ``_Z`` symbol, or the symbol itself."""
    if not symbol.startswith("_Z") or (demangler := _cxxfilt()) is None:
        return symbol
    try:
        return str(demangler.demangle(symbol, external_only=False))
    except Exception:
        return symbol


@lru_cache(maxsize=65536)
def normalise(raw: str) -> str:
    """Strip tool suffixes, surrounding quotes and whitespace, then demangle."""
    name = raw.strip()
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1].strip()
    name = _SUFFIX.sub("", name).strip()
    return demangle(name)


# Collective-communication kernels (NCCL on NVIDIA, RCCL on AMD): their time is spent waiting
# on and moving data between GPUs, not computing, and is reported apart from compute kernels.
_COMMUNICATION = re.compile(r"\b(?:nccl|rccl)\w*|^(?:nccl|rccl)", re.IGNORECASE)


def is_communication(kernel: str) -> bool:
    """Whether a (normalised) kernel name is an NCCL/RCCL collective or point-to-point kernel
    (``ncclKernel_AllReduce_…``, ``ncclDevKernel_…``, ``void rccl::…``)."""
    return _COMMUNICATION.search(kernel) is not None
