"""A dispatch CSV whose name sample holds every name of the file is read with its name column
typed as the sample's ENUM (csv_names); the rows are those of the text scan, counted here
from the files with the csv module, and a file the sample does not cover falls back to it."""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import patch

import pytest

from roofscope.model.profile import Profile
from roofscope.readers.io import csv_names, csvload
from roofscope.readers.io.csv_layout import CsvLayout
from roofscope.readers.load import load
from tests.conftest import DATA
from tests.test_csv_shapes_one_scan import every_launch, file_shapes, table_shapes

# every file here is small: each is read as though it were worth the typed scan
pytestmark = pytest.mark.usefixtures("typed_always")

REAL = [
    DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv",
    DATA / "rocprofv1-mi250x" / "stencils" / "results.csv",
    DATA / "rocprofv1-barrier-mi250x" / "results.csv",
]
HEADER = '"Index","KernelName","gpu-id","pid","BeginNs","EndNs"\n'


@pytest.fixture
def typed_always() -> Iterator[None]:
    with patch.object(csv_names, "TYPED_BYTES", 0):
        yield


def file_counts(path: Path) -> Counter[tuple[str, int]]:
    """Dispatches and summed duration per raw name, from the file's own fields."""
    calls: Counter[tuple[str, int]] = Counter()
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            calls[(r["KernelName"], 0)] += 1
            calls[(r["KernelName"], 1)] += int(r["EndNs"]) - int(r["BeginNs"])
    return calls


def table_counts(profile: Profile) -> Counter[tuple[str, int]]:
    rows = profile.con.execute(
        """SELECT n.raw_name, count(*), sum(d.end_ns - d.start_ns)
        FROM dispatches d JOIN names n USING (name_id) GROUP BY 1"""
    ).fetchall()
    out: Counter[tuple[str, int]] = Counter()
    for name, calls, total in rows:
        out[(str(name), 0)], out[(str(name), 1)] = int(calls), int(total)
    return out


def every_row(profile: Profile) -> list[tuple[object, ...]]:
    return profile.con.execute("SELECT *, rowid FROM dispatches ORDER BY rowid").fetchall()


def load_watched(path: Path, *, shapes: bool = False) -> tuple[Profile, list[int | None]]:
    """``path`` loaded, with what each typed scan returned (None: it stopped)."""
    seen: list[int | None] = []
    real = csvload._append_typed

    def watch(*args: object) -> int | None:
        seen.append(real(*args))  # type: ignore[arg-type]
        return seen[-1]

    with patch.object(csvload, "_append_typed", watch):
        return load([str(path)], shapes=shapes), seen


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.parent.name)
def test_real_files_typed_as_the_text_scan(path: Path) -> None:
    """The laplacian run's 1,004 dispatches, the stencils' 1,024, the barrier sample's 1,015
    rows (11 barrier packets, kept as the next source): read by the typed scan, the same
    rows, ids and sources as the text scan, and the file's counts and durations."""
    typed, seen = load_watched(path)
    rows = sum(file_counts(path)[k] for k in file_counts(path) if k[1] == 0)
    assert seen == [rows]
    with patch.object(csvload, "typed_first", lambda *a: False):
        text = load([str(path)])
    assert every_row(typed) == every_row(text)
    assert table_counts(typed) == file_counts(path)
    barriers = typed.con.execute("SELECT count(*) FROM dispatches WHERE source = 1").fetchone()
    assert barriers == (11 if "barrier" in path.parent.name else 0,)


def write(tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / "results.csv"
    rows = [f'{i},"{n}",0,7,{1000 * i},{1000 * i + 10 + i}\n' for i, n in enumerate(names)]
    path.write_text(HEADER + "".join(rows))
    return path


def test_name_after_the_sample_at_the_end_reads_as_text(tmp_path: Path) -> None:
    """A name first seen in the file's last rows: the typed scan is not tried."""
    path = write(tmp_path, ["a", "b"] * 50 + ["late"] * 3)
    with patch.object(csvload, "SAMPLE_ROWS", 2):
        profile, seen = load_watched(path)
    assert seen == []
    assert table_counts(profile) == file_counts(path)


def test_name_only_in_the_middle_falls_back(tmp_path: Path) -> None:
    """A name neither in the sample nor in the end read (a 200-byte end here) stops the typed
    scan with nothing inserted; the text scan then reads every row, with the ids it gives
    when the typed scan is never tried."""
    path = write(tmp_path, ["a", "b"] * 50 + ["mid"] * 3 + ["a", "b"] * 50)
    with patch.object(csvload, "SAMPLE_ROWS", 2), patch.object(csv_names, "TAIL_BYTES", 200):
        profile, seen = load_watched(path)
        with patch.object(csvload, "typed_first", lambda *a: False):
            text = load([str(path)])
    assert seen == [None]
    assert table_counts(profile) == file_counts(path)
    assert table_counts(profile)[("mid", 0)] == 3
    assert every_row(profile) == every_row(text)


LAYOUT = CsvLayout(
    columns=[("Index", "BIGINT"), ("KernelName", "VARCHAR"), ("BeginNs", "BIGINT")],
    mapping={"dispatch_id": '"Index"', "start_ns": '"BeginNs"'},
    name="KernelName",
)


@pytest.mark.parametrize(
    ("text", "covered"),
    [
        ('Index,KernelName,BeginNs\n0,"a, b",5\n1,a,6\n', True),
        ("Index,KernelName,BeginNs\n0,a,5\n1,,6\n2,None,7\n", True),  # no name: NULL
        ("Index,KernelName,BeginNs\n0,a,5\n1,c,6\n", False),  # c not sampled
        ("Index,KernelName,BeginNs\n0,a,5\n1,a,6", False),  # cut: no line end
        ("Index,KernelName,BeginNs\n0,a,5\n1,a\n", False),  # a field short
        ("Index,KernelName,BeginNs\n0,a,5\n1,a,\xff\n", False),  # not UTF-8
    ],
)
def test_sample_covers_end(tmp_path: Path, text: str, covered: bool) -> None:
    path = tmp_path / "k.csv"
    path.write_bytes(text.encode("latin-1"))
    assert csv_names.sample_covers_end(path, LAYOUT, ["a", "a, b"]) is covered


def test_end_read_from_a_line_start(tmp_path: Path) -> None:
    """Past :data:`TAIL_BYTES` from the end the first, partial, line is left out."""
    path = tmp_path / "k.csv"
    path.write_text("Index,KernelName,BeginNs\n" + "".join(f"{i},a,{i}\n" for i in range(99)))
    with patch.object(csv_names, "TAIL_BYTES", 13):  # "a,97\n98,a,98\n": "a,97" left out
        assert csv_names.sample_covers_end(path, LAYOUT, ["a"])


def test_small_file_read_as_text(tmp_path: Path) -> None:
    """Below :data:`TYPED_BYTES` the end is not read and the text scan runs, as before."""
    path = write(tmp_path, ["a", "b"] * 50)
    with patch.object(csv_names, "TYPED_BYTES", path.stat().st_size + 1):
        assert not csv_names.sample_covers_end(path, LAYOUT, ["a", "b"])
        profile, seen = load_watched(path)
    assert seen == []
    assert table_counts(profile) == file_counts(path)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.parent.name)
def test_shapes_staged_from_the_typed_scan(path: Path) -> None:
    """A GPU with known compute units given (shapes asked before reading): the typed scan
    stages the launch shapes too, the file's (counted with the csv module), with no second
    scan left, the same launches and warnings as the text scan's."""
    typed, seen = load_watched(path, shapes=True)
    assert seen == [sum(v for k, v in file_counts(path).items() if k[1] == 0)]
    assert not typed.deferred
    assert table_shapes(typed) == file_shapes(path)
    with patch.object(csvload, "typed_first", lambda *a: False):
        text = load([str(path)], shapes=True)
    assert every_launch(typed) == every_launch(text) and typed.warnings == text.warnings
    assert every_row(typed) == every_row(text)


def test_staged_typed_scan_that_stops_leaves_no_stage(tmp_path: Path) -> None:
    """A name only in the middle stops the staging statement: no table is left of it, and
    the text scan stages every row's shape."""
    path = write(tmp_path, ["a", "b"] * 50 + ["mid"] * 3 + ["a", "b"] * 50)
    path.write_text(
        '"Index","KernelName","gpu-id","pid","BeginNs","EndNs","grd","wgr"\n'
        + "".join(
            f"{line},{64 * (i + 1)},64\n"
            for i, line in enumerate(path.read_text().splitlines()[1:])
        )
    )
    with patch.object(csvload, "SAMPLE_ROWS", 2), patch.object(csv_names, "TAIL_BYTES", 200):
        profile, seen = load_watched(path, shapes=True)
    assert seen == [None]
    assert table_counts(profile) == file_counts(path)
    tables = profile.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    assert not [t for (t,) in tables if t.startswith("stage")]
    shapes = profile.con.execute("SELECT sum(dispatches), count(*) FROM launches").fetchone()
    assert shapes == (203, 203)  # every row its own grid


def test_crlf_lines_and_rows_without_a_name(tmp_path: Path) -> None:
    """Windows line ends and names read as no name (``None``, empty) take the typed scan:
    the rows without a name have none there too, as in the text scan."""
    names = ["a", "None", "b", "", "<barrier packet>", "a"]
    rows = [f'{i},"{n}",0,7,{1000 * i},{1000 * i + 10}' for i, n in enumerate(names)]
    path = tmp_path / "results.csv"
    path.write_bytes((HEADER.rstrip("\n") + "\r\n" + "\r\n".join(rows) + "\r\n").encode())
    typed, seen = load_watched(path)
    assert seen == [6]
    with patch.object(csvload, "typed_first", lambda *a: False):
        text = load([str(path)])
    assert every_row(typed) == every_row(text)
    unnamed = typed.con.execute("SELECT count(*) FROM dispatches WHERE name_id IS NULL")
    assert unnamed.fetchone() == (2,)
    barriers = typed.con.execute("SELECT count(*) FROM dispatches WHERE source = 1").fetchone()
    assert barriers == (1,)
