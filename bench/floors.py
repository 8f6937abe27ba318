"""The floors of issue 41: what the best parsing libraries take to read a file, in one process,
for ``bench/peer_bench.py`` to set roofscope's time against.

    python bench/floors.py kineto TRACE.json[.gz]

``kineto_floor(path)``: gunzip with ISA-L (``isal.igzip``) and a typed decode of the events
with msgspec (structs holding the fields a check-up reads, the other keys skipped in C), in
bounded runs of whole events (16 MiB of text cut at the last ``},`` + newline + ``{``), as
the bench traces write them (one event a line); it counts the kernel events and returns that
count. No exactness guard, no error handling: a floor, not a reader.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
from isal import igzip

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_report import Floor

CHUNK = 16 << 20
BOUNDARY = b"},\n{"


class Args(msgspec.Struct):
    device: Any = None
    correlation: Any = None
    stream: Any = None
    grid: Any = None
    block: Any = None


class Event(msgspec.Struct):
    ph: Any = None
    cat: Any = None
    name: Any = None
    pid: Any = None
    tid: Any = None
    ts: Any = None
    dur: Any = None
    args: Args | None = None


def _open(path: Path) -> BinaryIO:
    return igzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")  # type: ignore[no-any-return]


def _runs(raw: BinaryIO) -> Any:
    """``[`` whole events ``]``, a run at a time."""
    buf = raw.read(CHUNK)
    buf = buf[buf.index(b"[", buf.index(b'"traceEvents"')) + 1 :]
    while chunk := raw.read(CHUNK):
        buf += chunk
        cut = buf.rfind(BOUNDARY)
        if cut > 0:
            yield b"[" + buf[: cut + 1] + b"]"
            buf = buf[cut + 2 :]
    yield b"[" + buf[: buf.rindex(b"]")] + b"]"


def kineto_floor(path: Path) -> int:
    """The kernel events of a Kineto trace, read as fast as the libraries allow."""
    decoder = msgspec.json.Decoder(list[Event])
    kernels = 0
    with _open(path) as raw:
        for run in _runs(raw):
            kernels += sum(e.cat == "kernel" for e in decoder.decode(run))
    return kernels


def _kineto_command(inputs: list[Path]) -> list[str]:
    return [sys.executable, str(Path(__file__)), "kineto", str(inputs[0])]


# what bench/peer_bench.py runs: the workload it floors -> its floor (the goal 1.3x)
FLOORS = {
    "Kineto 1 M kernels (10 names, gzipped)": Floor(
        "isal gunzip + msgspec decode", _kineto_command, 1.3, answers=False
    ),
}


if __name__ == "__main__":
    print(kineto_floor(Path(sys.argv[2])))
