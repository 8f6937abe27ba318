"""A streaming reader of one large JSON object whose ``traceEvents`` array holds the events
(Chrome trace format): the document is never loaded whole, one value at a time is decoded from
a bounded sliding text buffer, floats as :class:`decimal.Decimal` of their literal text. Errors
name the character and line where the JSON breaks, or say where the file was cut short."""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

from roofscope.errors import InputError

CHUNK_CHARS = 1 << 20  # text read at a time
MAX_VALUE_CHARS = 1 << 26  # one event (or top-level value) larger than this is refused
_WS = re.compile(r"[ \t\n\r]*")

# (path, top-level key, the other keys read so far) -> an error that stops reading, or None
Refuse = Callable[[str, str, Mapping[str, Any]], InputError | None]


@contextmanager
def open_text(path: Path, *, gzipped: bool) -> Iterator[TextIO]:
    """The file as text (gunzipped when ``gzipped``); undecodable bytes become U+FFFD."""
    try:
        # closed by the TextIOWrapper below
        raw = gzip.open(path, "rb") if gzipped else path.open("rb")  # noqa: SIM115
    except OSError as exc:
        raise InputError(str(path), f"cannot be read ({exc})", "check its permissions") from None
    with io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace") as text:
        yield text


class EventStream:
    """The top-level JSON object read a value at a time through a bounded text buffer:
    :meth:`events` yields the elements of ``traceEvents``; the other keys land in ``meta``
    wherever they appear. ``refuse`` is asked about each other key before its value is read
    (path, key, the meta so far); an error it returns is raised, so a value the caller cannot
    use is never decoded."""

    def __init__(self, text: TextIO, path: str, *, refuse: Refuse | None = None) -> None:
        self.text, self.path, self.refuse = text, path, refuse
        self.buf, self.pos, self.eof = "", 0, False
        self.dropped = self.lines = 0  # characters and newlines before ``buf``
        self.meta: dict[str, Any] = {}
        self.decoder = json.JSONDecoder(parse_float=Decimal)

    def events(self) -> Iterator[Any]:
        self._expect("{", "a JSON object")
        if self._peek() == "}":
            return
        while True:
            key = self._value()
            if not isinstance(key, str):
                raise self._malformed("expected a key")
            self._expect(":", "':'")
            if key == "traceEvents":
                yield from self._array()
            elif self.refuse and (error := self.refuse(self.path, key, self.meta)) is not None:
                raise error
            else:
                self.meta[key] = self._value()
            if self._expect(",}", "',' or '}'") == "}":
                return

    def _array(self) -> Iterator[Any]:
        self._expect("[", "the traceEvents array")
        if self._peek() == "]":
            self.pos += 1
            return
        while True:
            yield self._value()
            if self._expect(",]", "',' or ']'") == "]":
                return

    def _value(self) -> Any:
        self._peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if not self._at_end(exc):
                    raise self._malformed(exc.msg, exc.pos) from None
                if self.eof:
                    raise self._cut() from None
                self._more()
                continue
            if end < len(self.buf) or self.eof:  # a number at the end may go on
                self.pos = end
                return value
            self._more()

    def _at_end(self, exc: json.JSONDecodeError) -> bool:
        """Whether decoding failed because the value runs past the text read so far."""
        return exc.pos >= len(self.buf) - 8 or exc.msg.startswith("Unterminated string")

    def _peek(self) -> str:
        """The next non-blank character ('' at the end of the file)."""
        while True:
            match = _WS.match(self.buf, self.pos)
            self.pos = match.end() if match else self.pos
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def _expect(self, chars: str, what: str) -> str:
        char = self._peek()
        if not char:
            raise self._cut()
        if char not in chars:
            raise self._malformed(f"expected {what}")
        self.pos += 1
        return char

    def _more(self) -> bool:
        """Drop what was read, add the next chunk; False at the end of the file."""
        if self.eof:
            return False
        if len(self.buf) - self.pos > MAX_VALUE_CHARS:
            raise self._malformed(f"a value longer than {MAX_VALUE_CHARS} characters")
        self.lines += self.buf.count("\n", 0, self.pos)
        self.dropped += self.pos
        self.buf, self.pos = self.buf[self.pos :], 0
        try:
            chunk = self.text.read(CHUNK_CHARS)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise self._cut(f" (gzip: {exc})") from None
        except OSError as exc:
            raise InputError(self.path, f"cannot be read ({exc})", "check the file") from None
        self.eof = not chunk
        self.buf += chunk
        return not self.eof

    def _cut(self, why: str = "") -> InputError:
        return InputError(
            self.path,
            f"the trace was cut short after {self.dropped + len(self.buf)} characters{why}",
            "the profiler or a copy did not finish writing it; export the trace again",
        )

    def _malformed(self, what: str, pos: int | None = None) -> InputError:
        pos = self.pos if pos is None else pos
        line = self.lines + self.buf.count("\n", 0, pos) + 1
        return InputError(
            self.path,
            f"is not valid JSON at character {self.dropped + pos} ({what})",
            "the trace is damaged; export it again",
            line=line,
        )
