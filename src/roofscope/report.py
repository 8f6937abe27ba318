"""The check-up of one profile: everything the renderers show, computed once."""

from __future__ import annotations

from dataclasses import dataclass

from roofscope.analysis.checks import check
from roofscope.analysis.hotspots import Hotspots, hotspots
from roofscope.analysis.selection import EVERYTHING, Selection
from roofscope.analysis.timeline import DEFAULT_GAP_NS, Timeline, timeline
from roofscope.model import InputFile, Profile, RunInfo, Warning


@dataclass(frozen=True)
class Activity:
    kind: str  # api | copy
    name: str
    calls: int
    total_ns: float


@dataclass(frozen=True)
class Report:
    inputs: tuple[InputFile, ...]
    run: RunInfo
    hotspots: Hotspots
    timeline: Timeline | None
    activity: tuple[Activity, ...]
    warnings: tuple[Warning, ...]
    selection: Selection


def analyse(
    profile: Profile, *, selection: Selection = EVERYTHING, gap_threshold_ns: int = DEFAULT_GAP_NS
) -> Report:
    notes = []
    if selection.device is not None and profile.sources("kernel-summary"):
        notes.append(
            Warning(
                "device-filter-summary",
                "--device leaves out the stats-file kernels: a "
                "summary does not say which device ran them",
            )
        )
    warnings = [*profile.warnings, *check(profile), *notes]
    return Report(
        inputs=tuple(profile.inputs),
        run=profile.run,
        hotspots=hotspots(profile, selection=selection),
        timeline=timeline(profile, selection=selection, gap_threshold_ns=gap_threshold_ns),
        activity=_activity(profile),
        warnings=tuple(_merge(warnings)),
        selection=selection,
    )


def _activity(profile: Profile) -> tuple[Activity, ...]:
    rows = profile.con.execute("""SELECT kind, name, sum(calls), sum(total_ns)
        FROM activity_summary GROUP BY kind, name ORDER BY kind, sum(total_ns) DESC, name""")
    out = [Activity(str(k), str(n), int(c), float(t)) for k, n, c, t in rows.fetchall()]
    copies = profile.con.execute("""SELECT direction, count(*), sum(end_ns - start_ns)
        FROM copies GROUP BY direction ORDER BY 3 DESC""").fetchall()
    out += [Activity("copy", str(d), int(c), float(t or 0)) for d, c, t in copies]
    return tuple(out)


def _merge(warnings: list[Warning]) -> list[Warning]:
    """One entry per (code, message); repeated identical findings add their counts."""
    merged: dict[tuple[str, str], int] = {}
    for w in warnings:
        merged[(w.code, w.message)] = merged.get((w.code, w.message), 0) + w.count
    return [Warning(code, message, count) for (code, message), count in merged.items()]
