"""A Kineto trace's operators, launches and compilers' annotations (readers/torch/kineto_ops.py),
checked against the trace's own events, decoded here with the json module."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from roofscope.readers.load import load
from roofscope.readers.torch.kineto_events import NULL, Raw
from roofscope.readers.torch.kineto_rows import products, seen

DATA = Path(__file__).parent / "data" / "kineto"
H100 = DATA / "h100_bert_small_metadata_first.json.gz"
MI300X = DATA / "mi300x_bert_small_metadata_first.json.gz"


def _events(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]  # times exactly
    return [e for e in events if e.get("ph") == "X"]


def _around(ops: list[dict[str, Any]], launches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The operators around some launch of their thread (a plain double loop)."""
    return [
        o
        for o in ops
        if any(
            la["tid"] == o["tid"] and o["ts"] <= la["ts"] <= o["ts"] + o["dur"] for la in launches
        )
    ]


def _launches(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver")
        and any(k in e["name"] for k in ("LaunchKernel", "ModuleLaunch", "ExtLaunch"))
    ]


@pytest.mark.parametrize("path", [H100, MI300X], ids=["h100", "mi300x"])
def test_the_operators_around_a_launch_are_kept_with_their_recorded_inputs(path: Path) -> None:
    events = _events(path)
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    kept = _around(ops, _launches(events))
    assert 0 < len(kept) < len(ops)  # aten::view, aten::empty, ... launch nothing
    profile = load([str(path)])
    rows = profile.con.execute(
        "SELECT name, start_ns, end_ns, dims, types, concrete FROM operators"
    ).fetchall()
    expected = [
        (
            e["name"],
            round(e["ts"] * 1000),
            round(e["ts"] * 1000) + round(e["dur"] * 1000),
            str(e["args"]["Input Dims"]),
            str(e["args"]["Input type"]),
            str(e["args"]["Concrete Inputs"]),
        )
        for e in kept
    ]
    assert sorted(rows) == sorted(expected)
    addmm = next(r for r in rows if r[0] == "aten::addmm")
    assert addmm[3] == "[[512], [141, 512], [512, 512], [], []]"


@pytest.mark.parametrize("path", [H100, MI300X], ids=["h100", "mi300x"])
def test_each_launch_names_the_innermost_operator_around_it(path: Path) -> None:
    """The operator of each launch, and the parent of each operator, against a plain search
    for the shortest operator of the thread around it."""
    events = _events(path)
    launches = _launches(events)
    ops = [e for e in events if e.get("cat") == "cpu_op"]

    def innermost(tid: int, start: Decimal, end: Decimal) -> str | None:
        around = [
            o
            for o in ops
            if o["tid"] == tid
            and o["ts"] <= start
            and end <= o["ts"] + o["dur"]
            and (o["ts"], o["dur"]) != (start, end - start)
        ]
        return min(around, key=lambda o: o["dur"])["name"] if around else None

    profile = load([str(path)])
    got = dict(
        profile.con.execute(
            "SELECT l.correlation, o.name FROM op_launches l "
            "LEFT JOIN operators o USING (source, op_id)"
        ).fetchall()
    )
    want = {la["args"]["correlation"]: innermost(la["tid"], la["ts"], la["ts"]) for la in launches}
    assert got == want
    assert "aten::addmm" in got.values()


@pytest.mark.parametrize("path", [H100, MI300X], ids=["h100", "mi300x"])
def test_every_kernel_launch_is_kept_with_its_thread_and_correlation(path: Path) -> None:
    events = _events(path)
    runtime = _launches(events)
    profile = load([str(path)])
    rows = profile.con.execute("SELECT correlation, start_ns FROM op_launches").fetchall()
    expected = [(e["args"]["correlation"], round(e["ts"] * 1000)) for e in runtime]
    assert sorted(rows) == sorted(expected)
    kernels = {e["args"]["correlation"] for e in events if e.get("cat") == "kernel"}
    assert kernels <= {r[0] for r in rows}  # every kernel has its launch


# Inductor's kernel_flop/kernel_num_gb (10^9 bytes), as torch._inductor's profile analysis
# writes them on kernel events, and on the launching operator
INDUCTOR_EVENTS = [
            {"ph": "X", "cat": "cpu_op", "name": "triton_tem_fused_mm_0", "pid": 1, "tid": 1,
             "ts": 10, "dur": 10, "args": {"kernel_flop": 2e9, "kernel_num_gb": 0.25}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cuLaunchKernel", "pid": 1, "tid": 1,
             "ts": 12, "dur": 2, "args": {"correlation": 7}},
            {"ph": "X", "cat": "kernel", "name": "triton_tem_fused_mm_0", "pid": 0, "tid": 7,
             "ts": 20, "dur": 5, "args": {"correlation": 7, "device": 0, "stream": 7,
                                          "kernel_flop": 4096, "kernel_num_gb": 0.001}},
        ]  # fmt: skip


def test_inductor_annotations_on_kernels_and_operators_are_read(tmp_path: Path) -> None:
    """``kernel_flop`` and ``kernel_num_gb`` (10^9 bytes) as torch._inductor's profile
    analysis writes them on kernel events, and on the launching operator."""
    trace = {"traceEvents": INDUCTOR_EVENTS}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    profile = load([str(path)])
    assert profile.con.execute("SELECT flops, bytes FROM operators").fetchall() == [(2e9, 0.25e9)]
    assert profile.con.execute(
        "SELECT correlation, start_ns, flops, bytes FROM kernel_annotations"
    ).fetchall() == [(7, 20_000, 4096.0, 1e6)]
    assert profile.con.execute(
        "SELECT l.correlation, o.name FROM op_launches l JOIN operators o USING (source, op_id)"
    ).fetchall() == [(7, "triton_tem_fused_mm_0")]


def test_a_decoded_grid_is_never_looked_up_as_a_json_text() -> None:
    """A grid or block msgspec decoded is its JSON text, multiplied once a text; one the
    stdlib decoded (a run msgspec refused) is a list, and bytes() of a list of small ints is
    a text too (bytes([91, 93]) == b"[]"): it is multiplied, never looked up."""
    assert products([Raw(b"[]"), Raw(b"[4, 2, 1]"), NULL]) == [None, 8, None]
    assert products([Raw(b"[4, 2, 1]")] * 3) == [8, 8, 8]  # the texts seen: one map
    assert products([[91, 93], None, [2, 3, 5]]) == [91 * 93, None, 30]
    assert products([Raw(b"[2, 1.0]")]) == [2]  # the literal 1.0, as the stdlib decodes it


def test_json_texts_are_looked_up_only_when_all_are_known_texts() -> None:
    """:func:`seen`: each Raw's known value (one equal to the one before is not looked up
    again); None where a text is new or a value is no Raw, for the caller's slow way."""
    known = {b"[1]": 10, b"[2]": 20}
    texts = [Raw(b"[1]"), Raw(b"[1]"), Raw(b"[2]"), Raw(b"[1]")]
    assert seen(texts, known) == [10, 10, 20, 10]
    assert seen([Raw(b"[1]"), Raw(b"[3]")], known) is None
    assert seen([Raw(b"[1]"), [91, 93]], known) is None


@pytest.mark.parametrize(("pid", "held"), [("true", None), ('"1"', None), ("1.0", "aten::mm")])
def test_a_pid_is_a_json_integer_or_none(tmp_path: Path, pid: str, held: str | None) -> None:
    """Operators nest per thread (pid, tid): a launch whose pid is true or "1" is on no
    thread of pid 1 (true == 1 in Python), so the operator of pid 1 around its start does
    not hold it; 1.0 is the JSON integer 1 (kineto_meta.whole), so it does. The launch of
    pid 1 is held either way."""
    op = '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 0, "dur": 100}'
    launch = (
        '{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {pid}, '
        '"tid": 2, "ts": {ts}, "dur": 1, "args": {{"correlation": {c}}}}}'
    )
    kernel = (
        '{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {ts}, "dur": 1, '
        '"args": {{"device": 0, "correlation": {c}}}}}'
    )
    events = [op, launch.format(pid=1, ts=10, c=5), launch.format(pid=pid, ts=50, c=6),
              kernel.format(ts=200, c=5), kernel.format(ts=300, c=6)]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ",\n".join(events) + "]}", "utf-8")
    profile = load([str(path)])
    rows = profile.con.execute(
        "SELECT l.correlation, o.name FROM op_launches l LEFT JOIN operators o "
        "USING (source, op_id) ORDER BY l.correlation"
    ).fetchall()
    assert rows == [(5, "aten::mm"), (6, held)]
