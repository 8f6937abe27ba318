"""roofscope: a full check-up of GPU programs from the files their profiler already wrote.

    import roofscope
    report = roofscope.analyze("results.csv")      # what `roofscope analyze` reads
    report.to_pandas()                              # one row per kernel (roofscope[notebook])
    roofscope.compare("before/", "after/").gate(fail_if_slower=5)

The names below load on first use, so ``import roofscope`` (and ``roofscope --version``)
reads neither DuckDB nor numpy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from roofscope.version import __version__

if TYPE_CHECKING:
    from roofscope.api.comparison import Comparison
    from roofscope.api.report import Report, Summary
    from roofscope.api.run import analyze, compare
    from roofscope.errors import InputError, RoofscopeError, UsageError
    from roofscope.verify.gate import Verdict

_WHERE = {
    "analyze": "roofscope.api.run",
    "compare": "roofscope.api.run",
    "Report": "roofscope.api.report",
    "Summary": "roofscope.api.report",
    "Comparison": "roofscope.api.comparison",
    "Verdict": "roofscope.verify.gate",
    "InputError": "roofscope.errors",
    "UsageError": "roofscope.errors",
    "RoofscopeError": "roofscope.errors",
}

__all__ = [
    "Comparison",
    "InputError",
    "Report",
    "RoofscopeError",
    "Summary",
    "UsageError",
    "Verdict",
    "__version__",
    "analyze",
    "compare",
]


def __getattr__(name: str) -> Any:
    """The public names, imported when first asked for (PEP 562)."""
    if name not in _WHERE:
        raise AttributeError(f"module 'roofscope' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
