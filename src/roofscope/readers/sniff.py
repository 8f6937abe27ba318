"""Look at the first bytes of a file to tell what it is, before any reader touches it."""

from __future__ import annotations

import csv
import errno
import io
import stat
import zlib
from pathlib import Path

import msgspec
from msgspec.structs import replace

from roofscope.errors import InputError

HEAD_BYTES = 1 << 16
_BOM = b"\xef\xbb\xbf"


class Head(msgspec.Struct, frozen=True):
    """The start of a file: its kind and, for text, the first line without BOM and CR."""

    path: Path
    size: int
    kind: str  # text | gzip (undecodable) | sqlite | binary | empty | cr (CR-only line ends)
    first_line: str
    bom: bool
    text: str = ""  # for text: the first 64 KiB decoded (U+FFFD for bad bytes), BOM dropped
    gzip: bool = False  # the content is gzip-compressed; kind and text describe what is inside

    def fields(self) -> list[str]:
        """The first line split as CSV (quotes removed)."""
        try:
            return next(csv.reader(io.StringIO(self.first_line)), [])
        except csv.Error:
            return self.first_line.split(",")

    def names(self) -> list[str]:
        """The header's names: fields stripped, without the empty ones a trailing comma
        leaves at the end (for recognising a header, not for counting its columns)."""
        names = [f.strip() for f in self.fields()]
        while names and not names[-1]:
            names.pop()
        return names

    def starts(self, *prefixes: str) -> bool:
        return any(self.first_line.startswith(p) for p in prefixes)


def read_text(path: Path) -> str:
    """A small file's text: undecodable bytes shown as U+FFFD, a leading BOM dropped."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            str(path), f"cannot be read ({exc.strerror})", "check its permissions"
        ) from None
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def size_if_file(path: Path) -> int | None:
    """``path``'s size when it is a regular file; None otherwise, and where it cannot be
    known (missing, a name too long, no permission): whoever reads it then names the reason."""
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a directory; False where that cannot be known."""
    try:
        return stat.S_ISDIR(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def read_head(path: Path) -> Head:
    """Classify ``path`` from its first 64 KiB; raise InputError for what is no file."""
    shown = str(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError(shown, "no such file or directory", "check the path") from None
    except OSError as exc:
        denied = exc.errno in (errno.EACCES, errno.EPERM)
        raise InputError(
            shown,
            f"cannot be read ({exc.strerror})",
            "check its permissions" if denied else "check the path",
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            shown, "is not a regular file", "pass a profiler output file or a directory"
        )
    try:
        with path.open("rb") as f:
            raw = f.read(HEAD_BYTES)
    except OSError as exc:
        raise InputError(
            shown, f"cannot be read ({exc.strerror})", "check its permissions"
        ) from None
    return classify(path, raw, st.st_size)


def classify(path: Path, raw: bytes, size: int) -> Head:
    if raw.startswith(b"\x1f\x8b"):
        inner = _gunzip_head(raw)
        if inner is None:
            return Head(path, size, "gzip", "", False)
        head = classify(path, inner, size)
        return replace(head, gzip=True) if head.kind in ("text", "binary", "empty") else head
    bom = raw.startswith(_BOM)
    if bom:
        raw = raw[len(_BOM) :]
    if not raw.strip():
        return Head(path, size, "empty", "", bom)
    if raw.startswith(b"SQLite format 3\x00"):
        return Head(path, size, "sqlite", "", bom)
    if b"\n" not in raw and b"\r" in raw.rstrip(b"\r") and b"\x00" not in raw[:4096]:
        return Head(path, size, "cr", "", bom)  # lines end in CR alone: classic Mac OS
    line = raw.split(b"\n", 1)[0].rstrip(b"\r")
    if b"\x00" in raw[:4096] or _mostly_binary(line):
        return Head(path, size, "binary", "", bom)
    text = line.decode("utf-8", errors="replace")
    return Head(path, size, "text", text, bom, raw.decode("utf-8", errors="replace"))


def _gunzip_head(raw: bytes) -> bytes | None:
    """The first 64 KiB inside a gzip file's first bytes; None when they do not decompress."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, HEAD_BYTES)
    except zlib.error:
        return None


def _mostly_binary(line: bytes) -> bool:
    """Control bytes other than tab, or bytes that are not UTF-8 in most of the line."""
    sample = line[:4096]
    if not sample:
        return False
    control = sum(1 for b in sample if b < 32 and b not in (9, 27))
    if control > 0:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a cut multi-byte sequence at the end of the sample is fine
        return exc.start < len(sample) - 4 and _undecodable_share(sample) > 0.3
    return False


def _undecodable_share(sample: bytes) -> float:
    text = sample.decode("utf-8", errors="replace")
    return text.count("\ufffd") / max(1, len(text))
