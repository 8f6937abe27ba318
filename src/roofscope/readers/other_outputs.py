"""Profiler outputs that roofscope does not read, named with what to pass instead
(docs/formats/rocprofv3.md, "Perfetto and OTF2 output").

rocprofv3 also writes a Perfetto protobuf trace (``--output-format pftrace``) and an OTF2
archive (``--output-format otf2``). Both are binary; rather than "binary data", the error says
what the file is and which rocprofv3 output roofscope reads.
"""

from __future__ import annotations

import zlib

from roofscope.errors import InputError
from roofscope.readers.sniff import HEAD_BYTES, Head

# TracePacket.synchronization_marker: 16 fixed bytes that the Perfetto tracing service writes
# at the start of every trace (and every so often after), so that a reader can find packets
PERFETTO_MARKER = bytes.fromhex("82477a76b28d42ba81dc33326d57a079")
REMEDY = (
    "roofscope reads rocprofv3's csv, json or rocpd output: re-run rocprofv3 with "
    "--output-format csv (or json, or rocpd)"
)


def explain(head: Head) -> None:
    """Raise an InputError naming a Perfetto trace or an OTF2 archive; return otherwise."""
    if PERFETTO_MARKER in _start(head):
        raise InputError(
            str(head.path),
            "is a Perfetto protobuf trace (what rocprofv3 --output-format pftrace writes), "
            "which roofscope does not read",
            REMEDY,
        )
    if _otf2_anchor(head):
        raise InputError(
            str(head.path),
            "is the anchor file of an OTF2 archive (what rocprofv3 --output-format otf2 "
            f"writes, with {head.path.stem}.def and {head.path.stem}/ beside it), which roofscope "
            "does not read",
            REMEDY,
        )


def _start(head: Head) -> bytes:
    """The file's first 64 KiB (what is inside, for a gzip file); empty if unreadable."""
    try:
        with head.path.open("rb") as f:
            raw = f.read(HEAD_BYTES)
    except OSError:
        return b""
    if raw.startswith(b"\x1f\x8b"):
        try:
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, HEAD_BYTES)
        except zlib.error:
            return b""
    return raw


def _otf2_anchor(head: Head) -> bool:
    """An ``.otf2`` file with the archive's global definitions (``<stem>.def``) and its
    folder of per-location files (``<stem>/``) beside it: OTF2's layout, not a name alone."""
    path = head.path
    return (
        path.suffix == ".otf2"
        and path.with_suffix(".def").is_file()
        and path.with_suffix("").is_dir()
    )
