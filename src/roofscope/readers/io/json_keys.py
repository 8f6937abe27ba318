"""The top-level keys of a JSON object, read from its text a chunk at a time with every value
skipped undecoded: how a Chrome trace is recognised by its structure (a ``traceEvents``
array, wherever it stands among the other keys) without parsing the whole file
(docs/formats/pytorch-kineto.md, "Top level and metadata")."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from typing import TextIO

CHUNK_CHARS = 1 << 16
_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
# inside an object or array: a whole string, a bracket, or a quote whose string runs on
_NESTED = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|"', re.DOTALL)
_SCALAR = re.compile(r"[^,}\] \t\n\r]*")


class Malformed(Exception):
    """The text is no JSON object as far as it was read (the reason is the message)."""


class Unfinished(Malformed):
    """The text ended (or the limit came) before the object did."""


def damage(text: str) -> str | None:
    """What breaks ``text`` (the start of a file) as a JSON object's top-level keys: None
    where it is no JSON object, reads as one, or ends before a break shows."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        for _ in TopKeys(io.StringIO(text), limit=len(text)).pairs():
            pass
    except Unfinished:
        return None
    except Malformed as exc:
        return str(exc)
    return None


class TopKeys:
    """``pairs()`` yields (key, the first character of its value) for each top-level key, in
    file order; the value is skipped when the caller asks for the next key. Reading stops at
    ``limit`` characters (:class:`Malformed`), so a huge document of another kind costs a
    bounded scan."""

    def __init__(self, text: TextIO, *, limit: int) -> None:
        self.text, self.limit = text, limit
        self.buf, self.pos, self.read, self.eof = "", 0, 0, False

    def pairs(self) -> Iterator[tuple[str, str]]:
        if self._peek() != "{":
            raise Malformed("not a JSON object")
        self.pos += 1
        if self._peek() == "}":
            return
        while True:
            key = self._key()
            yield key, self._peek()
            self._skip_value()
            separator = self._peek()
            if separator == "}":
                return
            if separator != ",":
                raise Malformed(f"no ',' or '}}' after the value of {key!r}")
            self.pos += 1

    def _key(self) -> str:
        if self._peek() != '"':
            raise Malformed("a key that is no string")
        at = self.read - len(self.buf) + self.pos  # the key's first character, in the text
        text = self._match(_STRING)
        try:
            key = str(json.loads(text))
        except json.JSONDecodeError as exc:  # a control character, an escape JSON has not
            what = exc.msg.removesuffix(" at")  # "Invalid control character at"
            where = at + exc.pos
            raise Malformed(f"a key that is no JSON string: {what} at character {where}") from None
        if self._peek() != ":":
            raise Malformed(f"no ':' after the key {key!r}")
        self.pos += 1
        return key

    def _skip_value(self) -> None:
        first = self._peek()
        if first == '"':
            self._match(_STRING)
        elif first in ("{", "["):
            self._skip_nested()
        else:
            self._match(_SCALAR)

    def _skip_nested(self) -> None:
        depth = 0
        while True:
            found = _NESTED.search(self.buf, self.pos)
            if found is None or found.group() == '"':  # read on: a bracket or a string's end
                self.pos = len(self.buf) if found is None else found.start()
                self._more_or_fail()
                continue
            self.pos = found.end()
            token = found.group()
            depth += (token in "[{") - (token in "]}") if len(token) == 1 else 0
            if depth == 0:
                return

    def _match(self, pattern: re.Pattern[str]) -> str:
        """The pattern's match here, reading on while it may run past the text read."""
        while True:
            found = pattern.match(self.buf, self.pos)
            if found is not None and (found.end() < len(self.buf) or self.eof):
                self.pos = found.end()
                return found.group()
            self._more_or_fail()

    def _peek(self) -> str:
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            self._more_or_fail()

    def _more_or_fail(self) -> None:
        if not self._more():
            raise Unfinished("the text ends before the object does")

    def _more(self) -> bool:
        if self.eof:
            return False
        if self.read >= self.limit:
            raise Unfinished(f"the object runs past the first {self.limit:,} characters")
        chunk = self.text.read(CHUNK_CHARS)
        self.eof, self.read = not chunk, self.read + len(chunk)
        self.buf, self.pos = self.buf[self.pos :] + chunk, 0
        return bool(chunk)
