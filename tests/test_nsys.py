"""Nsight Systems readers: ``nsys stats`` CSV reports and the SQLite export.

Real files: the cuda_gpu_kern_sum reports of llm-perf-opt-rtx5090 and the cuda_gpu_trace of
zisk-zorch-nsys-rtx5090 (shared corpus, and small copies in tests/data/nsys). Every expected
value is computed here with the csv module or from the rows the test itself inserts, never
taken from the reader. The SQLite export and the two activity reports are synthetic: no real
file of either is available.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from roofscope.analysis import checks
from roofscope.cli.app import main
from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.io import sqlite_file
from roofscope.readers.nvidia import nsys_csv, nsys_sqlite, nsys_trace
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import read_head
from tests.conftest import DATA, SHARED_CORPUS

NSYS = DATA / "nsys"
KERN_SUM = NSYS / "projector_cuda_gpu_kern_sum.csv"
GPU_TRACE = NSYS / "host_cuda_gpu_trace.csv"
API_TRACE = NSYS / "host_cuda_api_trace.csv"
CORPUS_KERN_SUMS = sorted((SHARED_CORPUS / "nvidia").glob("*/nsys/**/*cuda_gpu_kern_sum.csv"))
CORPUS_TRACE = SHARED_CORPUS / "nvidia" / "zisk-zorch-nsys-rtx5090" / "host_cuda_gpu_trace.csv"
corpus = pytest.mark.skipif(not CORPUS_TRACE.exists(), reason="shared corpus not present")


def read(reader: Reader, path: Path, role: str) -> Profile:
    profile = Profile.empty()
    reader.read(path, read_head(path), profile, role=role)
    return profile


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_error(reader: Reader, path: Path, role: str) -> str:
    with pytest.raises(InputError) as info:
        read(reader, path, role)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


# -- cuda_gpu_kern_sum -------------------------------------------------------------------


def kernel_totals(profile: Profile) -> dict[str, tuple[int, float]]:
    rows = profile.con.execute(
        "SELECT raw_name, calls, total_ns FROM kernel_summary JOIN names USING (name_id)"
    ).fetchall()
    return {str(n): (int(c), float(t)) for n, c, t in rows}


def expected_kern_sum(path: Path) -> dict[str, tuple[int, float]]:
    return {r["Name"]: (int(r["Instances"]), float(r["Total Time (ns)"])) for r in csv_rows(path)}


@pytest.mark.parametrize(
    "path",
    [KERN_SUM, *CORPUS_KERN_SUMS],
    ids=lambda p: str(p.relative_to(p.parents[3])),
)
def test_kern_sum_reads_instances_and_totals(path: Path) -> None:
    head = read_head(path)
    assert nsys_csv.KernSum().detect(head)
    assert not nsys_trace.GpuTrace().detect(head) and not nsys_csv.ApiSum().detect(head)
    profile = read(nsys_csv.KernSum(), path, Role.KERNEL_SUMMARY)
    assert kernel_totals(profile) == expected_kern_sum(path)
    assert profile.run.producer == "nsys"
    assert [(f.format, f.role) for f in profile.inputs] == [("nsys-kern-sum", Role.KERNEL_SUMMARY)]


@corpus
def test_corpus_has_four_kern_sums() -> None:
    assert len(CORPUS_KERN_SUMS) == 4


def test_kern_sum_mean_min_max_std() -> None:
    profile = read(nsys_csv.KernSum(), KERN_SUM, Role.KERNEL_SUMMARY)
    got = profile.con.execute(
        "SELECT raw_name, mean_ns, min_ns, max_ns, std_ns FROM kernel_summary "
        "JOIN names USING (name_id)"
    ).fetchall()
    keys = ("Avg (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)")
    want = {r["Name"]: tuple(float(r[k]) for k in keys) for r in csv_rows(KERN_SUM)}
    assert {str(n): tuple(v) for n, *v in got} == want


@pytest.mark.parametrize(
    "path",
    [KERN_SUM, *CORPUS_KERN_SUMS],
    ids=lambda p: str(p.relative_to(p.parents[3])),
)
def test_kern_sum_median_is_its_med_column(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report's own ``Med (ns)`` is each kernel's median (it was null: issue 19)."""
    want = {r["Name"]: float(r["Med (ns)"]) for r in csv_rows(path)}
    profile = read(nsys_csv.KernSum(), path, Role.KERNEL_SUMMARY)
    got = profile.con.execute(
        "SELECT raw_name, median_ns FROM kernel_summary JOIN names USING (name_id)"
    ).fetchall()
    assert {str(n): m for n, m in got} == want
    assert main(["analyze", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    medians = {k["raw_names"][0]: k["median_s"] for k in doc["kernels"]}
    assert medians == {n: m / 1e9 for n, m in want.items()}


def _rewrite(tmp_path: Path, source: Path, header: str, *, bom: bool = False, eol: str = "\n",
             preamble: str = "") -> Path:  # fmt: skip
    """``source``'s rows under another header, line ending, BOM or nsys progress lines."""
    lines = source.read_text(encoding="utf-8").splitlines()
    text = preamble + eol.join([header, *lines[1:]]) + eol
    path = tmp_path / "report.csv"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


@pytest.mark.parametrize(
    ("header", "options"),
    [
        ('"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)",'
         '"StdDev (ns)","Name"', {"bom": True, "eol": "\r\n"}),
        ("Time(%),Total Time (ns),Instances,Average,Med,Minimum,Maximum,StdDev,Name", {}),
        ("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
         {"preamble": "Generating SQLite file r.sqlite from r.nsys-rep\n"
          "Processing [r.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n"}),
    ],
    ids=["quoted-bom-crlf", "older-spelling", "stdout-preamble"],
)  # fmt: skip
def test_kern_sum_header_variants(tmp_path: Path, header: str, options: dict[str, str]) -> None:
    path = _rewrite(tmp_path, KERN_SUM, header, **options)  # type: ignore[arg-type]
    assert nsys_csv.KernSum().detect(read_head(path))
    profile = read(nsys_csv.KernSum(), path, Role.KERNEL_SUMMARY)
    assert kernel_totals(profile) == expected_kern_sum(KERN_SUM)


def test_kern_sum_unit_in_parentheses(tmp_path: Path) -> None:
    path = tmp_path / "us.csv"
    path.write_text(
        "Time (%),Total Time (us),Instances,Avg (us),Med (us),Min (us),Max (us),StdDev (us),Name\n"
        "100.0,12.5,5,2.5,2.5,2.0,3.0,0.5,k\n"
    )
    profile = read(nsys_csv.KernSum(), path, Role.KERNEL_SUMMARY)
    assert profile.con.execute(
        "SELECT calls, total_ns, mean_ns, min_ns, max_ns, std_ns FROM kernel_summary"
    ).fetchall() == [(5, 12_500.0, 2_500.0, 2_000.0, 3_000.0, 500.0)]


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("50.0,1000,2,500.0,500.0,400,600,10.0\n", "has 8 fields where the header has 9"),
        ("50.0,abc,2,500.0,500.0,400,600,10.0,k2\n", "column 'Total Time (ns)' holds 'abc'"),
    ],
)
def test_kern_sum_malformed_row(tmp_path: Path, row: str, problem: str) -> None:
    path = tmp_path / "bad.csv"
    lines = KERN_SUM.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines[:2], row, *lines[2:]]))
    message = one_line_error(nsys_csv.KernSum(), path, Role.KERNEL_SUMMARY)
    assert message.startswith(f"{path}:3: {problem}")


# -- cuda_gpu_trace ----------------------------------------------------------------------


def trace_expectation(path: Path) -> tuple[dict[str, tuple[int, int]], list[tuple[object, ...]]]:
    """Per kernel (count, total ns) and the memory rows, aggregated with the csv module."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    copies: list[tuple[object, ...]] = []
    for r in csv_rows(path):
        start, duration = int(r["Start (ns)"]), int(r["Duration (ns)"])
        if r["GrdX"] == "":
            src, dst = r["SrcMemKd"] or None, r["DstMemKd"] or None
            copies.append((r["Name"], src, dst, start, start + duration))
        else:
            totals[r["Name"]][0] += 1
            totals[r["Name"]][1] += duration
    return {k: (c, t) for k, (c, t) in totals.items()}, copies


@pytest.mark.parametrize("path", [GPU_TRACE, CORPUS_TRACE], ids=["tests-data", "corpus"])
def test_gpu_trace_kernels_and_copies_apart(path: Path) -> None:
    if not path.exists():
        pytest.skip("shared corpus not present")
    assert nsys_trace.GpuTrace().detect(read_head(path))
    profile = read(nsys_trace.GpuTrace(), path, Role.DISPATCHES)
    kernels, copies = trace_expectation(path)
    got = profile.con.execute(
        """SELECT raw_name, count(*), sum(end_ns - start_ns) FROM dispatches
        JOIN names USING (name_id) GROUP BY raw_name"""
    ).fetchall()
    assert {str(n): (int(c), int(t)) for n, c, t in got} == kernels
    assert (
        profile.con.execute(
            "SELECT direction, src_agent, dst_agent, start_ns, end_ns FROM copies"
        ).fetchall()
        == copies
    )
    assert [(f.role, f.rows) for f in profile.inputs] == [
        (Role.DISPATCHES, sum(c for c, _ in kernels.values())),
        ("copies", len(copies)),
    ]
    assert profile.run.gpu == "NVIDIA GeForce RTX 5090"


def test_gpu_trace_dispatch_fields_and_launch_shapes() -> None:
    profile = read(nsys_trace.GpuTrace(), GPU_TRACE, Role.DISPATCHES)
    rows = csv_rows(GPU_TRACE)
    kernels = [r for r in rows if r["GrdX"]]
    got = profile.con.execute(
        "SELECT dispatch_id, device, pid, start_ns FROM dispatches ORDER BY rowid"
    ).fetchall()
    assert got == [(int(r["CorrId"]), 0, None, int(r["Start (ns)"])) for r in kernels]
    profile.launches()  # nothing deferred; the table is filled
    rel = profile.con.execute("SELECT raw_name, l.* FROM launches l JOIN names USING (name_id)")
    cols = [d[0] for d in rel.description]
    shapes = [dict(zip(cols, r, strict=True)) for r in rel.fetchall()]
    by_name = {str(s["raw_name"]): s for s in shapes}
    for r in kernels:
        shape = by_name[r["Name"]]
        block = int(r["BlkX"]) * int(r["BlkY"]) * int(r["BlkZ"])
        grid = int(r["GrdX"]) * int(r["GrdY"]) * int(r["GrdZ"]) * block
        assert (shape["grid_size"], shape["workgroup_size"]) == (grid, block)
        assert (shape["arch_vgpr"], shape["stream"]) == (int(r["Reg/Trd"]), int(r["Strm"]))
        smem = (float(r["StcSMem (MB)"]) + float(r["DymSMem (MB)"])) * 1e6
        assert (shape["lds_bytes"], shape["wave_size"]) == (round(smem), 32)
    assert sorted(s["dispatches"] for s in shapes) == [1] * len(kernels)


def duplicate_warnings(path: Path) -> list[int]:
    profile = read(nsys_trace.GpuTrace(), path, Role.DISPATCHES)
    return [w.count for w in checks.check(profile) if w.code == "duplicate-dispatch-id"]


def test_graph_launch_kernels_share_a_correlation_id(tmp_path: Path) -> None:
    # one launch of a CUDA graph gives its kernels one CorrId: no row is written twice
    kernels = [r for r in csv_rows(GPU_TRACE) if r["GrdX"]]
    by_id = Counter(r["CorrId"] for r in kernels)
    shared = [r for r in kernels if by_id[r["CorrId"]] > 1]
    assert [r["Name"] for r in shared] == [
        "loop_multiply_fusion",
        "input_concatenate_fusion_3",
        "input_concatenate_fusion_2",
    ]
    assert len({r["Start (ns)"] for r in shared}) == 3
    assert duplicate_warnings(GPU_TRACE) == []
    # the same row written twice is still a repeat
    lines = GPU_TRACE.read_bytes().split(b"\r\n")
    row = next(x for x in lines if b"loop_multiply_fusion" in x)
    twice = tmp_path / "trace.csv"
    twice.write_bytes(b"\r\n".join([*lines[:-1], row, lines[-1]]))
    assert duplicate_warnings(twice) == [1]


def test_api_trace_is_no_gpu_trace() -> None:
    head = read_head(API_TRACE)
    readers = (nsys_trace.GpuTrace(), nsys_csv.KernSum(), nsys_csv.ApiSum(), nsys_csv.MemTimeSum())
    assert not any(r.detect(head) for r in readers)


def _trace_with(tmp_path: Path, row: str) -> Path:
    lines = GPU_TRACE.read_bytes().split(b"\r\n")
    path = tmp_path / "trace.csv"
    path.write_bytes(b"\r\n".join([*lines[:5], row.encode(), *lines[5:]]))
    return path


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("5952159418,338079,2228,1,1,1", "has too few fields"),
        (
            "5952159418,slow,2228,1,1,1,1,1,1,16,0.000,0.000,,,,,NVIDIA GeForce RTX 5090 (0),1,,"
            '65,"k(int)"',
            "has a field that is not a number",
        ),
    ],
    ids=["too-few-fields", "non-numeric-duration"],
)
def test_gpu_trace_malformed_row(tmp_path: Path, row: str, problem: str) -> None:
    path = _trace_with(tmp_path, row)
    message = one_line_error(nsys_trace.GpuTrace(), path, Role.DISPATCHES)
    assert message.startswith(f"{path}:6: {problem}")


def test_gpu_trace_memory_rows_only(tmp_path: Path) -> None:
    lines = GPU_TRACE.read_bytes().split(b"\r\n")
    path = tmp_path / "copies.csv"
    path.write_bytes(b"\r\n".join(lines[:4]) + b"\r\n")
    message = one_line_error(nsys_trace.GpuTrace(), path, Role.DISPATCHES)
    # CUDA was traced (its copies are in the report): no kernel ran in the range (issue 19)
    copies = [r for r in csv_rows(path) if r["Name"].startswith("[CUDA ")]
    assert len(copies) == 3
    assert message == (
        f"{path}: no kernel ran in the captured range: the profiler traced kernels and recorded "
        "none (the capture holds 3 memory operations); widen the capture to where the program "
        "launches kernels (nsys profile --delay, --duration, or the --capture-range "
        "cudaProfilerApi/nvtx range it waited for)"
    )


# -- cuda_gpu_mem_time_sum and cuda_api_sum (synthetic: no real file found) ---------------

MEM_TIME_SUM = (
    "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation\n"
    "71.4,2411520,48,50240.0,50176.0,49920,51200,320.1,[CUDA memcpy Host-to-Device]\n"
    "28.6,965632,24,40234.6,40192.0,39936,41216,290.7,[CUDA memset]\n"
)
API_SUM = (
    "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
    "99.3,494092651,3,164697550.3,3870.0,2020,494086761,285259424.2,cudaMalloc\n"
    "0.7,3188157,12,265679.8,995.0,930,3175897,916480.8,cudaLaunchKernel\n"
)


@pytest.mark.parametrize(
    ("reader", "text", "kind"),
    [(nsys_csv.MemTimeSum(), MEM_TIME_SUM, "copy"), (nsys_csv.ApiSum(), API_SUM, "api")],
    ids=["mem-time-sum", "api-sum"],
)
def test_activity_summaries(tmp_path: Path, reader: Reader, text: str, kind: str) -> None:
    path = tmp_path / "sum.csv"
    path.write_text(text)
    head = read_head(path)
    others = [r for r in (nsys_csv.KernSum(), nsys_csv.MemTimeSum(), nsys_csv.ApiSum())]
    assert [r.name for r in others if r.detect(head)] == [reader.name]
    assert reader.role(head) == Role.ACTIVITY
    profile = read(reader, path, Role.ACTIVITY)
    rows = list(csv.reader(text.splitlines()))[1:]
    assert profile.con.execute(
        "SELECT kind, name, calls, total_ns FROM activity_summary"
    ).fetchall() == [(kind, r[8], int(r[2]), float(r[1])) for r in rows]
    assert profile.count("kernel_summary") == 0
    assert [f.role for f in profile.inputs] == [f"{kind}-summary"]


# -- SQLite export (synthetic, from the documented schema) -------------------------------

KERNEL_COLUMNS = (
    "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, contextId INTEGER, "
    "streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, "
    "shortName INTEGER, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, "
    "registersPerThread INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, "
    "blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, "
    "localMemoryPerThread INTEGER, localMemoryTotal INTEGER, gridId INTEGER, "
    "sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER"
)
# a later-looking schema: columns reordered, extras added, no demangledName
RENAMED_KERNEL_COLUMNS = (
    "gridId INTEGER, extraColumn TEXT, correlationId INTEGER, shortName INTEGER, "
    "mangledName INTEGER, blockZ INTEGER, blockY INTEGER, blockX INTEGER, gridZ INTEGER, "
    "gridY INTEGER, gridX INTEGER, registersPerThread INTEGER, dynamicSharedMemory INTEGER, "
    "staticSharedMemory INTEGER, streamId INTEGER, deviceId INTEGER, globalPid INTEGER, "
    "end INTEGER NOT NULL, start INTEGER NOT NULL, greenContextId INTEGER"
)
PID = 4242
GLOBAL_PID = (1 << 56) | (PID << 24)  # nsys: hardware id, VM id, then the pid in bits 24-47
# (name, start, end, device, stream, correlation, grid, block, registers, static, dynamic)
KERNELS = [
    ("gemm<float>(float*)", 1000, 1600, 1, 7, 11, (64, 2, 1), (256, 1, 1), 40, 4096, 0),
    ("softmax(float*)", 2000, 2100, 1, 7, 12, (128, 1, 1), (128, 1, 1), 32, 0, 1024),
    ("gemm<float>(float*)", 3000, 3550, 1, 8, 13, (64, 2, 1), (256, 1, 1), 40, 4096, 0),
    ("reduce(float*)", 4000, 4025, 0, 9, 14, (1, 1, 1), (32, 1, 1), 16, 0, 0),
]
# (copyKind, srcKind, dstKind, start, end) and (memKind, start, end)
MEMCPYS = [(1, 1, 3, 100, 180), (2, 3, 2, 5000, 5090), (8, 3, 3, 5100, 5120)]
MEMSETS = [(3, 900, 920)]
OPER_LABELS = {1: "Host-to-Device", 2: "Device-to-Host", 8: "Device-to-Device"}
MEM_LABELS = {1: "Pageable", 2: "Pinned", 3: "Device"}


def build_export(path: Path, *, renamed: bool = False) -> None:
    """An nsys-shaped SQLite export holding KERNELS, MEMCPYS, MEMSETS and two GPUs."""
    con = sqlite3.connect(path)
    meta = "META_DATA_EXPORT" if renamed else "EXPORT_META_DATA"
    con.execute(f"CREATE TABLE {meta} (name TEXT, value TEXT)")
    con.executemany(
        f"INSERT INTO {meta} VALUES (?, ?)",
        [("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2024.5.1")],
    )
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    names = sorted({k[0] for k in KERNELS})
    ids = {n: 10 + i for i, n in enumerate(names)}
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i, n) for n, i in ids.items()])
    con.executemany(
        "INSERT INTO StringIds VALUES (?, ?)", [(100 + i, f"short{i}") for i in range(len(names))]
    )
    con.execute(
        f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL "
        f"({RENAMED_KERNEL_COLUMNS if renamed else KERNEL_COLUMNS})"
    )
    for name, start, end, dev, strm, corr, grid, block, regs, stc, dyn in KERNELS:
        values = {
            "start": start, "end": end, "deviceId": dev, "streamId": strm,
            "correlationId": corr, "globalPid": GLOBAL_PID, "registersPerThread": regs,
            "gridX": grid[0], "gridY": grid[1], "gridZ": grid[2], "blockX": block[0],
            "blockY": block[1], "blockZ": block[2], "staticSharedMemory": stc,
            "dynamicSharedMemory": dyn, "mangledName": 100 + names.index(name),
        }  # fmt: skip
        # the renamed variant has no demangledName: its shortName then names the kernel
        values["shortName" if renamed else "demangledName"] = ids[name]
        if not renamed:
            values["shortName"] = 100 + names.index(name)
        cols = ", ".join(values)
        con.execute(
            f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({cols}) VALUES "
            f"({', '.join('?' for _ in values)})",
            list(values.values()),
        )
    con.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, "
        "contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, "
        "bytes INTEGER, copyKind INTEGER, deprecatedSrcId INTEGER, srcKind INTEGER, "
        "dstKind INTEGER)"
    )
    con.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, globalPid, bytes, "
        "copyKind, srcKind, dstKind) VALUES (?, ?, 1, ?, 64, ?, ?, ?)",
        [(s, e, GLOBAL_PID, k, src, dst) for k, src, dst, s, e in MEMCPYS],
    )
    con.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, "
        "globalPid INTEGER, value INTEGER, bytes INTEGER, memKind INTEGER)"
    )
    con.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, 1, ?, 0, 64, ?)",
        [(s, e, GLOBAL_PID, k) for k, s, e in MEMSETS],
    )
    if not renamed:  # only the older-looking export carries the ENUM tables
        for table, labels in (
            ("ENUM_CUDA_MEMCPY_OPER", OPER_LABELS),
            ("ENUM_CUDA_MEM_KIND", MEM_LABELS),
        ):
            con.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT, label TEXT)")
            con.executemany(
                f"INSERT INTO {table} VALUES (?, ?, ?)",
                [(i, f"X_{i}", v) for i, v in labels.items()],
            )
    con.execute(
        "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, busLocation TEXT, "
        "smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER, clockRate INTEGER)"
    )
    con.executemany(
        "INSERT INTO TARGET_INFO_GPU VALUES (?, ?, '', ?, ?, ?, 0)",
        [(0, "NVIDIA A100-PCIE-40GB", 108, 8, 0), (1, "NVIDIA GeForce RTX 5090", 170, 12, 0)],
    )
    con.commit()
    con.close()


@pytest.fixture(params=[False, True], ids=["documented", "renamed-columns"])
def export(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    path = tmp_path / "report.sqlite"
    build_export(path, renamed=request.param)
    return path


def test_sqlite_dispatches_per_kernel(export: Path) -> None:
    before = sha256(export)
    head = read_head(export)
    assert nsys_sqlite.NsysSqlite().detect(head) and nsys_sqlite.is_nsys(export)
    profile = read(nsys_sqlite.NsysSqlite(), export, Role.DISPATCHES)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for k in KERNELS:
        totals[k[0]][0] += 1
        totals[k[0]][1] += k[2] - k[1]
    got = profile.con.execute(
        """SELECT raw_name, count(*), sum(end_ns - start_ns) FROM dispatches
        JOIN names USING (name_id) GROUP BY raw_name"""
    ).fetchall()
    assert {str(n): [int(c), int(t)] for n, c, t in got} == totals
    rows = profile.con.execute(
        "SELECT start_ns, device, dispatch_id, pid FROM dispatches ORDER BY start_ns"
    ).fetchall()
    assert rows == [(k[1], k[3], k[5], PID) for k in KERNELS]
    assert sha256(export) == before


def test_sqlite_launch_shapes(export: Path) -> None:
    profile = read(nsys_sqlite.NsysSqlite(), export, Role.DISPATCHES)
    got = profile.con.execute(
        """SELECT raw_name, stream, grid_size, workgroup_size, lds_bytes, arch_vgpr, wave_size,
        dispatches FROM launches JOIN names USING (name_id)"""
    ).fetchall()
    want: Counter[tuple[object, ...]] = Counter()
    for name, _, _, _, strm, _, grid, block, regs, stc, dyn in KERNELS:
        threads = block[0] * block[1] * block[2]
        shape = (name, strm, grid[0] * grid[1] * grid[2] * threads, threads, stc + dyn, regs, 32)
        want[shape] += 1
    assert {tuple(r[:-1]): r[-1] for r in got} == dict(want)


def test_sqlite_copies_and_gpu(export: Path) -> None:
    profile = read(nsys_sqlite.NsysSqlite(), export, Role.DISPATCHES)
    copies = profile.con.execute(
        "SELECT pid, direction, src_agent, dst_agent, start_ns, end_ns FROM copies ORDER BY 5"
    ).fetchall()
    want = [
        (PID, f"[CUDA memcpy {OPER_LABELS[k]}]", MEM_LABELS[s], MEM_LABELS[d], b, e)
        for k, s, d, b, e in MEMCPYS
    ] + [(PID, "[CUDA memset]", MEM_LABELS[k], None, b, e) for k, b, e in MEMSETS]
    assert copies == sorted(want, key=lambda r: r[4])
    assert [(f.role, f.rows) for f in profile.inputs] == [
        (Role.DISPATCHES, len(KERNELS)),
        ("copies", len(MEMCPYS) + len(MEMSETS)),
    ]
    run = profile.run
    # three of the four kernels ran on device 1
    assert (run.gpu, run.arch, run.compute_units) == ("NVIDIA GeForce RTX 5090", "sm_120", 170)
    assert (run.producer, run.producer_version) == ("nsys", "2024.5.1")


def test_sqlite_other_database_is_not_nsys(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE foo (a INTEGER)")
    con.commit()
    con.close()
    assert not nsys_sqlite.is_nsys(path)
    assert not nsys_sqlite.NsysSqlite().detect(read_head(path))


def add_runtime_calls(path: Path) -> int:
    """A CUPTI_ACTIVITY_KIND_RUNTIME table holding the first three calls of the real
    host_cuda_api_trace.csv (two cuModuleLoadFatBinary, a cuGraphInstantiateWithFlags: no
    launch), with their start, end, correlation id and name as nsys's export lays them out."""
    calls = csv_rows(API_TRACE)[:3]
    with sqlite3.connect(path) as con:
        con.execute(
            "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT "
            "NULL, eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER, "
            "returnValue INTEGER, callchainId INTEGER)"
        )
        for i, r in enumerate(calls):
            start, name_id = int(r["Start (ns)"]), 1000 + i
            con.execute("INSERT INTO StringIds VALUES (?, ?)", (name_id, r["Name"]))
            con.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, 0, ?, ?, 0, 0)",
                (start, start + int(r["Duration (ns)"]), int(r["CorrID"]), name_id),
            )
    con.close()
    return len(calls)


@pytest.mark.parametrize("table", ["absent", "empty"])
def test_sqlite_capture_where_no_kernel_ran(tmp_path: Path, table: str) -> None:
    """CUDA traced (API calls and copies recorded) but no kernel in the captured range: nsys
    writes no kernel table (or an empty one). It was 'without the CUPTI_ACTIVITY_KIND_KERNEL
    table; re-run nsys profile with --trace=cuda', which CUDA tracing was already on for."""
    path = tmp_path / "nokern.sqlite"
    build_export(path)
    calls = add_runtime_calls(path)
    with sqlite3.connect(path) as con:
        con.execute(f"{'DROP TABLE' if table == 'absent' else 'DELETE FROM'} {nsys_sqlite.KERNEL}")
    con.close()
    assert nsys_sqlite.is_nsys(path)
    message = one_line_error(nsys_sqlite.NsysSqlite(), path, Role.DISPATCHES)
    assert (calls, len(MEMCPYS), len(MEMSETS)) == (3, 3, 1)
    assert message == (
        f"{path}: no kernel ran in the captured range: the profiler traced kernels and recorded "
        "none (the capture holds 3 CUDA API calls, 3 memcpys, 1 memset); widen the capture to "
        "where the program launches kernels (nsys profile --delay, --duration, or the "
        "--capture-range cudaProfilerApi/nvtx range it waited for)"
    )
    assert "--trace" not in message


def test_sqlite_capture_whose_kernels_were_not_recorded(tmp_path: Path) -> None:
    """The same capture with one API call a kernel launch (cudaLaunchKernel_v7000, as nsys
    names it): a kernel ran, so the kernels were lost, not absent from the range."""
    path = tmp_path / "lost.sqlite"
    build_export(path)
    add_runtime_calls(path)
    with sqlite3.connect(path) as con:
        con.execute(f"DROP TABLE {nsys_sqlite.KERNEL}")
        con.execute("UPDATE StringIds SET value = 'cudaLaunchKernel_v7000' WHERE id = 1000")
    con.close()
    message = one_line_error(nsys_sqlite.NsysSqlite(), path, Role.DISPATCHES)
    assert message == (
        f"{path}: has no kernel records, though its CUDA API trace holds 1 kernel launch: "
        "kernels ran and the profiler did not record them; re-run nsys profile with "
        "--trace=cuda, and look in its diagnostics for dropped CUPTI records (a capture "
        "stopped before the buffers were flushed: --cuda-flush-interval)"
    )


def test_sqlite_without_cuda_trace(tmp_path: Path) -> None:
    """No table that CUDA tracing writes (an OS-runtime or NVTX-only capture): tracing off."""
    path = tmp_path / "nocuda.sqlite"
    build_export(path)
    with sqlite3.connect(path) as con:
        for table in (nsys_sqlite.KERNEL, nsys_sqlite.MEMCPY, nsys_sqlite.MEMSET):
            con.execute(f"DROP TABLE {table}")
    con.close()
    assert nsys_sqlite.is_nsys(path)
    message = one_line_error(nsys_sqlite.NsysSqlite(), path, Role.DISPATCHES)
    assert message == (
        f"{path}: is an Nsight Systems export without the CUPTI_ACTIVITY_KIND_KERNEL table, nor "
        "any other that CUDA tracing writes: CUDA was not traced; re-run nsys profile with "
        "--trace=cuda so that kernels are recorded"
    )


def test_sqlite_no_kernel_ran_exits_as_an_empty_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1 and one line, as a header-only trace (catalogue classes 3-5)."""
    path = tmp_path / "nokern.sqlite"
    build_export(path)
    add_runtime_calls(path)
    with sqlite3.connect(path) as con:
        con.execute(f"DROP TABLE {nsys_sqlite.KERNEL}")
    con.close()
    assert main(["analyze", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"roofscope: error: {path}: no kernel ran in the captured range")


@pytest.mark.parametrize("share", [0.05, 0.5, 0.8])
def test_sqlite_truncated(tmp_path: Path, share: float) -> None:
    whole = tmp_path / "whole.sqlite"
    build_export(whole)
    data = whole.read_bytes()
    path = tmp_path / "cut.sqlite"
    path.write_bytes(data[: int(len(data) * share)])
    message = one_line_error(nsys_sqlite.NsysSqlite(), path, Role.DISPATCHES)
    assert message.startswith(f"{path}: is a damaged SQLite database (")


def test_sqlite_locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "busy.sqlite"
    build_export(path)
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(path, copy)
    monkeypatch.setattr(sqlite_file, "BUSY_TIMEOUT_S", 0.05)
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        message = one_line_error(nsys_sqlite.NsysSqlite(), path, Role.DISPATCHES)
    finally:
        writer.close()
    assert message == (
        f"{path}: is locked by another process (database is locked); "
        "wait for the profiler to finish writing it, or pass a copy"
    )
    assert sha256(path) == sha256(copy)


def test_a_total_beyond_any_time_is_refused(tmp_path: Path) -> None:
    """Found by the fuzz campaign: 1e308 ns used to overflow the diagnosis; now one line."""
    src = DATA / "nsys" / "projector_cuda_gpu_kern_sum.csv"
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    fields = lines[1].split(",")
    fields[1] = "1e308"
    path = tmp_path / "kern_sum.csv"
    path.write_text(lines[0] + ",".join(fields) + "".join(lines[2:]), encoding="utf-8")
    assert main(["analyze", str(path)]) == 1
