"""A rocprof v1 CSV's launch shapes read in the rows' one scan when the check-up will ask for
them (a GPU with known compute units given), instead of a second scan of the file: the same
``launches`` rows, counted here from the file with the csv module, and the same warnings."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path
from unittest.mock import patch

import pytest

from roofscope.checkup.engine import AS_GIVEN, _shapes_wanted
from roofscope.model.profile import Profile
from roofscope.readers.load import load
from roofscope.report import RooflineOptions
from tests.conftest import DATA

BARRIER = "<barrier packet>"
REAL = [
    DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv",
    DATA / "rocprofv1-mi250x" / "stencils" / "results.csv",
    DATA / "rocprofv1-barrier-mi250x" / "results.csv",
]
Shape = tuple[str, int, int]  # raw name, grid (work-items), workgroup size


def file_shapes(path: Path) -> Counter[Shape]:
    """Dispatches per (kernel, grd, wgr), from the file's own fields; barrier packets are no
    kernels and have no launch."""
    with path.open(newline="") as f:
        return Counter(
            (r["KernelName"], int(r["grd"]), int(r["wgr"]))
            for r in csv.DictReader(f)
            if r["KernelName"].strip('"') != BARRIER
        )


def table_shapes(profile: Profile) -> Counter[Shape]:
    rows = profile.con.execute(
        """SELECT n.raw_name, l.grid_size, l.workgroup_size, sum(l.dispatches)
        FROM launches l JOIN names n USING (name_id) GROUP BY ALL"""
    ).fetchall()
    return Counter({(str(n), int(g), int(w)): int(c) for n, g, w, c in rows})


def every_launch(profile: Profile) -> list[tuple[object, ...]]:
    """The ``launches`` rows, a deferred read run first."""
    profile.launches()
    return sorted(profile.con.execute("SELECT * FROM launches").fetchall(), key=repr)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.parent.name)
def test_real_files_shapes_from_the_first_scan(path: Path) -> None:
    """Nothing is left to a second scan, and the shapes are the file's: the laplacian run's
    1,004 dispatches, the stencils' 1,024, the barrier sample's 1,004 kernels beside its 11
    barrier packets."""
    eager = load([str(path)], shapes=True)
    assert not eager.deferred  # no second scan left to run
    assert table_shapes(eager) == file_shapes(path)
    lazy = load([str(path)])
    assert lazy.deferred  # the shapes wait for an analysis to ask
    assert every_launch(eager) == every_launch(lazy)
    assert eager.warnings == lazy.warnings


def test_names_after_the_sample(tmp_path: Path) -> None:
    """Kernels first seen after the sampled rows (no ENUM code: their name travels as text)
    get their shapes too, under their own name."""
    path = tmp_path / "results.csv"
    with REAL[0].open(newline="") as f:
        rows = list(csv.reader(f))
    name, grd = rows[0].index("KernelName"), rows[0].index("grd")
    for i, row in enumerate(rows[1:], start=1):
        if i % 3 == 0:
            row[name], row[grd] = f"late_kernel_{i % 2}", str(64 * i)
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    with patch("roofscope.readers.io.csvload.SAMPLE_ROWS", 2):
        eager = load([str(path)], shapes=True)
        lazy = load([str(path)])
    assert table_shapes(eager) == file_shapes(path)
    assert every_launch(eager) == every_launch(lazy)


def test_a_field_that_is_no_number_is_counted_as_before(tmp_path: Path) -> None:
    """A launch field left unknown needs its text to tell 'no number' from empty: those
    shapes are read by the second scan after all, with the same warning."""
    with REAL[0].open(newline="") as f:
        rows = list(csv.reader(f))
    grd, sgpr, wgr = rows[0].index("grd"), rows[0].index("sgpr"), rows[0].index("wgr")
    rows[1][grd], rows[2][sgpr], rows[4][wgr] = "abc", "12x", ""
    path = tmp_path / "results.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    eager, lazy = load([str(path)], shapes=True), load([str(path)])
    assert every_launch(eager) == every_launch(lazy)
    (warning,) = [w for w in eager.warnings if w.code == "unread-launch-field"]
    assert "(grd in 1 row, sgpr in 1 row)" in warning.message  # the empty wgr is no text
    assert eager.warnings == lazy.warnings  # every_launch read the lazy one's shapes


def test_a_gpu_with_compute_units_asks_for_shapes() -> None:
    """The engine's guess before reading: a GPU given whose compute units the catalogue
    knows (report.py then asks every studied kernel's shape)."""
    on = AS_GIVEN.on_gpu
    assert _shapes_wanted(on("mi210")) and _shapes_wanted(on("h100"))
    assert not _shapes_wanted(AS_GIVEN)
    assert AS_GIVEN.roof == RooflineOptions()
