"""The catalogue of bad inputs (docs/bad-inputs.md): one test per class not already covered by
tests/test_bad_inputs.py. Each bad file is made in ``tmp_path`` from a real file in
tests/data; each test asserts the promised behaviour: exit 1 (2 for an output path) with one
stderr line naming the file, or a result whose JSON holds the named warning code.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from roofscope.model.words import sig
from roofscope.readers.load import load
from tests.conftest import DATA, DEMO, NAMED_COUNTERS, rocpd_table
from tests.test_bad_inputs import analyze_ok, error_line, run, warnings_by_code
from tests.test_nsys import KERNELS as NSYS_KERNELS
from tests.test_nsys import build_export

V1 = DATA / "rocprofv1-mi250x" / "laplacian"

V3 = DATA / "rocprofv3-layouts" / "2025-08_kernel_trace.csv"
KINETO = DATA / "kineto" / "inference_rank_1.json.gz"
ROCPD = DATA / "rocpd-mi250x" / "finite-difference_results.db"
NSYS = DATA / "nsys" / "host_cuda_gpu_trace.csv"

Cap = pytest.CaptureFixture[str]


def fails(capsys: Cap, path: Path | str, *extra: str, code: int = 1) -> str:
    """Run analyze; assert the exit code, no stdout and one error line; return that line."""
    rc, out, err = run(capsys, "analyze", str(path), *extra)
    assert (rc, out) == (code, ""), err
    return error_line(err)


def v3_lines() -> list[str]:
    return V3.read_text(encoding="utf-8").splitlines(keepends=True)


def v3_with(tmp_path: Path, column: str, value: str, *, line: int = 3) -> Path:
    """The rocprofv3 kernel trace with one field of one row (0 = header) replaced."""
    lines = v3_lines()
    header = [h.strip('"') for h in lines[0].strip().split(",")]
    fields = lines[line].rstrip("\n").split(",")
    fields[header.index(column) - len(header)] = value  # from the right: the name has commas
    lines[line] = ",".join(fields) + "\n"
    return write(tmp_path / "1_kernel_trace.csv", "".join(lines))


def v3_field(column: str, line: int = 3) -> str:
    lines = v3_lines()
    header = [h.strip('"') for h in lines[0].strip().split(",")]
    return lines[line].rstrip("\n").split(",")[header.index(column) - len(header)]


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# -- whole files: empty, header only, cut short ---------------------------------------------


def test_v3_header_only(capsys: Cap, tmp_path: Path) -> None:
    path = write(tmp_path / "1_kernel_trace.csv", v3_lines()[0])
    # the kernel trace is written when kernels are traced: its header alone says none ran
    # (issue 19); it was 'has no dispatch rows (header only, or every row malformed)'
    assert fails(capsys, path) == (
        f"{path}: no kernel ran in the captured range: the profiler traced kernels and recorded "
        "none (the capture holds its header and no dispatch row); check that the profiled "
        "program launches kernels in the profiled range (a kernel filter or range that selects "
        "none records none)"
    )


def test_nsys_header_only(capsys: Cap, tmp_path: Path) -> None:
    path = write(tmp_path / "r_cuda_gpu_trace.csv", NSYS.read_text().splitlines(True)[0])
    assert fails(capsys, path).startswith(f"{path}: has no kernel rows (header only")


def test_kineto_empty_gzip(capsys: Cap, tmp_path: Path) -> None:
    path = write(tmp_path / "trace.json.gz", gzip.compress(b""))
    assert (
        fails(capsys, path) == f"{path}: is empty; re-run the profiler; the file was never written"
    )


def test_v3_csv_cut_at_a_byte(capsys: Cap, tmp_path: Path) -> None:
    data = V3.read_bytes()
    path = write(tmp_path / "1_kernel_trace.csv", data[: len(data) // 2 + 7])
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 3
    assert list(warnings_by_code(doc)) == ["truncated-last-row"]


def test_kineto_json_cut_at_a_byte(capsys: Cap, tmp_path: Path) -> None:
    text = gzip.decompress(KINETO.read_bytes())
    path = write(tmp_path / "trace.json", text[: len(text) // 2])
    assert fails(capsys, path).startswith(f"{path}: the trace was cut short after ")


def test_kineto_gzip_cut_at_a_byte(capsys: Cap, tmp_path: Path) -> None:
    data = KINETO.read_bytes()
    path = write(tmp_path / "trace.json.gz", data[: len(data) // 2])
    line = fails(capsys, path)
    assert line.startswith(f"{path}: the trace was cut short after ")
    assert "end-of-stream marker" in line


@pytest.mark.parametrize("keep", [4096, 0.5])
def test_rocpd_cut_at_a_byte(capsys: Cap, tmp_path: Path, keep: float) -> None:
    data = ROCPD.read_bytes()
    path = write(tmp_path / "results.db", data[: int(keep if keep > 1 else len(data) * keep)])
    assert fails(capsys, path) == (
        f"{path}: is a damaged SQLite database (database disk image is malformed); re-run the "
        "profiler; the file was cut short or overwritten"
    )


# -- encodings and line endings ------------------------------------------------------------


def test_v1_crlf(capsys: Cap, tmp_path: Path) -> None:
    path = write(
        tmp_path / "results.csv", (V1 / "results.csv").read_bytes().replace(b"\n", b"\r\n")
    )
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 1004
    assert doc["warnings"] == []


def test_v3_bom_and_crlf(capsys: Cap, tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + V3.read_bytes().replace(b"\n", b"\r\n")
    doc = analyze_ok(capsys, write(tmp_path / "1_kernel_trace.csv", data))
    assert doc["summary"]["dispatches"] == 9
    assert doc["warnings"] == []


# -- rows with the wrong number of fields, quoting ---------------------------------------------


def test_v3_row_with_too_many_fields(capsys: Cap, tmp_path: Path) -> None:
    """Was read from the right as a kernel named '"multiply...",3,<Start>' taking 0 ns."""
    lines = v3_lines()
    lines[3] = lines[3].rstrip("\n") + ",7,8\n"
    path = write(tmp_path / "1_kernel_trace.csv", "".join(lines))
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 8
    assert doc["warnings"] == [
        {
            "code": "malformed-row",
            "message": f"{path}: 1 malformed row skipped: line 4 (more fields than the "
            "header's 22 (a comma inside a number?))",
            "count": 1,
        }
    ]


def test_v3_row_with_too_few_fields(capsys: Cap, tmp_path: Path) -> None:
    lines = v3_lines()
    lines[3] = lines[3].rsplit(",", 3)[0] + "\n"
    path = write(tmp_path / "1_kernel_trace.csv", "".join(lines))
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 8
    assert warnings_by_code(doc)["malformed-row"]["message"].startswith(
        f"{path}: 1 malformed row skipped: line 4 ("
    )


def test_nsys_row_with_too_few_fields(capsys: Cap, tmp_path: Path) -> None:
    lines = NSYS.read_text().splitlines(keepends=True)
    i = next(j for j, x in enumerate(lines) if j and "[CUDA" not in x)
    lines[i] = lines[i].split(",", 1)[0] + "\n"
    path = write(tmp_path / "r_cuda_gpu_trace.csv", "".join(lines))
    assert fails(capsys, path).startswith(f"{path}:{i + 1}: has too few fields (")


def test_v3_quoted_name_with_quotes_and_newline(capsys: Cap, tmp_path: Path) -> None:
    lines = v3_lines()
    assert '"multiply_kernel(' in lines[3]
    lines[3] = lines[3].replace('"multiply_kernel(', '"multi""ply\nkernel(')
    doc = analyze_ok(capsys, write(tmp_path / "1_kernel_trace.csv", "".join(lines)))
    assert doc["summary"]["dispatches"] == 9
    assert doc["warnings"] == []
    assert any('multi"ply\nkernel(' in k["name"] for k in doc["kernels"])


# -- numbers ----------------------------------------------------------------------------------


def test_v3_thousands_separators(capsys: Cap, tmp_path: Path) -> None:
    """Was a kernel of 1550151 s named after the split number; now a malformed row."""
    start = int(v3_field("Start_Timestamp"))
    path = v3_with(tmp_path, "Start_Timestamp", f'"{start:,}"')
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 8
    assert "more fields than the header's 22" in warnings_by_code(doc)["malformed-row"]["message"]
    assert max(k["total_s"] for k in doc["kernels"]) < 1e-3


@pytest.mark.parametrize("digits", ["123456789012345678901234567890", "9223372036854775808"])
def test_v3_integer_past_64_bits(capsys: Cap, tmp_path: Path, digits: str) -> None:
    """DuckDB rejected the row, the Python re-parse took the int whole, and the INSERT failed:
    'could not be read (Conversion Error: Type INT128 ...)' naming no line. 2^63 is the
    smallest such value."""
    path = v3_with(tmp_path, "Start_Timestamp", digits)  # row 3: the file's line 4
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == len(v3_lines()) - 1 - 1  # less the header, the row
    assert warnings_by_code(doc)["malformed-row"]["message"] == (
        f"{path}: 1 malformed row skipped: line 4 (field Start_Timestamp = '{digits}' is "
        "not a bigint)"
    )


@pytest.mark.parametrize("value", ["2147483648", "9223372036854775807"])
def test_v1_device_past_32_bits(capsys: Cap, tmp_path: Path, value: str) -> None:
    """The model's device is a 32-bit INTEGER: a gpu-id past it failed the INSERT with
    'could not be read as rocprof-v1-csv (Conversion Error ...)', naming no line."""
    with (V1 / "results.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    rows[1][rows[0].index("gpu-id")] = value
    path = tmp_path / "results.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == len(rows) - 2  # less the header and the row
    assert warnings_by_code(doc)["malformed-row"]["message"] == (
        f"{path}: 1 malformed row skipped: line 2 (field gpu-id = '{value}' is not an integer)"
    )


def test_v3_grid_past_64_bits_is_unknown(capsys: Cap, tmp_path: Path) -> None:
    """Grid_Size_X x Y x Z past 2^63 ended the launch-shape scan in DuckDB's 'Overflow in
    multiplication of INT64' traceback (the scan runs when an analysis first asks for shapes,
    after the load). The shape is now unknown; the row's time and the other rows stay."""
    path = v3_with(tmp_path, "Grid_Size_X", "4294967296", line=1)
    path.write_text(path.read_text().replace(",4294967296,1024,1\n", ",4294967296,4294967296,4\n"))
    rows = list(csv.DictReader(V3.open(newline="")))
    doc = analyze_ok(capsys, path, "--gpu", "MI300X")  # the occupancy analysis reads shapes
    assert doc["summary"]["dispatches"] == len(rows)
    profile = load([str(path)])
    shapes = profile.launches().filter("name_id IS NOT NULL").fetchall()
    first = {r[profile.launches().columns.index("grid_size")] for r in shapes}
    expected = {
        int(r["Grid_Size_X"]) * int(r["Grid_Size_Y"]) * int(r["Grid_Size_Z"]) for r in rows[1:]
    }
    assert first == expected | {None}


@pytest.mark.parametrize("agent", ["GPU", "Agent 99999999999", ""])
def test_v3_agent_that_names_no_device(capsys: Cap, tmp_path: Path, agent: str) -> None:
    """An Agent_Id that is not 'Agent N' within 32 bits left its dispatch without a device,
    silently: the timeline counted it as one more GPU ('2 device(s)' for a one-GPU trace)."""
    lines = v3_lines()
    lines[1] = lines[1].replace('"Agent 4"', f'"{agent}"', 1)  # left of the name: no helper
    path = write(tmp_path / "1_kernel_trace.csv", "".join(lines))
    doc = analyze_ok(capsys, path)
    assert warnings_by_code(doc)["unknown-device"]["message"] == (
        f"{path}: 1 of {len(v3_lines()) - 1} dispatch rows naming no GPU the model can read "
        "(their GPU id is empty or not a number); their device is unknown, and the timeline "
        "keeps them apart as one device more"
    )
    assert "unknown-device" not in warnings_by_code(analyze_ok(capsys, V3))


def test_v1_launch_field_not_a_number(capsys: Cap, tmp_path: Path) -> None:
    """rocprof v1 launch fields are read from text with TRY_CAST: 'abc', a 23-digit grid or
    '12x' registers became unknown shapes silently. The warning comes once the shapes are
    read (a GPU is known, so occupancy asks for them), and counts rows per field."""
    with (V1 / "results.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    grd, sgpr = rows[0].index("grd"), rows[0].index("sgpr")
    rows[1][grd], rows[3][grd], rows[2][sgpr] = "abc", "9" * 23, "12x"
    path = tmp_path / "results.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    doc = analyze_ok(capsys, path, "--gpu", "mi250x")
    assert doc["summary"]["dispatches"] == len(rows) - 1  # every row read, times and all
    assert warnings_by_code(doc)["unread-launch-field"]["message"] == (
        f"{path}: launch fields that are not whole numbers within 64 bits (grd in 2 rows, "
        "sgpr in 1 row); they are unknown, so occupancy and the launch-shape rules pass "
        "those dispatches by"
    )
    untouched = warnings_by_code(analyze_ok(capsys, V1 / "results.csv", "--gpu", "mi250x"))
    assert "unread-launch-field" not in untouched


def test_ncu_thousands_separators(capsys: Cap) -> None:
    doc = analyze_ok(capsys, DATA / "ncu" / "leleucas-opanalysis-a100" / "nsight_virtual.csv")
    assert doc["summary"]["dispatches"] >= 1
    assert all(k["total_s"] < 1 for k in doc["kernels"])  # '7,488' ns, not 7 or 488e3 s


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_v3_nan_inf_timestamp(capsys: Cap, tmp_path: Path, value: str) -> None:
    path = v3_with(tmp_path, "End_Timestamp", value)
    doc = analyze_ok(capsys, path)
    assert doc["summary"]["dispatches"] == 8
    assert warnings_by_code(doc)["malformed-row"]["message"] == (
        f"{path}: 1 malformed row skipped: line 4 (field End_Timestamp = {value!r} is not a bigint)"
    )


def test_v3_none_timestamp(capsys: Cap, tmp_path: Path) -> None:
    doc = analyze_ok(capsys, v3_with(tmp_path, "Start_Timestamp", "None"))
    assert warnings_by_code(doc)["missing-time"]["count"] == 1
    assert doc["summary"]["dispatches"] == 9


def test_v3_scientific_notation_exact(capsys: Cap, tmp_path: Path) -> None:
    start = int(v3_field("Start_Timestamp"))
    doc = analyze_ok(capsys, v3_with(tmp_path, "Start_Timestamp", f"{start:.15e}"))
    assert doc["summary"]["dispatches"] == 9
    assert doc["warnings"] == []


def test_v3_spreadsheet_damaged_timestamp(capsys: Cap, tmp_path: Path) -> None:
    """'1.5502E+15' (a spreadsheet's rounding) lands after End: the row is left out of times."""
    start = int(v3_field("Start_Timestamp"))
    doc = analyze_ok(capsys, v3_with(tmp_path, "Start_Timestamp", f"{start:.4E}"))
    assert list(warnings_by_code(doc)) == ["end-before-begin"]


def test_v3_spreadsheet_rounded_timestamp_before_end(capsys: Cap, tmp_path: Path) -> None:
    """'1.5501E+15', rounded down, stays before End: the kernel would silently last tens of
    seconds longer; ``rounded-timestamp`` names it, with the rounded value."""
    start = int(v3_field("Start_Timestamp"))
    rounded = start // 10**11 * 10**11
    assert start > rounded and rounded % 10**9 == 0
    doc = analyze_ok(capsys, v3_with(tmp_path, "Start_Timestamp", f"{rounded:.4E}"))
    warning = warnings_by_code(doc)["rounded-timestamp"]
    assert warning["count"] == 1
    # 1 of 18 timestamps where a 1 ns clock puts 1.8e-08 by chance: 5 digits kept of 16
    assert (
        f'1 of 18 timestamps fall on a whole second (e.g. "{rounded:.4E}" ns in the file)'
        in warning["message"]
    )
    assert "rounded them to 5 significant digits" in warning["message"]
    assert "may be off by up to 100 s;" in warning["message"]
    assert "rounded-timestamp" not in warnings_by_code(analyze_ok(capsys, V3))


def test_v1_stats_nan_total(capsys: Cap, tmp_path: Path) -> None:
    lines = (V1 / "results.stats.csv").read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace(",2646378558,", ",nan,")
    doc = analyze_ok(capsys, write(tmp_path / "results.stats.csv", "".join(lines)))
    assert warnings_by_code(doc)["summary-missing-total"]["count"] == 1
    assert doc["summary"]["kernel_time_s"] is None  # not a confident sum without it


# -- times that cannot be right -----------------------------------------------------------------


def test_v3_end_before_begin(capsys: Cap, tmp_path: Path) -> None:
    start = int(v3_field("Start_Timestamp"))
    doc = analyze_ok(capsys, v3_with(tmp_path, "End_Timestamp", str(start - 5)))
    assert warnings_by_code(doc)["end-before-begin"]["count"] == 1


def test_v3_zero_duration(capsys: Cap, tmp_path: Path) -> None:
    doc = analyze_ok(capsys, v3_with(tmp_path, "End_Timestamp", v3_field("Start_Timestamp")))
    assert list(warnings_by_code(doc)) == ["zero-duration"]


def test_nsys_negative_duration(capsys: Cap, tmp_path: Path) -> None:
    lines = NSYS.read_text().splitlines(keepends=True)
    i = next(j for j, x in enumerate(lines) if j and "[CUDA" not in x)
    lines[i] = lines[i].replace(",", ",-", 1)
    doc = analyze_ok(capsys, write(tmp_path / "r_cuda_gpu_trace.csv", "".join(lines)))
    assert warnings_by_code(doc)["end-before-begin"]["count"] == 1


def test_v3_duplicated_dispatch_id(capsys: Cap, tmp_path: Path) -> None:
    lines = v3_lines()
    doc = analyze_ok(capsys, write(tmp_path / "1_kernel_trace.csv", "".join(lines + lines[3:4])))
    assert doc["summary"]["dispatches"] == 10
    assert list(warnings_by_code(doc)) == ["duplicate-dispatch-id"]


# -- the wrong reader, several producers -----------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "name", "fmt", "is_"),
    [
        (V3, "1_kernel_trace.csv", "ncu", "rocprofv3-kernel-trace"),
        (V1 / "results.csv", "results.csv", "rocprofv3-kernel-trace", "rocprof-v1-csv"),
        (NSYS, "r_cuda_gpu_trace.csv", "rocprof-v1-csv", "nsys-gpu-trace"),
    ],
)
def test_format_of_another_producer(
    capsys: Cap, tmp_path: Path, source: Path, name: str, fmt: str, is_: str
) -> None:
    path = tmp_path / name
    shutil.copy(source, path)
    assert fails(capsys, path, "--format", fmt) == (
        f"{path}:1: looks like {is_}, not {fmt}; drop --format or pass --format {is_}"
    )


def test_sqlite_format_of_another_producer(capsys: Cap) -> None:
    assert fails(capsys, ROCPD, "--format", "nsys-sqlite") == (
        f"{ROCPD}: looks like rocpd, not nsys-sqlite; drop --format or pass --format rocpd"
    )


def test_directory_mixing_producers(capsys: Cap, tmp_path: Path) -> None:
    write(tmp_path / "v1" / "results.csv", (V1 / "results.csv").read_bytes())
    write(tmp_path / "v3" / "1_kernel_trace.csv", V3.read_bytes())
    doc = analyze_ok(capsys, tmp_path)
    assert "straggler" not in [f["rule"] for f in doc["findings"]]
    assert doc["ranks"] is None and "mixed-producers" in warnings_by_code(doc)


# -- sizes ------------------------------------------------------------------------------------


def test_v1_ten_megabyte_kernel_name(capsys: Cap, tmp_path: Path) -> None:
    lines = (V1 / "results.csv").read_text().splitlines(keepends=True)[:20]
    lines[2] = lines[2].replace("laplacian_kernel", "l" * (10 << 20), 1)
    doc = analyze_ok(capsys, write(tmp_path / "results.csv", "".join(lines)))
    assert doc["summary"]["dispatches"] == 19
    assert doc["warnings"] == []


def test_v1_fifty_megabyte_line(capsys: Cap, tmp_path: Path) -> None:
    header = (V1 / "results.csv").read_text().splitlines(keepends=True)[0]
    path = write(tmp_path / "results.csv", header + "9" * (50 << 20))
    assert fails(capsys, path).startswith(f"{path}: has no dispatch rows (header only")


def test_rejected_line_beyond_the_bound(tmp_path: Path) -> None:
    """The row repair reads a rejected line back in at most 64 MiB: a longer one is refused
    with its line number, never held whole (bench/long_line_bench.py: a 1 GiB line ends in one
    error line in 2.8 s at 225 MB)."""
    from roofscope.errors import InputError
    from roofscope.readers.io.csvload import Rejected
    from roofscope.readers.io.rowfix import MAX_LINE_BYTES, read_lines

    path = write(tmp_path / "results.csv", b"header\n" + b"9" * (MAX_LINE_BYTES + 1) + b"\n")
    for rejected in (Rejected(2, 8, "too long"), Rejected(2, None, "too long")):
        with pytest.raises(InputError) as info:
            read_lines(path, [rejected])
        assert str(info.value) == (
            f"{path}:2: line 2 is longer than 64 MiB; the file is damaged or not a profiler's "
            "CSV; use the profiler's own output"
        )
    assert read_lines(path, [Rejected(1, None, "")]) == {1: b"header\n"}


def test_kineto_gzip_bomb(capsys: Cap, tmp_path: Path) -> None:
    """4 MiB of blanks before the trace's last ']' compress ~700-fold; read, not refused."""
    text = gzip.decompress(KINETO.read_bytes())
    cut = text.rindex(b"]")
    data = gzip.compress(text[:cut] + b" " * (4 << 20) + text[cut:], 9)
    assert (4 << 20) / len(data) > 500
    doc = analyze_ok(capsys, write(tmp_path / "trace.json.gz", data))
    assert doc["summary"]["dispatches"] == 4


# -- SQLite files ---------------------------------------------------------------------------------


def test_rocpd_corrupt_pages(capsys: Cap, tmp_path: Path) -> None:
    data = bytearray(ROCPD.read_bytes())
    for at in range(4096, len(data), 4096):
        data[at : at + 64] = b"\xa5" * 64
    path = write(tmp_path / "results.db", bytes(data))
    assert fails(capsys, path).startswith(f"{path}: is a damaged SQLite database (")


def test_sqlite_of_unknown_schema(capsys: Cap, tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t(a)")
    con.commit()
    con.close()
    assert fails(capsys, path) == (
        f"{path}: is an SQLite database without rocpd's views (tables: t); pass rocprofv3 "
        "rocpd, CSV or JSON output (see `roofscope formats`)"
    )


def test_rocpd_locked(capsys: Cap, tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    shutil.copy(ROCPD, path)
    con = sqlite3.connect(path)
    con.execute("BEGIN EXCLUSIVE")
    try:
        assert fails(capsys, path).startswith(f"{path}: is locked by another process (")
    finally:
        con.rollback()
        con.close()


# -- peaks and work beyond any GPU (found by the fuzz campaign) ------------------------------


def test_measured_peak_beyond_any_gpu(capsys: Cap, tmp_path: Path) -> None:
    """roofline.csv with HBMBw = 1e308 GB/s: overflowed to inf and crashed the JSON output."""
    folder = tmp_path / "workload"
    shutil.copytree(DATA / "rocprof-compute-mi200", folder)
    path = folder / "roofline.csv"
    header, row, *rest = path.read_text(encoding="utf-8").splitlines(keepends=True)
    fields = row.split(",")
    fields[header.split(",").index("HBMBw")] = "1e308"
    path.write_text("".join([header, ",".join(fields), *rest]), encoding="utf-8")
    assert fails(capsys, folder, "--json") == (
        f"{path}: field HBMBw = '1e308' (device 0) is not a peak in GB/s or GFLOP/s; re-run the "
        "roofline benchmark (rocprof-compute profile --roof-only)"
    )


def _workload_with(tmp_path: Path, member: str, column: str, value: str) -> Path:
    """The rocprof-compute MI200 workload with one field of the first row of ``member``."""
    folder = tmp_path / "workload"
    shutil.copytree(DATA / "rocprof-compute-mi200", folder, dirs_exist_ok=True)
    path = folder / member
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    rows[1][rows[0].index(column)] = value
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return folder


def test_counter_beyond_any_gpu(capsys: Cap, tmp_path: Path) -> None:
    """A counter of 1e308 overflowed the byte formulas to inf (found by the fuzz campaign)."""
    folder = _workload_with(tmp_path, "pmc_perf.csv", "TCP_TCC_WRITE_REQ_sum", "1e308")
    assert fails(capsys, folder, "--json") == (
        f"{folder / 'pmc_perf.csv'}: counter TCP_TCC_WRITE_REQ_sum = a {len(str(10**308))}-digit "
        f"number is beyond any GPU's count ({10**18:,}); the file (or a counter file read with "
        "it) is damaged; use the profiler's own output"
    )


def test_sysinfo_number_beyond_any_gpu(capsys: Cap, tmp_path: Path) -> None:
    """simd_per_cu = 1e308 became an int too large for the occupancy formulas' floats."""
    folder = _workload_with(tmp_path, "sysinfo.csv", "simd_per_cu", "1e308")
    assert fails(capsys, folder, "--json") == (
        f"{folder / 'sysinfo.csv'}:2: field simd_per_cu = '1e308' is beyond any GPU's "
        f"({10**15:,}); the file is damaged; copy it again from the workload folder"
    )


@pytest.mark.parametrize(("value", "shown"), [("inf", "inf"), ("1e19", f"{10**19:,}")])
def test_user_peak_beyond_any_gpu(capsys: Cap, value: str, shown: str) -> None:
    assert fails(capsys, V1 / "results.csv", "--peak-flops", value, code=2) == (
        f"--peak-flops {shown}: expected a peak in SI units between 0 and {10**18:,}, "
        "e.g. `22.6e12` FLOP/s or `1.6e12` B/s"
    )


def test_ceilings_file_peak_beyond_any_gpu(capsys: Cap, tmp_path: Path) -> None:
    path = write(tmp_path / "mine.toml", "[ceilings]\nhbm = 1.6e12\nfp32-vector = 1e300\n")
    assert fails(capsys, V1 / "results.csv", "--ceilings", str(path), code=1) == (
        f"{path}:3: ceiling fp32-vector = a {len(str(10**300))}-digit number is not a peak (a "
        f"positive number up to {10**18:,}); give FLOP/s or B/s in SI units, e.g. `1.6e12`"
    )


def test_work_that_overflows(capsys: Cap, tmp_path: Path) -> None:
    """A work rule whose expression overflows (1e300 x 1e300 per call) is refused, naming the
    rule, instead of giving infinite FLOP/s."""
    path = write(
        tmp_path / "work.toml",
        '[[kernel]]\nmatch = "laplacian"\nflops = "1e300 * 1e300"\nbytes = "8"\n',
    )
    assert fails(capsys, V1 / "results.csv", "--work", str(path)) == (
        f"{path}: [[kernel]] #1: fp32-vector FLOPs come to inf for the kernel, outside "
        f'0 to {10**24:,}; fix the rule or give per = "total"'
    )
    line = fails(capsys, V1 / "results.csv", "--work", "laplacian=1e308:1", code=2)
    assert line == f"--work 'laplacian=1e308:1': flops must be a number from 0 to {10**24:,}"


# -- inputs from different runs -----------------------------------------------------------------


def test_inputs_from_different_clocks(capsys: Cap, tmp_path: Path) -> None:
    """The two demos side by side (rocprof v1 on an MI250X, rocprof-compute on an MI300A, days
    apart): the wall across them is no run's wall, so ``clocks-apart`` says so with the spans
    read from the files' own timestamps. Two ranks of one run (overlapping) get no warning."""
    import csv

    from tests.conftest import DEMO

    def span(path: Path, begin: str, end: str) -> tuple[int, int]:
        with path.open(newline="") as f:
            rows = [(int(r[begin]), int(r[end])) for r in csv.DictReader(f)]
        return min(b for b, _ in rows), max(e for _, e in rows)

    a = span(DEMO / "results.csv", "BeginNs", "EndNs")
    b = span(
        DEMO.parent / "openmp-collapse-mi300a" / "pmc_perf.csv", "Start_Timestamp", "End_Timestamp"
    )
    wall = max(a[1], b[1]) - min(a[0], b[0])
    own = (a[1] - a[0]) + (b[1] - b[0])
    doc = analyze_ok(capsys, DEMO.parent)
    assert doc["summary"]["wall_s"] == pytest.approx(wall / 1e9, rel=1e-12)
    assert warnings_by_code(doc)["clocks-apart"]["message"].startswith(
        f"the timestamps of 2 inputs span {sig(wall / 1e9)} s, more than 10 times their own "
        f"spans ({sig(own / 1e9)} s together)"  # 3 significant figures, never an exponent
    )
    for rank in ("0", "1"):
        shutil.copytree(V1, tmp_path / rank)
    assert "clocks-apart" not in warnings_by_code(analyze_ok(capsys, tmp_path))


# -- paths that are no file ---------------------------------------------------------------------


def test_fifo_as_input(capsys: Cap, tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    os.mkfifo(path)
    assert fails(capsys, path) == (
        f"{path}: is not a regular file; pass a profiler output file or a directory"
    )


def test_html_to_a_directory(capsys: Cap, tmp_path: Path) -> None:
    line = fails(capsys, V1 / "results.csv", "--html", str(tmp_path), "--force", code=2)
    assert line == f"{tmp_path}: cannot be written (Is a directory); pass a writable path"


def test_html_not_writable(capsys: Cap, tmp_path: Path) -> None:
    blocker = write(tmp_path / "file", "")
    target = blocker / "report.html"
    line = fails(capsys, V1 / "results.csv", "--html", str(target), code=2)
    assert line == f"{target}: cannot be written (Not a directory); pass a writable path"


@pytest.mark.parametrize(
    ("command", "option"),
    [
        *[("analyze", option) for option in ("-o", "--svg", "--png")],
        *[("compare", option) for option in ("-o", "--svg", "--png")],
    ],
)
def test_output_folder_that_cannot_be_made(
    capsys: Cap, tmp_path: Path, command: str, option: str
) -> None:
    """An output folder that is a file, or beneath a missing one: was a traceback."""
    blocker = write(tmp_path / "file", "")
    inputs = [str(V1 / "results.csv")] * (2 if command == "compare" else 1)
    for folder, why in ((blocker, "File exists"), (blocker / "sub", "Not a directory")):
        rc, out, err = run(capsys, command, *inputs, option, str(folder))
        assert (rc, out) == (2, ""), err
        assert error_line(err) == (
            f"{folder}: cannot be made a folder ({why}); pass a folder you can write to"
        )
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


@pytest.mark.parametrize(
    ("extra", "given"),
    [
        (["--device", "3"], "--device 3"),
        (["--kernel", "no_such_kernel"], "--kernel 'no_such_kernel'"),
        (["--kernel", "laplacian", "--device", "0"], "--kernel 'laplacian' --device 0"),
    ],
)
def test_selection_that_matches_nothing(capsys: Cap, extra: list[str], given: str) -> None:
    """Was an empty report that said the profile had no timestamps."""
    with (V1 / "results.csv").open(newline="") as f:
        devices = sorted({int(r["gpu-id"]) for r in csv.DictReader(f)})
    assert fails(capsys, V1 / "results.csv", *extra, code=2) == (
        f"{given}: selects nothing of the profile (its devices: "
        f"{', '.join(map(str, devices))}); widen the selection (--kernel searches the "
        "normalised kernel names)"
    )


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("1e400", "inf"),
        ("inf", "inf"),
        ("1e13", "10,000,000,000,000"),
        ("-1", "-1"),
        ("nan", "nan"),
    ],
)
def test_gap_threshold_beyond_any_run(capsys: Cap, value: str, read: str) -> None:
    """--gap-us 1e400 overflowed the integer nanoseconds: a traceback. The range is checked
    once, in checkup/options.py, for the command line and Python (gap_us=) alike."""
    assert fails(capsys, V1 / "results.csv", "--gap-us", value, code=2) == (
        f"--gap-us {read}: expected a number from 0 to 1,000,000,000,000"
    )


@pytest.mark.parametrize(
    ("source", "target", "option"),
    [
        ("demo", "results.csv", "--html"),
        ("demo", "results.stats.csv", "--html"),  # read from the folder as a cross-check
        ("demo", "results.sysinfo.txt", "--html"),  # read from the folder for the GPU
        ("workload", "roofline.csv", "--html"),  # the measured peaks
        ("workload", "sysinfo.csv", "--html"),
        ("demo", "results.csv", "--markdown"),
        ("demo", "results.csv", "--junit"),
    ],
)
def test_output_onto_an_input(
    capsys: Cap, tmp_path: Path, source: str, target: str, option: str
) -> None:
    """--force replaced the profile itself with the report: an input is never overwritten."""
    folder = tmp_path / source
    origin = DEMO if source == "demo" else DATA / "rocprof-compute-mi200"
    shutil.copytree(origin, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    out = folder / target
    command = "compare" if option in ("--markdown", "--junit") else "analyze"
    sides = [str(folder)] * (2 if command == "compare" else 1)
    rc, stdout, err = run(capsys, command, *sides, option, str(out), "--force")
    assert (rc, stdout) == (2, ""), err
    assert error_line(err) == f"{out}: is an input of this run; pass another path"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_path_too_long_for_the_file_system(capsys: Cap, tmp_path: Path) -> None:
    """Path.is_dir and Path.is_file raise ENAMETOOLONG: they were tracebacks."""
    long = tmp_path / ("n" * 300)
    trace = str(V1 / "results.csv")
    assert fails(capsys, long) == f"{long}: cannot be read (File name too long); check the path"
    assert fails(capsys, trace, "--work", str(long), code=2) == (
        f"--work {str(long)!r}: neither NAME=FLOPS:BYTES[@DTYPE] nor a work file that exists"
    )
    assert fails(capsys, trace, "--html", str(long), code=2) == (
        f"{long}: cannot be written (File name too long); pass a writable path"
    )


@pytest.mark.parametrize("option", ["--fail-if-slower", "--fail-if-kernel-slower"])
@pytest.mark.parametrize("value", ["1e400", "inf"])
def test_gate_threshold_beyond_any_change(capsys: Cap, option: str, value: str) -> None:
    """An infinite threshold reached the JSON gate: a ValueError traceback (option fuzzer)."""
    trace = str(V1 / "results.csv")
    rc, out, err = run(capsys, "compare", trace, trace, option, value, "--json")
    assert (rc, out) == (2, "")
    assert error_line(err) == f"{option} inf: expected a number from 0 to 1,000,000"


TRAILING_COMMA_FILES = [
    (V1 / "results.csv", "results.csv"),
    (V1 / "results.stats.csv", "results.stats.csv"),
    (V3, "1_kernel_trace.csv"),
    (DATA / "rocprofv3-counters" / "2025-08_counter_collection.csv", "1_counter_collection.csv"),
    (DATA / "rocprof-compute-mi200" / "pmc_perf.csv", "pmc_perf.csv"),
    (DATA / "nsys" / "host_cuda_gpu_trace.csv", "r_cuda_gpu_trace.csv"),
    (DATA / "nsys" / "projector_cuda_gpu_kern_sum.csv", "r_cuda_gpu_kern_sum.csv"),
    (DATA / "ncu" / "leleucas-opanalysis-a100" / "roofline_result.csv", "roofline_result.csv"),
]


@pytest.mark.parametrize(("source", "name"), TRAILING_COMMA_FILES, ids=lambda x: str(x)[-28:])
def test_trailing_comma_on_every_line(capsys: Cap, tmp_path: Path, source: Path, name: str) -> None:
    """A spreadsheet's export ends every line in a comma: an empty last column. It was a
    DuckDB Binder Error for the CSV readers, an unrecognised file for the summaries, and, once
    recognised, the v1 stats read every number one field to the left (calls = total ns)."""
    raw = source.read_bytes()
    eol = b"\r\n" if b"\r\n" in raw else b"\n"
    edited = write(tmp_path / name, eol.join(x + b"," if x else x for x in raw.split(eol)))
    for metadata in ("sysinfo.csv", "roofline.csv"):  # read beside a workload CSV (issue 19)
        if (source.parent / metadata).is_file():
            shutil.copy(source.parent / metadata, tmp_path)
    assert edited.read_bytes() != raw
    written, commas = analyze_ok(capsys, source), analyze_ok(capsys, edited)
    assert commas["summary"] == written["summary"]
    assert commas["kernels"] == written["kernels"]
    assert list(warnings_by_code(commas)) == list(warnings_by_code(written))


@pytest.mark.parametrize(("char", "name"), [(";", "semicolons"), ("\t", "tabs")])
def test_fields_separated_by_another_character(
    capsys: Cap, tmp_path: Path, char: str, name: str
) -> None:
    """A spreadsheet in a locale of decimal commas saves with ';'; nsys stats can write TSV.
    Was 'not a recognised profiler file ... or name the format with --format', which no
    --format mends."""
    text = (V1 / "results.csv").read_text(encoding="utf-8").replace(",", char)
    path = write(tmp_path / "results.csv", text)
    assert fails(capsys, path) == (
        f"{path}:1: separates its fields with {name}, not commas; pass the CSV the profiler "
        "wrote (nsys stats: --format csv), or export the sheet again as CSV with commas"
    )


@pytest.mark.parametrize("where", ["file", "folder"])
def test_lines_ended_by_carriage_return_alone(capsys: Cap, tmp_path: Path, where: str) -> None:
    """Classic Mac OS spreadsheets save CSV with CR line ends. Was 'is binary data', and in a
    folder the file was passed over."""
    folder = tmp_path / "run"
    shutil.copytree(V1, folder)
    path = folder / "results.csv"
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\r").replace(b"\n", b"\r"))
    assert fails(capsys, path if where == "file" else folder) == (
        f"{path}: ends its lines with a carriage return alone (as classic Mac OS spreadsheets "
        "save CSV); convert the line ends (tr '\\r' '\\n' < IN > OUT), or pass the file the "
        "profiler wrote"
    )


# -- header names that are SQL text --------------------------------------------------------------


def test_header_names_with_quotes(tmp_path: Path) -> None:
    """Column names reach DuckDB's read_csv: quotes in them were a parser error, not a result."""
    with (V1 / "results.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    extra = {"SQ_IT'S": "7", 'SQ_"Q"': "9", "x': 'BIGINT'}, header=false, a={'": "5"}
    rows[0] += list(extra)
    for row in rows[1:]:
        row += list(extra.values())
    path = tmp_path / "results.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    profile = load([str(path)])
    got = profile.con.execute(
        f"SELECT counter, count(*), min(value), max(value) FROM {NAMED_COUNTERS} "
        "GROUP BY 1 ORDER BY 1"
    ).fetchall()
    n = len(rows) - 1
    assert sorted(got) == sorted((k, n, float(v), float(v)) for k, v in extra.items())
    assert profile.count("dispatches") == n


# -- values that parse but that no launch can have -----------------------------------------------


def nsys_trace_with(tmp_path: Path, changes: dict[str, str]) -> tuple[Path, int]:
    """The nsys cuda_gpu_trace with fields of its first kernel row replaced; that row's line."""
    with NSYS.open(newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    index = next(i for i, r in enumerate(rows) if i and r[header.index("GrdX")])
    for column, value in changes.items():
        rows[index][header.index(column)] = value
    path = tmp_path / "r_cuda_gpu_trace.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return path, index + 1


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"StcSMem (MB)": "1e300"}, "column 'StcSMem (MB)' holds '1e300', beyond any time or "
         f"size nsys writes ({10**18:,})"),
        ({"Start (ns)": "9000000000000000000", "Duration (ns)": "9000000000000000000"},
         "column 'Start (ns)' holds '9000000000000000000', beyond any time or size nsys writes "
         f"({10**18:,})"),
        # 2^32 * 2^32 * 1024 threads: each field is a valid BIGINT, their product is not
        ({"GrdX": "4294967296", "GrdY": "4294967296", "BlkX": "1024"}, "column 'GrdX' holds "
         "'4294967296', making more threads than one launch can hold (2^63)"),
    ],
    ids=["shared-memory", "start-plus-duration", "thread-count"],
)  # fmt: skip
def test_nsys_trace_value_no_launch_can_have(
    capsys: Cap, tmp_path: Path, changes: dict[str, str], problem: str
) -> None:
    """The derived columns overflowed inside DuckDB: the line named neither row nor field."""
    path, line = nsys_trace_with(tmp_path, changes)
    assert (
        fails(capsys, path) == f"{path}:{line}: {problem}; pass the report as nsys stats wrote it"
    )


def test_nsys_trace_field_not_a_number_is_named(capsys: Cap, tmp_path: Path) -> None:
    """DuckDB names the staged column (``c1``); the error names the header field instead."""
    path, line = nsys_trace_with(tmp_path, {"Duration (ns)": "slow"})
    message = fails(capsys, path)
    assert message.startswith(f"{path}:{line}: has a field that is not a number (")
    assert 'column "Duration (ns)"' in message and '"c1"' not in message


@pytest.mark.parametrize(
    ("table", "rowid", "setting", "problem"),
    [
        ("CUPTI_ACTIVITY_KIND_KERNEL", 2, "start = 'abc'", "start is 'abc'"),
        ("CUPTI_ACTIVITY_KIND_KERNEL", 2, "registersPerThread = 1e30",
         f"registersPerThread is a {len(str(10**30))}-digit number"),
        ("CUPTI_ACTIVITY_KIND_KERNEL", 2,
         "gridX = 4294967296, gridY = 4294967296, gridZ = 1, blockX = 1024, blockY = 1, blockZ = 1",
         f"gridX*gridY*gridZ*blockX*blockY*blockZ is a {len(str(2**74))}-digit number"),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", 2, "start = 1e300",
         f"start is a {len(str(10**300))}-digit number"),
        ("CUPTI_ACTIVITY_KIND_MEMSET", 1, "memKind = 'x'", "memKind is 'x'"),
    ],
    ids=["text-start", "huge-registers", "thread-count", "memcpy-start", "memset-kind"],
)  # fmt: skip
def test_nsys_sqlite_value_no_launch_can_have(
    capsys: Cap, tmp_path: Path, table: str, rowid: int, setting: str, problem: str
) -> None:
    """numpy's int64 conversion failed with 'Python int too large to convert to C long'."""
    path = tmp_path / "report.sqlite"
    build_export(path)
    with sqlite3.connect(path) as con:
        con.execute(f"UPDATE {table} SET {setting} WHERE rowid = {rowid}")
    con.close()
    assert fails(capsys, path) == (
        f"{path}: {table} rowid {rowid}: {problem}, not a whole number within 64 bits; "
        "export the report again with nsys export --type sqlite"
    )


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("start = 'abc'", "start is 'abc'"),
        ("grid_size_x = 1e300", f"grid_x is a {len(str(10**300))}-digit number"),
    ],
    ids=["text-start", "huge-grid"],
)
def test_rocpd_value_no_launch_can_have(
    capsys: Cap, tmp_path: Path, setting: str, problem: str
) -> None:
    """The same numpy conversion in the rocpd reader; the view and its id are named."""
    path = tmp_path / "results.db"
    shutil.copyfile(ROCPD, path)
    with sqlite3.connect(path) as con:
        table = rocpd_table(con, "kernel_dispatch")
        (first,) = con.execute(f"SELECT min(id) FROM {table}").fetchone()
        con.execute(f"UPDATE {table} SET {setting} WHERE id = {first}")
    con.close()
    assert fails(capsys, path) == (
        f"{path}: kernels id {first}: {problem}, not a whole number within 64 bits; "
        "pass the database rocprofv3 wrote, unedited"
    )


@pytest.mark.parametrize(
    ("key", "literal", "field"),
    [
        ("ts", "1e999999999", "ts"),  # was a decimal.Overflow traceback
        ("device", "1e999999999", "args.device (else pid)"),  # was a hang: a 10^9-digit int
        ("correlation", "100000000000000000000", "args.correlation"),
        ("grid", "[4294967296, 4294967296, 1]", "args.grid x args.block"),
    ],
    ids=["ts-exponent", "device-exponent", "correlation", "thread-count"],
)
def test_kineto_number_past_64_bits(
    capsys: Cap, tmp_path: Path, key: str, literal: str, field: str
) -> None:
    """A 13-character JSON number can stand for an integer of a billion digits."""
    with gzip.open(KINETO, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    first = next(e for e in doc["traceEvents"] if e.get("cat") in ("kernel", "Kernel"))
    (first if key == "ts" else first["args"])[key] = "@@here@@"
    path = write(tmp_path / "r.pt.trace.json", json.dumps(doc).replace('"@@here@@"', literal))
    assert fails(capsys, path) == (
        f"{path}: kernel event 1 ({first['name'][:60]!r}): {field} is past 64 bits; "
        "pass the trace the profiler wrote"
    )


def _deviceless_nsys_trace(tmp_path: Path) -> tuple[Path, int, str]:
    path, _ = nsys_trace_with(tmp_path, {"Device": "NVIDIA GeForce RTX 5090"})  # no "(0)"
    with NSYS.open(newline="") as f:
        rows = list(csv.DictReader(f))
    kernels = [r for r in rows if r["GrdX"] and not r["Name"].startswith("[CUDA mem")]
    return path, len(kernels), "their Device does not end in a number in brackets"


def _deviceless_kineto(tmp_path: Path) -> tuple[Path, int, str]:
    with gzip.open(KINETO, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    kernels = [e for e in doc["traceEvents"] if e.get("cat") in ("kernel", "Kernel")]
    kernels[0]["args"]["device"], kernels[0]["pid"] = "cuda", "GPU"
    path = write(tmp_path / "r.pt.trace.json", json.dumps(doc))
    return path, len(kernels), "neither args.device nor pid is an integer"


def _deviceless_nsys_sqlite(tmp_path: Path) -> tuple[Path, int, str]:
    path = tmp_path / "report.sqlite"
    build_export(path)
    with sqlite3.connect(path) as con:
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = NULL WHERE rowid = 1")
    con.close()
    return path, len(NSYS_KERNELS), "their deviceId is empty"


def _deviceless_rocpd(tmp_path: Path) -> tuple[Path, int, str]:
    path = tmp_path / "results.db"
    shutil.copyfile(ROCPD, path)
    with sqlite3.connect(path) as con:
        table = rocpd_table(con, "kernel_dispatch")
        ((agent, rows),) = con.execute(
            f"SELECT agent_id, count(*) FROM {table} GROUP BY agent_id"
        ).fetchall()  # one GPU ran every kernel
        con.execute(
            f"UPDATE {rocpd_table(con, 'info_agent')} SET logical_index = NULL WHERE id = {agent}"
        )
    con.close()
    return path, rows, "their agent has no log index"


@pytest.mark.parametrize(
    "make",
    [_deviceless_nsys_trace, _deviceless_kineto, _deviceless_nsys_sqlite, _deviceless_rocpd],
    ids=["nsys-trace", "kineto", "nsys-sqlite", "rocpd"],
)
def test_kernel_that_names_no_device(
    capsys: Cap, tmp_path: Path, make: Callable[[Path], tuple[Path, int, str]]
) -> None:
    """The readers of traces other than the dispatch CSVs left a kernel whose GPU they could
    not read without a device, silently, as the rocprofv3 CSV did before class 69."""
    path, rows, why = make(tmp_path)
    doc = analyze_ok(capsys, path)
    missing = rows if make is _deviceless_rocpd else 1
    assert warnings_by_code(doc)["unknown-device"]["message"] == (
        f"{path}: {missing:,} of {rows:,} dispatch row{'' if rows == 1 else 's'} naming no GPU the "
        f"model can read ({why}); "
        "their device is unknown, and the timeline keeps them apart as one device more"
    )


def test_v1_counter_not_a_number(capsys: Cap, tmp_path: Path) -> None:
    """A counter field a spreadsheet re-saved (``1,044,480.0``) or a hand edit left as
    ``n/a`` became an absent counter silently; the kernel's bytes turned unknown with no word
    why. The warning counts the rows per counter; the other counters of those rows are kept."""
    with (V1 / "data_movement.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    counters = header[header.index("obj") + 1 :]
    rows[2][header.index("WRITE_SIZE")] = "1,044,480.0"
    rows[3][header.index("FETCH_SIZE")] = "n/a"
    path = tmp_path / "data_movement.csv"
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    doc = analyze_ok(capsys, path)
    assert warnings_by_code(doc)["unread-counter"]["message"] == (
        f"{path}: counter fields that are not numbers (FETCH_SIZE in 1 row, WRITE_SIZE in "
        "1 row); those counters are absent for those dispatches, so the metrics over them "
        "are unknown there"
    )
    assert load([str(path)]).count("counters") == len(counters) * (len(rows) - 1) - 2
    assert "unread-counter" not in warnings_by_code(analyze_ok(capsys, V1 / "data_movement.csv"))


def test_wide_pmc_perf_counter_not_a_number(capsys: Cap, tmp_path: Path) -> None:
    """The MI300A pmc_perf.csv has 2,000 counter columns: the check reads them all at once
    (a first version summed them in SQL, past DuckDB's expression depth of 1,000)."""
    folder = tmp_path / "workload"
    shutil.copytree(DATA / "rocprof-compute-mi300a", folder)
    with (folder / "pmc_perf.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    assert len(rows[0]) > 2000
    column = rows[0].index("Start_Timestamp") - 1
    counter = rows[0][column]
    rows[1][column] = "n/a"
    with (folder / "pmc_perf.csv").open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    doc = analyze_ok(capsys, folder)
    assert warnings_by_code(doc)["unread-counter"]["message"].startswith(
        f"{folder / 'pmc_perf.csv'}: counter fields that are not numbers ({counter} in 1 row);"
    )


def test_v3_counter_value_not_a_number(capsys: Cap, tmp_path: Path) -> None:
    """rocprofv3's long counter CSV types Counter_Value: the row is dropped, its line named."""
    source = DATA / "rocprofv3-counters" / "2024-10_counter_collection.csv"
    lines = source.read_text().splitlines(keepends=True)
    assert lines[2].rstrip().endswith(',"SQ_WAVES",16384')
    lines[2] = lines[2].replace(',"SQ_WAVES",16384', ',"SQ_WAVES",n/a')
    path = write(tmp_path / "x_counter_collection.csv", "".join(lines))
    assert warnings_by_code(analyze_ok(capsys, path))["malformed-row"]["message"] == (
        f"{path}: 1 malformed row skipped: line 3 (a field that is not a number)"
    )


# -- the catalogue itself --------------------------------------------------------------------------


def test_every_class_names_a_test_that_exists() -> None:
    """docs/bad-inputs.md: each numbered class, in order, names tests that are defined here."""
    doc = (Path(__file__).parents[1] / "docs" / "bad-inputs.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [int(r.split("|")[1]) for r in rows] == list(range(1, len(rows) + 1))
    defined = set(re.findall(r"^def (test_\w+)\(", _test_sources(), flags=re.M))
    for row in rows:
        named = re.findall(r"\b(test_\w+)\b(?!\.py)", row)
        assert named, f"class {row.split('|')[1].strip()} names no test"
        assert set(named) <= defined, f"{row[:60]}: {set(named) - defined}"


def _test_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in Path(__file__).parent.glob("*.py"))


def test_api_calls_and_copies_without_a_kernel_trace(capsys: Cap, tmp_path: Path) -> None:
    """rocprofv3's real hip_api_stats.csv and memory_copy_trace.csv without a kernel trace:
    the report of their calls and copies, with the warning that no kernel was recorded (a
    kernel trace of the header alone is an error instead: no kernel ran, class 4)."""
    for name in ("hip_api_stats.csv", "memory_copy_trace.csv"):
        shutil.copy(DATA / "rocprofv3-layouts" / name, tmp_path)
    doc = analyze_ok(capsys, tmp_path)
    assert doc["summary"]["dispatches"] == 0
    files = f"{tmp_path / 'hip_api_stats.csv'}, {tmp_path / 'memory_copy_trace.csv'}"
    assert warnings_by_code(doc)["no-kernel-trace"]["message"] == (
        f"{files}: API calls or copies and no kernel: the profiler did not record kernels, or "
        "their file was not passed; pass it, or re-run with rocprofv3 --kernel-trace"
    )
    assert "no-kernel-trace" not in warnings_by_code(analyze_ok(capsys, V3))


def test_128_an_unknown_fp32_matmul(capsys: Cap) -> None:
    """--fp32-matmul takes fp32 or tf32: anything else is named, before any file is read."""
    trace = DATA / "kineto" / "h100_bert_small_metadata_first.json.gz"
    assert fails(capsys, trace, "--fp32-matmul", "bf16", code=2) == (
        "--fp32-matmul 'bf16': expected one of fp32, tf32"
    )
