"""The streaming trace reader (readers/io/json_stream.py) against the whole document decoded by
``json`` with exact decimals: the same events and top-level keys at every chunk size, runs of
events decoded at once where the text allows, and errors that name the same place."""

from __future__ import annotations

import gc
import io
import json
from decimal import Decimal
from typing import Any

import pytest

from roofscope.errors import InputError
from roofscope.readers.io import json_stream
from roofscope.readers.io.json_stream import EventStream, paused_gc


def tricky_events(n: int) -> list[str]:
    """Events whose text looks like a boundary between events where it is none: inside a
    name, inside a nested list of objects, after a duplicated key."""
    out = []
    for i in range(n):
        name = ["k", '}, {\\"ph\\": 1', "}]", "a\\u00e9\\n}", "void f<{1}>()"][i % 5]
        args = f'{{"list": [{{"a": {i}}}, {{"b": 2.5}}], "x": 1, "x": {i}}}'
        out.append(f'{{"ph": "X", "name": "{name}", "ts": {i}.125, "dur": 1e2, "args": {args}}}')
    return out


def document(events: list[str], sep: str = ",\n  ") -> str:
    return (
        '{"schemaVersion": 1, "traceEvents": [\n  ' + sep.join(events) + "\n],"
        ' "deviceProperties": [{"id": 0}, {"id": 1}], "traceName": "t"}'
    )


def stream(text: str) -> tuple[list[Any], dict[str, Any]]:
    s = EventStream(io.StringIO(text), "t.json")
    return list(s.events()), s.meta


@pytest.mark.parametrize("chunk", [7, 100, 4096, 1 << 20])
@pytest.mark.parametrize("sep", [",\n  ", ",", " ,\n"])
def test_events_and_keys_are_those_json_gives(
    monkeypatch: pytest.MonkeyPatch, chunk: int, sep: str
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK_CHARS", chunk)
    text = document(tricky_events(300), sep)
    whole = json.loads(text, parse_float=Decimal)
    events, meta = stream(text)
    assert events == whole.pop("traceEvents")
    assert meta == whole
    assert events[3]["args"]["x"] == 3 and events[1]["name"] == '}, {"ph": 1'


def test_a_run_of_events_is_decoded_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """300 events in one chunk: the events before the last boundary in one decode (after a
    try cut inside the list of deviceProperties), the last one alone."""
    one_at_a_time = []
    value = EventStream._value

    def counted(self: EventStream) -> Any:
        one_at_a_time.append(self.pos)
        return value(self)

    monkeypatch.setattr(EventStream, "_value", counted)
    events, _ = stream(document(tricky_events(300)))
    assert len(events) == 300
    # 4 keys and 3 values at the top level, the last event: 307 calls one at a time
    assert len(one_at_a_time) == 8


@pytest.mark.parametrize("chunk", [100, 1 << 20])
@pytest.mark.parametrize("bad_at", [0, 150, 299])
def test_a_damaged_event_is_named_where_it_breaks(
    monkeypatch: pytest.MonkeyPatch, bad_at: int, chunk: int
) -> None:
    """The same character and line whether the text before it was dropped (100-character
    chunks: its lines are counted from the file read again) or is all in the buffer."""
    monkeypatch.setattr(json_stream, "CHUNK_CHARS", chunk)
    events = tricky_events(300)
    events[bad_at] = events[bad_at].replace('"ph": "X",', '"ph": "X",,')
    text = document(events)
    place = text.index(",,") + 1  # the second comma
    with pytest.raises(InputError) as caught:
        stream(text)
    line = text.count("\n", 0, place) + 1
    assert str(caught.value).startswith(f"t.json:{line}: is not valid JSON at character {place} (")


def test_a_trace_cut_short_after_a_boundary_says_so() -> None:
    text = document(tricky_events(50))
    cut = text[: text.index('{"ph"', len(text) // 2) + 3]
    with pytest.raises(InputError, match="the trace was cut short"):
        stream(cut)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_and_given_back(enabled: bool) -> None:
    """Paused while the events are read, as it was after, whether they read or not."""
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with paused_gc():
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
        with pytest.raises(InputError), paused_gc():
            stream(document(tricky_events(3))[:-40])
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()
