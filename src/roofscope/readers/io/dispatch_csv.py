"""Read a dispatch CSV end to end: fast load, Python fix-up of rejected rows, warnings."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model import words
from roofscope.model.profile import Profile
from roofscope.model.schema import Role, barriers_role
from roofscope.readers.io.csv_layout import CsvLayout
from roofscope.readers.io.csvload import barrier_rows, insert_rows, load_dispatch_csv
from roofscope.readers.io.no_kernels import HEADER_ONLY_REMEDY, no_kernel_ran
from roofscope.readers.io.rowfix import fix_rows, read_lines

SHOWN_LINES = 5


def read_dispatch_csv(
    profile: Profile, path: Path, layout: CsvLayout, *, fmt: str, role: Role
) -> int:
    """Load ``path`` as dispatches; malformed rows are skipped and reported with their lines."""
    source = profile.begin_input()
    result = load_dispatch_csv(profile, path, layout, source)
    recovered = 0
    if result.rejected:
        fixed = fix_rows(read_lines(path, result.rejected), layout.columns, layout.name)
        recovered = insert_rows(profile, fixed.rows, layout, source, path)
        report_rows(profile, path, fixed.malformed, fixed.not_utf8)
    barriers = barrier_rows(profile, layout, source)
    rows = result.rows + recovered - barriers
    if rows + barriers == 0 and not result.rejected and header_only(path):  # traced none
        raise no_kernel_ran(str(path), "its header and no dispatch row", HEADER_ONLY_REMEDY)
    if rows == 0:
        raise InputError(
            str(path),
            f"has no dispatch rows (header only, {words.count(barriers, 'barrier packet')}, "
            "or every row malformed)"
            if barriers
            else "has no dispatch rows (header only, or every row malformed)",
            "check that the profiled program launched kernels and the profiler finished",
        )
    profile.add_input(str(path), fmt, rows, role)
    add_barrier_input(profile, str(path), fmt, barriers, role)
    if "device" in layout.mapping:
        profile.warn_deviceless(path, source, "their GPU id is empty or not a number")
    return rows


def add_barrier_input(profile: Profile, path: str, fmt: str, rows: int, role: Role) -> None:
    """Register the barrier packets of the input just added (their rows carry the next
    source id); role ``barriers`` beside a file read for its dispatches, which is the one
    the report counts (a counter run's barriers are the same ones again)."""
    if rows:
        profile.add_input(path, fmt, rows, barriers_role(role))


def report_rows(
    profile: Profile,
    path: Path,
    malformed: Sequence[tuple[int, str]],
    not_utf8: Sequence[int] = (),
) -> None:
    """Warnings for rows that were dropped (with their line numbers) or shown with U+FFFD."""
    truncated = [n for n, why in malformed if why == "truncated last row"]
    other = [(n, why) for n, why in malformed if why != "truncated last row"]
    if truncated:
        profile.warn(
            "truncated-last-row",
            f"{path}:{truncated[0]}: the last row is cut short (the profiler was stopped while "
            "writing) and was dropped",
        )
    if other:
        shown = ", ".join(f"line {n} ({why})" for n, why in other[:SHOWN_LINES])
        more = f" and {len(other) - SHOWN_LINES} more" if len(other) > SHOWN_LINES else ""
        profile.warn(
            "malformed-row",
            f"{path}: {words.count(len(other), 'malformed row')} skipped: {shown}{more}",
            count=len(other),
        )
    if not_utf8:
        lines = ", ".join(str(n) for n in not_utf8[:SHOWN_LINES])
        profile.warn(
            "not-utf8",
            f"{path}: kernel names with bytes that are not UTF-8 on "
            f"{words.plural(len(not_utf8), 'line')} {lines}; "
            "they are shown with U+FFFD in their place",
            count=len(not_utf8),
        )


def header_only(path: Path, chunk: int = 1 << 20) -> bool:
    """Whether nothing but blank lines follows the first line (read until the first byte that
    says otherwise, never a whole long line)."""
    with path.open("rb") as f:
        seen_header = False
        while data := f.read(chunk):
            if not seen_header:
                newline = data.find(b"\n")
                if newline < 0:
                    continue
                seen_header, data = True, data[newline + 1 :]
            if data.strip():
                return False
    return True
