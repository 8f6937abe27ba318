"""rocprofv3 CSVs: every kernel_trace header layout, stats, copies, the hostname/pid layout."""

from __future__ import annotations

import csv
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import DATA, kernels_by_name, run_json

LAYOUTS = DATA / "rocprofv3-layouts"
TRACES = sorted(LAYOUTS.glob("*kernel_trace*.csv"))


def expected(path: Path) -> dict[str, list[int]]:
    """Durations End - Start per kernel name, read with the csv module."""
    out: dict[str, list[int]] = defaultdict(list)
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            out[row["Kernel_Name"]].append(int(row["End_Timestamp"]) - int(row["Start_Timestamp"]))
    return out


def test_all_layouts_present() -> None:
    headers = {p.read_text().splitlines()[0].count(",") + 1 for p in TRACES}
    assert headers == {16, 18, 19, 22}  # 2024-07, 2024-08, 2025-03, 2025-06 on


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_kernel_trace_durations(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(path))
    got = kernels_by_name(doc)
    want = expected(path)
    assert set(got) == set(want)
    for name, durations in want.items():
        k = got[name]
        assert k["calls"] == len(durations)
        assert round(k["total_s"] * 1e9) == sum(durations)
        assert round(k["min_s"] * 1e9) == min(durations)
        assert round(k["max_s"] * 1e9) == max(durations)
    assert doc["inputs"][0]["format"] == "rocprofv3-kernel-trace"
    assert doc["warnings"] == []


def test_launch_shape_is_the_product_of_axes(capsys: pytest.CaptureFixture[str]) -> None:
    from roofscope.readers.load import load

    path = LAYOUTS / "2025-08_kernel_trace.csv"
    want: dict[tuple[int, ...], int] = defaultdict(int)
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            grid = int(r["Grid_Size_X"]) * int(r["Grid_Size_Y"]) * int(r["Grid_Size_Z"])
            group = (
                int(r["Workgroup_Size_X"]) * int(r["Workgroup_Size_Y"]) * int(r["Workgroup_Size_Z"])
            )
            want[(grid, group, int(r["LDS_Block_Size"]), int(r["VGPR_Count"]))] += 1
    profile = load([str(path)])
    rows = (
        profile.launches()
        .aggregate("grid_size, workgroup_size, lds_bytes, arch_vgpr, sum(dispatches)")
        .order("arch_vgpr")
        .fetchall()
    )
    assert {tuple(r[:4]): int(r[4]) for r in rows} == want
    # by hand from the file's first rows: 1024x1024x1 grid, 64x1x1 workgroup
    assert sorted(want) == [(1024 * 1024, 64, 0, 8), (1024 * 1024, 64, 0, 12)]
    assert profile.con.execute("SELECT DISTINCT device FROM dispatches").fetchall() == [(4,)]


def test_stats_and_copies_are_kept_apart(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(
        capsys,
        str(LAYOUTS / "2025-08_kernel_trace.csv"),
        str(LAYOUTS / "hip_api_stats.csv"),
        str(LAYOUTS / "memory_copy_trace.csv"),
    )
    kernel_total = sum(
        d for ds in expected(LAYOUTS / "2025-08_kernel_trace.csv").values() for d in ds
    )
    assert round(doc["summary"]["kernel_time_s"] * 1e9) == kernel_total
    api = {a["name"]: a for a in doc["activity"] if a["kind"] == "api"}
    assert api["hipStreamCreateWithFlags"]["calls"] == 4
    assert api["hipStreamCreateWithFlags"]["total_s"] == 262497406e-9
    copies = {a["name"]: a for a in doc["activity"] if a["kind"] == "copy"}
    # two copies each way: 77040 + 75361 ns to the device, 75440 + 101321 ns back
    assert copies["MEMORY_COPY_HOST_TO_DEVICE"]["total_s"] == pytest.approx(152401e-9)
    assert copies["MEMORY_COPY_DEVICE_TO_HOST"]["total_s"] == pytest.approx(176761e-9)


def test_hostname_pid_layout_merges_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for pid in (1111, 2222):
        folder = tmp_path / "node01" / str(pid)
        folder.mkdir(parents=True)
        shutil.copy(LAYOUTS / "2025-08_kernel_trace.csv", folder / f"{pid}_kernel_trace.csv")
    doc = run_json(capsys, str(tmp_path))
    one = expected(LAYOUTS / "2025-08_kernel_trace.csv")
    assert doc["summary"]["dispatches"] == 2 * sum(len(d) for d in one.values())
    from roofscope.readers.load import load

    pids = (
        load([str(tmp_path)])
        .con.execute("SELECT pid, count(*) FROM dispatches GROUP BY pid ORDER BY pid")
        .fetchall()
    )
    assert pids == [(1111, 9), (2222, 9)]


def test_quoted_numbers_and_crlf(capsys: pytest.CaptureFixture[str]) -> None:
    """A re-serialised file: every field quoted, Windows line ends."""
    path = LAYOUTS / "gfx1151_decode_kernel_trace.csv"
    doc = run_json(capsys, str(path))
    assert doc["summary"]["dispatches"] == sum(len(d) for d in expected(path).values())
