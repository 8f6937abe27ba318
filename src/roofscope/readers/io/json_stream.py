"""A streaming reader of one large JSON object whose ``traceEvents`` array holds the events
(Chrome trace format): the document is never loaded whole; the events are decoded from a
bounded sliding text buffer, a run of whole events at a time where the text allows, floats as
:class:`decimal.Decimal` of their literal text. Errors name the character and line where the
JSON breaks, or say where the file was cut short."""

from __future__ import annotations

import gc
import gzip
import io
import json
import re
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO, TextIO, cast

from isal import igzip, isal_zlib

from roofscope.errors import InputError

CHUNK_CHARS = 1 << 20  # text read at a time
MAX_VALUE_CHARS = 1 << 26  # one event (or top-level value) larger than this is refused
_WS = re.compile(r"[ \t\n\r]*")
# where one event ends and the next begins: the guess a run of events is cut at
_BOUNDARY = re.compile(r"\}[ \t\n\r]*,[ \t\n\r]*\{")
RUN_TAIL_CHARS = 1 << 16  # how far back from the end of the text read a run's cut is looked for
RUN_TRIES = 3  # cuts tried on one text before its events are decoded one at a time

# what a damaged or cut gzip stream raises, through ISA-L or zlib
GZIP_ERRORS: tuple[type[Exception], ...] = (
    EOFError,
    zlib.error,
    gzip.BadGzipFile,
    cast(type[Exception], isal_zlib.error),
)
# (path, top-level key, the other keys read so far) -> an error that stops reading, or None
Refuse = Callable[[str, str, Mapping[str, Any]], InputError | None]


@contextmanager
def open_text(path: Path, *, gzipped: bool) -> Iterator[TextIO]:
    """The file as text (gunzipped when ``gzipped``, by ISA-L: 2-3x zlib's speed; its
    ``BadGzipFile`` is :mod:`gzip`'s); undecodable bytes become U+FFFD."""
    try:
        # closed by the TextIOWrapper below
        raw = _gunzipped(path) if gzipped else path.open("rb")
    except OSError as exc:
        raise InputError(str(path), f"cannot be read ({exc})", "check its permissions") from None
    with io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace") as text:
        yield text


def _gunzipped(path: Path) -> BinaryIO:
    return cast(BinaryIO, igzip.open(path, "rb"))  # type: ignore[no-untyped-call]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused (unless it was already): the events are
    acyclic dicts and lists, freed by their reference counts, while the collector's passes
    over every object allocated since the last cost 60 ms of the 0.7 s analyze of the HTA
    ns_resolution trace (68,692 events)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class EventStream:
    """The top-level JSON object read a value at a time through a bounded text buffer:
    :meth:`events` yields the elements of ``traceEvents``; the other keys land in ``meta``
    wherever they appear. ``refuse`` is asked about each other key before its value is read
    (path, key, the meta so far); an error it returns is raised, so a value the caller cannot
    use is never decoded."""

    def __init__(self, text: TextIO, path: str, *, refuse: Refuse | None = None) -> None:
        self.text, self.path, self.refuse = text, path, refuse
        self.buf, self.pos, self.eof = "", 0, False
        self.dropped = 0  # characters before ``buf``
        self.tried = -1  # the characters read when a run was last tried (one try per chunk)
        self.meta: dict[str, Any] = {}
        self.decoder = json.JSONDecoder(parse_float=Decimal)

    def events(self) -> Iterator[Any]:
        """The elements of ``traceEvents``, one at a time."""
        for run in self.runs():
            yield from run

    def runs(self) -> Iterator[list[Any]]:
        """The elements of ``traceEvents``, a list at a time: a run decoded at once, or one
        event (a caller's loop over a list costs less than a generator's step per event)."""
        for key in self.object_keys():
            if key == "traceEvents":
                yield from self._array()
            elif self.refuse and (error := self.refuse(self.path, key, self.meta)) is not None:
                raise error
            else:
                self.meta[key] = self._value()

    # -- walking any document: an object's keys, an array's elements, a value passed over

    def object_keys(self) -> Iterator[str]:
        """The keys of the object that starts here, one at a time: before asking for the next,
        the caller reads the key's value (:meth:`value`, :meth:`elements`, :meth:`members`,
        :meth:`object_keys`) or passes over it (:meth:`skip`)."""
        self._expect("{", "a JSON object")
        if self._peek() == "}":
            self.pos += 1
            return
        while True:
            key = self._value()
            if not isinstance(key, str):
                raise self._malformed("expected a key")
            self._expect(":", "':'")
            yield key
            if self._expect(",}", "',' or '}'") == "}":
                return

    def value(self) -> Any:
        """The value that starts here, decoded whole (at most MAX_VALUE_CHARS long)."""
        return self._value()

    def peek(self) -> str:
        """The next character that is not blank ('' at the end of the file)."""
        return self._peek()

    def elements(self, what: str = "an array") -> Iterator[list[Any]]:
        """The elements of the array that starts here, decoded a run at a time."""
        return self._array(what)

    def members(self) -> Iterator[None]:
        """Stops at each element of the array that starts here, for the caller to read it
        (an element too large to decode whole is walked with :meth:`object_keys`)."""
        self._expect("[", "an array")
        if self._peek() == "]":
            self.pos += 1
            return
        while True:
            yield
            if self._expect(",]", "',' or ']'") == "]":
                return

    def skip(self) -> None:
        """Pass over the value that starts here, never holding more of it than one element
        of an array (or one value of an object) at a time."""
        char = self._peek()
        if char == "[":
            for _ in self._array("an array"):
                pass
        elif char == "{":
            for _ in self.object_keys():
                self.skip()
        else:
            self._value()

    def _array(self, what: str = "the traceEvents array") -> Iterator[list[Any]]:
        self._expect("[", what)
        if self._peek() == "]":
            self.pos += 1
            return
        while True:
            run = self._run()
            if not run and not self.eof and not _BOUNDARY.search(self.buf, self.pos):
                # the text read ends inside this event: read on before decoding it, where a
                # decode that fails at the end of the text counts the lines of the buffer
                # for its error (JSONDecodeError): 0.15 s of CPU on the 1 M-event trace
                self._more()
            yield run or [self._element()]
            if self._expect(",]", "',' or ']'") == "]":
                return

    def _run(self) -> list[Any]:
        """The whole events from here to the last boundary between two events in the text
        read so far, decoded in one call of the C decoder as ``[`` the text ``]`` (one Python
        round per event costs as much as decoding it); [] when no boundary decodes, and the
        events are decoded one at a time, with their errors.

        A run that decodes is exactly the events one at a time would give: it starts where an
        event starts and ends with a ``}``, so its last value is an object that closes there.
        A cut that was no boundary (inside a name, a nested list, past the array's end) leaves
        text that does not decode as one array; the next try cuts before where it broke."""
        read = self.dropped + len(self.buf)
        if read == self.tried:  # tried on this text already
            return []
        self.tried, end = read, len(self.buf)
        for _ in range(RUN_TRIES):
            cut = self._boundary(end)
            if cut <= self.pos:
                return []
            try:
                run = self._decode_run(f"[{self.buf[self.pos : cut]}]")
            except json.JSONDecodeError as exc:
                end = self.pos + exc.pos - 1  # where it broke, in the buffer
                continue
            self.pos = cut
            return run
        return []

    def _decode_run(self, text: str) -> list[Any]:
        """A run's text (``[`` its events ``]``) decoded; a subclass may decode it its own way,
        raising :class:`json.JSONDecodeError` where this does."""
        return cast(list[Any], self.decoder.decode(text))

    def _element(self) -> Any:
        """One element of the array, where no run could be cut (a subclass may convert it)."""
        return self._value()

    def _boundary(self, end: int) -> int:
        """Just past the ``}`` of the last boundary between two events that ends before
        ``end`` (looked for in the RUN_TAIL_CHARS before it); 0 when there is none."""
        cut = 0
        for match in _BOUNDARY.finditer(self.buf, max(self.pos, end - RUN_TAIL_CHARS), end):
            cut = match.start() + 1
        return cut

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
        try:
            chunk = self.text.read(CHUNK_CHARS)
        except GZIP_ERRORS as exc:
            raise self._cut(f" (gzip: {exc})") from None
        except OSError as exc:
            raise InputError(self.path, f"cannot be read ({exc})", "check the file") from None
        self.eof = not chunk
        # the new buffer is built while the old one is alive: freed after, it leaves a hole
        # that the next chunk fills, where freed first it let the C library give the top of
        # the heap back and fault it in again (the stream of the 1 M-event trace, one
        # measurement: 64-65,000 minor page faults to 58-62,000)
        self.dropped += self.pos
        self.buf, self.pos = self.buf[self.pos :] + chunk, 0
        return not self.eof

    def _cut(self, why: str = "") -> InputError:
        return InputError(
            self.path,
            f"the trace was cut short after {self.dropped + len(self.buf)} characters{why}",
            "the profiler or a copy did not finish writing it; export the trace again",
        )

    def _malformed(self, what: str, pos: int | None = None) -> InputError:
        pos = self.pos if pos is None else pos
        dropped = self._dropped_lines()
        line = None if dropped is None else dropped + self.buf.count("\n", 0, pos) + 1
        return InputError(
            self.path,
            f"is not valid JSON at character {self.dropped + pos} ({what})",
            "the trace is damaged; export it again",
            line=line,
        )

    def _dropped_lines(self) -> int | None:
        """The newlines of the text dropped before ``buf``, counted from the file read again
        (None if it cannot be): an error's line is worth a second read, and counting them as
        the text went by took 0.08-0.13 s of CPU on the 1 M-event trace (255 MiB)."""
        if not self.dropped:
            return 0
        lines, left = 0, self.dropped
        try:
            self.text.seek(0)
            while left > 0 and (chunk := self.text.read(min(left, CHUNK_CHARS))):
                lines += chunk.count("\n")
                left -= len(chunk)
        except (OSError, ValueError, *GZIP_ERRORS):  # type: ignore[misc]
            return None
        return lines
