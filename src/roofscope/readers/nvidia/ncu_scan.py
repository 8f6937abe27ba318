"""Finding ncu's CSV in a file: records among program output and ``==PROF==`` /
``==WARNING==`` / ``==ERROR==`` banners, the page a header starts, a header's columns, and the
blocks of rows that follow each header."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import msgspec

from roofscope.errors import EmptyInput, InputError
from roofscope.model import words

DETAILS_START = '"ID","Process ID"'
SUMMARY_START = '"Process ID","Process Name"'
BANNERS = ("==PROF==", "==ERROR==", "==WARNING==")
REMEDY = "pass the CSV that `ncu --csv` wrote (details, raw or --print-summary per-kernel page)"


class Scan(msgspec.Struct):
    """CSV records of one file, with the banner lines seen around them."""

    path: Path
    banners: list[tuple[int, str]] = msgspec.field(default_factory=list)
    cut: int | None = None  # the line of a last record that ends inside quotes

    def records(self) -> Iterator[tuple[int, list[str]]]:
        """(line number, fields) of each record: a line starting with ``"`` and the lines that
        continue a quoted field it opens. Other lines are kept in ``banners`` or skipped."""
        pending, start = "", 0
        try:
            with self.path.open(encoding="utf-8-sig", errors="replace", newline="") as f:
                for number, line in enumerate(f, start=1):
                    if not pending and not line.startswith('"'):
                        if line.startswith(BANNERS):
                            self.banners.append((number, line.strip()))
                        continue
                    pending, start = pending + line, start or number
                    if pending.count('"') % 2 == 0:
                        yield start, _split(self.path, pending, start)
                        pending, start = "", 0
        except OSError as exc:
            raise InputError(
                str(self.path), f"cannot be read ({exc.strerror})", "check its permissions"
            ) from None
        if pending:
            self.cut = start
            yield start, _split(self.path, pending, start)


def _split(path: Path, text: str, line: int) -> list[str]:
    text = text.rstrip("\r\n")
    try:
        return next(csv.reader([text]), [])
    except csv.Error as exc:
        what = "a quoted field is not closed on its line" if "\n" in text else str(exc)
        raise InputError(str(path), f"is not valid CSV ({what})", REMEDY, line=line) from None


def no_csv(path: Path, scan: Scan) -> InputError:
    """The error for a file in which no ncu CSV header was found: of ncu's messages alone, a
    failed export (:class:`EmptyInput`)."""
    said = [b for b in scan.banners if b[1].startswith(("==ERROR==", "==WARNING=="))]
    if said:
        line, text = said[0]
        return EmptyInput(
            str(path),
            f"holds no ncu CSV, only ncu messages: {text!r}",
            "fix what ncu reports and re-run it (no kernels were profiled)",
            line=line,
        )
    if scan.banners:
        return EmptyInput(
            str(path),
            "holds only ==PROF== lines and no ncu CSV (no kernels were profiled)",
            "check that the application launches kernels and ncu's --kernel-name filters",
        )
    return InputError(str(path), 'has no ncu CSV header ("ID","Process ID",...)', REMEDY)


def page_of(text: str) -> str | None:
    """``details``, ``raw``, ``summary``, ``banners`` (ncu messages, no CSV) or None, from
    the first line that begins with ``"`` (the lines before it are program output)."""
    banners = False
    for line in text.splitlines():
        if line.startswith(DETAILS_START):
            return "details" if '"Metric Name"' in line else "raw"
        if line.startswith(SUMMARY_START):
            return "summary" if '"Invocations"' in line else None
        if line.startswith('"'):
            return None
        banners = banners or line.startswith(BANNERS)
    return "banners" if banners else None


def page_in_file(path: Path, scan: Scan) -> str:
    """The page of the first CSV header in the whole file (the head may show only banners)."""
    for line, row in Scan(path).records():
        text = ",".join(f'"{f}"' for f in row[:2])
        if text == DETAILS_START:
            return "details" if "Metric Name" in row else "raw"
        if text == SUMMARY_START and "Invocations" in row:
            return "summary"
        raise InputError(
            str(path), f"its first CSV line is not an ncu header ({text[:60]})", REMEDY,
            line=line,
        )  # fmt: skip
    # read the whole file for its banners before giving up
    for _ in scan.records():
        pass
    raise no_csv(path, scan)


class Columns(msgspec.Struct, dict=True):
    """A header's column positions; ``get`` gives "" for fields a ragged row lacks."""

    names: list[str]

    def __post_init__(self) -> None:
        self.index = {n: i for i, n in enumerate(self.names)}

    def get(self, row: list[str], name: str) -> str:
        i = self.index.get(name)
        return row[i] if i is not None and i < len(row) else ""

    def width(self, needed: tuple[str, ...]) -> int:
        """The number of fields a row needs to hold all these columns."""
        return max(self.index[n] for n in needed) + 1

    def require(self, path: Path, line: int, needed: tuple[str, ...]) -> None:
        missing = [n for n in needed if n not in self.index]
        if missing:
            raise InputError(
                str(path),
                f"the ncu header lacks {words.plural(len(missing), 'column')} {', '.join(missing)}",
                REMEDY,
                line=line,
            )


class Blocks:
    """Walks a scan's records: a header line starts a block, the other records are its rows.
    A row shorter than the header's required columns (``full``: all of them) is refused
    unless it is the file's last, which is left out as a cut-short file (``cut``)."""

    def __init__(self, path: Path, scan: Scan, start: str, needed: tuple[str, ...]) -> None:
        self.path, self.scan, self.needed = path, scan, needed
        self.start = next(csv.reader([start]))[:2]
        self.cut: int | None = None

    def rows(self, *, full: bool = False) -> Iterator[tuple[int, Columns, list[str]]]:
        cols: Columns | None = None
        held: tuple[int, int, int] | None = None  # line, fields, fields expected
        for line, row in self.scan.records():
            if held is not None:
                raise InputError(
                    str(self.path), f"a row has {held[1]} fields where {held[2]} were expected",
                    REMEDY, line=held[0],
                )  # fmt: skip
            if row[:2] == self.start:
                cols = Columns(row)
                cols.require(self.path, line, self.needed)
                yield line, cols, []
            elif cols is not None:
                width = len(cols.names) if full else cols.width(self.needed)
                if line == self.scan.cut or len(row) < width:
                    held = (line, len(row), width)
                    continue
                yield line, cols, row
        if held is not None:
            self.cut = held[0]
