"""Kineto traces as LLM serving and training write them (issue 36): metadata before
``traceEvents``, kernels on a device that no ``deviceProperties`` id names (ROCm), a HIP
entry with no name, ``distributedInfo``, one unreadable trace in a folder. The traces are
AMD TraceLens's test traces, byte for byte (the B200 one trimmed to its GPU and runtime
events; tests/data/PROVENANCE.md); every expected number is taken from the file here."""

from __future__ import annotations

import gzip
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from roofscope.readers.io import json_keys
from roofscope.readers.io.json_keys import Malformed, TopKeys
from roofscope.render.numbers import duration
from tests.conftest import DATA

HERE = DATA / "kineto"
MI300X_BERT = HERE / "mi300x_bert_small_metadata_first.json.gz"
H100_BERT = HERE / "h100_bert_small_metadata_first.json.gz"
VLLM = HERE / "vllm_mi300x_unnamed_graph_execution.json.gz"
SGLANG = HERE / "sglang_qwen3_8b_decode_mi300x.json.gz"


def trace(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f, parse_float=Decimal)
    return doc


def kernels(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X"]


def analyze(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["analyze", "--json", *args]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def failure(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["analyze", *args]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


# -- recognised by structure ----------------------------------------------------------------


@pytest.mark.parametrize("path", [MI300X_BERT, H100_BERT])
def test_a_trace_whose_metadata_comes_first_is_read(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A benchmark harness's ``metadata`` object (18-20 KiB) stands before ``traceEvents``:
    no Kineto key in the first KiB, yet the file is a trace; its kernels are all read."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        text = f.read()
    doc = trace(path)
    assert next(iter(doc)) == "metadata" and text.index('"traceEvents"') > 16384
    want = kernels(doc)
    total_ns = sum(int(Decimal(e["dur"]) * 1000) for e in want)
    got = analyze(capsys, str(path))
    assert got["inputs"][0]["format"] == "kineto"
    assert got["summary"]["dispatches"] == len(want) == 60
    assert round(got["summary"]["kernel_time_s"] * 1e9) == total_ns


def test_format_kineto_names_what_stops_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"metadata": {"a": [1, {"b": "x]"}]}, "events": []}')
    err = failure(capsys, "--format", "kineto", str(other))
    assert err == (
        f"roofscope: error: {other}: cannot be read as kineto: it is a JSON object without a "
        "traceEvents array; pass the kineto file itself, or drop --format"
    )


def test_format_kineto_on_a_trace_whose_metadata_comes_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = analyze(capsys, "--format", "kineto", str(H100_BERT))
    assert got["summary"]["dispatches"] == 60


def test_top_keys_skip_values_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strings with brackets, escaped quotes and nested values, read 7 characters at a time:
    the keys come in file order, with the first character of each value."""
    monkeypatch.setattr(json_keys, "CHUNK_CHARS", 7)
    text = (
        '{"a": "x\\"]}", "metadata": {"k": [1, "]", {"z": "\\\\"}], "n": null}, '
        '"n": -1.5e3, "t": true, "traceEvents": [{"ph": "X"}]}'
    )
    keys = list(TopKeys(io.StringIO(text), limit=1 << 20).pairs())
    assert keys == [("a", '"'), ("metadata", "{"), ("n", "-"), ("t", "t"), ("traceEvents", "[")]


def test_top_keys_stop_at_the_limit() -> None:
    text = '{"metadata": "' + "x" * 300_000 + '", "traceEvents": []}'
    scan = TopKeys(io.StringIO(text), limit=1 << 16)
    with pytest.raises(Malformed, match="runs past the first 65,536 characters"):
        list(scan.pairs())


# -- the GPU the profile names -------------------------------------------------------------


@pytest.mark.parametrize(("path", "device"), [(MI300X_BERT, 2), (SGLANG, 9)])
def test_one_entry_names_the_gpu_of_kernels_on_another_device_id(
    path: Path, device: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kineto on ROCm: one deviceProperties entry, id 0, and every kernel on device 2 (or 9):
    the one entry is the GPU; HIP's compute capability 9.4 is gfx942."""
    doc = trace(path)
    (entry,) = doc["deviceProperties"]
    assert entry["id"] == 0 and {e["args"]["device"] for e in kernels(doc)} == {device}
    assert (entry["computeMajor"], entry["computeMinor"], entry["warpSize"]) == (9, 4, 64)
    got = analyze(capsys, str(path))
    assert got["run"]["gpu"] == entry["name"]
    assert got["run"]["arch"] == "gfx942"
    assert got["device"]["key"] == "mi300x"
    assert got["metrics"]["machine"]["compute_units"] == entry["numSms"] == 304


def test_a_hip_entry_without_a_name_is_gfx942_not_sm_94(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """vLLM on ROCm: eight entries alike but for their id, each named "", compute capability
    9.4 and warp 64, beside roctracer_version; kernels on device 2."""
    doc = trace(VLLM)
    entries = doc["deviceProperties"]
    assert len(entries) == 8 and {e["name"] for e in entries} == {""}
    assert {(e["computeMajor"], e["computeMinor"], e["warpSize"]) for e in entries} == {(9, 4, 64)}
    assert "roctracer_version" in doc
    assert {e["args"]["device"] for e in kernels(doc)} == {2}
    got = analyze(capsys, str(VLLM))
    assert got["run"]["gpu"] is None and got["run"]["arch"] == "gfx942"
    # 304 CUs and gfx942 fit MI300X and MI325X: the ceilings they share, said so
    assert got["device"]["detected_from"].startswith("profile: gfx942 with 304 CUs")
    assert got["device"]["arch"] == "gfx942"


def test_an_nvidia_entry_keeps_its_sm_arch(capsys: pytest.CaptureFixture[str]) -> None:
    (entry,) = trace(H100_BERT)["deviceProperties"]
    assert (entry["computeMajor"], entry["computeMinor"]) == (9, 0)
    got = analyze(capsys, str(H100_BERT))
    assert got["run"]["arch"] == "sm_90" and got["run"]["gpu"] == entry["name"]


def synthetic(tmp_path: Path, entries: list[dict[str, Any]], **top: Any) -> Path:
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "pid": 5, "tid": 0, "ts": 1, "dur": 2}
    doc = {
        "schemaVersion": 1,
        "deviceProperties": entries,
        **top,
        "traceEvents": [{**kernel, "args": {"device": 5}}],
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    return path


def test_an_unnamed_hip_entry_of_a_shared_capability_stays_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """9.0 is any of gfx900-gfx90a (ROCm clr's target table): no arch is guessed, and a
    warning says why the GPU is unknown."""
    entry = {"id": 0, "name": "", "computeMajor": 9, "computeMinor": 0, "warpSize": 64}
    got = analyze(capsys, str(synthetic(tmp_path, [entry], roctracer_version=4.1)))
    assert got["run"]["gpu"] is None and got["run"]["arch"] is None
    (warning,) = [w for w in got["warnings"] if w["code"] == "kineto-gpu-unnamed"]
    assert "compute capability 9.0 is no single gfx target" in warning["message"]


def test_entries_that_differ_name_no_gpu_for_another_device_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0}
    b = {"id": 1, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0}
    got = analyze(capsys, str(synthetic(tmp_path, [a, b])))
    assert got["run"]["gpu"] is None and got["run"]["arch"] is None


# -- the job, and busy/idle over several devices ---------------------------------------------


def test_distributed_info_is_stated(capsys: pytest.CaptureFixture[str]) -> None:
    info = trace(SGLANG)["distributedInfo"]
    assert (info["rank"], info["world_size"], info["backend"]) == (0, 1, "nccl")
    got = analyze(capsys, str(SGLANG))
    assert got["run"]["distributed"] == {"ranks": [0], "world_size": 1, "backend": "nccl"}
    assert main(["analyze", str(SGLANG)]) == 0
    assert "\n  job: rank 0 of 1, backend nccl\n" in capsys.readouterr().out


def test_a_trace_without_distributed_info_has_no_job(capsys: pytest.CaptureFixture[str]) -> None:
    assert "distributedInfo" not in trace(MI300X_BERT)
    assert "distributed" not in analyze(capsys, str(MI300X_BERT))["run"]


def union_ns(intervals: list[tuple[int, int]]) -> int:
    busy, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start >= reach:
            busy, reach = busy + end - start, end
        elif end > reach:
            busy, reach = busy + end - reach, end
    return busy


def device_times(paths: list[Path]) -> list[tuple[int, int]]:
    """(span, busy) in ns per (file, device), from the kernel events' own ts and dur."""
    out = []
    for path in paths:
        per_device: dict[int, list[tuple[int, int]]] = {}
        for e in kernels(trace(path)):
            start = int(Decimal(e["ts"]) * 1000)
            per_device.setdefault(e["args"]["device"], []).append(
                (start, start + int(Decimal(e["dur"]) * 1000))
            )
        for spans in per_device.values():
            out.append((max(b for _, b in spans) - min(a for a, _ in spans), union_ns(spans)))
    return out


def test_busy_and_idle_on_several_devices_add_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two traces, two devices: busy and idle are parts of the devices' spans summed, and the
    sentence names that sum, not the wall (which spans both files' clocks)."""
    for path in (SGLANG, MI300X_BERT):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    times = device_times([MI300X_BERT, SGLANG])
    span, busy = sum(s for s, _ in times), sum(b for _, b in times)
    got = analyze(capsys, str(tmp_path))
    assert len(got["devices"]) == 2
    assert round(got["summary"]["busy_s"] * 1e9) == busy
    assert round(got["summary"]["idle_s"] * 1e9) == span - busy
    assert main(["analyze", str(tmp_path)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ", the 2 devices' spans summed (wall " in text
    assert f"GPU busy {duration(busy)} of {duration(span)}, the 2 devices'" in text


# -- one unreadable trace among several -----------------------------------------------------


def test_a_cpu_only_trace_in_a_folder_is_left_out_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cpu_only = tmp_path / "rank1.json"
    cpu_only.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a"}]}))
    (tmp_path / SGLANG.name).write_bytes(SGLANG.read_bytes())
    got = analyze(capsys, str(tmp_path))
    assert got["summary"]["dispatches"] == len(kernels(trace(SGLANG))) == 555
    (left,) = [w["message"] for w in got["warnings"] if w["code"] == "run-unreadable"]
    assert left.startswith(f"{cpu_only}: holds no GPU kernels")
    assert left.endswith("(this run is left out; the others are read)")


def test_a_damaged_trace_in_a_folder_is_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged = tmp_path / "cut.json.gz"
    damaged.write_bytes(gzip.compress(gzip.decompress(SGLANG.read_bytes())[:300_000]))
    (tmp_path / MI300X_BERT.name).write_bytes(MI300X_BERT.read_bytes())
    got = analyze(capsys, str(tmp_path))
    assert got["summary"]["dispatches"] == 60
    (left,) = [w["message"] for w in got["warnings"] if w["code"] == "run-unreadable"]
    assert left.startswith(f"{damaged}: the trace was cut short after 300000 characters")


def test_a_folder_whose_every_trace_is_unreadable_names_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op"}]}))
    err = failure(capsys, str(tmp_path))
    assert err.startswith(f"roofscope: error: {tmp_path / 'a.json'}: holds no GPU kernels")


def test_a_named_unreadable_file_still_stops_the_analysis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only runs found in a folder are left out: a file named on the command line is meant."""
    cpu_only = tmp_path / "cpu.json"
    cpu_only.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op"}]}))
    err = failure(capsys, str(cpu_only), str(SGLANG))
    assert err.startswith(f"roofscope: error: {cpu_only}: holds no GPU kernels")


@pytest.mark.parametrize("gzipped", [False, True])
def test_metadata_past_the_head_is_read_through(
    tmp_path: Path, gzipped: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """Metadata of 200 KiB (past the 64 KiB head detection starts from) before traceEvents:
    detection reads on in the file, skipping the value."""
    events = [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "ts": 5, "dur": 3, "args": {}}]
    text = json.dumps({"metadata": {"note": "]" * 200_000}, "traceEvents": events})
    path = tmp_path / ("t.json.gz" if gzipped else "t.json")
    path.write_bytes(gzip.compress(text.encode()) if gzipped else text.encode())
    got = analyze(capsys, str(path))
    assert got["summary"]["dispatches"] == 1 and got["summary"]["kernel_time_s"] == 3e-6


B200 = HERE / "b200_eager_rank0_of_8_trimmed.json.gz"


def test_rank_of_an_eight_rank_job(capsys: pytest.CaptureFixture[str]) -> None:
    """An eight-GPU B200 serving step (multimem all-reduce): distributedInfo with its 71
    process groups; the job line and the JSON say rank 0 of 8, nccl."""
    doc = trace(B200)
    info = doc["distributedInfo"]
    assert (info["rank"], info["world_size"], info["backend"], info["pg_count"]) == (
        0,
        8,
        "nccl",
        71,
    )
    want = kernels(doc)
    got = analyze(capsys, str(B200))
    assert got["run"]["distributed"] == {"ranks": [0], "world_size": 8, "backend": "nccl"}
    assert (got["run"]["gpu"], got["run"]["arch"]) == ("NVIDIA B200", "sm_100")
    assert got["summary"]["dispatches"] == len(want) == 768
    assert round(got["summary"]["kernel_time_s"] * 1e9) == sum(
        int(Decimal(e["dur"]) * 1000) for e in want
    )
    assert main(["analyze", str(B200)]) == 0
    assert "\n  job: rank 0 of 8, backend nccl\n" in capsys.readouterr().out
