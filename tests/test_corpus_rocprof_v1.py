"""rocprof v1 traces against the profiler's own summaries of the same run.

Expected values come from the files rocprof itself wrote (results.stats.csv) or from
Omniperf's stored analysis (prev_analysis/1.csv), parsed here with the csv module.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from roofscope.analysis.checks import check
from roofscope.analysis.hotspots import hotspots
from roofscope.model.names import normalise
from roofscope.readers.load import load
from tests.conftest import DATA, DEMO, SHARED_CORPUS, kernels_by_name, run_json

PAIRS = [DEMO, DATA / "rocprofv1-mi250x" / "laplacian", DATA / "rocprofv1-mi250x" / "stencils"]


def stats_file(folder: Path) -> dict[str, tuple[int, int, float]]:
    """name -> (Calls, TotalDurationNs, Percentage) as rocprof wrote them."""
    with (folder / "results.stats.csv").open(newline="") as f:
        return {
            normalise(r["Name"]): (
                int(r["Calls"]),
                int(r["TotalDurationNs"]),
                float(r["Percentage"]),
            )
            for r in csv.DictReader(f)
        }


@pytest.mark.parametrize("folder", PAIRS, ids=lambda p: p.name)
def test_trace_matches_stats_exactly(folder: Path) -> None:
    expected = stats_file(folder)
    profile = load([str(folder / "results.csv")])
    got = {k.name: k for k in hotspots(profile).kernels}
    assert set(got) == set(expected)
    for name, (calls, total_ns, pct) in expected.items():
        assert got[name].calls == calls
        assert got[name].total_ns == total_ns
        assert got[name].share is not None
        assert abs(100 * got[name].share - pct) <= 1e-9


@pytest.mark.parametrize("folder", PAIRS, ids=lambda p: p.name)
def test_directory_reads_trace_and_checks_stats(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = run_json(capsys, str(folder))
    roles = {Path(i["path"]).name: i["role"] for i in doc["inputs"]}
    assert roles["results.csv"] == "dispatches"
    assert roles["results.stats.csv"] == "cross-check"
    assert [w for w in doc["warnings"] if w["code"] == "stats-mismatch"] == []
    expected = stats_file(folder)
    assert doc["summary"]["dispatches"] == sum(c for c, _, _ in expected.values())
    assert doc["summary"]["kernel_time_s"] == pytest.approx(
        sum(t for _, t, _ in expected.values()) / 1e9, rel=1e-12
    )


def test_a_stats_file_that_disagrees_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The laplacian stats file with one call more for laplacian_kernel (1002, the trace has
    1001 rows of it): one kernel disagrees; the check reads the trace's numbers off the
    hotspots (one dispatch file), and finds what a count of its own finds."""
    folder = DATA / "rocprofv1-mi250x" / "laplacian"
    (tmp_path / "results.csv").write_bytes((folder / "results.csv").read_bytes())
    stats = (folder / "results.stats.csv").read_text(encoding="utf-8")
    assert '"laplacian_kernel",1001,2646378558,' in stats
    stats = stats.replace('"laplacian_kernel",1001,', '"laplacian_kernel",1002,')
    (tmp_path / "results.stats.csv").write_text(stats, encoding="utf-8")
    doc = run_json(capsys, str(tmp_path))
    said = [w for w in doc["warnings"] if w["code"] == "stats-mismatch"]
    assert [(w["count"], w["message"].split("; ")[1]) for w in said] == [
        (1, f"first: 'laplacian_kernel' has {1002:,} calls / 2646378558 ns in the stats file, "
         f"{1001:,} calls / 2646378558 ns in the trace")
    ]  # fmt: skip
    profile = load([str(tmp_path)])
    assert check(profile, hot=hotspots(profile)) == check(profile)


def test_counter_runs_beside_the_trace_are_not_counted_twice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = run_json(capsys, str(DATA / "rocprofv1-mi250x" / "stencils"))
    roles = {Path(i["path"]).name: i["role"] for i in doc["inputs"]}
    assert roles["bankconflicts.csv"] == "counter-run"
    assert doc["summary"]["dispatches"] == 1024  # results.csv has 1024 rows, the stats 1024 calls


def test_sorted_by_total_and_80_percent_set(capsys: pytest.CaptureFixture[str]) -> None:
    folder = DATA / "rocprofv1-mi250x" / "stencils"
    doc = run_json(capsys, str(folder))
    expected = sorted(stats_file(folder).items(), key=lambda kv: -kv[1][1])
    assert [k["name"] for k in doc["kernels"]] == [name for name, _ in expected]
    grand = sum(t for _, (_, t, _) in expected)
    cumulative, needed = 0, 0
    for _, (_, t, _) in expected:
        if cumulative / grand >= 0.8:
            break
        cumulative += t
        needed += 1
    assert doc["summary"]["kernels_for_80pct"] == needed
    assert [k["hotspot"] for k in doc["kernels"]] == [i < needed for i in range(len(expected))]


def test_sysinfo_names_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(DATA / "rocprofv1-mi250x" / "stencils"))
    assert doc["run"] == {
        "producer": "rocprof",
        "producer_version": None,
        "gpu": "AMD Instinct MI250X/MI250",
        "arch": "gfx90a",
    }


def test_old_layout_matches_omniperf_kernel_top(capsys: pytest.CaptureFixture[str]) -> None:
    """ROCm < 5.3 header (vgpr,sgpr,fbar): Omniperf's own top-10 table of the same run."""
    folder = DATA / "omniperf-v1-mi100"
    doc = run_json(capsys, str(folder / "timestamps.csv"))
    got = kernels_by_name(doc)
    with (folder / "kernel_top.csv").open(newline="") as f:
        top = list(csv.DictReader(f))
    assert len(top) == 10
    for row in top:
        k = got[normalise(row["KernelName"])]
        assert k["calls"] == int(row["Count"])
        assert round(k["total_s"] * 1e9) == int(float(row["Sum(ns)"]))
        assert abs(100 * k["share"] - float(row["Pct"])) <= 1e-9
    assert doc["summary"]["dispatches"] == 167


def test_header_less_rocm4_slice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ROCm 4.x --hsa-trace slices: no header, layout (a) + DurationNs, names with commas."""
    name = (
        "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float>"
        "(int, int volatile*, TensorListMetadata<4>) [clone .kd]"
    )
    rows = [
        f'156,"{name}",0,0,557,15982,16057,148480,512,0,0,56,56,11584,0x0,0x7f93,'
        "100,1000,2000,2100,1000",
        f'157,"{name}",0,0,558,15982,16057,148480,512,0,0,56,56,11584,0x0,0x7f93,'
        "200,2500,4000,4100,1500",
        '158,"void fill<int>(int*, int) [clone .kd]",0,0,559,15982,16057,64,64,0,0,8,8,0,'
        "0x0,0x7f94,300,4000,4100,4200,100",
    ]
    path = tmp_path / "test_prof_data_1.csv"
    path.write_text("\n".join(rows) + "\n")
    doc = run_json(capsys, str(path))
    got = kernels_by_name(doc)
    adam = got[name.removesuffix(" [clone .kd]")]
    assert (adam["calls"], adam["total_s"]) == (2, 2500e-9)
    assert got["void fill<int>(int*, int)"]["total_s"] == 100e-9
    assert [w["code"] for w in doc["warnings"]] == ["no-header"]
    # busy: [1000,2000) + [2500,4000) + [4000,4100) = 2600 of a 3100 ns span
    assert (doc["summary"]["busy_s"], doc["summary"]["wall_s"]) == (2600e-9, 3100e-9)


def test_unquoted_names_with_commas_in_a_stats_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Old rocprof builds (the Kokkos files of the shared corpus) quote only the header."""
    path = tmp_path / "results.stats.csv"
    path.write_text(
        '"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
        "void Kokkos::Impl::launch<Kokkos::RangePolicy<HIP, long>, 1024u, 1u>(int, long),"
        "1,533600,533600,32.44479034925576\n"
        "Unknown command type,3,1110000,370000,67.55520965074424\n"
    )
    doc = run_json(capsys, str(path))
    assert [(k["name"], k["calls"], round(k["total_s"] * 1e9)) for k in doc["kernels"]] == [
        ("Unknown command type", 3, 1110000),
        (
            "void Kokkos::Impl::launch<Kokkos::RangePolicy<HIP, long>, 1024u, 1u>(int, long)",
            1,
            533600,
        ),
    ]
    assert doc["summary"]["wall_s"] is None and doc["kernels"][0]["median_s"] is None


@pytest.mark.skipif(
    not (SHARED_CORPUS / "amd" / "dalg24-kokkos-rocprofv1").is_dir(),
    reason="shared corpus not beside the project",
)
def test_kokkos_stats_from_the_shared_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    folder = SHARED_CORPUS / "amd" / "dalg24-kokkos-rocprofv1"
    rows = []
    for line in (folder / "results.stats.csv").read_text().splitlines()[1:]:
        parts = line.rsplit(",", 4)
        rows.append((normalise(parts[0]), int(parts[1]), int(parts[2])))
    doc = run_json(capsys, str(folder / "results.stats.csv"))
    got = {k["name"]: (k["calls"], round(k["total_s"] * 1e9)) for k in doc["kernels"]}
    assert got == {name: (calls, total) for name, calls, total in rows}


def _shapes_by_csv_module(path: Path) -> dict[tuple[str, int, int, int, int], int]:
    """(kernel, grd, wgr, lds, arch_vgpr) -> dispatches, counted with the csv module."""
    out: dict[tuple[str, int, int, int, int], int] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            key = (
                normalise(r["KernelName"]),
                int(r["grd"]),
                int(r["wgr"]),
                int(r["lds"]),
                int(r["arch_vgpr"]),
            )
            out[key] = out.get(key, 0) + 1
    return out


@pytest.mark.parametrize(
    "path",
    [
        DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv",  # shapes read on demand
        DATA / "rocprofv1-mi250x" / "laplacian" / "data_movement.csv",  # with counters
    ],
    ids=lambda p: p.name,
)
def test_launch_shapes_count_every_dispatch(path: Path) -> None:
    profile = load([str(path)])

    def shapes() -> dict[tuple[object, ...], int]:
        rows = profile.con.execute(
            "SELECT n.kernel, grid_size, workgroup_size, lds_bytes, arch_vgpr, dispatches "
            "FROM launches l JOIN names n USING (name_id)"
        ).fetchall()
        assert len({r[:5] for r in rows}) == len(rows), "one row per distinct shape"
        return {tuple(r[:5]): int(r[5]) for r in rows}

    if path.name == "results.csv":
        assert shapes() == {}, "a plain trace reads its shapes only when asked"
    profile.launches()
    assert shapes() == _shapes_by_csv_module(path)
