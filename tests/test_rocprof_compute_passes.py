"""rocprof-compute workloads of the newer layouts: one long ``results_pmc_perf_N.csv`` per pass
(3.6-3.8), gzipped files (3.9), a PC-sampling-only folder, and ratios across passes.

The real workload is rocprof-compute's own RDNA 3.5 vcopy test run, all 17 passes
(tests/data/rocprof-compute-rdna35-passes/PROVENANCE.md). Expected values are computed here
from the same files with the csv module: rocprof-compute 3.6+'s rule (files concatenated in name
order, each dispatch's Start and End from its first row, each counter's last value) and the
gfx115x speed-of-light formulas (docs/formats/amd-counters.md).
"""

from __future__ import annotations

import csv
import gzip
import shutil
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from roofscope.analysis.hotspots import hotspots
from roofscope.cli.app import main
from roofscope.errors import InputError
from roofscope.readers.load import load
from tests.conftest import DATA, NAMED_COUNTERS, plain_html, run_json

PASSES = DATA / "rocprof-compute-rdna35-passes"
WAVE_SIZE = 32  # sysinfo.csv wave_size
VCOPY = "vecCopy(double*, double*, double*, int, int)"


def pass_files(folder: Path = PASSES) -> list[Path]:
    return sorted(folder.glob("results_pmc_perf_*.csv"), key=lambda p: p.name)


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def first_times() -> dict[int, tuple[int, int]]:
    """Each dispatch's (Start, End) from its first row, files in name order."""
    times: dict[int, tuple[int, int]] = {}
    for path in pass_files():
        for r in rows_of(path):
            times.setdefault(
                int(r["Dispatch_ID"]), (int(r["Start_Timestamp"]), int(r["End_Timestamp"]))
            )
    return times


def counter_values() -> tuple[dict[tuple[int, str], float], dict[str, str]]:
    """(dispatch, counter) -> value (the last written), and counter -> the file that gave it."""
    values: dict[tuple[int, str], float] = {}
    origin: dict[str, str] = {}
    for path in pass_files():
        for r in rows_of(path):
            values[(int(r["Dispatch_ID"]), r["Counter_Name"])] = float(r["Counter_Value"])
            origin.setdefault(r["Counter_Name"], path.name)
    return values, origin


def stored(profile: Any) -> dict[tuple[int, str], float]:
    rows = profile.con.execute(
        f"""SELECT d.dispatch_id, c.counter, c.value FROM {NAMED_COUNTERS} c
        JOIN dispatches d ON d.rowid = c.row_id"""
    ).fetchall()
    return {(int(i), str(n)): float(v) for i, n, v in rows}


# -- every pass joined on the dispatch ----------------------------------------------------------


def test_every_pass_is_joined_on_the_dispatch() -> None:
    values, origin = counter_values()
    assert len(pass_files()) == 17 and len(origin) == 149
    profile = load([str(PASSES)])
    assert stored(profile) == values
    assert not [w for w in profile.warnings if w.code == "counter-run-skipped"]
    roles = [(Path(i.path).name, i.role) for i in profile.inputs]
    assert roles[0] == ("results_pmc_perf_0.csv", "dispatches")
    assert [r for _, r in roles[1:17]] == ["counter-pass"] * 16
    assert profile.counter_passes[0] == origin


def test_each_dispatch_keeps_its_first_pass_times() -> None:
    """rocprof-compute 3.6+ keeps the first row's Start and End (file-name order): pass 0's."""
    want = first_times()
    profile = load([str(PASSES)])
    got = profile.con.execute("SELECT dispatch_id, start_ns, end_ns FROM dispatches ORDER BY 1")
    assert [(int(i), (int(s), int(e))) for i, s, e in got.fetchall()] == sorted(want.items())
    (note,) = [w for w in profile.warnings if w.code == "pass-timestamps-differ"]
    assert "3 dispatches recorded in 17 per-pass files" in note.message
    assert "results_pmc_perf_0.csv" in note.message


def test_top_kernels_from_the_first_pass() -> None:
    durations = [end - start for start, end in first_times().values()]
    (k,) = hotspots(load([str(PASSES)])).kernels
    assert (k.name, k.calls, k.total_ns) == (VCOPY, 3, float(sum(durations)))
    assert k.median_ns == statistics.median(durations)


# -- speed of light over the joined counters ----------------------------------------------------


def sol_by_hand() -> dict[str, float]:
    """The gfx115x metrics, mean over the dispatches, from the files alone."""
    values, _ = counter_values()
    times = first_times()

    def c(i: int, name: str) -> float:  # X_sum is X where only X was written
        return values[(i, name)] if (i, name) in values else values[(i, name.removesuffix("_sum"))]

    def mean(f: Any) -> float:
        return statistics.fmean(f(i, times[i][1] - times[i][0]) for i in sorted(times))

    sizes = (32, 64, 96, 128)
    return {
        "VALU FLOPs": mean(lambda i, d: c(i, "SQ_INSTS_VALU_sum") * WAVE_SIZE / d),
        "IPC": mean(
            lambda i, d: (
                (c(i, "SQ_INSTS_ALL_sum") - c(i, "SQ_INSTS_INTERNAL_sum"))
                / c(i, "SQ_BUSY_CYCLES_sum")
            )
        ),
        "Wavefront Occupancy": mean(
            lambda i, d: c(i, "SQ_WAVE_CYCLES_sum") / c(i, "SQ_BUSY_CYCLES_avr")
        ),
        "L2 Cache Hit Rate": mean(
            lambda i, d: 100 * c(i, "GL2C_HIT_sum") / (c(i, "GL2C_HIT_sum") + c(i, "GL2C_MISS_sum"))
        ),
        "L2-Fabric Read Bandwidth": mean(
            lambda i, d: sum(s * c(i, f"GL2C_EA_RDREQ_{s}B_sum") for s in sizes) / d
        ),
        "L2-Fabric Write Bandwidth": mean(
            lambda i, d: (
                (
                    64 * c(i, "GL2C_EA_WRREQ_64B_sum")
                    + 32 * (c(i, "GL2C_MC_WRREQ_sum") - c(i, "GL2C_EA_WRREQ_64B_sum"))
                )
                / d
            )
        ),
        "GPUBusy (recomputed)": mean(
            lambda i, d: 100 * c(i, "GRBM_GUI_ACTIVE") / c(i, "GRBM_COUNT")
        ),
    }


def test_speed_of_light_metrics_equal_a_plain_computation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = run_json(capsys, str(PASSES))
    (kernel,) = doc["kernels"]
    metrics = kernel["metrics"]
    assert len(metrics) == 16  # one (Wavefront Occupancy) when only pass 0 was joined
    for name, want in sol_by_hand().items():
        assert metrics[name]["value_dispatch_mean"] == pytest.approx(want, rel=1e-12), name


def test_a_ratio_of_two_passes_is_marked_cross_pass(capsys: pytest.CaptureFixture[str]) -> None:
    """GRBM_GUI_ACTIVE (pass 3) over GRBM_COUNT (pass 0): 101 % "GPU busy" for two replays."""
    doc = run_json(capsys, str(PASSES))
    metrics = doc["kernels"][0]["metrics"]
    busy = metrics["GPUBusy (recomputed)"]
    assert busy["value_dispatch_mean"] > 100
    assert busy["cross_pass"] == {
        "GRBM_COUNT": "results_pmc_perf_0.csv",
        "GRBM_GUI_ACTIVE": "results_pmc_perf_3.csv",
    }
    assert "cross_pass" not in metrics["L2 Cache Hit Rate"]  # GL2C_HIT and MISS: pass 3 both
    assert "cross_pass" not in metrics["VALU FLOPs"]  # a rate: counts over pass 0's time


def test_the_text_report_names_a_cross_pass_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(PASSES)]) == 0
    out = capsys.readouterr().out
    assert "Wavefront Occupancy 112 waves (cross-pass)" in out
    assert "SQ_BUSY_CYCLES_avr in results_pmc_perf_3.csv" in " ".join(out.split())


# -- gzipped workloads ------------------------------------------------------------------------


def gzipped(folder: Path, tmp: Path, names: list[str]) -> Path:
    """A copy of ``folder`` with the files ``names`` gzipped (the original removed)."""
    out = tmp / folder.name
    shutil.copytree(folder, out)
    for name in names:
        with (out / name).open("rb") as src, gzip.open(out / f"{name}.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        (out / name).unlink()
    return out


def test_gzipped_per_pass_files_read_like_plain_ones(tmp_path: Path) -> None:
    """rocprof-compute 3.9 writes results_pmc_perf_N.csv.gz."""
    folder = gzipped(PASSES, tmp_path, [p.name for p in pass_files()])
    profile = load([str(folder)])
    assert stored(profile) == counter_values()[0]
    assert Path(profile.inputs[0].path).name == "results_pmc_perf_0.csv.gz"


def test_a_gzipped_pmc_perf_csv_gives_the_counters(tmp_path: Path) -> None:
    """Before: timestamps.csv was read instead, exit 0 and every counter lost."""
    plain = DATA / "rocprof-compute-mi200"
    folder = gzipped(plain, tmp_path, ["pmc_perf.csv"])
    want = stored(load([str(plain)]))
    profile = load([str(folder)])
    assert Path(profile.inputs[0].path).name == "pmc_perf.csv.gz"
    assert stored(profile) == want and want


def test_a_damaged_gzip_file_is_named(tmp_path: Path) -> None:
    folder = gzipped(PASSES, tmp_path, ["results_pmc_perf_0.csv"])
    data = (folder / "results_pmc_perf_0.csv.gz").read_bytes()
    (folder / "results_pmc_perf_0.csv.gz").write_bytes(data[:40])
    with pytest.raises(InputError) as e:
        load([str(folder)])
    assert str(e.value).startswith(
        f"{folder / 'results_pmc_perf_0.csv.gz'}: cannot be decompressed"
    )


# -- a PC-sampling-only workload --------------------------------------------------------------


def test_a_pc_sampling_only_workload_is_named(tmp_path: Path) -> None:
    """Real sysinfo.csv and kernel trace; ps_file_results.json is a stand-in (its name is all
    that marks the folder)."""
    folder = tmp_path / "MI300A_A1"
    shutil.copytree(DATA / "rocprof-compute-pc-sampling", folder)
    (folder / "ps_file_results.json").write_text("{}")
    with pytest.raises(InputError) as e:
        load([str(folder)])
    message = str(e.value)
    assert "PC-sampling-only workload (ps_file_results.json)" in message
    assert "no counter file by design" in message
    assert f"pass {folder / 'ps_file_kernel_trace.csv'}" in message
    assert "copy the whole workload folder" not in message


def test_a_pc_sampling_only_workload_without_its_kernel_trace(tmp_path: Path) -> None:
    folder = tmp_path / "MI350"
    folder.mkdir()
    shutil.copy(DATA / "rocprof-compute-pc-sampling" / "sysinfo.csv", folder)
    (folder / "3359178_ps_file_results.json").write_text("{}")
    with pytest.raises(InputError) as e:
        load([str(folder)])
    assert "PC-sampling-only workload (3359178_ps_file_results.json)" in str(e.value)
    assert "without --pc-sampling-only" in str(e.value)


def test_its_kernel_trace_gives_the_kernel_times() -> None:
    trace = DATA / "rocprof-compute-pc-sampling" / "ps_file_kernel_trace.csv"
    rows = rows_of(trace)
    (k,) = hotspots(load([str(trace)])).kernels
    want = sum(int(r["End_Timestamp"]) - int(r["Start_Timestamp"]) for r in rows)
    assert (k.calls, k.total_ns) == (3, float(want))


# -- edge cases of the join -------------------------------------------------------------------


def write_pass(path: Path, rows: list[tuple[int, int, int, str, float]]) -> None:
    """A long per-pass file: (dispatch, start, end, counter, value) rows."""
    head = "GPU_ID,Dispatch_ID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,Kernel_Name,"
    head += "Start_Timestamp,End_Timestamp,Counter_Name,Counter_Value\n"
    body = "".join(f"1,{d},64,64,0,k,{s},{e},{c},{v}\n" for d, s, e, c, v in rows)
    path.write_text(head + body)


def test_a_dispatch_missing_from_pass_0_takes_the_next_file_in_name_order(
    tmp_path: Path,
) -> None:
    """Name order, as rocprof-compute sorts: results_pmc_perf_10 before results_pmc_perf_2."""
    shutil.copy(PASSES / "sysinfo.csv", tmp_path)
    write_pass(tmp_path / "results_pmc_perf_0.csv", [(0, 100, 200, "A", 1)])
    write_pass(tmp_path / "results_pmc_perf_2.csv", [(0, 500, 650, "B", 2), (1, 900, 990, "B", 3)])
    write_pass(tmp_path / "results_pmc_perf_10.csv", [(0, 300, 420, "C", 4), (1, 700, 760, "C", 5)])
    profile = load([str(tmp_path)])
    got = profile.con.execute("SELECT dispatch_id, start_ns, end_ns FROM dispatches ORDER BY 1")
    assert got.fetchall() == [(0, 100, 200), (1, 700, 760)]
    assert stored(profile) == {(0, "A"): 1, (0, "B"): 2, (1, "B"): 3, (0, "C"): 4, (1, "C"): 5}


def test_a_counter_in_two_passes_keeps_the_last_file_s_value(tmp_path: Path) -> None:
    shutil.copy(PASSES / "sysinfo.csv", tmp_path)
    write_pass(tmp_path / "results_pmc_perf_0.csv", [(0, 100, 200, "A", 1)])
    write_pass(tmp_path / "results_pmc_perf_1.csv", [(0, 300, 400, "A", 7)])
    profile = load([str(tmp_path)])
    assert stored(profile) == {(0, "A"): 7}
    assert profile.counter_passes[0] == {"A": "results_pmc_perf_0.csv"}


def test_per_pass_files_grouped_by_dispatch_only(tmp_path: Path) -> None:
    """Rows of one pass per dispatch: counts by pass sum to every row."""
    shutil.copy(PASSES / "sysinfo.csv", tmp_path)
    rows: dict[int, list[tuple[int, int, int, str, float]]] = defaultdict(list)
    for n in range(3):
        rows[n] = [(d, 1000 * n + 10 * d, 1000 * n + 10 * d + 5, f"C{n}", d + n) for d in range(4)]
        write_pass(tmp_path / f"results_pmc_perf_{n}.csv", rows[n])
    profile = load([str(tmp_path)])
    assert len(stored(profile)) == 12
    assert profile.count("dispatches") == 4


def test_per_pass_files_come_before_a_pmc_perf_csv_beside_them(tmp_path: Path) -> None:
    """3.9's analyze writes pmc_perf.csv.gz from the results files; it reads the latter."""
    folder = tmp_path / "w"
    shutil.copytree(PASSES, folder)
    with gzip.open(folder / "pmc_perf.csv.gz", "wb") as dst:
        for i, path in enumerate(pass_files()):
            lines = path.read_bytes().splitlines(keepends=True)
            dst.write(b"".join(lines if i == 0 else lines[1:]))
    profile = load([str(folder)])
    assert Path(profile.inputs[0].path).name == "results_pmc_perf_0.csv"
    got = profile.con.execute("SELECT dispatch_id, start_ns, end_ns FROM dispatches ORDER BY 1")
    assert [(int(i), (int(s), int(e))) for i, s, e in got.fetchall()] == sorted(
        first_times().items()
    )


def test_a_worker_s_shard_carries_which_pass_counted_each_counter() -> None:
    """Read in a worker and merged (readers/io/shards.py): the sources are renumbered."""
    from roofscope.readers.io import shards

    one = load([str(PASSES)])
    merged = load([str(DATA / "rocprof-compute-mi200")])
    base = len(merged.inputs)
    shards.absorb(merged, shards.export(one))
    assert merged.counter_passes == {base: one.counter_passes[0]}


def test_the_html_report_names_a_cross_pass_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    assert main(["analyze", str(PASSES), "--html", str(out)]) == 0
    capsys.readouterr()
    html = plain_html(out.read_text(encoding="utf-8"))
    assert "112 waves (cross-pass)" in html
    assert "cross-pass ratio: SQ_BUSY_CYCLES_avr in results_pmc_perf_3.csv" in html


def test_wide_per_pass_files_without_pmc_perf_are_read_as_before(tmp_path: Path) -> None:
    """An older workload's per-pass files are wide (one row per dispatch, counters as
    columns): without its pmc_perf.csv, pmc_perf_0.csv gives the dispatches and the other
    passes are matched onto them, as before the long-table join existed. It was sent to the
    long-table join (DuckDB Binder Error on Counter_Name)."""
    folder = tmp_path / "mi350"
    shutil.copytree(DATA / "rocprof-compute-mi350", folder)
    (folder / "pmc_perf.csv").unlink()
    with (folder / "pmc_perf_0.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    profile = load([str(folder)])
    got = {(k.name, k.calls) for k in hotspots(profile).kernels}
    want: dict[str, int] = defaultdict(int)
    for row in rows:
        want[row["Kernel_Name"]] += 1
    assert {calls for _, calls in got} == set(want.values())
    assert sum(c for _, c in got) == len(rows)
    assert profile.inputs[0].path.endswith("pmc_perf_0.csv")
