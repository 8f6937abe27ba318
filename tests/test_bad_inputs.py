"""Bad inputs: one line on stderr naming the file (and line), what was expected, the exit code.

Each bad file is built in ``tmp_path`` on the layout of a real rocprof v1 ``results.csv``
(ROCm >= 5.3, quoted header with DurationNs; rows as written for the hpctraining
finite-difference example on MI250X). Exit codes: 0 ok, 1 input error, 2 usage error.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from tests.test_numbers_read import misworded

HEADER = (
    '"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds",'
    '"scr","arch_vgpr","accum_vgpr","sgpr","wave_size","sig","obj","DispatchNs","BeginNs",'
    '"EndNs","CompleteNs","DurationNs"\n'
)
KERNEL = "void laplacian_kernel<double>(double*, double const*, int, int, int, double) [clone .kd]"
BEGIN = 1915914099980017
DURATION = 2610567


def row(index: int, name: str | None = None, *, begin: str | None = None) -> str:
    """One dispatch row; ``name`` is written as given (quote it yourself), default quoted."""
    start = BEGIN + index * 2_700_000
    name = '"' + KERNEL + '"' if name is None else name
    return (
        f"{index},{name},8,0,{index},2046349,2046349,"
        f'134217728,256,0,0,24,0,32,64,"0x0","0x7f28c7c855c0",{start - 25_000},'
        f"{start if begin is None else begin},{start + DURATION},{start + DURATION + 15_834},"
        f"{DURATION}\n"
    )


def results_csv(*rows: str) -> str:
    return HEADER + "".join(rows)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def error_line(err: str) -> str:
    """The one stderr line of an error, without its prefix."""
    assert "Traceback" not in err
    assert err.endswith("\n")
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("roofscope: error: "), err
    assert misworded(lines[0]) == [], lines[0]
    return lines[0].removeprefix("roofscope: error: ")


def analyze_ok(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> dict[str, Any]:
    code, out, err = run(capsys, "analyze", str(path), "--json", *extra)
    assert (code, err) == (0, "")
    doc: dict[str, Any] = json.loads(out)
    return doc


def warnings_by_code(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The warnings by code, each worded well (:func:`misworded`)."""
    wrong = {w["message"]: misworded(w["message"]) for w in doc["warnings"]}
    assert {m: said for m, said in wrong.items() if said} == {}
    return {w["code"]: w for w in doc["warnings"]}


# -- files that are not a profile at all ----------------------------------------------------


def test_empty_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_bytes(b"")
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 1
    assert out == ""
    assert error_line(err) == f"{path}: is empty; re-run the profiler; the file was never written"


def test_header_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(HEADER, encoding="utf-8")
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 1
    assert out == ""
    # no kernel ran in the profiled range (issue 19); was 'has no dispatch rows (header only, …'
    assert error_line(err) == (
        f"{path}: no kernel ran in the captured range: the profiler traced kernels and recorded "
        "none (the capture holds its header and no dispatch row); check that the profiled "
        "program launches kernels in the profiled range (a kernel filter or range that selects "
        "none records none)"
    )


def test_binary_garbage(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = bytearray(random.Random(20240901).randbytes(8192))
    data[0] = 0x7F  # neither gzip nor SQLite magic: plain garbage
    data[100:108] = bytes(8)
    assert b"\x00" in data
    path = tmp_path / "results.csv"
    path.write_bytes(bytes(data))
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 1
    assert out == ""
    assert error_line(err) == (
        f"{path}: is binary data, not a profiler CSV or JSON file; pass rocprof/rocprofv3 CSV "
        "or JSON output (see `roofscope formats`)"
    )


def test_another_tools_csv(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 1
    assert out == ""
    assert error_line(err) == (
        f"{path}:1: is not a recognised profiler file (first line: 'a,b,c'); pass "
        "rocprof/rocprofv3 output, or name the format with --format"
    )


def test_directory_without_profiler_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "README.txt").write_text("results of the weekly run\n", encoding="utf-8")
    (folder / "timings.csv").write_text("step,seconds\n1,0.5\n2,0.7\n", encoding="utf-8")
    code, out, err = run(capsys, "analyze", str(folder))
    assert code == 1
    assert out == ""
    assert error_line(err) == (
        f"{folder}: holds no profiler output that roofscope reads; point at the folder "
        "rocprof/rocprofv3 wrote (results.csv, *_kernel_trace.csv, ...)"
    )


@pytest.mark.parametrize(
    ("content", "kind"), [(b"", "empty"), (b"\x00\x9f\x92\x96" * 64, "binary")]
)
def test_directory_whose_output_is_damaged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, kind: str
) -> None:
    folder = tmp_path / "run"
    (folder / "rank0").mkdir(parents=True)
    (folder / "rank0" / "results.csv").write_bytes(content)
    code, out, err = run(capsys, "analyze", str(folder))
    assert code == 1
    assert out == ""
    assert error_line(err) == (
        f"{folder}: holds no profiler output that roofscope reads "
        f"(rank0/results.csv is {kind}); re-run the profiler; its output here is empty or damaged"
    )


def test_missing_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "results.csv"
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 1
    assert out == ""
    assert error_line(err) == f"{path}: no such file or directory; check the path"


def test_results_json_fragment_without_kernels(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The first line of a real rocprof v1 results.json, alone: metadata, no kernel events."""
    path = tmp_path / "results.json"
    path.write_text(
        ',{"args":{"name":"COPY"},"ph":"M","pid":1,"name":"process_name","sort_index":0}\n',
        encoding="utf-8",
    )
    code, out, err = run(capsys, "analyze", str(path))
    assert code == 1
    assert out == ""
    assert error_line(err) == (
        f"{path}: holds no kernel events (a results.json fragment, or a trace without GPU "
        "activity); analyse the results.csv written beside it, or re-run rocprof with --hsa-trace"
    )


# -- usage errors ---------------------------------------------------------------------------


def test_unknown_format(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(results_csv(row(0)), encoding="utf-8")
    code, out, err = run(capsys, "analyze", str(path), "--format", "nvprof")
    assert code == 2
    assert out == ""
    assert error_line(err) == (
        "--format nvprof: unknown format; use one of rocprof-v1-csv, rocprof-v1-stats, "
        "rocprof-v1-json, rocprofv3-kernel-trace, rocprofv3-stats, rocprofv3-memory-copy, "
        "rocprofv3-api-trace, rocprofv3-counters, rocprofv3-agent-info, rocprofv3-json, "
        "summary-csv, rocprof-compute-workload, rocprof-compute-csv, rocpd, kineto, "
        "nsys-kern-sum, nsys-gpu-trace, nsys-mem-time-sum, nsys-api-sum, nsys-api-trace, "
        "nsys-nvtx-trace, nsys-sqlite, ncu"
    )


def test_invalid_kernel_regex(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(results_csv(row(0)), encoding="utf-8")
    code, out, err = run(capsys, "analyze", str(path), "--kernel", "laplacian_kernel<(")
    assert code == 2
    assert out == ""
    line = error_line(err)
    # the rest is Python's own re.error text
    assert line.startswith("--kernel 'laplacian_kernel<(': not a valid regular expression (")
    assert "unterminated subpattern" in line


# -- damaged rows: read what can be read, say what was dropped ------------------------------


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda r: r[:60], id="inside-name"),
        pytest.param(lambda r: r[: r.index(',"0x0"')], id="after-wave-size"),
        pytest.param(lambda r: r[: r.index("2046349")], id="after-comma"),
    ],
)
def test_truncated_last_row(capsys: pytest.CaptureFixture[str], tmp_path: Path, cut: Any) -> None:
    """The profiler was stopped while writing: the cut row is dropped, the rest is read."""
    path = tmp_path / "results.csv"
    path.write_text(results_csv(row(0), row(1), row(2), row(3), cut(row(4))), encoding="utf-8")
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 4
    assert doc["inputs"][0]["rows"] == 4
    assert doc["warnings"] == [
        {
            "code": "truncated-last-row",
            "message": f"{path}:6: the last row is cut short (the profiler was stopped while "
            "writing) and was dropped",
            "count": 1,
        }
    ]


def test_last_row_cut_inside_duration(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Cut inside the final field, the row has all its fields: DurationNs gives it away."""
    last = row(3).rstrip("\n")
    duration = last.rsplit(",", 1)[1]
    path = tmp_path / "results.csv"
    path.write_text(results_csv(row(0), row(1), row(2), last[:-2]), encoding="utf-8")
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 4  # kept: its BeginNs and EndNs are whole
    fields = last.split(",")
    begin, end = int(fields[-4]), int(fields[-3])
    assert end - begin == int(duration)
    assert doc["warnings"] == [
        {
            "code": "truncated-last-row",
            "message": f"{path}: the last row ends inside its DurationNs ({duration[:-2]}, "
            f"where EndNs - BeginNs = {duration}): the profiler was stopped while writing; "
            "the row is kept, its time taken from BeginNs and EndNs, which are whole",
            "count": 1,
        }
    ]
    # the same rows with no final newline but nothing cut: no warning
    path.write_text(results_csv(row(0), row(1), row(2), last), encoding="utf-8")
    assert analyze_ok(capsys, path)["warnings"] == []


def test_not_utf8_in_kernel_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = row(1).encode().replace(b"laplacian_kernel", b"laplacian_\xff\xfekernel")
    path = tmp_path / "results.csv"
    path.write_bytes((HEADER + row(0)).encode() + bad + row(2).encode())
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 3
    assert doc["warnings"] == [
        {
            "code": "not-utf8",
            "message": f"{path}: kernel names with bytes that are not UTF-8 on line 3; they are "
            "shown with U+FFFD in their place",
            "count": 1,
        }
    ]
    normalised = KERNEL.removesuffix(" [clone .kd]")
    calls = {k["name"]: k["calls"] for k in doc["kernels"]}
    assert calls == {
        normalised: 2,
        normalised.replace("laplacian_kernel", "laplacian_\ufffd\ufffdkernel"): 1,
    }
    assert any("\ufffd\ufffd" in raw for k in doc["kernels"] for raw in k["raw_names"])


def test_unquoted_name_with_commas(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Old rocprof builds leave a name unquoted; its commas must not split it."""
    name = "void transpose<float, 16, 4>(float*, float const*, int, int) [clone .kd]"
    path = tmp_path / "results.csv"
    path.write_text(results_csv(row(0), row(1, name), row(2)), encoding="utf-8")
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 3
    assert doc["warnings"] == []
    kernels = {k["name"]: k for k in doc["kernels"]}
    recovered = kernels["void transpose<float, 16, 4>(float*, float const*, int, int)"]
    assert recovered["raw_names"] == [name]
    assert recovered["calls"] == 1
    assert recovered["total_s"] == DURATION / 1e9


def test_repeated_ids_are_counted_per_process(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Three processes in one file (pid 2046349, pid 1000, no pid) each number their
    dispatches from 0; only process 1000's second dispatch 3 repeats an id of its own."""
    other = [row(i).replace(",2046349,2046349,", ",1000,1000,") for i in (0, 1, 2, 3, 4, 5, 3)]
    unknown = [row(i).replace(",2046349,2046349,", ",,,") for i in range(3)]
    path = tmp_path / "results.csv"
    path.write_text(results_csv(*[row(i) for i in range(6)], *other, *unknown), encoding="utf-8")
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 16
    assert warnings_by_code(doc)["duplicate-dispatch-id"]["count"] == 1


def test_recovered_row_keeps_its_first_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    name = "void transpose<float, 16, 4>(float*, float const*, int, int) [clone .kd]"
    rows = [row(i) for i in range(10)] + [row(10, name)]
    path = tmp_path / "results.csv"
    path.write_text(results_csv(*rows), encoding="utf-8")
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 11
    # with the Index field cut from "10" to "0", dispatch 0 seems to be written twice
    assert "duplicate-dispatch-id" not in warnings_by_code(doc)


def test_non_numeric_timestamp_mid_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(
        results_csv(row(0), row(1), row(2, begin="19159141O2590584"), row(3), row(4)),
        encoding="utf-8",
    )
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 4
    assert doc["inputs"][0]["rows"] == 4
    assert doc["warnings"] == [
        {
            "code": "malformed-row",
            "message": f"{path}: 1 malformed row skipped: line 4 (field BeginNs = "
            "'19159141O2590584' is not a bigint)",
            "count": 1,
        }
    ]
