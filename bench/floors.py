"""The floors of issue 41: what the best parsing libraries take to read a file, in one process,
for ``bench/peer_bench.py`` to set roofscope's time against.

    python bench/floors.py kineto TRACE.json[.gz]

``kineto_floor(path)``: gunzip with ISA-L (``isal.igzip``) and a typed decode of the events
with msgspec (structs holding the fields a check-up reads, the other keys skipped in C; an
event of another phase than "X" an empty struct, as the reader decodes them), in bounded
runs of whole events (16 MiB of text cut at the last ``},`` + newline + ``{``), as the bench
traces write them (one event a line); it counts the kernel events and returns that count.
No exactness guard, no error handling: a floor, not a reader.

Python's cyclic garbage collector is paused, as the reader pauses it, and the structs are
not tracked by it: left running, its passes over the 5 M structs of the 1 M-kernel trace
took 2.6 of the floor's 9.2 s (sessions nine to twelve measured against that 9.2 s).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any, BinaryIO, Union

import msgspec
from isal import igzip

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_report import Floor

CHUNK = 16 << 20
BOUNDARY = b"},\n{"


class Args(msgspec.Struct, gc=False):
    device: Any = None
    correlation: Any = None
    stream: Any = None
    grid: Any = None
    block: Any = None


class Event(msgspec.Struct, gc=False, tag_field="ph", tag="X"):
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


PHASES = ("B", "E", "i", "I", "C", "b", "n", "e", "s", "t", "f", "P", "N", "O", "D", "M", "V",
          "v", "R", "c", "(", ")")  # fmt: skip
SKIPPED = tuple(
    msgspec.defstruct(f"Phase{ord(p)}", [], tag_field="ph", tag=p, gc=False) for p in PHASES
)


def kineto_floor(path: Path) -> int:
    """The kernel events of a Kineto trace, read as fast as the libraries allow."""
    decoder = msgspec.json.Decoder(list[Union[Event, *SKIPPED]])  # type: ignore[valid-type]
    kernels = 0
    was = gc.isenabled()
    gc.disable()
    try:
        with _open(path) as raw:
            for run in _runs(raw):
                kernels += sum(type(e) is Event and e.cat == "kernel" for e in decoder.decode(run))
    finally:
        if was:
            gc.enable()
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
