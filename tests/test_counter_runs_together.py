"""A workload's counter runs (rocprof-compute's SQ_*.csv) read in one statement and added in
one (readers/amd/compute/rocprof_compute.py, ``attach_counter_runs``): the same counters as
reading them one after another, each value the run file's own; a run that does not match the
dispatches sends every run down the one-by-one path, with its warning."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from roofscope.model.profile import Profile
from roofscope.readers.amd.compute import rocprof_compute
from roofscope.readers.load import load
from tests.conftest import DATA

WORKLOAD = DATA / "rocprof-compute-mi200"
RUNS = sorted(p.name for p in WORKLOAD.glob("SQ_*.csv"))


def _values(profile: Profile) -> list[tuple[int, str, float]]:
    return profile.con.execute(
        """SELECT c.row_id, n.counter, c.value FROM counters c JOIN counter_names n
        USING (counter_id) ORDER BY c.row_id, n.counter"""
    ).fetchall()


def _inputs(profile: Profile) -> list[tuple[str, int, str]]:
    return [(Path(i.path).name, i.rows, str(i.role)) for i in profile.inputs]


def test_runs_read_together_give_the_runs_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    together = load([str(WORKLOAD)])
    monkeypatch.setattr(rocprof_compute, "_runs", lambda paths, present: None)
    alone = load([str(WORKLOAD)])
    assert len(RUNS) == 5
    assert _values(together) == _values(alone)
    assert _inputs(together) == _inputs(alone)
    assert [n for n, _, role in _inputs(together) if role == "counter-run"] == RUNS
    assert together.warnings == alone.warnings


def test_each_value_is_the_run_files_own() -> None:
    """SQ_LEVEL_WAVES.csv's SQ_ACCUM_PREV_HIRES (the readers' SQ_LEVEL_WAVES_ACCUM, not in
    pmc_perf.csv) and its own GRBM_GUI_ACTIVE, dispatch by dispatch, read with csv."""
    with (WORKLOAD / "SQ_LEVEL_WAVES.csv").open(newline="") as f:
        rows = {int(r["Dispatch_ID"]): r for r in csv.DictReader(f)}
    profile = load([str(WORKLOAD)])
    got = profile.con.execute(
        """SELECT d.dispatch_id, n.counter, c.value FROM counters c
        JOIN counter_names n USING (counter_id) JOIN dispatches d ON d.rowid = c.row_id
        WHERE n.counter IN ('GRBM_GUI_ACTIVE@SQ_LEVEL_WAVES', 'SQ_LEVEL_WAVES')"""
    ).fetchall()
    assert got and len(got) == 2 * len(rows)
    for dispatch, counter, value in got:
        column = "GRBM_GUI_ACTIVE" if "@" in counter else "SQ_LEVEL_WAVES"
        assert value == float(rows[dispatch][column])


def test_a_run_that_does_not_match_sends_all_one_by_one(tmp_path: Path) -> None:
    folder = tmp_path / "workload"
    shutil.copytree(WORKLOAD, folder)
    bad = folder / "SQ_INST_LEVEL_LDS.csv"
    lines = bad.read_text().splitlines(keepends=True)
    bad.write_text(lines[0] + "".join("9" + line for line in lines[1:]))  # ids 0.. -> 90..
    profile = load([str(folder)])
    runs = [n for n, _, role in _inputs(profile) if role == "counter-run"]
    assert runs == [r for r in RUNS if r != bad.name]
    (warning,) = [w for w in profile.warnings if w.code == "counter-run-skipped"]
    assert f"{bad} has " in warning.message and "that pmc_perf.csv does not" in warning.message
