"""What the host did in the GPU's idle gaps (analysis/input_wait.py, diagnosis/idle_cause.py):
the idle time inside blocking runtime calls, worked out here from each trace's own events."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, run_json, union
from tests.test_diagnosis import findings

SGLANG = DATA / "kineto" / "sglang_qwen3_8b_decode_mi300x.json.gz"
Spans = list[tuple[int, int]]


def _ns(us: object) -> int:
    return round(Decimal(str(us)) * 1000)


def _overlap(a: Spans, b: Spans) -> int:
    return sum(max(0, min(y, q) - max(x, p)) for x, y in a for p, q in b)


def _sync_idle(events: list[dict[str, Any]], calls: set[str]) -> tuple[int, int]:
    """(idle, idle inside the calls): kernels' union is busy within their span; the calls
    clipped to that span, less the kernels and copies within them."""
    spans = {c: [(_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])) for e in events if e["cat"] == c]
             for c in ("kernel", "gpu_memcpy", "cuda_runtime")}  # fmt: skip
    kernels = union(spans["kernel"])
    first, last = kernels[0][0], kernels[-1][1]
    blocking = union([(max(a, first), min(b, last)) for (a, b), e in zip(
        spans["cuda_runtime"], [e for e in events if e["cat"] == "cuda_runtime"], strict=True
    ) if e["name"] in calls and min(b, last) > max(a, first)])  # fmt: skip
    work = union(kernels + spans["gpu_memcpy"])
    idle = last - first - sum(b - a for a, b in kernels)
    return idle, sum(b - a for a, b in blocking) - _overlap(blocking, work)


def test_sglang_decode_idle_sits_in_one_synchronous_copy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """TraceLens's SGLang Qwen3-8B decode step on MI300X: the GPU sits idle 463 ms between
    its first kernel and the CUDA-graph replay while the host waits in one
    hipMemcpyWithStream (a 256-byte device-to-host copy whose GPU side takes 4.5 µs): the
    cause is the blocking copy, not launch overhead, and the advice says so first."""
    events = [e for e in json.loads(gzip.decompress(SGLANG.read_bytes()), parse_float=Decimal)[
        "traceEvents"] if e.get("ph") == "X"]  # fmt: skip
    runtime = {e["name"] for e in events if e["cat"] == "cuda_runtime"}
    blocking = {"hipMemcpyWithStream"}  # no *Synchronize among them: the one blocking call
    assert blocking <= runtime and not any("Synchronize" in n for n in runtime)
    idle, waited = _sync_idle(events, blocking)
    assert (idle, waited) == (463_981_541, 463_034_952)
    (f,) = findings(run_json(capsys, str(SGLANG)), "idle-gaps")
    assert f["evidence"]["idle_s"] == pytest.approx(idle / 1e9, rel=1e-12)
    assert f["evidence"]["sync_idle_s"] == pytest.approx(waited / 1e9, rel=1e-12)
    assert (
        f"{waited / idle:.0%} of the idle time falls inside blocking runtime calls"
        in (f["summary"])
    )
    assert f["prescription"].startswith("remove the blocking calls first")
    assert "data_loader_idle_s" not in f["evidence"]


def _trace(tmp_path: Path, sync_us: list[tuple[float, float]]) -> Path:
    """Ten 5 µs kernels 100 µs apart, and cudaDeviceSynchronize calls at ``sync_us``."""
    kernels = [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100 * i,
                "dur": 5, "args": {"device": 0, "stream": 7}} for i in range(10)]  # fmt: skip
    syncs = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1,
              "tid": 1, "ts": a, "dur": b - a} for a, b in sync_us]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": kernels + syncs}))
    return path


def test_a_sync_after_every_launch_counts_only_the_time_it_overlaps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each sync returns 10 µs after its kernel ends and the next launch comes 85 µs later:
    9 x 10 µs of the 9 x 95 µs idle (10.5 %) is inside the syncs, under half: the generic
    advice stays, with the share said."""
    path = _trace(tmp_path, [(100 * i + 1, 100 * i + 15) for i in range(10)])
    (f,) = findings(run_json(capsys, str(path)), "idle-gaps")
    assert f["evidence"]["idle_s"] == pytest.approx(9 * 95e-6, rel=1e-12)
    assert f["evidence"]["sync_idle_s"] == pytest.approx(9 * 10e-6, rel=1e-12)
    assert "11% of the idle time falls inside blocking runtime calls" in f["summary"]
    assert f["prescription"].startswith("keep the GPU fed")


def test_a_sync_holding_the_host_through_the_gaps_is_named_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Syncs that span 80 of each 95 µs gap (and the kernel before it): 84 % is theirs."""
    path = _trace(tmp_path, [(100 * i + 1, 100 * i + 85) for i in range(10)])
    (f,) = findings(run_json(capsys, str(path)), "idle-gaps")
    assert f["evidence"]["sync_idle_s"] == pytest.approx(9 * 80e-6, rel=1e-12)
    assert f["prescription"].startswith("remove the blocking calls first")
