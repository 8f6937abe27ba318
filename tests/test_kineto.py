"""PyTorch profiler / Kineto traces: every corpus trace against an aggregation written here
(whole-document ``json`` with exact decimals), four against HolisticTraceAnalysis 0.5.0
(tests/data/kineto-hta-reference.json, written by tools/hta_reference.py), and the ways a
trace can be refused.

tests/data/kineto/ holds three small HTA test traces byte for byte (the MI250 trace, the 2022
``Kernel``-category trace and the cuda_event_sync trace) so that most tests run without the
shared corpus.
"""

from __future__ import annotations

import gzip
import json
import re
import tarfile
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from roofscope.analysis import checks
from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers import registry
from roofscope.readers.io import json_stream
from roofscope.readers.load import load
from roofscope.readers.sniff import read_head
from roofscope.readers.torch.kineto import KinetoTrace
from tests.conftest import DATA, SHARED_CORPUS

HERE = DATA / "kineto"
AMD = HERE / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"
OLD = HERE / "inference_rank_1.json.gz"  # 2022: cat "Kernel", traceEvents first
SYNC = HERE / "event_sync_trace.json.gz"
TORCH = SHARED_CORPUS / "torch"
HTA = TORCH / "hta-tests-data"
REFERENCE = DATA / "kineto-hta-reference.json"
corpus = pytest.mark.skipif(not TORCH.exists(), reason="shared corpus not present")

KINETO = sorted(
    str(p.relative_to(TORCH))
    for p in TORCH.rglob("*.json.gz")
    if p.parent.name not in ("execution_trace", "cpu_only", "cupti_profiler")
    and p.parent.name != "distributed_info_unavailable"
)


def read(path: Path) -> Profile:
    profile = Profile.empty()
    KinetoTrace().read(path, read_head(path), profile, role=Role.DISPATCHES)
    return profile


def error(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def document(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f, parse_float=Decimal)
    return doc


def exact_ns(us: int | Decimal) -> int:
    ns = Decimal(us) * 1000
    assert ns == ns.to_integral_value(), us  # no trace in the corpus writes below 1 ns
    return int(ns)


def expected(path: Path, cats: set[str]) -> dict[str, tuple[int, int]]:
    """Per event name: (events, total ns) of the complete events of ``cats``."""
    totals: dict[str, list[int]] = {}
    for e in document(path)["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in cats:
            entry = totals.setdefault(e["name"], [0, 0])
            entry[0] += 1
            entry[1] += exact_ns(e["dur"])
    return {n: (c, t) for n, (c, t) in totals.items()}


def kernels(profile: Profile) -> dict[str, tuple[int, int]]:
    rows = profile.con.execute(
        """SELECT n.raw_name, count(*), sum(d.end_ns - d.start_ns)
        FROM dispatches d JOIN names n USING (name_id) GROUP BY n.raw_name"""
    ).fetchall()
    return {str(n): (int(c), int(t)) for n, c, t in rows}


def copies(profile: Profile) -> dict[str, tuple[int, int]]:
    rows = profile.con.execute(
        "SELECT direction, count(*), sum(end_ns - start_ns) FROM copies GROUP BY direction"
    ).fetchall()
    return {str(n): (int(c), int(t)) for n, c, t in rows}


KERNEL = {"kernel", "Kernel"}
COPY = {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"}


def dlrm_ranks(tmp_path: Path) -> list[Path]:
    with tarfile.open(TORCH / "param-et-replay-inputs" / "dlrm_kineto.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    ranks = sorted(tmp_path.glob("dlrm_kineto/worker*_step_12.*.pt.trace.json"))
    assert len(ranks) == 8
    return ranks


# -- every trace against an independent aggregation ----------------------------------------


@pytest.mark.parametrize("path", [AMD, OLD, SYNC], ids=lambda p: p.name)
def test_bundled_traces_equal_independent_aggregation(path: Path) -> None:
    profile = read(path)
    assert kernels(profile) == expected(path, KERNEL)
    assert copies(profile) == expected(path, COPY)


@corpus
@pytest.mark.parametrize("rel", KINETO)
def test_corpus_trace_equals_independent_aggregation(rel: str) -> None:
    profile = read(TORCH / rel)
    assert kernels(profile) == expected(TORCH / rel, KERNEL)
    assert copies(profile) == expected(TORCH / rel, COPY)


@corpus
def test_dlrm_ranks_equal_independent_aggregation(tmp_path: Path) -> None:
    for rank, path in enumerate(dlrm_ranks(tmp_path)):
        profile = read(path)
        assert kernels(profile) == expected(path, KERNEL)
        assert copies(profile) == expected(path, COPY)
        assert [(f.rank, f.role) for f in profile.inputs] == [
            (rank, "dispatches"),
            (rank, "copies"),
        ]


def test_times_are_exact_nanoseconds(tmp_path: Path) -> None:
    # ts around 1.7e15 µs with three decimals: float64 cannot hold the last nanosecond
    trace = tmp_path / "t.json"
    trace.write_text(
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, '
        '"ts": 1712195495505582.989, "dur": 4.9285, "args": {"device": 0}}], '
        '"schemaVersion": 1}'
    )
    ((start, end),) = read(trace).con.execute("SELECT start_ns, end_ns FROM dispatches").fetchall()
    assert (start, end - start) == (1712195495505582989, 4928)  # 4928.5 rounds half-even


@pytest.mark.parametrize(
    ("kernels", "repeats"),
    [
        ((("a", 10), ("b", 20), ("a", 30)), 0),
        ((("a", 10), ("b", 20), ("c", 20)), 0),  # parallel branches of the graph
        ((("a", 10), ("b", 20), ("b", 20)), 1),
    ],
    ids=["graph", "branches", "written-twice"],
)
def test_graph_launch_kernels_share_a_correlation(
    tmp_path: Path, kernels: tuple[tuple[str, int], ...], repeats: int
) -> None:
    # the kernels of one CUDA graph launch carry the launch's one correlation id
    events = ", ".join(
        f'{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {ts}, '
        '"dur": 5, "args": {"device": 0, "correlation": 42}}'
        for name, ts in kernels
    )
    trace = tmp_path / "t.json"
    trace.write_text(f'{{"traceEvents": [{events}], "schemaVersion": 1}}')
    found = [w.count for w in checks.check(read(trace)) if w.code == "duplicate-dispatch-id"]
    assert found == ([repeats] if repeats else [])


def test_tiny_read_chunks_give_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = read(AMD).con.execute("SELECT * FROM dispatches").fetchall()
    monkeypatch.setattr(json_stream, "CHUNK_CHARS", 7)
    assert read(AMD).con.execute("SELECT * FROM dispatches").fetchall() == whole


# -- HolisticTraceAnalysis ----------------------------------------------------------------


def hta(rel: str) -> dict[int, tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]]:
    """Per rank: (kernels, copies) of HTA's breakdown; HTA 0.5.0 lists Memcpy/Memset too."""
    ref = json.loads(REFERENCE.read_text())["traces"][rel]
    memory = re.compile(r"Memcpy|Memset")
    out = {}
    for rank, per_name in ref.items():
        split: tuple[dict[str, tuple[int, int]], ...] = ({}, {})
        for name, (calls, total, _) in per_name.items():
            split[bool(memory.match(name))][name] = (calls, total)
        out[int(rank)] = (split[0], split[1])
    return out


def test_amd_trace_equals_hta() -> None:
    profile = read(AMD)
    ((want_kernels, want_copies),) = hta(
        "hta-tests-data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    ).values()
    assert kernels(profile) == want_kernels
    assert copies(profile) == want_copies


@corpus
def test_linear_trace_equals_hta() -> None:
    profile = read(TORCH / "param-et-replay-inputs" / "linear_kineto.json.gz")
    want = hta("param-et-replay-inputs/linear_kineto.json.gz")
    assert list(want) == [0]
    assert kernels(profile) == want[0][0]
    assert copies(profile) == want[0][1]


@corpus
def test_sampled_ranks_equal_hta() -> None:
    want = hta("hta-tests-data/trace_filter")
    for rank in (0, 1):
        profile = read(HTA / "trace_filter" / f"sampled_rank-{rank}.json.gz")
        assert profile.inputs[0].rank == rank
        assert (kernels(profile), copies(profile)) == want[rank]


@corpus
def test_dlrm_ranks_equal_hta(tmp_path: Path) -> None:
    want = hta("param-et-replay-inputs/dlrm_kineto.tar.gz")
    for rank, path in enumerate(dlrm_ranks(tmp_path)):
        profile = read(path)
        assert (kernels(profile), copies(profile)) == want[rank]


# -- what else is read --------------------------------------------------------------------


def device_entry(path: Path) -> dict[str, Any]:
    doc = document(path)
    devices = Counter(e["args"]["device"] for e in doc["traceEvents"] if e.get("cat") in KERNEL)
    (device, _), *_ = devices.most_common(1)
    (entry,) = [d for d in doc["deviceProperties"] if d["id"] == device]
    return dict(entry)


def test_run_of_amd_trace() -> None:
    profile = read(AMD)
    entry = device_entry(AMD)
    assert entry["id"] == 2 and entry["warpSize"] == 64
    run = profile.run
    assert (run.producer, run.producer_version) == ("pytorch-profiler", "schemaVersion 1")
    # no gfx name in a ROCm 6.2 trace's deviceProperties: no arch is made up from computeMajor
    assert (run.gpu, run.arch, run.compute_units) == (entry["name"], None, entry["numSms"])
    waves = profile.launches().aggregate("wave_size, sum(dispatches)").fetchall()
    assert waves == [(64, 14)]
    assert profile.con.execute("SELECT DISTINCT pid, device FROM dispatches").fetchall() == [
        (597913, 2)
    ]


def test_run_of_nvidia_trace() -> None:
    entry = device_entry(SYNC)
    run = read(SYNC).run
    arch = f"sm_{entry['computeMajor']}{entry['computeMinor']}"
    assert (run.gpu, run.arch, run.compute_units) == (entry["name"], arch, entry["numSms"])
    assert (run.gpu, run.arch) == ("NVIDIA A100-PG509-200", "sm_80")


@corpus
def test_run_of_linear_trace_names_the_used_gpu() -> None:
    path = TORCH / "param-et-replay-inputs" / "linear_kineto.json.gz"
    entry = device_entry(path)
    run = read(path).run
    assert (run.gpu, run.arch, run.compute_units) == ("NVIDIA GeForce RTX 2080 Ti", "sm_75", 68)
    assert (run.gpu, run.compute_units) == (entry["name"], entry["numSms"])


def test_launch_shapes() -> None:
    doc = document(SYNC)
    want = Counter(
        (
            e["args"]["stream"],
            _product(e["args"]["grid"]) * _product(e["args"]["block"]),
            _product(e["args"]["block"]),
            e["args"]["registers per thread"],
            e["args"]["shared memory"],
        )
        for e in doc["traceEvents"]
        if e.get("cat") == "kernel"
    )
    got = (
        read(SYNC)
        .launches()
        .aggregate(
            "stream, grid_size, workgroup_size, arch_vgpr, lds_bytes, wave_size, "
            "sum(dispatches)::BIGINT"
        )
    )
    rows = got.fetchall()
    assert {r[5] for r in rows} == {32}
    assert Counter({r[:5]: r[6] for r in rows}) == want


def _product(dims: list[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def test_old_trace_stream_from_tid_and_copies_apart() -> None:
    profile = read(OLD)
    assert profile.inputs[0].rank == 1
    assert profile.count("copies") == 0
    streams = profile.launches().aggregate("stream").fetchall()
    assert streams == [(7,)]


def test_copies_are_not_kernels() -> None:
    profile = read(AMD)
    rows = profile.con.execute(
        "SELECT direction, src_agent, dst_agent, pid FROM copies ORDER BY start_ns"
    ).fetchall()
    assert rows == [("Memcpy HtoD (Host -> Device)", "Host", "Device", 597913)] * 2
    assert not [n for n in kernels(profile) if n.startswith("Memcpy")]
    assert [(f.role, f.rows) for f in profile.inputs] == [("dispatches", 14), ("copies", 2)]


@corpus
def test_nccl_kernels_are_read() -> None:
    path = HTA / "nccl_parser_config" / "nccl_data.json.gz"
    got = {n: v for n, v in kernels(read(path)).items() if "nccl" in n}
    assert got and got == {n: v for n, v in expected(path, KERNEL).items() if "nccl" in n}


# -- refusals -----------------------------------------------------------------------------


@corpus
def test_execution_trace_is_refused() -> None:
    path = HTA / "execution_trace" / "benchmark_simple_add_et.json.gz"
    assert KinetoTrace().detect(read_head(path))
    assert "is a PyTorch execution trace" in error(path)


@corpus
def test_cpu_only_trace_is_refused() -> None:
    assert "holds no GPU kernels" in error(
        HTA / "cpu_only" / next(p.name for p in (HTA / "cpu_only").iterdir())
    )


@pytest.mark.parametrize("source", [AMD, OLD], ids=["2024-hip", "2022-cuda"])
def test_trace_where_no_kernel_ran(tmp_path: Path, source: Path) -> None:
    """The real trace without its kernel events and their launch calls: the other runtime
    calls and copies that CUPTI or roctracer recorded say the GPU was traced, so no kernel
    ran in the profiled steps (it was 'a CPU-only trace?; profile with
    ProfilerActivity.CUDA', which was on)."""
    doc = json.loads(gzip.decompress(source.read_bytes()))
    events = [
        e
        for e in doc["traceEvents"]
        if e.get("cat") not in ("kernel", "Kernel") and not is_launch(e)
    ]
    timed = [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e]
    runtime = sum(e["cat"] in ("cuda_runtime", "Runtime", "cuda_driver") for e in timed)
    copies = sum(e["cat"] in ("gpu_memcpy", "gpu_memset", "Memcpy", "Memset") for e in timed)
    assert runtime > 0
    path = tmp_path / "nokernels.json"
    path.write_text(json.dumps({**doc, "traceEvents": events}))
    what = f"{runtime:,} runtime calls" + (f", {copies:,} memcpys/memsets" if copies else "")
    assert error(path) == (
        f"{path}: no kernel ran in the captured range: the profiler traced kernels and "
        f"recorded none (the capture holds {what}); profile steps where the model runs on the "
        "GPU (torch.profiler's schedule: wait, warmup and active steps, and prof.step() called "
        "once per step)"
    )


def is_launch(event: dict[str, Any]) -> bool:
    """A kernel launch call, by the names CUDA and HIP give them."""
    name = str(event.get("name", ""))
    return event.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver") and any(
        n in name for n in ("LaunchKernel", "GraphLaunch", "cuLaunch")
    )


@pytest.mark.parametrize("source", [AMD, OLD], ids=["2024-hip", "2022-cuda"])
def test_trace_whose_kernels_were_not_recorded(tmp_path: Path, source: Path) -> None:
    """The real trace without its kernel events, its launch calls kept: kernels ran and the
    profiler lost them (was 'no kernel ran', which the launches contradict)."""
    doc = json.loads(gzip.decompress(source.read_bytes()))
    events = [e for e in doc["traceEvents"] if e.get("cat") not in ("kernel", "Kernel")]
    launches = sum(is_launch(e) and e.get("ph") == "X" for e in events)
    assert launches > 0
    path = tmp_path / "lost.json"
    path.write_text(json.dumps({**doc, "traceEvents": events}))
    assert error(path) == (
        f"{path}: has no kernel records, though its runtime trace holds {launches:,} kernel "
        f"launch{'' if launches == 1 else 'es'}: kernels ran and the profiler did not record "
        "them; profile again with "
        "ProfilerActivity.CUDA in torch.profiler's activities, and check the profiler's log "
        "for dropped activity records"
    )


@corpus
def test_cupti_profiler_ranges_are_named() -> None:
    """HTA's cupti_profiler trace: 77 kernels measured by CUPTI's range profiler (counters,
    no kernel events), and 77 cudaLaunchKernel calls: not 'no kernel ran'."""
    path = next((HTA / "cupti_profiler").iterdir())
    doc = json.loads(gzip.decompress(path.read_bytes()))
    ranges = sum(e.get("cat") == "cuda_profiler_range" for e in doc["traceEvents"])
    assert ranges == 77
    assert error(path) == (
        f"{path}: holds 77 CUPTI profiler ranges (kernels measured by counters: torch.profiler's "
        "experimental_config profiler_metrics) and no kernel events, which roofscope reads for "
        "kernel times; profile the same steps again without profiler_metrics "
        "(ProfilerActivity.CUDA) for the kernel trace"
    )


@pytest.mark.parametrize("fraction", [0.01, 0.37, 0.5, 0.93, 0.9999])
def test_truncated_plain_trace(tmp_path: Path, fraction: float) -> None:
    text = gzip.decompress(AMD.read_bytes())
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[: int(len(text) * fraction)])
    assert "the trace was cut short" in error(cut)


@pytest.mark.parametrize("fraction", [0.2, 0.6, 0.99])
def test_truncated_gzip_trace(tmp_path: Path, fraction: float) -> None:
    data = AMD.read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: int(len(data) * fraction)])
    assert "the trace was cut short" in error(cut)


def test_malformed_json_names_the_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schemaVersion": 1,\n "traceEvents": [\n {"ph": "X",, "cat": "kernel"}]}')
    message = error(bad)
    assert message.startswith(f"{bad}:3: is not valid JSON at character 51 (")  # the second comma


def test_detects_kineto_but_not_other_json() -> None:
    """Any JSON object with a traceEvents array is a Chrome trace Kineto's reader can read;
    rocprof v1's JSON, also a Chrome trace, is recognised first by its own reader."""
    assert KinetoTrace().detect(read_head(AMD))
    assert KinetoTrace().detect(read_head(OLD))
    head = '{"traceEvents":[{}\n,{"args":{"BeginNs":"1"},"cat":"KERNEL_EXECUTION","ph":"X"}'
    rocprof_v1 = replace(read_head(SYNC), first_line='{"traceEvents":[{}', text=head, gzip=False)
    found = registry.detect(rocprof_v1)
    assert found is not None and found.name == "rocprof-v1-json"


def test_an_event_whose_category_is_not_text_is_left_out(tmp_path: Path) -> None:
    """Found by the fuzz campaign: ``"cat": [...]`` (a damaged event) is skipped, the kernel
    beside it is read."""
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "args": {}}
    damaged = {**kernel, "cat": ["kernel"]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": [damaged, kernel]}), "utf-8")
    rows = read(path).con.execute("SELECT start_ns, end_ns FROM dispatches").fetchall()
    assert rows == [(1000, 3000)]


def test_the_process_is_the_first_host_events_pid_of_64_bits(tmp_path: Path) -> None:
    """The dispatches' pid is the first operator's or runtime call's pid that is an integer
    of 64 bits, in the trace's order: a flow, a kernel or a user range before it does not
    count, nor does a host event whose pid is a string or past 64 bits."""
    events = [
        {"ph": "s", "id": 1, "pid": 11, "tid": 1, "ts": 1, "cat": "ac2g", "name": "ac2g"},
        {"ph": "X", "cat": "user_annotation", "name": "u", "pid": 12, "tid": 1, "ts": 1, "dur": 9},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": "13", "tid": 1, "ts": 1, "dur": 5},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 2**64, "tid": 1,
         "ts": 2, "dur": 1, "args": {"correlation": 5}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 14, "tid": 1, "ts": 7, "dur": 2},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 15, "tid": 1,
         "ts": 8, "dur": 1, "args": {"correlation": 6}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2,
         "args": {"device": 0, "correlation": 5}},
    ]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [events[-1], *events[:-1]]}), "utf-8")
    profile = read(path)
    assert profile.con.execute("SELECT DISTINCT pid FROM dispatches").fetchall() == [(14,)]


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_a_control_character_in_a_top_level_key_is_one_line(tmp_path: Path, suffix: str) -> None:
    """Found by the fuzz campaign: a byte of the A100 sync trace's first key ("schemaVersion")
    turned into a carriage return left a traceback from the detection's key scan. The file
    is refused with the break and its place (counted from 0): the key's quote is character
    5 of the trace's '\\n{\\n  "', the return character 6."""
    text = gzip.decompress(SYNC.read_bytes()).decode("utf-8")
    assert text.startswith('\n{\n  "schemaVersion"')
    damaged = text[:6] + "\r" + text[7:]
    path = tmp_path / f"t{suffix}"
    data = damaged.encode("utf-8")
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    with pytest.raises(InputError) as caught:
        load([str(path)])
    message = str(caught.value)
    assert message == (
        f"{path}: is a JSON object that breaks at its top level (a key that is no JSON "
        "string: Invalid control character at character 6); the file is damaged; export it "
        "again"
    )
