"""rocprof v1 results.json: nanosecond args, GPU pids, copies and API events apart."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, DEMO, kernels_by_name, run_json

HEADER = '{ "traceEvents":[{}\n'
META = ',{"args":{"name":"GPU8"},"ph":"M","pid":14,"name":"process_name","sort_index":3}\n'


def kernel_event(row: dict[str, str], *, quoted_ids: bool) -> str:
    """One KERN event as tblextr/sqlitedb write it: ts/dur rounded to µs, args as strings."""
    pid = int(row["gpu-id"]) + 6
    ids = f'"pid":"{pid}","tid":"{row["tid"]}"' if quoted_ids else f'"pid":{pid},"tid":{row["tid"]}'
    args = ",\n    ".join(
        f'"{k}":"{row[k]}"'
        for k in (
            "KernelName",
            "gpu-id",
            "queue-id",
            "pid",
            "tid",
            "grd",
            "wgr",
            "lds",
            "scr",
            "arch_vgpr",
            "accum_vgpr",
            "sgpr",
            "wave_size",
            "BeginNs",
            "EndNs",
            "DurationNs",
        )
    )
    ts, dur = int(row["BeginNs"]) // 1000, max(1, int(row["DurationNs"]) // 1000)
    return (
        f',{{"ph":"X","name":"{row["KernelName"]}",{ids},"ts":"{ts}","dur":"{dur}",\n'
        f'  "args":{{\n    {args}\n  }}\n}}\n'
    )


def write_json(path: Path, rows: list[dict[str, str]], *, quoted_ids: bool) -> None:
    events = [kernel_event(r, quoted_ids=quoted_ids) for r in rows]
    copy = (
        ',{"ph":"X","name":"async-copy","pid":1,"tid":0,"ts":"1","dur":"2",\n  "args":{\n'
        '    "BeginNs":"1000","EndNs":"3000","DurationNs":"2000"\n  }\n}\n'
    )
    api = (
        ',{"ph":"X","name":"hipMemcpy","pid":2,"tid":7,"ts":"1","dur":"2",\n  "args":{\n'
        '    "BeginNs":"500","EndNs":"4500","DurationNs":"4000"\n  }\n}\n'
    )
    path.write_text(
        HEADER + META + "".join(events) + copy + api + '],"otherData": {\n    "ROCm": "5.7"\n  }\n}'
    )


@pytest.mark.parametrize("quoted_ids", [False, True])
def test_json_equals_csv_of_the_same_run(
    tmp_path: Path, quoted_ids: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    with (DEMO / "results.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    write_json(tmp_path / "results.json", rows, quoted_ids=quoted_ids)
    from_json = run_json(capsys, str(tmp_path / "results.json"))
    from_csv = run_json(capsys, str(DEMO / "results.csv"))
    for key in ("kernel_time_s", "dispatches", "busy_s", "wall_s", "kernels_for_80pct"):
        assert from_json["summary"][key] == from_csv["summary"][key]
    assert kernels_by_name(from_json).keys() == kernels_by_name(from_csv).keys()
    for name, k in kernels_by_name(from_csv).items():
        j = kernels_by_name(from_json)[name]
        assert (j["calls"], j["total_s"], j["median_s"]) == (
            k["calls"],
            k["total_s"],
            k["median_s"],
        )
    assert {(a["kind"], a["name"], a["calls"]) for a in from_json["activity"]} == {
        ("api", "hipMemcpy", 1),
        ("copy", "async-copy", 1),
    }


def test_names_with_unescaped_quotes_are_recovered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {
        "KernelName": 'void k<"x">(int)',
        "gpu-id": "0",
        "queue-id": "0",
        "pid": "1",
        "tid": "1",
        "grd": "64",
        "wgr": "64",
        "lds": "0",
        "scr": "0",
        "arch_vgpr": "8",
        "accum_vgpr": "0",
        "sgpr": "16",
        "wave_size": "64",
        "BeginNs": "1000",
        "EndNs": "1700",
        "DurationNs": "700",
    }
    write_json(tmp_path / "results.json", [row], quoted_ids=False)
    doc = run_json(capsys, str(tmp_path / "results.json"))
    assert [(k["name"], k["total_s"]) for k in doc["kernels"]] == [('void k<"x">(int)', 700e-9)]


def test_csv_wins_over_json_of_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results.csv").write_bytes((DEMO / "results.csv").read_bytes())
    (tmp_path / "results.json").write_bytes(
        (DATA / "rocprofv1-mi250x" / "fragment" / "results.json").read_bytes()
    )
    doc = run_json(capsys, str(tmp_path))
    assert [Path(i["path"]).name for i in doc["inputs"]] == ["results.csv"]


def test_fragment_alone_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "rocprofv1-mi250x" / "fragment" / "results.json"
    assert main(["analyze", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"roofscope: error: {path}: holds no kernel events")
    assert err.count("\n") == 1


def test_api_and_copies_without_kernels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The trace write_json gives with no kernel row: one hipMemcpy and one async copy, the
    GPU traced and no kernel run (it was 'a results.json fragment, or a trace without GPU
    activity'); with a hipLaunchKernel among the calls, the kernels were not recorded."""
    path = tmp_path / "results.json"
    write_json(path, [], quoted_ids=False)
    assert main(["analyze", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"roofscope: error: {path}: no kernel ran in the captured range: the profiler traced "
        "kernels and recorded none (the capture holds 1 API call, 1 copy); profile a range "
        "in which the program launches kernels (rocprof --trace-start, or the roctx range or "
        "kernel filter of the input file that selected none)\n"
    )
    path.write_text(path.read_text().replace('"hipMemcpy"', '"hipLaunchKernel"'))
    assert main(["analyze", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"roofscope: error: {path}: holds no kernel events, though its API trace holds 1 kernel "
        "launch: the profiler did not record kernels; re-run rocprof with --hsa-trace (or "
        "--hip-trace) so that kernels are recorded\n"
    )
