"""A dispatch CSV of thousands of counter columns (rocprof-compute's pmc_perf.csv) is staged in
passes of ``STAGE_BATCH`` counters (readers/io/csv_counters.py ``stage_counters``): every
counter of every dispatch must land on its own dispatch, as the csv module reads the file,
whatever the pass.

The file is the real MI300A pmc_perf.csv of tests/data (3 dispatches, 2,098 counter columns:
3 passes at the default batch of 1,024, 17 at a batch of 128, which most tests here use), edited
here: a field that is no number in the 13th pass, and a line of one field too many (rejected,
so the passes after the first must drop it too)."""

from __future__ import annotations

import contextlib
import csv
import shutil
from pathlib import Path

import pytest

from roofscope.readers.io import csv_counters, csv_layout
from roofscope.readers.load import load
from tests.conftest import DATA, NAMED_COUNTERS

SOURCE = DATA / "rocprof-compute-mi300a"
FIXED = 12  # Dispatch_ID ... Correlation_ID: the columns before the counters


def edited(tmp_path: Path, edit: dict[tuple[int, int], str]) -> tuple[Path, list[list[str]]]:
    """The workload with fields replaced ((line, column) -> text); its rows as csv reads them."""
    folder = tmp_path / "w"
    shutil.copytree(SOURCE, folder)
    with (folder / "pmc_perf.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    for (line, column), text in edit.items():
        if column == len(rows[line]):
            rows[line].append(text)  # a field more than the header
        else:
            rows[line][column] = text
    with (folder / "pmc_perf.csv").open("w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    return folder, rows


def stored(folder: Path) -> tuple[set[tuple[int, str, float]], list[str]]:
    """(dispatch id, counter, value) of pmc_perf.csv's counters as the profile holds them,
    and its warnings' codes."""
    profile = load([str(folder)])
    source = next(i for i, f in enumerate(profile.inputs) if f.path.endswith("pmc_perf.csv"))
    try:
        found = profile.con.execute(
            f"""SELECT d.dispatch_id, c.counter, c.value FROM {NAMED_COUNTERS} c
            JOIN dispatches d ON d.rowid = c.row_id WHERE d.source = ?""",
            [source],
        ).fetchall()
        with (folder / "pmc_perf.csv").open(newline="") as f:
            mine = set(next(csv.reader(f))[FIXED:])  # not the SQ_*_LEVEL files' counters
        kept = {(int(d), str(c), float(v)) for d, c, v in found if c in mine}
        return kept, [w.code for w in profile.warnings]
    finally:
        profile.con.close()


def expected(
    rows: list[list[str]], names: set[str], skip: frozenset[int] = frozenset()
) -> set[tuple[int, str, float]]:
    """(dispatch id, column, value) of the numeric fields of these columns, as csv reads them
    (the reader, not this test, tells counters from the repeated launch columns)."""
    header, out = rows[0], set()
    for n, row in enumerate(rows[1:], 1):
        if n in skip:
            continue
        for name, text in zip(header[FIXED:], row[FIXED:], strict=True):
            if name not in names:
                continue
            with contextlib.suppress(ValueError):  # no number: no counter there
                out.add((int(row[0]), name, float(text)))
    return out


SMALL = 128  # counters per pass in most tests here: 17 passes


@pytest.fixture
def small_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csv_counters, "STAGE_BATCH", SMALL)


def test_the_file_is_read_in_many_passes() -> None:
    header = SOURCE.joinpath("pmc_perf.csv").read_text().splitlines()[0].split(",")
    assert header[FIXED - 1] == "Correlation_ID" and header[FIXED] == "SQ_INSTS_BRANCH"
    assert len(header) - FIXED > 2 * csv_counters.STAGE_BATCH  # 3 passes at least
    assert len(header) - FIXED > 16 * SMALL  # 17


@pytest.mark.parametrize("batch", [None, SMALL])
def test_every_counter_on_its_own_dispatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int | None
) -> None:
    if batch is not None:
        monkeypatch.setattr(csv_counters, "STAGE_BATCH", batch)
    folder, rows = edited(tmp_path, {})
    found, _ = stored(folder)
    names = {c for _, c, _ in found}
    assert found == expected(rows, names) and len(names) > 2000


@pytest.mark.usefixtures("small_passes")
def test_a_field_that_is_no_number_in_a_late_pass(tmp_path: Path) -> None:
    column = FIXED + 12 * SMALL + 5  # in the 13th pass
    folder, rows = edited(tmp_path, {(2, column): "n/a"})
    found, codes = stored(folder)
    assert found == expected(rows, {c for _, c, _ in found})
    assert (int(rows[2][0]), rows[0][column]) not in {(d, c) for d, c, _ in found}
    assert (int(rows[1][0]), rows[0][column]) in {(d, c) for d, c, _ in found}
    assert "unread-counter" in codes
    profile = load([str(folder)])
    (warning,) = [w for w in profile.warnings if w.code == "unread-counter"]
    profile.con.close()
    assert f"({rows[0][column]} in 1 row)" in warning.message


@pytest.mark.usefixtures("small_passes")
def test_a_rejected_line_is_left_out_of_every_pass(tmp_path: Path) -> None:
    header = SOURCE.joinpath("pmc_perf.csv").read_text().splitlines()[0].split(",")
    folder, rows = edited(tmp_path, {(2, len(header)): "1"})  # one field too many
    found, codes = stored(folder)
    assert "malformed-row" in codes
    assert found == expected(rows, {c for _, c, _ in found}, skip=frozenset({2}))
    assert {d for d, _, _ in found} == {int(rows[1][0]), int(rows[3][0])}


@pytest.mark.usefixtures("small_passes")
def test_passes_that_disagree_fall_back_to_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were a later pass to read other lines than the first, the stage is made in one pass."""
    real = csv_counters.staged_sql

    def losing(layout: csv_layout.CsvLayout, key: str, counters: list[str], from_sql: str) -> str:
        sql = real(layout, key, counters, from_sql)
        later = counters[0] != layout.counters[0]
        return sql + " LIMIT 1" if later else sql  # a later pass loses lines

    monkeypatch.setattr(csv_counters, "staged_sql", losing)
    folder, rows = edited(tmp_path, {})
    found, _ = stored(folder)
    names = {c for _, c, _ in found}
    assert found == expected(rows, names) and len(names) > 2000


def test_a_wide_file_hands_freed_memory_back() -> None:
    """Reading a file of more than ``WIDE`` (512) counter columns sets DuckDB to hand the
    buffers each pass frees back to the system (1 MiB, against its default of 512 MiB); a
    narrow file (rocprof v1, 0 counters) keeps the default."""
    setting = "SELECT current_setting('allocator_bulk_deallocation_flush_threshold')"
    wide = load([str(SOURCE)]).con.execute(setting).fetchone()
    narrow = load([str(DATA / "rocprofv1-mi250x" / "laplacian")]).con.execute(setting).fetchone()
    assert wide == ("1.0 MiB",)
    assert narrow == ("512.0 MiB",)
