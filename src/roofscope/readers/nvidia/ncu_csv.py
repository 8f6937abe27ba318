"""Nsight Compute ``ncu --csv`` output (docs/formats/nsight-compute.md).

One reader, ``ncu``, for the three pages ncu writes as CSV (details, raw, per-kernel summary);
the page is told by the header, so ``--format ncu`` needs no page name. Lines around the CSV
(program output, ``==PROF==`` banners) are skipped; a file of banners only fails with its
``==ERROR==`` line. Each launch becomes a dispatch, laid end to end in ncu's order (ncu writes
no timestamps; the input is off the timeline), its shape a launch, its metrics counters in SI
units under raw metric names, its rule rows producer rules; the summary page gives the kernel
summary. The mapping, field by field, is in "Into the model" of that page.

The files are replay measurements: :meth:`Ncu.timed` is False, so beside a timed trace of the
same run the planner may read them as a counter run.

This module holds the reader and the reading of each page's rows; finding the CSV among the
banners is in :mod:`~roofscope.readers.nvidia.ncu_scan`, units and numbers in
:mod:`~roofscope.readers.nvidia.ncu_units`, the details labels in
:mod:`~roofscope.readers.nvidia.ncu_labels` and the launches' way into the model in
:mod:`~roofscope.readers.nvidia.ncu_launches`.
"""

from __future__ import annotations

import math
from pathlib import Path

import msgspec

from roofscope.errors import EmptyInput, InputError
from roofscope.model import words
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.io.stats_csv import SummaryRow, insert_kernel_summary
from roofscope.readers.nvidia.ncu_exports import join_export
from roofscope.readers.nvidia.ncu_labels import DURATION, metric_key
from roofscope.readers.nvidia.ncu_launches import (
    Launch,
    Rule,
    insert_launches,
    new_launch,
    run_info,
)
from roofscope.readers.nvidia.ncu_scan import (
    DETAILS_START,
    REMEDY,
    SUMMARY_START,
    Blocks,
    Columns,
    Scan,
    page_in_file,
    page_of,
)
from roofscope.readers.nvidia.ncu_units import integer, parse_number, to_si
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

# -- the pages ------------------------------------------------------------------------------

_DETAILS_NEEDED: tuple[str, ...] = ("ID", "Process ID", "Kernel Name", "Section Name")
_DETAILS_NEEDED += ("Metric Name", "Metric Unit", "Metric Value")
_RAW_NEEDED = ("ID", "Process ID", "Kernel Name")
_IDENTITY = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time"}
_IDENTITY |= {"Context", "Stream", "Block Size", "Grid Size", "Device", "CC"}
_SUMMARY_NEEDED: tuple[str, ...] = ("Process ID", "Kernel Name", "Invocations", "Metric Name")
_SUMMARY_NEEDED += ("Metric Unit",)
_SUMMARY_NEEDED += ("Minimum", "Maximum", "Average")


class Notes(msgspec.Struct):
    """What was noticed while reading, reported once per file."""

    units: dict[str, int] = msgspec.field(default_factory=dict)
    conflicts: int = 0
    cut: int | None = None  # the line of a last row that was cut short

    def unit(self, unit: str) -> None:
        self.units[unit] = self.units.get(unit, 0) + 1

    def report(self, profile: Profile, path: Path) -> None:
        if self.units:
            shown = ", ".join(f"{u!r} ({n})" for u, n in sorted(self.units.items()))
            profile.warn(
                "ncu-unknown-unit",
                f"{path}: values in units roofscope does not know were kept as written: {shown}",
                sum(self.units.values()),
            )
        if self.conflicts:
            profile.warn(
                "ncu-duplicate-metric",
                f"{path}: {words.count(self.conflicts, 'metric')} given twice for one launch "
                "with different values; the first is kept",
                self.conflicts,
            )
        if self.cut is not None:
            profile.warn(
                "ncu-truncated",
                f"{path}:{self.cut}: the last CSV row is cut short (file truncated); it is "
                "left out",
            )


def put(launch: Launch, key: str, text: str, unit: str, notes: Notes) -> None:
    value, known = to_si(text, unit)
    if not known and value is not None:
        notes.unit(unit)
    if value is None:
        if text.strip() and key not in launch.texts:
            launch.texts[key] = text
        return
    old = launch.metrics.setdefault(key, value)
    if old != value and not math.isclose(old, value, rel_tol=1e-9):
        notes.conflicts += 1


def read_details(path: Path, scan: Scan, notes: Notes) -> list[Launch]:
    launches: dict[tuple[int, int], Launch] = {}
    blocks = Blocks(path, scan, DETAILS_START, _DETAILS_NEEDED)
    for line, cols, row in blocks.rows():
        if not row:
            continue
        launch = new_launch(path, cols, row, line)
        launch = launches.setdefault((launch.pid, launch.id), launch)
        if label := cols.get(row, "Metric Name"):
            section, body = cols.get(row, "Section Name"), cols.get(row, "Body Item Label")
            key = metric_key(section, body, label)
            put(launch, key, cols.get(row, "Metric Value"), cols.get(row, "Metric Unit"), notes)
        if rule := cols.get(row, "Rule Name"):
            launch.rules.append(_rule(cols, row, rule))
    notes.cut = blocks.cut
    return list(launches.values())


def _rule(cols: Columns, row: list[str], rule: str) -> Rule:
    speedup = cols.get(row, "Estimated Speedup")
    return (
        cols.get(row, "Section Name"),
        rule,
        cols.get(row, "Rule Type"),
        cols.get(row, "Rule Description"),
        cols.get(row, "Estimated Speedup Type") or None,
        parse_number(speedup) if speedup else None,
    )


def read_raw(path: Path, scan: Scan, notes: Notes) -> list[Launch]:
    launches: list[Launch] = []
    units: list[str] = []
    blocks = Blocks(path, scan, DETAILS_START, _RAW_NEEDED)
    for line, cols, row in blocks.rows(full=True):
        if not row:
            units = []
        elif not units and not cols.get(row, "ID").strip():
            units = row
        else:
            launch = new_launch(path, cols, row, line)
            for i, name in enumerate(cols.names):
                if name not in _IDENTITY:
                    put(launch, name, row[i], units[i] if i < len(units) else "", notes)
            launches.append(launch)
    notes.cut = blocks.cut
    return launches


_GROUP = ("Process ID", "Kernel Name", "Block Size", "Grid Size", "Device")


def read_summary(path: Path, scan: Scan, notes: Notes) -> list[tuple[int, SummaryRow | None]]:
    """(pid, kernel_summary row) per kernel group; None for a group without a duration."""
    groups: dict[tuple[str, ...], dict[str, tuple[float, float, float]]] = {}
    calls: dict[tuple[str, ...], int] = {}
    blocks = Blocks(path, scan, SUMMARY_START, _SUMMARY_NEEDED)
    for line, cols, row in blocks.rows():
        if not row:
            continue
        key = tuple(cols.get(row, c) for c in _GROUP)
        n, pid = integer(cols.get(row, "Invocations")), integer(key[0])
        if n is None or pid is None:
            raise InputError(
                str(path), "Process ID or Invocations is not an integer", REMEDY, line=line
            )
        calls[key] = n
        stats = _stats(cols, row, notes)
        label = metric_key(cols.get(row, "Section Name"), "", cols.get(row, "Metric Name"))
        metrics = groups.setdefault(key, {})
        if stats is not None:
            metrics[label] = stats
    notes.cut = blocks.cut
    return [(int(key[0]), _summary_row(key, calls[key], m)) for key, m in groups.items()]


def _stats(cols: Columns, row: list[str], notes: Notes) -> tuple[float, float, float] | None:
    """(average, minimum, maximum) in SI units, or None when one is not a number."""
    unit = cols.get(row, "Metric Unit")
    got = [to_si(cols.get(row, c), unit) for c in ("Average", "Minimum", "Maximum")]
    if not all(known for _, known in got):
        notes.unit(unit)
    (mean, _), (low, _), (high, _) = got
    if mean is None or low is None or high is None:
        return None
    return mean, low, high


_SUMMARY_DURATIONS = (
    DURATION,
    "gpu__time_duration.avg",
    "gpu__time_active.sum",
    "gpu__time_active.avg",
)


def _summary_row(
    key: tuple[str, ...], calls: int, metrics: dict[str, tuple[float, float, float]]
) -> SummaryRow | None:
    found = next((metrics[m] for m in _SUMMARY_DURATIONS if m in metrics), None)
    if found is None:
        return None
    mean, low, high = (v * 1e9 for v in found)
    return key[1], calls, mean * calls, mean, low, high, None


class Ncu(Reader):
    name = "ncu"
    description = (
        "Nsight Compute `ncu --csv` output: details page, raw page (--page raw) or "
        "--print-summary per-kernel"
    )
    producer = "ncu"
    priority = 40
    exports = True

    def detect(self, head: Head) -> bool:
        return head.kind == "text" and page_of(head.text) is not None

    def role(self, head: Head) -> Role:
        return Role.KERNEL_SUMMARY if page_of(head.text) == "summary" else Role.DISPATCHES

    def timed(self, head: Head) -> bool:
        return False

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        scan, notes = Scan(path), Notes()
        page = page_in_file(path, scan)
        if page == "summary":
            self._read_summary(path, scan, notes, profile, role)
        else:
            read = read_raw if page == "raw" else read_details
            launches = read(path, scan, notes)
            if not launches:
                raise EmptyInput(str(path), "has an ncu header but no kernel launches", REMEDY)
            if not join_export(profile, path, launches, fmt=self.name):
                insert_launches(profile, path, launches, role, fmt=self.name)
                profile.set_run(run_info(launches, producer=self.producer))
        notes.report(profile, path)

    def _read_summary(
        self, path: Path, scan: Scan, notes: Notes, profile: Profile, role: Role
    ) -> None:
        rows = read_summary(path, scan, notes)
        timed = [(pid, r) for pid, r in rows if r is not None]
        if not timed:
            raise InputError(
                str(path),
                "has no duration metric (gpu__time_duration.sum) in its per-kernel summary",
                "re-run ncu --print-summary per-kernel with --metrics gpu__time_duration.sum",
            )
        source = profile.begin_input()
        for pid in dict.fromkeys(pid for pid, _ in timed):
            mine = [r for p, r in timed if p == pid]
            insert_kernel_summary(profile, source, mine, pid=pid)
        if len(timed) < len(rows):
            profile.warn(
                "ncu-no-duration",
                f"{path}: {words.count(len(rows) - len(timed), 'kernel')} without a duration "
                "metric left out",
                len(rows) - len(timed),
            )
        profile.add_input(str(path), self.name, len(timed), role, on_timeline=False)
        profile.set_run(RunInfo(producer=self.producer))
