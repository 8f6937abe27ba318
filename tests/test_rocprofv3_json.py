"""rocprofv3's JSON output (docs/formats/rocprofv3.md, "JSON output"), and its Perfetto and
OTF2 outputs named for what they are ("Perfetto and OTF2 output").

The real file is the JSON export of rocprofiler-compute's MI300A vcopy run; the kernel trace
CSV of the same run is in tests/data/rocprofv3-layouts. Every expected number is computed here
from the files themselves with json and csv; the synthetic cases (counters, copies, renames,
damage) are that real file with records added or changed in tmp_path.
"""

from __future__ import annotations

import copy
import csv
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from roofscope.model.profile import Profile
from roofscope.readers.amd import rocprofv3_json_rows
from roofscope.readers.load import load
from tests.conftest import run_json

DATA = Path(__file__).parent / "data"
JSON = DATA / "rocprofv3-json" / "mi300a_ps_file_results.json"
CSV = DATA / "rocprofv3-layouts" / "mi300a_ps_file_kernel_trace.csv"
Cap = pytest.CaptureFixture[str]


def tool(path: Path = JSON) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc["rocprofiler-sdk-tool"][0]  # type: ignore[no-any-return]


def json_kernels(process: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per kernel (formatted name): dispatches and total ns, summed with plain Python."""
    names = {s["kernel_id"]: s["formatted_kernel_name"] for s in process["kernel_symbols"]}
    out: dict[str, tuple[int, int]] = {}
    for r in process["buffer_records"]["kernel_dispatch"]:
        name = names[r["dispatch_info"]["kernel_id"]]
        calls, total = out.get(name, (0, 0))
        out[name] = (calls + 1, total + r["end_timestamp"] - r["start_timestamp"])
    return out


def csv_kernels() -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    with CSV.open(newline="") as f:
        for r in csv.DictReader(f):
            calls, total = out.get(r["Kernel_Name"], (0, 0))
            ns = int(r["End_Timestamp"]) - int(r["Start_Timestamp"])
            out[r["Kernel_Name"]] = (calls + 1, total + ns)
    return out


def read_kernels(profile: Profile) -> dict[str, tuple[int, int]]:
    rows = profile.con.execute(
        """SELECT n.raw_name, count(*), sum(d.end_ns - d.start_ns) FROM dispatches d
        JOIN names n USING (name_id) GROUP BY 1"""
    ).fetchall()
    return {str(k): (int(c), int(t)) for k, c, t in rows}


def dispatch_rows(profile: Profile) -> list[tuple[Any, ...]]:
    return profile.con.execute(
        "SELECT dispatch_id, device, start_ns, end_ns FROM dispatches ORDER BY start_ns"
    ).fetchall()


def launch_rows(profile: Profile) -> list[tuple[Any, ...]]:
    profile.launches()  # the CSV reader fills them when first asked
    return profile.con.execute(
        """SELECT n.raw_name, tid, queue, stream, grid_size, workgroup_size, lds_bytes,
        scratch_bytes, arch_vgpr, accum_vgpr, sgpr, dispatches FROM launches
        JOIN names n USING (name_id) ORDER BY 1"""
    ).fetchall()


def write(path: Path, process: dict[str, Any], *, bare: bool = False, **dump: Any) -> Path:
    body: Any = process if bare else [process]
    path.write_text(json.dumps({"rocprofiler-sdk-tool": body}, **dump), encoding="utf-8")
    return path


def error_of(capsys: Cap, path: Path) -> str:
    """``roofscope analyze PATH``: exit 1 and one line on stderr, returned."""
    assert main(["analyze", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    return err.strip()


# -- the real file ------------------------------------------------------------------------


def test_json_and_csv_of_one_run_read_alike() -> None:
    """The JSON and the kernel trace CSV of one run: the same kernels, calls and ns (as both
    files say, summed here), the same dispatches on the same device, the same launch shapes."""
    expected = json_kernels(tool())
    assert (
        expected
        == csv_kernels()
        == {"vecCopy(double*, double*, double*, int, int)": (3, 8292 + 5528 + 5488)}
    )
    from_json, from_csv = load([str(JSON)]), load([str(CSV)])
    assert read_kernels(from_json) == read_kernels(from_csv) == expected
    assert dispatch_rows(from_json) == dispatch_rows(from_csv)
    assert [d[:2] for d in dispatch_rows(from_json)] == [(1, 2), (2, 2), (3, 2)]
    assert launch_rows(from_json) == launch_rows(from_csv)
    vec = next(s for s in tool()["kernel_symbols"] if s["kernel_id"] == 12)
    shape = (vec["arch_vgpr_count"], vec["accum_vgpr_count"], vec["sgpr_count"])
    assert (
        launch_rows(from_json)[0][4:]
        == (1048576, 256, 0, 0, *shape, 3)
        == (
            1048576,
            256,
            0,
            0,
            4,
            4,
            16,
            3,
        )
    )
    assert from_json.inputs[0].format == "rocprofv3-json"


def test_the_check_up_of_both_agrees(capsys: Cap) -> None:
    """analyze --json of the CSV (told the GPU the JSON names) and of the JSON: the same
    kernels, summary, devices, activity, findings and warnings."""
    from_csv = run_json(capsys, str(CSV), "--gpu", "mi300x")
    from_json = run_json(capsys, str(JSON))
    for part in ("kernels", "summary", "devices", "activity", "findings", "warnings"):
        assert from_json[part] == from_csv[part], part
    assert from_json["summary"]["dispatches"] == 3


def test_the_gpu_comes_from_the_agents(capsys: Cap) -> None:
    """The GPU agent the dispatches ran on names the run and the device, as agent_info.csv
    would; the CSV alone names none."""
    gpu = next(a for a in tool()["agents"] if a["type"] == 2)
    run = load([str(JSON)]).run
    assert (
        (run.producer, run.gpu, run.arch, run.compute_units, run.xcds)
        == (
            "rocprofv3",
            gpu["product_name"],
            gpu["name"],
            gpu["cu_count"],
            gpu["num_xcc"],
        )
        == ("rocprofv3", "AMD Instinct MI300X", "gfx942", 304, 8)
    )
    assert load([str(CSV)]).run.gpu is None
    doc = run_json(capsys, str(JSON))
    assert (doc["device"]["key"], doc["device"]["detected_from"]) == (
        "mi300x",
        "profile: AMD Instinct MI300X",
    )


def test_a_gpu_in_no_catalogue_gets_ceilings_from_its_agent(capsys: Cap, tmp_path: Path) -> None:
    """The agent's engine clock and memory feed the run's facts: for a part no catalogue
    names, compute ceilings are derived from its CUs and clock (gfx942's 128 FP64 FLOP per
    clock per CU, the catalogue's rate); the memory clock is not used (see the reader)."""
    p = tool()
    gpu = next(a for a in p["agents"] if a["type"] == 2)
    gpu["product_name"] = "AMD Instinct MI3X9"
    run = load([str(write(tmp_path / "u.json", p))]).run
    assert (
        (run.clock_mhz, run.memory_bytes)
        == (
            float(gpu["max_engine_clk_fcompute"]),
            gpu["mem_banks"][0]["size_in_bytes"],
        )
        == (2100.0, 206141652992)
    )
    doc = run_json(capsys, str(tmp_path / "u.json"))
    fp64 = next(c for c in doc["device"]["ceilings"] if c["name"] == "fp64-vector")
    assert fp64["value"] == gpu["cu_count"] * 128 * gpu["max_engine_clk_fcompute"] * 1e6
    assert doc["device"]["detected_from"].startswith("derived from the profile's device")


def test_gzipped_pretty_sorted_or_bare_reads_the_same(tmp_path: Path) -> None:
    """gzip, indentation, keys in sorted order (the symbols after the records) and a bare
    object in place of the array give the same dispatches."""
    gz = tmp_path / "281643_results.json.gz"
    gz.write_bytes(gzip.compress(JSON.read_bytes()))
    variants = [
        gz,
        write(tmp_path / "sorted.json", tool(), indent=2, sort_keys=True),
        write(tmp_path / "bare.json", tool(), bare=True),
    ]
    expected = dispatch_rows(load([str(JSON)]))
    for path in variants:
        profile = load([str(path)])
        assert dispatch_rows(profile) == expected, path.name
        assert read_kernels(profile) == json_kernels(tool())


def test_two_processes_in_one_file(tmp_path: Path) -> None:
    """Each process's records are named by its own symbols and agents, under its pid."""
    first, second = tool(), tool()
    second["metadata"]["pid"] = 281644
    for symbol in second["kernel_symbols"]:  # the same kernels under other ids
        symbol["kernel_id"] += 100
    for record in second["buffer_records"]["kernel_dispatch"]:
        record["dispatch_info"]["kernel_id"] += 100
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"rocprofiler-sdk-tool": [first, second]}), encoding="utf-8")
    profile = load([str(path)])
    pids = profile.con.execute("SELECT pid, count(*) FROM dispatches GROUP BY 1 ORDER BY 1")
    assert pids.fetchall() == [(281643, 3), (281644, 3)]
    calls, total = json_kernels(first)["vecCopy(double*, double*, double*, int, int)"]
    assert read_kernels(profile) == {
        "vecCopy(double*, double*, double*, int, int)": (2 * calls, 2 * total)
    }


def test_records_staged_in_small_batches_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rocprofv3_json_rows, "BATCH", 1)
    assert dispatch_rows(load([str(JSON)])) == dispatch_rows(load([str(CSV)]))


def test_records_through_numpy_columns_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of SMALL_BATCH rows or more goes to DuckDB as numpy columns."""
    monkeypatch.setattr(rocprofv3_json_rows, "SMALL_BATCH", 0)
    assert dispatch_rows(load([str(JSON)])) == dispatch_rows(load([str(CSV)]))


@pytest.mark.parametrize("small", [4096, 0])
def test_a_number_past_64_bits(
    capsys: Cap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: int
) -> None:
    monkeypatch.setattr(rocprofv3_json_rows, "SMALL_BATCH", small)
    p = tool()
    p["buffer_records"]["kernel_dispatch"][1]["end_timestamp"] = 2**64
    path = write(tmp_path / "big.json", p)
    assert error_of(capsys, path) == (
        f"roofscope: error: {path}: a record: holds {2**64}, past 64 bits; pass the "
        "results.json rocprofv3 wrote, unedited"
    )


@pytest.mark.parametrize("prefix", ["281643_", "ps_file_"])
def test_csv_and_json_of_one_run_in_one_folder(tmp_path: Path, prefix: str) -> None:
    """rocprofv3 --output-format csv,json: the kernel trace CSV gives the dispatches (counted
    once, whatever the prefix), the JSON beside it the GPU from its agents (no agent_info.csv
    in the folder), read as metadata."""
    (tmp_path / f"{prefix}kernel_trace.csv").write_bytes(CSV.read_bytes())
    (tmp_path / f"{prefix}results.json").write_bytes(JSON.read_bytes())
    profile = load([str(tmp_path)])
    assert read_kernels(profile) == csv_kernels()
    assert [(Path(f.path).name, f.format, f.role.value) for f in profile.inputs] == [
        (f"{prefix}kernel_trace.csv", "rocprofv3-kernel-trace", "dispatches"),
        (f"{prefix}results.json", "rocprofv3-json", "metadata"),
    ]
    assert (profile.run.gpu, profile.run.arch, profile.run.compute_units) == (
        "AMD Instinct MI300X",
        "gfx942",
        304,
    )


def test_formats_lists_it(capsys: Cap) -> None:
    assert main(["formats"]) == 0
    assert "rocprofv3-json" in capsys.readouterr().out


# -- counters, copies, renames (the real file with records added) ------------------------


def with_counters(process: dict[str, Any], *, trace: bool) -> dict[str, Any]:
    """Counter records for the three dispatches: SQ_WAVES on 2 instances and GRBM_COUNT on
    one, as rocprofv3 writes them per instance; without ``trace`` no kernel_dispatch."""
    p = copy.deepcopy(process)
    p["counters"] = [
        {"agent_id": {"handle": 32602}, "id": {"handle": 7}, "name": "SQ_WAVES"},
        {"agent_id": {"handle": 32602}, "id": {"handle": 9}, "name": "GRBM_COUNT"},
    ]
    records = []
    for i, d in enumerate(p["buffer_records"]["kernel_dispatch"]):
        data = {k: d[k] for k in ("correlation_id", "start_timestamp", "end_timestamp")}
        values = [(7, 2048 + i), (7, 2048), (9, 100 * (i + 1))]
        records.append(
            {
                "thread_id": d["thread_id"],
                "dispatch_data": {"size": 96, **data, "dispatch_info": d["dispatch_info"]},
                "records": [{"counter_id": {"handle": c}, "value": v} for c, v in values],
                "stream_id": {"handle": 0},
            }
        )
    p["callback_records"]["counter_collection"] = records
    if not trace:
        p["buffer_records"]["kernel_dispatch"] = []
    return p


def counter_values(profile: Profile) -> list[tuple[Any, ...]]:
    return profile.con.execute(
        """SELECT d.dispatch_id, n.counter, c.value FROM counters c
        JOIN dispatches d ON d.rowid = c.row_id JOIN counter_names n USING (counter_id)
        ORDER BY 1, 2"""
    ).fetchall()


@pytest.mark.parametrize("trace", [True, False])
def test_counters_are_summed_over_instances(tmp_path: Path, trace: bool) -> None:
    """Each counter's instances summed per dispatch (SQ_WAVES 2048 + i + 2048); with a kernel
    trace they go on its dispatches, without one the counter records are the dispatches."""
    profile = load([str(write(tmp_path / "c.json", with_counters(tool(), trace=trace)))])
    assert counter_values(profile) == [
        (1, "GRBM_COUNT", 100.0),
        (1, "SQ_WAVES", 4096.0),
        (2, "GRBM_COUNT", 200.0),
        (2, "SQ_WAVES", 4097.0),
        (3, "GRBM_COUNT", 300.0),
        (3, "SQ_WAVES", 4098.0),
    ]
    assert dispatch_rows(profile) == dispatch_rows(load([str(JSON)]))


def test_copies_keep_their_direction_and_agents(tmp_path: Path) -> None:
    p = tool()
    p["strings"]["buffer_records"] = [
        {
            "kind": "MEMORY_COPY",
            "operations": [
                "MEMORY_COPY_NONE",
                "MEMORY_COPY_HOST_TO_HOST",
                "MEMORY_COPY_HOST_TO_DEVICE",
                "MEMORY_COPY_DEVICE_TO_HOST",
                "MEMORY_COPY_DEVICE_TO_DEVICE",
            ],
        }
    ]
    p["buffer_records"]["memory_copy"] = [
        {
            "size": 80,
            "kind": 14,
            "operation": op,
            "thread_id": 281643,
            "correlation_id": {"internal": 9, "external": 0},
            "start_timestamp": start,
            "end_timestamp": start + 1000,
            "dst_agent_id": {"handle": dst},
            "src_agent_id": {"handle": src},
            "bytes": 8388608,
        }
        for op, src, dst, start in ((2, 32600, 32602, 10), (3, 32602, 32600, 5000))
    ]
    profile = load([str(write(tmp_path / "m.json", p))])
    rows = profile.con.execute(
        "SELECT pid, direction, src_agent, dst_agent, start_ns, end_ns FROM copies ORDER BY 5"
    ).fetchall()
    assert rows == [
        (281643, "MEMORY_COPY_HOST_TO_DEVICE", "Agent 0", "Agent 2", 10, 1010),
        (281643, "MEMORY_COPY_DEVICE_TO_HOST", "Agent 2", "Agent 0", 5000, 6000),
    ]
    assert [f.role.value for f in profile.inputs] == ["dispatches", "copies"]


def test_kernel_rename_names_the_dispatch(tmp_path: Path) -> None:
    """--kernel-rename: a dispatch whose external correlation id has a string is named by it,
    as the CSV writer names it (metadata::get_kernel_name)."""
    p = tool()
    p["strings"]["correlation_id"]["external"] = [{"key": 5, "value": "roctx: copy phase"}]
    p["buffer_records"]["kernel_dispatch"][1]["correlation_id"]["external"] = 5
    profile = load([str(write(tmp_path / "r.json", p))])
    assert read_kernels(profile) == {
        "vecCopy(double*, double*, double*, int, int)": (2, 8292 + 5488),
        "roctx: copy phase": (1, 5528),
    }


# -- damaged files --------------------------------------------------------------------------


def test_record_naming_an_unlisted_kernel_or_agent(capsys: Cap, tmp_path: Path) -> None:
    p = tool()
    p["buffer_records"]["kernel_dispatch"][2]["dispatch_info"]["kernel_id"] = 99
    path = write(tmp_path / "k.json", p)
    assert error_of(capsys, path) == (
        f"roofscope: error: {path}: records name kernel_id 99: the file lists no such "
        "kernel_id; pass the results.json rocprofv3 wrote, unedited"
    )
    p = tool()
    p["buffer_records"]["kernel_dispatch"][0]["dispatch_info"]["agent_id"]["handle"] = 1
    path = write(tmp_path / "a.json", p)
    assert "records name agent handle 1: the file lists no such agent handle" in error_of(
        capsys, path
    )


def test_record_missing_a_field_or_holding_text(capsys: Cap, tmp_path: Path) -> None:
    p = tool()
    del p["buffer_records"]["kernel_dispatch"][1]["dispatch_info"]
    path = write(tmp_path / "f.json", p)
    assert error_of(capsys, path) == (
        f"roofscope: error: {path}: buffer_records.kernel_dispatch[1]: lacks the field "
        "'dispatch_info'; pass the results.json rocprofv3 wrote, unedited"
    )
    p = tool()
    p["buffer_records"]["kernel_dispatch"][2]["end_timestamp"] = "1986623975936443"
    path = write(tmp_path / "t.json", p)
    assert error_of(capsys, path) == (
        f"roofscope: error: {path}: buffer_records.kernel_dispatch[2]: holds "
        "'1986623975936443' where a whole number belongs; pass the results.json rocprofv3 "
        "wrote, unedited"
    )


def test_a_grid_out_of_any_range(capsys: Cap, tmp_path: Path) -> None:
    """Found by fuzzing: a grid size of 1e999999999 overflowed the product of x, y and z."""
    text = JSON.read_text(encoding="utf-8")
    path = tmp_path / "grid.json"
    path.write_text(text.replace('"grid_size":{"x":1048576', '"grid_size":{"x":1e999999999', 1))
    assert error_of(capsys, path) == (
        f"roofscope: error: {path}: buffer_records.kernel_dispatch[0]: holds a number out of "
        "any range (its grid or workgroup size); pass the results.json rocprofv3 wrote, unedited"
    )


def test_no_dispatches_or_no_process(capsys: Cap, tmp_path: Path) -> None:
    p = tool()
    p["buffer_records"]["kernel_dispatch"] = []
    path = write(tmp_path / "e.json", p)
    assert error_of(capsys, path) == (
        f"roofscope: error: {path}: holds no kernel dispatches (buffer_records.kernel_dispatch "
        "and callback_records.counter_collection are empty); re-run rocprofv3 with "
        "--kernel-trace (or --pmc) and --output-format json"
    )
    path = tmp_path / "none.json"
    path.write_text('{"rocprofiler-sdk-tool": []}', encoding="utf-8")
    assert error_of(capsys, path) == (
        f'roofscope: error: {path}: has no process under "rocprofiler-sdk-tool"; export the '
        "profile again with rocprofv3"
    )


def test_cut_short(capsys: Cap, tmp_path: Path) -> None:
    text = JSON.read_text(encoding="utf-8")
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) - 200], encoding="utf-8")
    assert error_of(capsys, path) == (
        f"roofscope: error: {path}: the trace was cut short after {len(text) - 200} "
        "characters; the profiler or a copy did not finish writing it; export the trace again"
    )


# -- outputs roofscope does not read ----------------------------------------------------------

PERFETTO_START = bytes.fromhex("0a1282477a76b28d42ba81dc33326d57a079")  # a sync-marker packet


def test_perfetto_and_otf2_named(capsys: Cap, tmp_path: Path) -> None:
    """rocprofv3's pftrace and otf2 outputs: what the file is and which output to pass."""
    remedy = (
        "roofscope reads rocprofv3's csv, json or rocpd output: re-run rocprofv3 with "
        "--output-format csv (or json, or rocpd)"
    )
    trace = tmp_path / "281643_results.pftrace"
    trace.write_bytes(b"\x0a\x04\x08\x01\x10\x02" + PERFETTO_START + bytes(range(256)) * 4)
    assert error_of(capsys, trace) == (
        f"roofscope: error: {trace}: is a Perfetto protobuf trace (what rocprofv3 "
        f"--output-format pftrace writes), which roofscope does not read; {remedy}"
    )
    anchor = tmp_path / "results.otf2"
    anchor.write_bytes(b"\x00\x01OTF2\x00" + bytes(range(256)))
    (tmp_path / "results.def").write_bytes(b"\x00\x02")
    (tmp_path / "results").mkdir()
    assert error_of(capsys, anchor) == (
        f"roofscope: error: {anchor}: is the anchor file of an OTF2 archive (what rocprofv3 "
        "--output-format otf2 writes, with results.def and results/ beside it), which "
        f"roofscope does not read; {remedy}"
    )
    lone = tmp_path / "lone.otf2"
    lone.write_bytes(b"\x00\x01OTF2\x00" + bytes(range(256)))
    assert "is binary data, not a profiler CSV or JSON file" in error_of(capsys, lone)
