"""The Kineto reader's typed decode (readers/torch/kineto_events.py): msgspec's structs hold the
values ``json`` with ``parse_float=Decimal`` gives, a run msgspec refuses is read through the
stdlib, and the gzip stream goes through ISA-L with the reader's one-line errors."""

from __future__ import annotations

import gzip
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
import pytest

from roofscope.readers.torch.kineto_events import (
    NO_ARGS,
    PHASES,
    Args,
    Event,
    KinetoEvents,
    from_dict,
)
from tests.test_kineto import AMD, HTA, error, read

KERNEL = {
    "ph": "X",
    "cat": "kernel",
    "name": "gemm",
    "pid": 0,
    "tid": 7,
    "ts": 1,
    "dur": 2,
    "args": {"device": 0, "correlation": 9, "grid": [2, 1, 1], "block": [64, 1, 1]},
}
# what the reader reads of an event, by key: where a struct keeps it
FIELDS = ("ph", "cat", "name", "pid", "tid", "ts", "dur")
ARGS = {
    "device": "device",
    "correlation": "correlation",
    "stream": "stream",
    "grid": "grid",
    "block": "block",
    "shared memory": "shared_memory",
    "registers per thread": "registers",
    "Input Dims": "dims",
    "Input type": "types",
    "Concrete Inputs": "concrete",
}


def events(text: str) -> list[Any]:
    """The elements of a trace's ``traceEvents``, as the reader decodes them."""
    stream = KinetoEvents(io.StringIO(text), "t.json")
    return [e for run in stream.runs() for e in run]


def stdlib(text: str) -> list[Any]:
    return list(json.loads(text, parse_float=Decimal)["traceEvents"])


def same(event: Event | None, want: object) -> None:
    """A struct holds what the stdlib's dict holds, for every key the reader reads (of a
    complete event: another is read as nothing)."""
    if not isinstance(want, dict) or want.get("ph") != "X":
        assert event is None or event.__struct_fields__ == ()
        return
    assert event is not None
    for key in FIELDS:
        value = want.get(key, "" if key == "name" else None)
        got = getattr(event, key)
        assert got == value or (got != got and value != value), key  # NaN: != itself
    args = want.get("args")
    held = event.args if isinstance(args, dict) else None
    assert event.args is held or isinstance(args, dict)
    for key, field in ARGS.items():
        value = args.get(key) if isinstance(args, dict) else None
        assert held_value(getattr(event.args or NO_ARGS, field)) == value, key


def held_value(value: object) -> object:
    """An operator's inputs, a launch's grid and block are held as their JSON text
    (msgspec.Raw): decoded here."""
    if isinstance(value, msgspec.Raw):
        return json.loads(bytes(value), parse_float=Decimal)
    return value


def trace(*elements: str) -> str:
    return '{"schemaVersion": 1, "traceEvents": [\n' + ",\n".join(elements) + "\n]}"


ODD = [  # values that must come out as json gives them
    '{"ph": "X", "cat": "kernel", "ts": 1712345678901234.567, "dur": 0.001, "name": null}',
    '{"ph": "X", "ts": 1, "ts": 2, "cat": "cpu_op", "args": {"Input Dims": [[1.5, 2]]}}',
    '{"ph": "X", "cat": "kernel", "args": {"device": 123456789012345678901234567890}}',
    '{"ph": "X", "cat": "kernel", "dur": -0.0, "ts": 1e400, "args": null}',
    '{"ph": "X", "cat": "kernel", "args": {"shared memory": 0, "registers per thread": 32, '
    '"kernel_flop": 10, "queued": 0, "grid": [1, 2, 3]}}',
]


def test_structs_hold_what_json_gives() -> None:
    text = trace(*[json.dumps(KERNEL)] * 3, *ODD)
    got, want = events(text), stdlib(text)
    assert len(got) == len(want) == 8
    assert all(type(e) is Event for e in got)  # decoded by msgspec, not the fallback
    for event, element in zip(got, want, strict=True):
        same(event, element)
    assert got[-1].args is not None and got[-1].args.annotated
    assert got[0].args is not None and not got[0].args.annotated


REFUSED = [  # msgspec refuses each; the stdlib reads it
    '{"ph": "X", "cat": "kernel", "ts": 1, "dur": NaN}',
    '{"ph": "X", "cat": "kernel", "ts": 1, "dur": 2, "args": [1, 2]}',
    '{"ph": "X", "cat": "kernel", "ts": 1, "dur": 2, "name": "\\ud800"}',
    "17",
]


@pytest.mark.parametrize("odd", REFUSED)
def test_a_run_msgspec_refuses_is_read_by_json(odd: str) -> None:
    text = trace(json.dumps(KERNEL), odd, json.dumps(KERNEL))
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.Decoder(list[Event]).decode(text[text.index("[") :].rstrip("}"))
    got, want = events(text), stdlib(text)
    for event, element in zip(got, want, strict=True):
        same(event, element)


def test_from_dict_is_the_struct_msgspec_gives() -> None:
    element = {**KERNEL, "id": 5, "args": {**KERNEL["args"], "stream": 7, "queued": 0}}
    got, want = from_dict(element), msgspec.json.decode(json.dumps(element), type=Event)
    assert got is not None and got.args is not None and want.args is not None
    assert [getattr(got, f) for f in FIELDS] == [getattr(want, f) for f in FIELDS]
    for field in Args.__struct_fields__:  # msgspec keeps the grid and block as JSON text
        assert held_value(getattr(got.args, field)) == held_value(getattr(want.args, field))
    assert from_dict([1]) is None


def test_a_refused_event_leaves_the_others_read(tmp_path: Path) -> None:
    """A kernel with ``args`` that is a list is one kernel without args; the run around it
    is read all the same: 3 kernels, ends 1 µs + 2 µs = 3000 ns."""
    path = tmp_path / "t.json"
    bad = {**KERNEL, "args": [1]}
    path.write_text(trace(*(json.dumps(e) for e in (KERNEL, bad, KERNEL))), "utf-8")
    rows = read(path).con.execute("SELECT start_ns, end_ns FROM dispatches").fetchall()
    assert rows == [(1000, 3000)] * 3


def test_a_damaged_gzip_stream_is_one_line(tmp_path: Path) -> None:
    """Bytes of the deflate stream overwritten (not cut): ISA-L's error, in the reader's one
    line, never a traceback."""
    data = bytearray(AMD.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(bytes(data))
    message = error(damaged)
    assert "(gzip: " in message and "export the trace again" in message


def test_a_bad_gzip_crc_is_one_line(tmp_path: Path) -> None:
    """A trailer whose CRC-32 is wrong: one line, as before ISA-L (the head read is refused,
    so the reader finds no JSON object)."""
    data = bytearray(gzip.compress(json.dumps({"traceEvents": [KERNEL]}).encode()))
    data[-8] ^= 0xFF  # the CRC-32 of the trailer
    path = tmp_path / "crc.json.gz"
    path.write_bytes(bytes(data))
    assert "the trace is damaged; export it again" in error(path)


def test_ns_resolution_ts_exact_through_msgspec() -> None:
    """HTA's ns-resolution trace writes 1.7e15 µs with three decimals: every kernel's start is
    the literal's digits, as a plain parse of the file gives them."""
    path = HTA / "ns_resolution_trace" / "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
    if not path.exists():
        pytest.skip("the shared corpus is not here")
    doc = json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal)
    want = sorted(
        int(e["ts"] * 1000)
        for e in doc["traceEvents"]
        if e.get("ph") == "X" and e.get("cat") == "kernel"
    )
    assert all(w % 1000 for w in want[:100])  # the ns digits are there to lose
    got = read(path).con.execute("SELECT start_ns FROM dispatches ORDER BY 1").fetchall()
    assert [s for (s,) in got] == want


FLOW = '{"ph": "s", "id": 9, "pid": 0, "tid": 7, "ts": 1, "cat": "ac2g", "name": "ac2g"}'
OTHER_PHASES = [
    FLOW,
    '{"ph": "f", "id": 9, "pid": 0, "tid": 7, "ts": 1.5, "bp": "e", "args": [1]}',
    '{"ph": "M", "name": "process_name", "args": {"name": "python"}}',
    '{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "ts": 1e400}',
]


def test_only_complete_events_are_decoded() -> None:
    """Each event of another phase is an empty struct of its phase, its keys skipped (a
    list of args or a float past a double's range in one refuses nothing): the run is
    msgspec's, not the stdlib's, and its kernels are read as before."""
    text = trace(json.dumps(KERNEL), *OTHER_PHASES, json.dumps(KERNEL))
    got = events(text)
    assert [e.ph for e in got] == ["X", "s", "f", "M", "i", "X"]
    assert [type(e).__struct_fields__ for e in got[1:-1]] == [()] * 4
    assert type(got[0]) is Event and type(got[-1]) is Event
    for event, element in zip(got, stdlib(text), strict=True):
        same(event, element)
    assert len(PHASES) == 22 and "X" not in PHASES  # the Chrome trace format's 23 phases


@pytest.mark.parametrize(
    "odd",
    [
        '{"cat": "kernel", "ts": 1, "dur": 2}',  # no phase
        '{"ph": "Z", "cat": "kernel", "ts": 1, "dur": 2}',  # none the format defines
        '{"ph": 7, "cat": "kernel"}',
        '{"ph": "X", "cat": "kernel", "ts": 1, "dur": 2, "ph": "s"}',  # the last one counts
    ],
)
def test_an_event_of_no_known_phase_sends_its_run_to_json(odd: str) -> None:
    """The union refuses it; the stdlib reads the run, that event as nothing and the
    complete events as msgspec would."""
    text = trace(json.dumps(KERNEL), odd, FLOW, json.dumps(KERNEL))
    got = events(text)
    assert got[1] is None and got[2] is None
    assert type(got[0]) is Event and got[0] == got[3]
    for event, element in zip(got, stdlib(text), strict=True):
        same(event, element)
    assert from_dict(json.loads(odd)) is None
