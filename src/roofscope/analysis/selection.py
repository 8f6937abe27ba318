"""Which dispatches and summary rows an analysis looks at (``--kernel``, ``--device``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from roofscope.errors import UsageError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role


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
    sources = profile.sources(Role.DISPATCHES)
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
    sources = profile.sources(Role.KERNEL_SUMMARY)
    if not sources or selection.device is not None:
        return "FALSE"
    return f"source IN ({', '.join(map(str, sources))}) AND {name_filter(profile, selection)}"


def require_some(profile: Profile, selection: Selection) -> None:
    """A UsageError when ``--kernel``/``--device`` leave nothing of a profile that has rows."""
    if selection.kernel is None and selection.device is None:
        return
    con = profile.con

    def count(table: str, where: str) -> int:
        row = con.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()
        return int(row[0]) if row else 0

    if count("dispatches", dispatch_filter(profile, selection)) or count(
        "kernel_summary", summary_filter(profile, selection)
    ):
        return
    everything = Selection(sources=selection.sources)
    if not (
        count("dispatches", dispatch_filter(profile, everything))
        or count("kernel_summary", summary_filter(profile, everything))
    ):
        return  # nothing to select from: the report says so
    devices = con.execute(
        f"SELECT DISTINCT device FROM dispatches WHERE {dispatch_filter(profile, everything)} "
        "AND device IS NOT NULL ORDER BY 1"
    ).fetchall()
    given = [f"--kernel {selection.kernel!r}"] if selection.kernel is not None else []
    given += [f"--device {selection.device}"] if selection.device is not None else []
    known = ", ".join(str(d[0]) for d in devices) or "none named"
    raise UsageError(
        f"{' '.join(given)}: selects nothing of the profile (its devices: {known}); "
        "widen the selection (--kernel searches the normalised kernel names)"
    )
