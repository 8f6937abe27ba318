"""``roofscope profile`` with stand-in profiler executables that replay real outputs.

The stand-ins (one script, installed as ``rocprofv3`` and ``ncu`` on a PATH of their own) log
every command line, answer ``--version`` and the counter listings, and write what the real
profiler would: rocprofv3 replays the rocprofiler-sdk sample kernel trace (9 dispatches) and,
in counter passes, a counter_collection.csv with a known value per counter for each of those
dispatches; ncu prints the leleucas A100 details page (ncu 2022) on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from roofscope.measure import profiling
from tests.conftest import DATA, run_json

TRACE = DATA / "rocprofv3-layouts" / "2025-08_kernel_trace.csv"
NCU_CSV = DATA / "ncu" / "leleucas-opanalysis-a100" / "nsight_virtual.csv"
# what the stand-in rocprofv3 lists on its (gfx90a) GPU, and the ncu stand-in on an A100
GFX90A = [
    *(f"SQ_INSTS_VALU_{op}_F{b}" for op in ("ADD", "MUL", "FMA", "TRANS") for b in (16, 32, 64)),
    *(f"SQ_INSTS_VALU_MFMA_MOPS_{t}" for t in ("F16", "BF16", "F32", "F64", "I8")),
    "TCC_EA_RDREQ", "TCC_EA_RDREQ_32B", "TCC_EA_WRREQ", "TCC_EA_WRREQ_64B", "TCC_HIT", "TCC_MISS",
    "TCP_TCC_READ_REQ", "TCP_TCC_WRITE_REQ", "TCP_TCC_ATOMIC_WITH_RET_REQ",
    "TCP_TCC_ATOMIC_WITHOUT_RET_REQ", "TCP_TOTAL_CACHE_ACCESSES", "SQ_LDS_IDX_ACTIVE",
    "SQ_LDS_BANK_CONFLICT", "SQ_WAVES", "GRBM_GUI_ACTIVE",
]  # fmt: skip
A100 = [
    "dram__bytes", "lts__t_bytes", "l1tex__t_bytes", "gpu__time_duration",
    *(f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on" for p in "dfh"
      for op in ("add", "fma", "mul")),
    "sm__ops_path_tensor_src_fp16", "sm__ops_path_tensor_src_bf16", "sm__ops_path_tensor_src_tf32",
]  # fmt: skip

STAND_IN = """\
import csv, json, os, shutil, sys
from pathlib import Path
name, args = Path(sys.argv[0]).name, sys.argv[1:]
with open(os.environ["STANDIN_LOG"], "a") as log:
    log.write(json.dumps([name, *args]) + "\\n")
if args == ["--version"]:
    print(f"{name} stand-in 1.0")
    sys.exit(0)
if args in (["--list-avail"], ["--query-metrics"]):
    print("\\n".join(os.environ["STANDIN_LIST"].split(",")))
    sys.exit(0)
program = args[args.index("--") + 1:] if "--" in args else args[-1:]
code = int(os.environ.get("STANDIN_EXIT", "0"))
if name == "ncu":
    sys.stdout.write(Path(os.environ["STANDIN_NCU"]).read_text())
    sys.exit(code)
out = Path(args[args.index("-d") + 1]) / "host"
out.mkdir(parents=True, exist_ok=True)
with open(os.environ["STANDIN_TRACE"], newline="") as f:
    rows = list(csv.DictReader(f))
if os.environ.get("STANDIN_EMPTY"):
    rows = []
if "--kernel-trace" in args:
    with open(out / "4242_kernel_trace.csv", "w", newline="") as f:
        names = list(csv.DictReader(open(os.environ["STANDIN_TRACE"])).fieldnames)
        w = csv.DictWriter(f, fieldnames=names, quoting=csv.QUOTE_NONNUMERIC)
        w.writeheader()
        for r in rows:
            w.writerow(r)
if "--pmc" in args:
    counters = args[args.index("--pmc") + 1:]
    end = next((i for i, a in enumerate(counters) if a.startswith("-")), len(counters))
    counters = counters[:end]
    values = json.loads(os.environ["STANDIN_VALUES"])
    head = ["Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id",
            "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size",
            "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Counter_Name",
            "Counter_Value", "Start_Timestamp", "End_Timestamp"]
    with open(out / "4242_counter_collection.csv", "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(head)
        for r in rows:
            grid = int(r["Grid_Size_X"]) * int(r["Grid_Size_Y"]) * int(r["Grid_Size_Z"])
            wg = (int(r["Workgroup_Size_X"]) * int(r["Workgroup_Size_Y"])
                  * int(r["Workgroup_Size_Z"]))
            for c in counters:
                w.writerow([r["Correlation_Id"], r["Dispatch_Id"], r["Agent_Id"], r["Queue_Id"],
                            4242, r["Thread_Id"], grid, r["Kernel_Id"], r["Kernel_Name"], wg,
                            r["LDS_Block_Size"], r["Scratch_Size"], r["VGPR_Count"],
                            r["Accum_VGPR_Count"], r["SGPR_Count"], c, values.get(c, 1),
                            r["Start_Timestamp"], r["End_Timestamp"]])
sys.exit(code)
"""

# counter values the stand-in reports for every dispatch
VALUES = {"SQ_INSTS_VALU_FMA_F32": 1000, "SQ_INSTS_VALU_ADD_F32": 100, "TCC_EA_RDREQ": 50,
          "TCC_EA_RDREQ_32B": 10, "TCC_EA_WRREQ": 20, "TCC_EA_WRREQ_64B": 20}  # fmt: skip


@pytest.fixture
def stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only the stand-in rocprofv3 and ncu; returns the command-line log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("rocprofv3", "ncu"):
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\n{STAND_IN}", encoding="utf-8")
        script.chmod(0o755)
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("STANDIN_LOG", str(log))
    monkeypatch.setenv("STANDIN_TRACE", str(TRACE))
    monkeypatch.setenv("STANDIN_NCU", str(NCU_CSV))
    monkeypatch.setenv("STANDIN_VALUES", json.dumps(VALUES))
    monkeypatch.chdir(tmp_path)
    return log


def logged(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def profile_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = main(["profile", "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_rocprofv3_passes(
    capsys: pytest.CaptureFixture[str], stand_ins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_LIST", ",".join(GFX90A))
    doc = profile_json(capsys, "--with", "rocprofv3", "-o", "out", "--", "./app", "-n", "3")
    runs = [r for r in logged(stand_ins) if r[1] not in ("--version", "--list-avail")]
    out = Path("out").resolve()
    # pass 1 times the kernels; the counter passes hold what the roofline needs and the GPU
    # lists, no hardware block over its limit, each counter once
    assert runs[0] == ["rocprofv3", "--kernel-trace", "--stats", "--output-format", "csv",
                       "-d", str(out / "pass_1"), "--", "./app", "-n", "3"]  # fmt: skip
    groups = [r[r.index("--pmc") + 1 : r.index("--output-format")] for r in runs[1:]]
    wanted = set(profiling.keep_available(profiling.wanted("amd", "roofline"), "\n".join(GFX90A)))
    assert sorted(c for g in groups for c in g) == sorted(wanted)
    assert "TCC_EA_RDREQ" in wanted and "TCC_EA0_RDREQ" not in wanted
    for g in groups:
        for block, limit in profiling.PASS_LIMITS.items():
            assert sum(c.startswith(f"{block}_") for c in g) <= limit
    for i, r in enumerate(runs[1:], start=2):
        assert r[r.index("-d") + 1] == str(out / f"pass_{i}") and r[-3:] == ["./app", "-n", "3"]
    # the manifest, and the analysis equal to analysing the folder directly
    manifest = json.loads((out / profiling.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["command"] == ["./app", "-n", "3"] and manifest["profiler"] == "rocprofv3"
    assert manifest["profiler_version"] == "rocprofv3 stand-in 1.0"
    assert [p["exit_code"] for p in manifest["passes"]] == [0] * len(runs)
    assert doc == run_json(capsys, "out")  # the same folder analysed directly
    # FP32 work by hand: 64 * (ADD + MUL + 2 * FMA + TRANS) per dispatch (MUL and TRANS are 1,
    # the stand-in's default, in their own passes), 9 dispatches: the passes combine
    assert doc["summary"]["dispatches"] == 9
    per_dispatch = 64 * (
        VALUES["SQ_INSTS_VALU_ADD_F32"] + 1 + 2 * VALUES["SQ_INSTS_VALU_FMA_F32"] + 1
    )
    flops = sum(k["roofline"]["flops_by_ceiling"]["fp32-vector"] for k in doc["kernels"])
    assert flops == 9 * per_dispatch
    hbm = sum(k["roofline"]["bytes"]["hbm"] for k in doc["kernels"])
    read = 32 * VALUES["TCC_EA_RDREQ_32B"] + 64 * (VALUES["TCC_EA_RDREQ"] - 10)
    write = 64 * VALUES["TCC_EA_WRREQ_64B"] + 32 * (VALUES["TCC_EA_WRREQ"] - 20)
    assert hbm == 9 * (read + write)
    assert [i["role"] for i in doc["inputs"]] == ["dispatches", "counter-run"] + [
        "counter-pass"
    ] * (len(runs) - 2)
    assert not [f for f in doc["findings"] if f["rule"] == "pass-dispatch-mismatch"]


def test_ncu_one_run_with_the_listed_metrics(
    capsys: pytest.CaptureFixture[str], stand_ins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_LIST", ",".join(A100))
    doc = profile_json(capsys, "--with", "ncu", "-o", "out", "--kernel", "sgemm", "--", "app")
    (run,) = [r for r in logged(stand_ins) if r[1] not in ("--version", "--query-metrics")]
    metrics = run[run.index("--metrics") + 1].split(",")
    assert metrics[0] == "gpu__time_duration.sum"
    assert metrics[1:3] == [  # the GPU's name and SM count, to find it in the catalogue
        "device__attribute_display_name",
        "device__attribute_multiprocessor_count",
    ]
    assert "sm__ops_path_tensor_src_fp8.sum" not in metrics  # not listed on this GPU
    assert "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in metrics
    assert run[:7] == ["ncu", "--clock-control", "none", "--csv", "--page", "details", "--metrics"]
    assert run[-3:] == ["--kernel-name", "regex:sgemm", "app"]
    replayed = run_json(capsys, str(NCU_CSV))
    assert doc["kernels"] == replayed["kernels"]
    assert (Path("out") / "ncu.csv").read_text() == NCU_CSV.read_text()


def one_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["profile", *args]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_failing_program_keeps_the_output(
    capsys: pytest.CaptureFixture[str], stand_ins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_LIST", ",".join(GFX90A))
    monkeypatch.setenv("STANDIN_EXIT", "3")
    err = one_error(capsys, "--with", "rocprofv3", "-o", "out", "--", "./app")
    assert "pass 1 (rocprofv3 --kernel-trace ...)" in err and "exited with code 3" in err
    manifest = json.loads((Path("out") / profiling.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["passes"][0]["exit_code"] == 3
    assert (Path("out") / "pass_1" / "host" / "4242_kernel_trace.csv").exists()


def test_no_dispatches(
    capsys: pytest.CaptureFixture[str], stand_ins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_LIST", ",".join(GFX90A))
    monkeypatch.setenv("STANDIN_EMPTY", "1")
    err = one_error(capsys, "--with", "rocprofv3", "-o", "out", "--", "./app")
    assert "recorded no kernel dispatches" in err


def test_missing_profiler(capsys: pytest.CaptureFixture[str], stand_ins: Path) -> None:
    assert "nsys: is not on PATH" in one_error(capsys, "--with", "nsys", "--", "app")
    os.environ["PATH"] = str(stand_ins.parent / "empty")
    err = one_error(capsys, "--", "app")
    assert "found no profiler on PATH (rocprofv3, rocprof, ncu, nsys)" in err


def test_existing_folder_needs_force(capsys: pytest.CaptureFixture[str], stand_ins: Path) -> None:
    Path("out").mkdir()
    (Path("out") / "x").write_text("keep", encoding="utf-8")
    assert main(["profile", "-o", "out", "--", "app"]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    assert (Path("out") / "x").read_text(encoding="utf-8") == "keep"


def test_counter_passes_split_by_block() -> None:
    names = [f"TCC_X{i}" for i in range(9)] + [f"SQ_Y{i}" for i in range(3)] + ["TA_Z"]
    passes = profiling.split_passes(names)
    assert [sum(c.startswith("TCC_") for c in p) for p in passes] == [4, 4, 1]
    assert sorted(c for p in passes for c in p) == sorted(names)


def test_sum_counters_follow_the_listing() -> None:
    listing = "TCC_HIT\nTCC_MISS_sum\nTCC_MISS\n"
    assert profiling.keep_available(["TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA0_RDREQ"], listing) == [
        "TCC_HIT",
        "TCC_MISS_sum",
    ]
