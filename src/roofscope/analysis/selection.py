"""Which dispatches and summary rows an analysis looks at (``--kernel``, ``--device``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from roofscope.errors import UsageError
from roofscope.model import Profile


@dataclass(frozen=True)
class Selection:
    """Kernel-name regex (searched in the normalised name) and device id; None = all."""

    kernel: str | None = None
    device: int | None = None
    sources: tuple[int, ...] | None = None  # restrict to these inputs (cross-checks)

    def pattern(self) -> re.Pattern[str] | None:
        if self.kernel is None:
            return None
        try:
            return re.compile(self.kernel)
        except re.error as exc:
            raise UsageError(
                f"--kernel {self.kernel!r}: not a valid regular expression ({exc})"
            ) from None


EVERYTHING = Selection()


def name_filter(profile: Profile, selection: Selection) -> str:
    """SQL condition on ``name_id`` for the kernel regex ('TRUE' when there is none)."""
    pattern = selection.pattern()
    if pattern is None:
        return "TRUE"
    rows = profile.con.execute("SELECT name_id, kernel FROM names").fetchall()
    ids = [str(i) for i, kernel in rows if pattern.search(kernel)]
    return f"name_id IN ({', '.join(ids)})" if ids else "FALSE"


def dispatch_filter(profile: Profile, selection: Selection) -> str:
    """SQL WHERE condition over ``dispatches`` for the analysed sources and the selection."""
    sources = profile.sources("dispatches")
    if selection.sources is not None:
        sources = [s for s in sources if s in selection.sources]
    parts = [
        f"source IN ({', '.join(map(str, sources))})" if sources else "FALSE",
        name_filter(profile, selection),
    ]
    if selection.device is not None:
        parts.append(f"device = {int(selection.device)}")
    return " AND ".join(parts)


def summary_filter(profile: Profile, selection: Selection) -> str:
    """SQL WHERE condition over ``kernel_summary`` (summaries have no device)."""
    sources = profile.sources("kernel-summary")
    if not sources or selection.device is not None:
        return "FALSE"
    return f"source IN ({', '.join(map(str, sources))}) AND {name_filter(profile, selection)}"
