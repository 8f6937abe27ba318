"""The plain per-kernel summary CSV ``Name,Count,TotalTimeNs,AverageTimeNs``."""

from __future__ import annotations

from pathlib import Path

from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.io.dispatch_csv import report_rows
from roofscope.readers.io.stats_csv import insert_kernel_summary, parse_stats
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

HEADER = ["Name", "Count", "TotalTimeNs", "AverageTimeNs"]


class SummaryCsv(Reader):
    name = "summary-csv"
    description = "plain kernel summary CSV: Name,Count,TotalTimeNs,AverageTimeNs"
    producer = "summary"
    priority = 85

    def detect(self, head: Head) -> bool:
        return [f.strip() for f in head.fields()] == HEADER

    def role(self, head: Head) -> Role:
        return Role.KERNEL_SUMMARY

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        rows, bad = parse_stats(path, len(HEADER) - 1)
        report_rows(profile, path, bad)
        if not rows:
            raise InputError(str(path), "has no rows", "check that the file holds kernel rows")
        summary = []
        for r in rows:
            calls, total = int(r.values[0] or 0), float(r.values[1] or 0.0)
            summary.append(
                (r.name, calls, total, total / calls if calls else None, None, None, None)
            )
        insert_kernel_summary(profile, profile.begin_input(), summary)
        profile.add_input(str(path), self.name, len(rows), role)
