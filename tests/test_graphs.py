"""Kernels replayed by CUDA/HIP graphs (issue 38, "Graphs"): a Kineto trace's hipGraphLaunch
runtime events and the kernels carrying their correlation id are known as graph-replayed, so
no advice says to launch them as a graph; graph launches whose kernels the trace lost are
counted. The traces are AMD TraceLens's vLLM and SGLang decode traces on MI300X, byte for
byte (tests/data/PROVENANCE.md); every expected number is worked out here from the file."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from roofscope.api.run import analyze
from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.graphs import GRAPH_PHRASE
from roofscope.diagnosis.rules import SHORT_NS
from roofscope.model.access import count, graph_launches, graph_replayed, query
from roofscope.model.selection import EVERYTHING, dispatches
from roofscope.readers.load import load
from tests.conftest import DATA

HERE = DATA / "kineto"
PIECEWISE = HERE / "vllm_mi300x_piecewise_graph_execution.json.gz"
SGLANG = HERE / "sglang_qwen3_8b_decode_mi300x.json.gz"
VLLM = HERE / "vllm_mi300x_unnamed_graph_execution.json.gz"
NO_GRAPHS = HERE / "mi300x_bert_small_metadata_first.json.gz"


def events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        found: list[dict[str, Any]] = json.load(f, parse_float=Decimal)["traceEvents"]
    return found


def graph_ids(evs: list[dict[str, Any]]) -> list[int]:
    return [e["args"]["correlation"] for e in evs if e.get("name") == "hipGraphLaunch"]


def kernels(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in evs if e.get("cat") == "kernel" and e.get("ph") == "X"]


def expected(path: Path) -> tuple[int, int, int, int]:
    """Graph launches, those without a kernel, kernels replayed, those under SHORT_NS."""
    evs = events(path)
    ids = graph_ids(evs)
    replayed = [k for k in kernels(evs) if k["args"]["correlation"] in set(ids)]
    empty = sum(not any(k["args"]["correlation"] == i for k in replayed) for i in ids)
    short = sum(k["dur"] * 1000 < SHORT_NS for k in replayed)
    return len(ids), empty, len(replayed), short


def finding(path: Path, rule: str) -> Finding | None:
    found = [f for f in analyze(path).findings if f.rule == rule]
    return found[0] if found else None


@pytest.mark.parametrize("path", [PIECEWISE, SGLANG, VLLM])
def test_graph_launches_and_their_kernels_are_read(path: Path) -> None:
    launches, empty, replayed, _ = expected(path)
    profile = load([path])
    rows = query(profile, graph_launches(profile), "SELECT count(*), sum(kernels) FROM d")
    assert rows.fetchall() == [(launches, replayed)]
    assert count(profile, graph_replayed(profile, dispatches(profile, EVERYTHING))) == replayed
    assert empty == 0
    assert launches == (25 if path == PIECEWISE else 1)


@pytest.mark.parametrize("path", [SGLANG, VLLM])
def test_short_graph_kernels_are_not_told_to_become_a_graph(path: Path) -> None:
    _, _, _, short_in_graphs = expected(path)
    short = sum(k["dur"] * 1000 < SHORT_NS for k in kernels(events(path)))
    found = finding(path, "short-kernels")
    assert found is not None
    assert found.evidence["short_dispatches"] == short
    assert found.evidence["short_dispatches_in_graphs"] == short_in_graphs
    assert f"{short_in_graphs:,} of {short:,} dispatches already replay" in found.prescription
    assert "launch them as a HIP/CUDA graph" not in found.prescription
    assert "start-up and tail" in found.summary


def test_idle_advice_says_the_kernels_already_replay() -> None:
    evs = events(SGLANG)
    _, _, replayed, _ = expected(SGLANG)
    found = finding(SGLANG, "idle-gaps")
    assert found is not None
    assert GRAPH_PHRASE not in found.prescription
    assert f"{replayed:,} of {len(kernels(evs)):,} dispatches already replay" in found.prescription
    # the gaps lie between replays: fusing the kernels inside the graph would not shorten them
    assert "fuse small kernels" not in found.prescription


def test_no_graph_words_without_graph_launches() -> None:
    assert not graph_ids(events(NO_GRAPHS))
    assert finding(NO_GRAPHS, "graph-kernels-missing") is None
    for f in analyze(NO_GRAPHS).findings:
        assert "already replay" not in f.prescription


def test_lost_graph_kernels_are_counted(tmp_path: Path) -> None:
    """The kernels of every third graph launch dropped, as the PyTorch profiler loses them."""
    with gzip.open(PIECEWISE, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    ids = graph_ids(doc["traceEvents"])
    lost = set(ids[::3])
    doc["traceEvents"] = [
        e
        for e in doc["traceEvents"]
        if not (e.get("cat") == "kernel" and e["args"].get("correlation") in lost)
    ]
    damaged = tmp_path / "lost.json.gz"
    with gzip.open(damaged, "wt", encoding="utf-8") as f:
        json.dump(doc, f)
    found = finding(damaged, "graph-kernels-missing")
    assert found is not None
    assert found.evidence == {
        "graph_launches": len(ids),
        "graph_launches_without_kernels": len(lost),
    }
    assert found.summary.startswith(f"{len(ids)} graph launches, {len(lost)} with no kernel")
    assert finding(PIECEWISE, "graph-kernels-missing") is None
