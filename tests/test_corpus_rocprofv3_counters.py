"""rocprofv3 counter_collection.csv (four header layouts, passes, beside a trace) and
agent_info.csv, on the real files in tests/data/rocprofv3-counters (see its PROVENANCE.md).

Expected values are computed here with the csv module over the same files; a few are also
written out by hand from the files' rows.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections import defaultdict
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from roofscope.cli.app import main
from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.readers.load import load
from tests.conftest import DATA, NAMED_COUNTERS, run_json

COUNTERS = DATA / "rocprofv3-counters"
LAYOUTS = sorted(COUNTERS.glob("20*_counter_collection.csv"))
FILES = sorted(COUNTERS.glob("*counter_collection.csv"))
AGENTS = COUNTERS / "238_agent_info.csv"
FETCH = COUNTERS / "gfx1151_fetch_counter_collection.csv"
STALL = COUNTERS / "gfx1151_stall_counter_collection.csv"
TRACE = DATA / "rocprofv3-layouts" / "gfx1151_decode_kernel_trace.csv"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def expected_counters(path: Path) -> dict[int, dict[str, float]]:
    """{Dispatch_Id: {Counter_Name: sum of Counter_Value}}, read with the csv module."""
    out: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows(path):
        out[int(r["Dispatch_Id"])][r["Counter_Name"]] += float(r["Counter_Value"])
    return {d: dict(c) for d, c in out.items()}


def loaded_counters(profile: Profile, source: int) -> dict[int, dict[str, float]]:
    """The same, from the model: counters joined to their dispatch rows of one source."""
    out: dict[int, dict[str, float]] = defaultdict(dict)
    for dispatch, counter, value in profile.con.execute(
        f"""SELECT d.dispatch_id, c.counter, c.value FROM {NAMED_COUNTERS} c
        JOIN dispatches d ON d.rowid = c.row_id WHERE d.source = ?""",
        [source],
    ).fetchall():
        out[int(dispatch)][str(counter)] = float(value)
    return dict(out)


def copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    return dst


def roles(profile: Profile) -> list[tuple[str, str]]:
    return [(Path(f.path).name, f.role) for f in profile.inputs]


def test_all_layouts_present() -> None:
    widths = {p.read_text().splitlines()[0].count(",") + 1 for p in LAYOUTS}
    assert widths == {15, 16, 18, 19}  # 2024-08, 2024-09 (Kernel_Id), 2024-10-29, 2025-03 on


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_one_dispatch_row_per_dispatch_with_its_counters(path: Path) -> None:
    profile = load([str(path)])
    want = expected_counters(path)
    assert roles(profile) == [(path.name, "dispatches")]
    assert profile.inputs[0].format == "rocprofv3-counters"
    assert profile.count("dispatches") == len(want)
    assert loaded_counters(profile, 0) == want
    assert profile.warnings == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_times_where_the_layout_has_them(path: Path) -> None:
    want = {
        int(r["Dispatch_Id"]): (
            int(r["Start_Timestamp"]) if "Start_Timestamp" in r else None,
            int(r["End_Timestamp"]) if "End_Timestamp" in r else None,
        )
        for r in rows(path)
    }
    got = load([str(path)]).con.execute("SELECT dispatch_id, start_ns, end_ns FROM dispatches")
    assert {int(d): (s, e) for d, s, e in got.fetchall()} == want


def test_values_by_hand() -> None:
    """From the files' rows: rocprofv3 writes 16384.000000 (2025), 16384 (2024), 10.625000."""
    docs = loaded_counters(load([str(COUNTERS / "2025-08_counter_collection.csv")]), 0)
    assert docs[4] == {"SQ_WAVES": 16384.0}  # divide_kernel
    assert loaded_counters(load([str(FETCH)]), 0)[1] == {"FETCH_SIZE": 10.625}
    stall = loaded_counters(load([str(STALL)]), 0)
    assert len(stall[163]) == 10  # ten counters on one dispatch, ten rows of the file
    assert stall[163]["L2CacheHit"] == expected_counters(STALL)[163]["L2CacheHit"]


def test_dispatch_fields() -> None:
    path = COUNTERS / "2025-08_counter_collection.csv"
    profile = load([str(path)])
    got = profile.con.execute(
        """SELECT d.dispatch_id, n.raw_name, d.device, d.pid FROM dispatches d
        JOIN names n USING (name_id) ORDER BY d.rowid"""
    ).fetchall()
    want = [(int(r["Dispatch_Id"]), r["Kernel_Name"], 1, int(r["Process_Id"])) for r in rows(path)]
    assert got == want  # "Agent 1" is device 1; no <pid>_ prefix: the pid is Process_Id (15606)
    assert {g[3] for g in got} == {15606}


def test_pid_from_the_file_name_prefix(tmp_path: Path) -> None:
    src = COUNTERS / "2024-10_counter_collection.csv"
    path = copy(src, tmp_path / "777_counter_collection.csv")
    pids = load([str(path)]).con.execute("SELECT DISTINCT pid, device FROM dispatches")
    assert pids.fetchall() == [(777, 1)]  # 2024 files write Agent_Id as a bare 1


def test_launch_shapes() -> None:
    want: dict[tuple[int, ...], int] = defaultdict(int)
    seen = set()
    for r in rows(STALL):
        if r["Dispatch_Id"] in seen:
            continue
        seen.add(r["Dispatch_Id"])
        fields = ("Grid_Size", "Workgroup_Size", "LDS_Block_Size", "VGPR_Count", "SGPR_Count")
        want[tuple(int(r[f]) for f in fields)] += 1
    launches = load([str(STALL)]).launches()
    got = launches.aggregate(
        "grid_size, workgroup_size, lds_bytes, arch_vgpr, sgpr, sum(dispatches)"
    ).fetchall()
    assert {tuple(r[:5]): int(r[5]) for r in got} == want
    assert want[(1024, 512, 0, 16, 128)] == 2  # the two __amd_rocclr_copyBuffer dispatches


def test_instances_of_one_counter_are_summed(tmp_path: Path) -> None:
    """A counter written on two rows of one dispatch (per instance): one value, their sum."""
    src = COUNTERS / "2025-08_counter_collection.csv"
    lines = src.read_text().splitlines()
    second = lines[2]  # dispatch 2, SQ_WAVES 16384.000000
    assert ',"SQ_WAVES",16384.000000,' in second
    halves = [second.replace("16384.000000", v) for v in ("10000.000000", "6384.000000")]
    path = tmp_path / "counter_collection.csv"
    path.write_text("\n".join([*lines[:2], *halves, *lines[3:]]) + "\n")
    profile = load([str(path)])
    assert profile.count("dispatches") == 4
    got = loaded_counters(profile, 0)
    assert got[2] == {"SQ_WAVES": 16384.0}
    assert got == expected_counters(path)


def test_beside_a_trace_it_is_a_counter_run(tmp_path: Path) -> None:
    """Same folder, same pid prefix: the trace gives the dispatches, the counters are a run."""
    copy(TRACE, tmp_path / "4242_kernel_trace.csv")
    copy(FETCH, tmp_path / "4242_counter_collection.csv")
    profile = load([str(tmp_path)])
    assert roles(profile) == [
        ("4242_kernel_trace.csv", "dispatches"),
        ("4242_counter_collection.csv", "counter-run"),
    ]
    assert profile.inputs[1].rows == len(expected_counters(FETCH))  # 34, kept for their counters
    assert loaded_counters(profile, 1) == expected_counters(FETCH)


def test_beside_a_trace_kernels_are_counted_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy(TRACE, tmp_path / "4242_kernel_trace.csv")
    copy(FETCH, tmp_path / "4242_counter_collection.csv")
    doc = run_json(capsys, str(tmp_path))
    traced = rows(TRACE)
    assert doc["summary"]["dispatches"] == len(traced) == 144
    kernel = "scale_f32(float const*, float*, float, float, long)"
    calls = sum(r["Kernel_Name"] == kernel for r in traced)
    fetched = [float(r["Counter_Value"]) for r in rows(FETCH) if r["Kernel_Name"] == kernel]
    k = next(k for k in doc["kernels"] if k["name"] == kernel)
    assert k["calls"] == calls
    # FETCH_SIZE is KiB; the counter run's 2 dispatches are scaled to the trace's calls
    assert k["roofline"]["work_source"] == "counters (counter run)"
    hbm_read = 1024 * sum(fetched) * calls / len(fetched)
    assert k["roofline"]["bytes"]["hbm-read"] == pytest.approx(hbm_read)


def test_corpus_folder_layout(tmp_path: Path) -> None:
    """The gfx1151 corpus folder: one trace and two counter files of other runs, named
    decode_*: no dispatch is counted from the counter files."""
    copy(TRACE, tmp_path / "decode_kernel_trace.csv")
    copy(FETCH, tmp_path / "decode_fetch_counter_collection.csv")
    copy(STALL, tmp_path / "decode_stall_counter_collection.csv")
    profile = load([str(tmp_path)])
    assert [r for _, r in roles(profile)] == ["dispatches", "counter-run", "counter-run"]
    assert profile.sources("dispatches") == [0]
    assert profile.inputs[0].rows == len(rows(TRACE))


def test_passes_without_a_trace(tmp_path: Path) -> None:
    """pass_N/ folders are runs of one program whose dispatch ids restart: the lowest pass
    gives the dispatches, every pass keeps its counters on its own dispatch rows."""
    copy(FETCH, tmp_path / "pass_1" / "1001_counter_collection.csv")
    copy(STALL, tmp_path / "pass_2" / "1002_counter_collection.csv")
    profile = load([str(tmp_path)])
    assert roles(profile) == [
        ("1001_counter_collection.csv", "dispatches"),
        ("1002_counter_collection.csv", "counter-run"),
    ]
    assert loaded_counters(profile, 0) == expected_counters(FETCH)
    assert loaded_counters(profile, 1) == expected_counters(STALL)
    ids = profile.con.execute(
        "SELECT source, min(dispatch_id), count(*) FROM dispatches GROUP BY source ORDER BY 1"
    )
    assert ids.fetchall() == [(0, 1, 34), (1, 1, 10)]
    assert profile.con.execute("SELECT pid FROM dispatches WHERE source = 1").fetchone() == (1002,)


def test_passes_beside_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy(TRACE, tmp_path / "5000_kernel_trace.csv")
    copy(FETCH, tmp_path / "pmc_1" / "5001_counter_collection.csv")
    copy(STALL, tmp_path / "pmc_2" / "5002_counter_collection.csv")
    doc = run_json(capsys, str(tmp_path))
    assert [(Path(f["path"]).name, f["role"]) for f in doc["inputs"]] == [
        ("5000_kernel_trace.csv", "dispatches"),
        ("5001_counter_collection.csv", "counter-run"),
        ("5002_counter_collection.csv", "counter-run"),
    ]
    assert doc["summary"]["dispatches"] == len(rows(TRACE))


def gpu_row(path: Path) -> dict[str, str]:
    return next(r for r in rows(path) if r["Agent_Type"] == "GPU")


def test_agent_info_names_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(AGENTS), str(COUNTERS / "2025-08_counter_collection.csv"))
    gpu = gpu_row(AGENTS)
    assert doc["run"]["gpu"] == gpu["Product_Name"] == "Radeon RX Vega"
    assert doc["run"]["arch"] == gpu["Name"] == "gfx900"
    profile = load([str(AGENTS)])
    assert profile.run.compute_units == int(gpu["Cu_Count"]) == 64
    assert profile.run.xcds == int(gpu["Num_Xcc"]) == 1
    assert roles(profile) == [("238_agent_info.csv", "metadata")]
    assert profile.inputs[0].rows == 2  # the CPU and the GPU
    assert profile.count("dispatches") == 0
    schema = json.loads(
        resources.files("roofscope").joinpath("schema/report-v1.schema.json").read_text()
    )
    jsonschema.Draft202012Validator(schema).validate(doc)


def test_agent_info_takes_the_gpu_the_dispatches_name(tmp_path: Path) -> None:
    """Two GPUs; the trace's dispatches all ran on "Agent 4": that agent names the run."""
    lines = AGENTS.read_text().splitlines()
    other = lines[2].replace("1,1,", "4,4,", 1).replace('"gfx900"', '"gfx90a"')
    other = other.replace('"Radeon RX Vega"', '"AMD Instinct MI210"')
    agents = tmp_path / "834304_agent_info.csv"
    agents.write_text("\n".join([*lines, other]) + "\n")
    copy(DATA / "rocprofv3-layouts" / "2025-08_kernel_trace.csv", tmp_path / "trace.csv")
    profile = load([str(tmp_path)])
    assert (profile.run.gpu, profile.run.arch) == ("AMD Instinct MI210", "gfx90a")
    assert (load([str(agents)]).run.arch) == "gfx900"  # no dispatches: the first GPU


def error_of(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    assert main(["analyze", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_missing_column_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (COUNTERS / "2024-08_counter_collection.csv").read_text().splitlines()
    path = tmp_path / "counter_collection.csv"
    path.write_text(lines[0].replace(',"Counter_Value"', "") + "\n")
    err = error_of(capsys, path)
    assert f"{path}:1: is a rocprofv3 counter_collection.csv without Counter_Value" in err
    assert "pass the file as rocprofv3 wrote it" in err


def test_header_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "counter_collection.csv"
    path.write_text(FETCH.read_text().splitlines()[0] + "\n")
    assert "has no dispatch rows" in error_of(capsys, path)


def test_bad_cu_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = AGENTS.read_text().splitlines()
    path = tmp_path / "agent_info.csv"
    path.write_text("\n".join([*lines[:2], lines[2].replace(",1,64,4,", ",1,many,4,", 1)]) + "\n")
    err = error_of(capsys, path)
    assert f"{path}:3: Cu_Count is 'many', not a whole number" in err
    with pytest.raises(InputError):
        load([str(path)])


def test_malformed_row_is_reported_with_its_line(tmp_path: Path) -> None:
    src = COUNTERS / "2024-10_counter_collection.csv"
    lines = src.read_text().splitlines()
    lines[3] = lines[3].replace('"SQ_WAVES",16384', '"SQ_WAVES",lots')
    path = tmp_path / "counter_collection.csv"
    path.write_text("\n".join(lines) + "\n")
    profile = load([str(path)])
    assert profile.count("dispatches") == len(expected_counters(src)) - 1
    (warning,) = profile.warnings
    assert warning.code == "malformed-row"
    assert "line 4 (a field that is not a number)" in warning.message
