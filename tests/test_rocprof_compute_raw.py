"""rocprof-compute workloads of the raw layout: ``out/<pass>/<pid>/<pid>.db`` (rocpd) with
``out/<pass>/<pid>_native_counter_collection.csv.gz`` beside it, read as ONE workload.

No workload of this layout is public yet, so tests/rocpd_passes.py BUILDS one from the real
17-pass RDNA 3.5 workload (each pass as a rocpd database with rocprofv3's DDL and a native
counter CSV). Expected values are computed from the real per-pass CSVs with the csv module, by
the helpers of tests/test_rocprof_compute_passes.py (rocprof-compute's rule: passes in name
order, each dispatch's Start and End from its first pass, each counter's last value), so
reading the raw layout must give exactly what the per-pass CSV layout gives.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from roofscope.analysis.hotspots import hotspots
from roofscope.errors import InputError
from roofscope.readers.load import load
from tests import rocpd_passes
from tests.conftest import run_json
from tests.test_rocprof_compute_passes import (
    PASSES,
    VCOPY,
    counter_values,
    first_times,
    sol_by_hand,
    stored,
)

LANES: dict[str, Callable[[int], bool]] = {
    "native": lambda n: True,  # counters in the native CSVs (rocprof-compute's own tool)
    "rocpd": lambda n: False,  # counters in the databases (rocprofv3's counter collection)
    "mixed": lambda n: n % 2 == 0,
}


def pass_name(csv_name: str) -> str:
    """results_pmc_perf_3.csv -> pmc_perf_3, the raw layout's folder of the same pass."""
    return csv_name.removeprefix("results_").removesuffix(".csv")


def times(profile: Any) -> list[tuple[int, str, int, int]]:
    rows = profile.con.execute(
        """SELECT d.dispatch_id, n.raw_name, d.start_ns, d.end_ns FROM dispatches d
        JOIN names n USING (name_id) ORDER BY 1"""
    ).fetchall()
    return [(int(i), str(n), int(s), int(e)) for i, n, s, e in rows]


@pytest.mark.parametrize("lane", list(LANES))
def test_the_raw_layout_reads_as_the_per_pass_csvs(tmp_path: Path, lane: str) -> None:
    folder = rocpd_passes.build(tmp_path, native=LANES[lane])
    values, origin = counter_values()
    profile = load([str(folder)])
    want = [(i, VCOPY, s, e) for i, (s, e) in sorted(first_times().items())]
    assert times(profile) == want  # the copy kernel without counters got no dispatch id
    assert stored(profile) == values  # instance rows summed, every pass joined
    assert profile.counter_passes[0] == {c: pass_name(f) for c, f in origin.items()}
    roles = [(Path(i.path).name, i.role) for i in profile.inputs]
    assert roles[0] == ("pmc_perf_0", "dispatches")
    assert [r for _, r in roles[1:17]] == ["counter-pass"] * 16
    assert roles[17:] == [("sysinfo.csv", "metadata")]  # no database read apart as a run
    assert [w.code for w in profile.warnings] == ["pass-timestamps-differ"]


def test_each_dispatch_keeps_its_first_pass_times(tmp_path: Path) -> None:
    profile = load([str(rocpd_passes.build(tmp_path))])
    (note,) = [w for w in profile.warnings if w.code == "pass-timestamps-differ"]
    assert "3 dispatches recorded in 17 pass folders" in note.message
    assert "first pass folder holding it (pmc_perf_0)" in note.message
    durations = [end - start for start, end in first_times().values()]
    (k,) = hotspots(profile).kernels
    assert (k.name, k.calls, k.total_ns) == (VCOPY, 3, float(sum(durations)))


def test_speed_of_light_as_for_the_per_pass_csvs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = run_json(capsys, str(rocpd_passes.build(tmp_path)))
    assert doc["run"]["gpu"] == "RDNA35_KRACKAN2" and doc["run"]["arch"] == "gfx1153"
    (kernel,) = doc["kernels"]
    metrics = kernel["metrics"]
    assert len(metrics) == 16
    for name, want in sol_by_hand().items():
        assert metrics[name]["value_dispatch_mean"] == pytest.approx(want, rel=1e-12), name
    assert metrics["GPUBusy (recomputed)"]["cross_pass"] == {
        "GRBM_COUNT": "pmc_perf_0",
        "GRBM_GUI_ACTIVE": "pmc_perf_3",
    }


def test_the_agent_fills_what_sysinfo_leaves_out(tmp_path: Path) -> None:
    folder = rocpd_passes.build(tmp_path)
    header, row = (folder / "sysinfo.csv").read_text().splitlines()
    assert row.count(",") == header.count(",")  # no field of this sysinfo.csv holds a comma
    values = row.split(",")
    values[header.split(",").index("cu_per_gpu")] = ""
    (folder / "sysinfo.csv").write_text(f"{header}\n{','.join(values)}\n")
    profile = load([str(folder)])
    assert profile.run.gpu == "RDNA35_KRACKAN2"  # sysinfo.csv first
    assert profile.run.compute_units == 4  # the agent's cu_count (the builder's value)


def test_two_processes_of_one_pass_are_numbered_in_path_order(tmp_path: Path) -> None:
    """A pass of two processes: the first database's dispatches get 0, 1, 2 and the second's
    3, 4, 5, as the tool numbers them; the passes join on those ids."""
    rows = rocpd_passes.rows_of(PASSES / "results_pmc_perf_13.csv")  # 3 dispatches, 1 counter
    folder = tmp_path / "w"
    folder.mkdir()
    shutil.copy(PASSES / "sysinfo.csv", folder)
    for n, pids in ((0, (7001, 7002)), (1, (7101, 7102))):
        for pid in pids:
            rocpd_passes.write_pass(folder / "out" / f"pmc_perf_{n}", pid, rows, native=n == 0)
    profile = load([str(folder)])
    got = times(profile)
    first = [(int(r["Start_Timestamp"]), int(r["End_Timestamp"])) for r in rows]
    assert [(i, s, e) for i, _, s, e in got] == [
        (i, *first[i % 3])
        for i in range(6)  # both processes ran the same dispatches
    ]
    value = {int(r["Dispatch_ID"]): float(r["Counter_Value"]) for r in rows}
    assert stored(profile) == {(i, "CPC_TCIU_BUSY"): value[i % 3] for i in range(6)}


def test_raw_pass_folders_come_before_a_pmc_perf_csv_beside_them(tmp_path: Path) -> None:
    """The newest analyze rebuilds from out/ even where a pmc_perf.csv.gz is there."""
    folder = rocpd_passes.build(tmp_path)
    shutil.copy(PASSES / "results_pmc_perf_13.csv", folder / "pmc_perf.csv")
    profile = load([str(folder)])
    assert Path(profile.inputs[0].path).name == "pmc_perf_0"
    assert stored(profile) == counter_values()[0]


def test_a_counter_of_a_dispatch_the_database_lacks_is_named(tmp_path: Path) -> None:
    folder = rocpd_passes.build(tmp_path)
    native = folder / "out" / "pmc_perf_16" / "5016_native_counter_collection.csv.gz"
    with gzip.open(native, "at") as f:
        f.write("999,1,2,0,0,SQ_WAVES,5.0\n999,1,2,0,0,SQ_WAVES,6.0\n")
    profile = load([str(folder)])
    (warning,) = [w for w in profile.warnings if w.code == "rocpd-orphan-counters"]
    assert warning.count == 1  # one (dispatch, counter) after summing its instance rows
    assert "out/pmc_perf_16: 1 counter value names a dispatch" in warning.message
    assert stored(profile) == counter_values()[0]


def test_a_native_counter_csv_beside_its_database_is_read(tmp_path: Path) -> None:
    """The tool looks in the pass folder; one pull request's text puts the CSV beside the
    database: roofscope reads either."""
    folder = rocpd_passes.build(tmp_path)
    for native in folder.glob("out/*/*_native_counter_collection.csv.gz"):
        native.rename(native.parent / rocpd_passes.HOST / native.name)
    assert stored(load([str(folder)])) == counter_values()[0]


# -- bad input ------------------------------------------------------------------------------


def test_a_pass_without_counter_values_is_named(tmp_path: Path) -> None:
    """Pass 16 without its native CSV: its database's counter tables are empty (the tool
    empties them where the CSV counts), so its one counter is missing, and said so."""
    folder = rocpd_passes.build(tmp_path)
    (folder / "out" / "pmc_perf_16" / "5016_native_counter_collection.csv.gz").unlink()
    values, origin = counter_values()
    profile = load([str(folder)])
    lost = {c for c, f in origin.items() if f == "results_pmc_perf_16.csv"}
    assert lost == {"CPC_UTCL2IU_BUSY"}
    assert stored(profile) == {k: v for k, v in values.items() if k[1] not in lost}
    (warning,) = [w for w in profile.warnings if w.code == "raw-pass-without-counters"]
    assert warning.message.startswith(
        f"{folder / 'out' / 'pmc_perf_16'}: none of its 4 dispatches has a counter value"
    )


def test_raw_pass_folders_without_any_counter_value_are_an_error(tmp_path: Path) -> None:
    folder = rocpd_passes.build(tmp_path)
    for native in folder.glob("out/*/*_native_counter_collection.csv.gz"):
        native.unlink()
    with pytest.raises(InputError) as e:
        load([str(folder)])
    assert str(e.value) == (
        f"{folder}: is a rocprof-compute workload whose raw pass folders (17 under out/) hold "
        "no counter value for any of their 68 dispatches: no native counter CSV beside the "
        "databases, and none in them; copy each "
        "out/<pass>/<pid>_native_counter_collection.csv.gz with the databases"
    )


def test_native_counter_files_without_their_database_are_named(tmp_path: Path) -> None:
    folder = rocpd_passes.build(tmp_path)
    for db in folder.glob("out/*/*/*.db"):
        db.unlink()
    with pytest.raises(InputError) as e:
        load([str(folder)])
    message = str(e.value)
    assert (
        "native counter files (out/pmc_perf_0/5000_native_counter_collection.csv.gz, 17 in all)"
        in message
    )
    assert "have no rocpd database beside them" in message
    assert "copy the whole out/ folder" in message


def test_a_native_counter_csv_without_its_columns_is_named(tmp_path: Path) -> None:
    folder = rocpd_passes.build(tmp_path)
    native = folder / "out" / "pmc_perf_0" / "5000_native_counter_collection.csv.gz"
    with gzip.open(native, "wt") as f:
        f.write("dispatch_id,counter_name,value\n3,SQ_WAVES,5\n")
    with pytest.raises(InputError) as e:
        load([str(folder)])
    assert str(e.value).startswith(
        f"{native}:1: is a native counter CSV without gpu_id, counter_value"
    )


def test_a_damaged_native_counter_csv_is_named(tmp_path: Path) -> None:
    folder = rocpd_passes.build(tmp_path)
    native = folder / "out" / "pmc_perf_2" / "5002_native_counter_collection.csv.gz"
    native.write_bytes(native.read_bytes()[:20])
    with pytest.raises(InputError) as e:
        load([str(folder)])
    assert str(e.value).startswith(f"{native}: cannot be decompressed")


def test_a_pass_database_that_is_no_rocpd_database_is_named(tmp_path: Path) -> None:
    folder = rocpd_passes.build(tmp_path)
    db = folder / "out" / "pmc_perf_1" / rocpd_passes.HOST / "5001.db"
    db.write_bytes(b"")
    with pytest.raises(InputError) as e:
        load([str(folder)])
    assert str(e.value).startswith(f"{db}: is an SQLite database without rocpd's views")


def test_a_native_row_that_does_not_parse_leaves_its_value_out(tmp_path: Path) -> None:
    """One instance row of GRBM_COUNT for dispatch 0 (raw id 3) unreadable: its sum would be
    wrong, so the value is left out and said so; the other dispatches keep theirs."""
    folder = rocpd_passes.build(tmp_path)
    native = folder / "out" / "pmc_perf_0" / "5000_native_counter_collection.csv.gz"
    with gzip.open(native, "at") as f:
        f.write("3,1,2,0,0,GRBM_COUNT,n/a\n")
    values, _ = counter_values()
    profile = load([str(folder)])
    assert stored(profile) == {k: v for k, v in values.items() if k != (0, "GRBM_COUNT")}
    (warning,) = [w for w in profile.warnings if w.code == "malformed-row"]
    assert warning.message == (
        f"{native}: 1 row without a numeric dispatch_id or counter_value, or a "
        "counter_name; the 1 (dispatch, counter) value they belong to are left out"
    )


def test_pass_databases_read_apart_from_their_workload_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``roofscope analyze <workload>/out``: 17 replays, no counters; said so, with the fix."""
    folder = rocpd_passes.build(tmp_path)
    doc = run_json(capsys, str(folder / "out"))
    (warning,) = [w for w in doc["warnings"] if w["code"] == "workload-pass-alone"]
    first = folder.resolve() / "out" / "pmc_perf_0" / rocpd_passes.HOST / "5000.db"
    assert warning["message"] == (
        f"{first}: is one pass of the rocprof-compute workload {folder.resolve()} (17 read): "
        "each pass replays the program, so read apart they add up replays and lose the "
        f"counters of the other passes; pass {folder.resolve()} to read it as one workload"
    )
    assert warning["count"] == 17
    assert not [w for w in load([str(folder)]).warnings if w.code == "workload-pass-alone"]
