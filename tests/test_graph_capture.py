"""Kernels replayed from CUDA/HIP graphs, given their operators by a trace of the graphs'
capture (issue 39 point 1, ``--graph-capture``; docs/formats/pytorch-kineto.md, "Graph
capture and replay"). The real pairs are AMD TraceLens's SGLang and vLLM decode traces on
MI300X (tests/data/PROVENANCE.md): the replays byte for byte, the captures trimmed to their
operators, launches and capture calls. Every expected number is worked out here from the
files: the alignment by a plain in-order walk, the FLOPs from the captured Input Dims."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from roofscope.api.run import analyze
from roofscope.cli.app import main
from roofscope.errors import RoofscopeError
from roofscope.readers.load import load
from roofscope.readers.torch.graph_capture import read_capture
from roofscope.readers.torch.graph_merge import merge
from tests.conftest import DATA

PIECEWISE = DATA / "kineto" / "vllm_mi300x_piecewise_graph_execution.json.gz"
PIECEWISE_CAPTURE = DATA / "graph_capture" / "vllm_piecewise_bs8192_capture.json.gz"
SGLANG = DATA / "kineto" / "sglang_qwen3_8b_decode_mi300x.json.gz"
SGLANG_CAPTURE = DATA / "graph_capture" / "sglang_decode_bs32_capture.json.gz"
VLLM = DATA / "kineto" / "vllm_mi300x_unnamed_graph_execution.json.gz"
VLLM_CAPTURE = DATA / "graph_capture" / "vllm_decode_full_bs32_capture.json.gz"
PAIRS = [(SGLANG, SGLANG_CAPTURE), (VLLM, VLLM_CAPTURE)]


def events(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        found: list[dict[str, Any]] = json.load(f)["traceEvents"]
    return found


def replayed(evs: list[dict[str, Any]]) -> list[list[str]]:
    """Each graph launch's kernels (names) in time order."""
    ids = [e["args"]["correlation"] for e in evs if e.get("name", "").endswith("GraphLaunch")]
    kernels = [e for e in evs if e.get("cat") == "kernel"]
    return [
        [k["name"] for k in sorted(kernels, key=lambda k: k["ts"])
         if k["args"].get("correlation") == g]
        for g in ids
    ]  # fmt: skip


def captured(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The launches of a trace's one capture window, in time order."""
    (graph,) = windows(evs)
    return graph


def windows(evs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The launches between each capture's begin and end, in time order, a list a graph."""
    calls = [e for e in evs if e.get("cat") == "cuda_runtime"]
    begins = sorted(e["ts"] for e in calls if e["name"].endswith("StreamBeginCapture"))
    ends = sorted(e["ts"] for e in calls if e["name"].endswith("StreamEndCapture"))
    assert len(begins) == len(ends) and all(b < e for b, e in zip(begins, ends, strict=True))
    launches = sorted((e for e in calls if "kernel" in e["args"]), key=lambda e: e["ts"])
    return [
        [e for e in launches if b <= e["ts"] <= end] for b, end in zip(begins, ends, strict=True)
    ]


def walk(kernels: list[str], launches: list[dict[str, Any]]) -> list[int | None]:
    """A plain in-order alignment: each kernel takes the next launch of its name."""
    out: list[int | None] = []
    at = 0
    for name in kernels:
        hit = [i for i in range(at, len(launches)) if launches[i]["args"]["kernel"] == name]
        out.append(hit[0] if hit else None)
        at = hit[0] + 1 if hit else at
    return out


def innermost(evs: list[dict[str, Any]], launch: dict[str, Any]) -> dict[str, Any]:
    ops = [
        e for e in evs
        if e.get("cat") == "cpu_op" and e["tid"] == launch["tid"]
        and e["ts"] <= launch["ts"] <= e["ts"] + e["dur"]
    ]  # fmt: skip
    return max(ops, key=lambda e: (e["ts"], -e["dur"]))


@pytest.mark.parametrize(("replay", "capture"), PAIRS, ids=["sglang", "vllm"])
def test_replayed_kernels_matched_as_an_in_order_walk_finds(replay: Path, capture: Path) -> None:
    graphs = replayed(events(replay))
    launches = captured(events(capture))
    expected = sum(i is not None for g in graphs for i in walk(g, launches))
    total = sum(len(g) for g in graphs)
    profile = load([str(replay)])
    merged = merge(profile, [read_capture(str(capture))])
    assert (merged.matched, merged.unmatched, merged.launches) == (
        expected, total - expected, len(graphs)
    )  # fmt: skip
    assert expected == {SGLANG: 544, VLLM: 421}[replay]  # every replayed kernel: TraceLens too


def test_piecewise_graphs_pair_in_order() -> None:
    """vLLM's piecewise capture: 25 graphs, one per piece, and 25 graph launches replaying
    them in order (TraceLens pairs the i-th capture with the i-th launch): the count is that
    pairing's, and each matched kernel's operator lies inside its own piece's capture."""
    graphs, pieces = replayed(events(PIECEWISE)), windows(events(PIECEWISE_CAPTURE))
    assert len(graphs) == len(pieces) == 25
    walks = [walk(g, piece) for g, piece in zip(graphs, pieces, strict=True)]
    expected = sum(i is not None for w in walks for i in w)
    profile = load([str(PIECEWISE)])
    merged = merge(profile, [read_capture(str(PIECEWISE_CAPTURE))])
    assert (merged.matched, merged.unmatched, merged.launches) == (expected, 0, 25)
    assert expected == 361
    spans = [(min(e["ts"] for e in p), max(e["ts"] for e in p)) for p in pieces]
    where = profile.con.execute(
        """SELECT d.dispatch_id, o.start_ns FROM graph_kernel_ops k
        JOIN dispatches d ON d.rowid = k.row_id JOIN operators o ON o.op_id = k.op_id
        ORDER BY d.start_ns"""
    ).fetchall()
    order = sorted({c for c, _ in where}, key=[c for c, _ in where].index)
    for correlation, start_ns in where:
        low, high = spans[order.index(correlation)]
        assert low * 1000 - 10**6 <= start_ns <= high * 1000, correlation


def test_the_count_is_said_in_the_json_and_the_capture_is_an_input() -> None:
    report = analyze(SGLANG, graph_capture=SGLANG_CAPTURE).to_dict()
    said = [w["message"] for w in report["warnings"] if w["code"] == "graph-capture"]
    assert said == [
        "544 of 544 graph-replayed kernels matched to captured launches (0 unmatched, over "
        "1 graph launch): their operators and shapes are the capture's"
    ]
    (capture,) = [i for i in report["inputs"] if i["format"] == "kineto-graph-capture"]
    assert (capture["rows"], capture["role"]) == (len(captured(events(SGLANG_CAPTURE))), "metadata")


@pytest.mark.parametrize(("replay", "capture"), PAIRS, ids=["sglang", "vllm"])
def test_gemm_flops_are_2mnk_of_the_captured_operator(replay: Path, capture: Path) -> None:
    """Each GEMM kernel whose every call a captured ``aten::mm`` or ``aten::addmm`` launched
    does 2·M·N·K a call, M, K, N from that op's Input Dims (mm: [[M, K], [K, N]]; addmm:
    [bias, [M, K], [K, N], beta, alpha]), plus the M·N of addmm's bias (beta 1 here)."""
    evs, cap = events(replay), events(capture)
    launches = captured(cap)
    flops: dict[str, int] = {}
    others: set[str] = set()
    for kernels in replayed(evs):
        for name, at in zip(kernels, walk(kernels, launches), strict=True):
            op = None if at is None else innermost(cap, launches[at])
            if op is None or op["name"] not in ("aten::mm", "aten::addmm"):
                others.add(name)
                continue
            dims = op["args"]["Input Dims"]
            (m, k), (k2, n) = dims if op["name"] == "aten::mm" else dims[1:3]
            assert k == k2
            bias = m * n if op["name"] == "aten::addmm" else 0
            assert op["name"] == "aten::mm" or op["args"]["Concrete Inputs"][3] == "1"
            flops[name] = flops.get(name, 0) + 2 * m * n * k + bias
    mm_only = {name: f for name, f in flops.items() if name not in others}
    assert len(mm_only) == {SGLANG: 5, VLLM: 3}[replay]
    report = analyze(replay, graph_capture=capture).to_dict()
    got = {raw: k for k in report["kernels"] for raw in k["raw_names"]}
    for name, expected in mm_only.items():
        roof = got[name]["roofline"]
        assert (roof["work_source"], roof["flops"]) == ("shapes", expected), name
        assert got[name]["category"] == "gemm"
        assert sum(roof["flops_by_ceiling"].values()) == expected
        assert "bf16-matrix" in roof["flops_by_ceiling"]


def test_without_the_capture_the_replayed_gemms_have_no_work() -> None:
    report = analyze(SGLANG).to_dict()
    gemms = [k for k in report["kernels"] if k["name"].startswith("Cijk_")]
    assert gemms and all(k["roofline"] is None for k in gemms)


# -- edge cases, written here ------------------------------------------------------------


def write(path: Path, evs: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"traceEvents": evs}))
    return path


def _x(cat: str, name: str, ts: float, dur: float, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def replay_of(tmp_path: Path, kernels: list[str]) -> Path:
    """One graph launch (correlation 7) replaying ``kernels`` on device 0, stream 0."""
    evs = [_x("cuda_runtime", "cudaGraphLaunch", 10, 5, correlation=7)]
    for i, name in enumerate(kernels):
        kernel = _x("kernel", name, 100 + 10 * i, 5, correlation=7, device=0, stream=0)
        evs.append({**kernel, "pid": 0, "tid": 0})
    return write(tmp_path / "replay.json", evs)


def capture_graph(t0: float, batch: int, kernels: list[str], calls: bool = True) -> list[Any]:
    """One graph's capture: an ``aten::mm`` of [[batch, 64], [64, 128]] around each launch."""
    evs = [_x("cuda_runtime", "cudaStreamBeginCapture", t0, 1)] if calls else []
    for i, name in enumerate(kernels):
        at = t0 + 10 + 10 * i
        evs.append(_x("cpu_op", "aten::mm", at, 8, **{
            "Input Dims": [[batch, 64], [64, 128]], "Input type": ["float", "float"],
            "Concrete Inputs": ["", ""]}))  # fmt: skip
        evs.append(_x("cuda_runtime", "cudaLaunchKernel", at + 1, 2, kernel=name))
    end = t0 + 20 + 10 * len(kernels)
    return [*evs, _x("cuda_runtime", "cudaStreamEndCapture", end, 1)] if calls else evs


def mm_rows(report: dict[str, Any]) -> list[tuple[str, int, float]]:
    rows = report["operators"]["rows"]
    return [(r["input_dims"], r["calls"], r["flops"]) for r in rows if r["name"] == "aten::mm"]


def test_two_captured_graphs_the_replay_takes_the_one_of_its_batch(tmp_path: Path) -> None:
    capture = write(tmp_path / "capture.json", [
        *capture_graph(1000, 8, ["k1", "k2", "k3"]),
        *capture_graph(2000, 32, ["k1", "k4", "k5"]),
    ])  # fmt: skip
    replay = replay_of(tmp_path, ["k1", "k4", "k5"])
    report = analyze(replay, graph_capture=[capture], gpu="H100 SXM").to_dict()
    assert mm_rows(report) == [("[[32, 64], [64, 128]]", 3, 3 * 2 * 32 * 64 * 128)]


def test_each_replay_of_a_captured_graph_does_its_calls_work(tmp_path: Path) -> None:
    """xDiT's Flux.1 step replays one captured graph 4 times (TraceLens, MI300X): each
    replay runs every captured call again, so each counts as a call with its own work (once
    for all replays put the GEMMs at a quarter of their rate)."""
    capture = write(tmp_path / "capture.json", capture_graph(1000, 16, ["k1", "k2"]))
    evs = []
    for n, correlation in enumerate((7, 8, 9)):
        evs.append(_x("cuda_runtime", "cudaGraphLaunch", 10 + 100 * n, 5, correlation=correlation))
        for i, name in enumerate(["k1", "k2"]):
            kernel = _x("kernel", name, 50 + 100 * n + 10 * i, 5, correlation=correlation,
                        device=0, stream=0)  # fmt: skip
            evs.append({**kernel, "pid": 0, "tid": 0})
    replay = write(tmp_path / "replay.json", evs)
    report = analyze(replay, graph_capture=[capture], gpu="H100 SXM").to_dict()
    assert mm_rows(report) == [("[[16, 64], [64, 128]]", 6, 6 * 2 * 16 * 64 * 128)]


def test_captured_launches_skipped_and_a_kernel_left_unmatched(tmp_path: Path) -> None:
    """Greedy in order: k9 comes in no capture (unmatched), the captured k2 is skipped."""
    capture = write(tmp_path / "capture.json", capture_graph(1000, 16, ["k1", "k2", "k3"]))
    replay = replay_of(tmp_path, ["k1", "k9", "k3"])
    merged = merge(load([str(replay)]), [read_capture(str(capture))])
    assert (merged.matched, merged.unmatched, merged.launches) == (2, 1, 1)


def test_a_capture_without_capture_calls_is_one_graph(tmp_path: Path) -> None:
    capture = write(tmp_path / "capture.json", capture_graph(1000, 16, ["k1", "k2"], False))
    merged = merge(load([str(replay_of(tmp_path, ["k1", "k2"]))]), [read_capture(str(capture))])
    assert (merged.matched, merged.unmatched) == (2, 0)


def one_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["analyze", *argv])
    out, err = capsys.readouterr()
    assert (code, out) == (1, ""), (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_capture_with_no_launch_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capture = write(tmp_path / "capture.json", [_x("cpu_op", "aten::mm", 1, 2)])
    err = one_line(capsys, str(replay_of(tmp_path, ["k1"])), "--graph-capture", str(capture))
    assert f"{capture}: --graph-capture: holds no kernel launch with args.kernel" in err


def test_a_replay_whose_kernels_match_nothing_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capture = write(tmp_path / "capture.json", capture_graph(1000, 16, ["k1", "k2"]))
    replay = replay_of(tmp_path, ["x1", "x2", "x3"])
    err = one_line(capsys, str(replay), "--graph-capture", str(capture))
    assert re.search(
        r"--graph-capture: none of its 2 launches names a kernel of the 3 graph-replayed kernels;"
        r" pass the capture trace of the same program", err
    ), err  # fmt: skip


def test_a_profile_without_graph_replays_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capture = write(tmp_path / "capture.json", capture_graph(1000, 16, ["k1"]))
    eager = write(tmp_path / "eager.json", [
        _x("cuda_runtime", "cudaLaunchKernel", 10, 2, correlation=3),
        {**_x("kernel", "k1", 20, 5, correlation=3, device=0, stream=0), "pid": 0, "tid": 0},
    ])  # fmt: skip
    err = one_line(capsys, str(eager), "--graph-capture", str(capture))
    assert "--graph-capture: the profile holds no graph-replayed kernel to match" in err


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("hello\n", ":1: --graph-capture: is not valid JSON at character 0"),
        ('{"traceEvents": [1, 2', ": --graph-capture: the trace was cut short after 21 characters"),
    ],
    ids=["no-json", "cut"],
)
def test_a_damaged_capture_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, said: str
) -> None:
    capture = tmp_path / "capture.json"
    capture.write_text(text)
    err = one_line(capsys, str(SGLANG), "--graph-capture", str(capture))
    assert f"{capture}{said}" in err


def test_a_missing_capture_is_one_line_before_reading(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = one_line(capsys, str(SGLANG), "--graph-capture", str(tmp_path / "nope.json"))
    assert f"{tmp_path / 'nope.json'}: --graph-capture: no such file" in err


def test_python_spells_the_option_its_way(tmp_path: Path) -> None:
    with pytest.raises(RoofscopeError, match=r"nope\.json: graph_capture=: no such file"):
        analyze(SGLANG, graph_capture=tmp_path / "nope.json")


def test_compare_gives_each_side_its_capture() -> None:
    """Operator by operator: both sides' replayed GEMMs match by their captured shapes."""
    evs, cap = events(SGLANG), events(SGLANG_CAPTURE)
    launches = captured(cap)
    dims = [
        innermost(cap, launches[at])["args"]["Input Dims"]
        for kernels in replayed(evs)
        for at in walk(kernels, launches)
        if at is not None and innermost(cap, launches[at])["name"] == "aten::mm"
    ]
    wanted = [[32, 4096], [4096, 24576]]
    calls = dims.count(wanted)
    both = roofscope_compare(SGLANG, SGLANG_CAPTURE)
    rows = [r for r in both["operators"]["matched"] if r["name"] == "aten::mm"]
    row = next(r for r in rows if r["input_dims"] == str(wanted))
    assert (calls, row["calls"]) == (36, [36.0, 36.0])


def roofscope_compare(replay: Path, capture: Path) -> dict[str, Any]:
    from roofscope.api.run import compare

    cmp = compare(replay, replay, base_graph_capture=capture, new_graph_capture=[capture])
    found: dict[str, Any] = cmp.to_dict()
    return found


def test_compare_names_the_sides_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    code = main(["compare", str(SGLANG), str(SGLANG), "--new-graph-capture", str(missing)])
    err = capsys.readouterr().err
    assert code == 1 and f"{missing}: --new-graph-capture: no such file" in err, err


def test_the_reports_with_captures_hold_to_their_schemas() -> None:
    from importlib.resources import files

    import jsonschema

    both = roofscope_compare(SGLANG, SGLANG_CAPTURE)
    report = analyze(SGLANG, graph_capture=SGLANG_CAPTURE).to_dict()
    for name, doc in (("report-v1", report), ("compare-v1", both)):
        text = files("roofscope").joinpath("schema", f"{name}.schema.json").read_text()
        jsonschema.Draft202012Validator(json.loads(text)).validate(doc)


def test_a_capture_trace_read_as_a_profile_says_what_it_is_for(tmp_path: Path) -> None:
    """SGLang's capture trace read beside its replay (one folder, as TraceLens lays them
    out): the capture is said, with the option that would use it, and the count of its
    stream captures from the file itself."""
    begins = [
        e for e in events(SGLANG_CAPTURE)
        if re.fullmatch(r"(cuda|hip)StreamBeginCapture(_v\d+)?", e.get("name", ""))
    ]  # fmt: skip
    assert len(begins) == 1
    folder = tmp_path / "pair"
    folder.mkdir()
    for path in (SGLANG, SGLANG_CAPTURE):
        (folder / path.name).write_bytes(path.read_bytes())
    report = analyze(folder)
    [said] = [w for w in report.warnings if w.code == "kineto-graph-capture"]
    where = folder / SGLANG_CAPTURE.name
    assert said.message.startswith(f"{where}: it captured 1 CUDA/HIP graph (stream captures)")
    assert said.message.endswith(f"read the replay trace with --graph-capture {where}")
    # read as it should be, the replay alone with its capture, nothing is said
    alone = analyze(SGLANG, graph_capture=[SGLANG_CAPTURE])
    assert not [w for w in alone.warnings if w.code == "kineto-graph-capture"]
