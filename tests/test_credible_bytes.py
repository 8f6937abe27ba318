"""Derived bytes no memory could have moved (analysis/work/credible.py): vLLM's decode graph
on MI300X (TraceLens, tests/data/PROVENANCE.md), given its operators by its capture trace.
Inductor's ``triton_poi_fused_0`` gathers 32 rows of the 201,088 x 2,880 embedding table, but
its launcher is given the whole table: each buffer counted once is 1.2 GB in 10.6 µs. The
bound is worked out here from the trace and the MI300X's datasheet numbers."""

from __future__ import annotations

import gzip
import json

import pytest

from roofscope.api.run import analyze
from tests.conftest import SHARED_CORPUS
from tests.test_graph_capture import VLLM, VLLM_CAPTURE

HBM = 5.3e12  # MI300X peak HBM3 bandwidth, B/s (its data sheet)
CACHES = (32 + 256) * 2**20  # L2 (4 MiB per XCD x 8) and the 256 MiB Infinity Cache
ELEMENT = {"int": 4, "c10::BFloat16": 2, "float": 4}
GATHER = "triton_poi_fused_0"


def _launcher() -> tuple[float, float]:
    """The gather's buffers once each (bytes) and its kernel time (ns), from the two traces."""
    with gzip.open(VLLM_CAPTURE, "rt") as f:
        ops = [e for e in json.load(f)["traceEvents"] if e.get("name") == GATHER]
    args = ops[0]["args"]
    nbytes = 0
    for dims, kind in zip(args["Input Dims"], args["Input type"], strict=True):
        n = 1
        for d in dims:
            n *= d
        nbytes += n * ELEMENT[kind]
    with gzip.open(VLLM, "rt") as f:
        kernels = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]
    time_ns = sum(k["dur"] for k in kernels if k["name"] == GATHER) * 1000
    return nbytes, time_ns


def test_a_gather_whose_buffers_could_not_have_moved_is_not_placed() -> None:
    nbytes, time_ns = _launcher()
    movable = HBM * time_ns / 1e9 + CACHES  # one dispatch
    assert nbytes > movable  # 1.2 GB against 0.36 GB: the count is no traffic
    report = analyze(VLLM, graph_capture=[VLLM_CAPTURE])
    placed = {k.name for k in report.checkup.roofline.result.kernels}
    assert GATHER not in placed
    assert "triton_poi_fused__to_copy_1" in placed  # its buffers could have moved: kept
    [warning] = [w for w in report.checkup.warnings if w.code == "shape-bytes-overcount"]
    assert warning.message.startswith(f"{GATHER}: its operands' bytes from the shapes")
    assert f"({nbytes / 1e9:.3g} GB)" in warning.message
    assert f"({movable / 1e9:.3g} GB)" in warning.message
    assert not any(k.beyond_hardware for k in report.checkup.roofline.result.kernels)


NEGATIVE_QUEUE = SHARED_CORPUS / "torch/hta-tests-data/negative_queue_length_values_check"


@pytest.mark.skipif(not NEGATIVE_QUEUE.exists(), reason="shared corpus not present")
def test_an_exact_count_above_its_roof_keeps_the_cache_caveat() -> None:
    """HTA's A100 trace: an elementwise multiply reads every element of its operands, so
    its bytes from shapes are exact, not a bound; above the roof it stays placed, with the
    low above-roof caveat (cache, or another A100), never dropped as a gather."""
    report = analyze(NEGATIVE_QUEUE)
    assert not [w for w in report.checkup.warnings if w.code == "shape-bytes-overcount"]
    [above] = [f for f in report.findings if f.rule == "above-roof"]
    assert above.kernel is not None and "MulFunctor" in above.kernel
    assert above.severity == "low" and "part of them came from cache" in above.summary
