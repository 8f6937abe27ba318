"""A Kineto trace of CUDA/HIP graph capture, read for the operators of the kernels a graph
replays (docs/formats/pytorch-kineto.md, "Graph capture and replay"): each kernel launch
recorded while the graph was captured (a runtime event whose ``args.kernel`` names the
kernel: ``cudaLaunchKernel``, ``hipExtModuleLaunchKernel``, ...) with the chain of ``cpu_op``
events of its thread around it (innermost first), their inputs kept as the Kineto reader
keeps them (Python's text of the decoded lists), so that the replayed kernels matched to
these launches (:mod:`~roofscope.readers.torch.graph_merge`) are linked like eager ones.

A trace may capture several graphs (one per batch size): the launches between each
``cudaStreamBeginCapture``/``hipStreamBeginCapture`` and the ``...StreamEndCapture`` after
it are one graph; a trace without those calls is one graph of all its launches. The user
annotations some serving patches add (``capture_32_DECODE``) are not needed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from roofscope.errors import InputError
from roofscope.model.names import normalise
from roofscope.readers.io.json_stream import GZIP_ERRORS, open_text
from roofscope.readers.torch.kineto_events import Args, Event, KinetoEvents, decoder
from roofscope.readers.torch.kineto_meta import CAPTURE_BEGIN
from roofscope.readers.torch.kineto_rows import ns

END = re.compile(r"(cuda|hip)StreamEndCapture(_v\d+)?$")
OP_CATS = frozenset({"cpu_op", "Operator"})
RUNTIME_CATS = frozenset({"cuda_runtime", "Runtime", "cuda_driver"})
FLAG = "--graph-capture"


def _remedy(option: str) -> str:
    return (
        "pass the torch.profiler trace recorded while the graphs were captured (its kernel "
        f"launches carry args.kernel), or leave out {option}"
    )


class _Args(Args, gc=False):
    """The Kineto reader's ``args`` keys, and a launch's kernel; an operator's inputs
    decoded (the reader keeps their JSON text)."""

    kernel: Any = None
    dims: Any = msgspec.field(default=None, name="Input Dims")
    types: Any = msgspec.field(default=None, name="Input type")
    concrete: Any = msgspec.field(default=None, name="Concrete Inputs")


class _Event(Event, gc=False):
    args: _Args | None = None


_NO_ARGS = _Args()


class _CaptureEvents(KinetoEvents):
    """The events as :class:`_Event` structs, decoded by msgspec as the Kineto reader's are."""

    event = _Event
    args = _Args
    typed = decoder(_Event)


class CapturedOp(msgspec.Struct, frozen=True):
    """One operator call around a captured launch; ``parent``: the index of the one around
    it in its graph's ``ops`` (None: none)."""

    name: str
    start_ns: int
    end_ns: int
    dims: str | None
    types: str | None
    concrete: str | None
    parent: int | None


class Graph(msgspec.Struct, frozen=True):
    """One captured graph: its kernel launches in order (normalised kernel names), each
    launch's innermost operator (an index in ``ops``, None: none around it)."""

    kernels: tuple[str, ...]
    launch_op: tuple[int | None, ...]
    ops: tuple[CapturedOp, ...]


class Capture(msgspec.Struct, frozen=True):
    """A capture trace: its path, the graphs it captured in time order, and the option that
    named it, in the caller's words (``--graph-capture``, ``base_graph_capture=``)."""

    path: str
    graphs: tuple[Graph, ...]
    option: str = FLAG

    @property
    def launches(self) -> int:
        return sum(len(g.kernels) for g in self.graphs)


class _Op(msgspec.Struct, frozen=True):
    thread: tuple[object, object]
    start: int
    end: int
    name: str
    inputs: tuple[str | None, str | None, str | None]


class _Launch(msgspec.Struct, frozen=True):
    thread: tuple[object, object]
    start: int
    kernel: str


def read_capture(path: str, option: str = FLAG) -> Capture:
    """The graphs of a capture trace; a path that is no file, no Kineto trace, or holds no
    kernel launch is one InputError (``option``: the caller's name of the option)."""
    if not Path(path).is_file():
        raise InputError(path, f"{option}: no such file", _remedy(option))
    ops, launches, windows = _events(path, option)
    if not launches:
        raise InputError(
            path,
            f"{option}: holds no kernel launch with args.kernel (a runtime event naming the "
            "kernel it launched), so no captured graph to match",
            _remedy(option),
        )
    return Capture(path, tuple(_graphs(ops, launches, windows)), option)


def _events(path: str, option: str) -> tuple[list[_Op], list[_Launch], list[tuple[int, int]]]:
    ops: list[_Op] = []
    launches: list[_Launch] = []
    begins: list[int] = []
    ends: list[int] = []
    try:
        with open_text(Path(path), gzipped=_gzipped(path)) as text:
            for run in _CaptureEvents(text, path).runs():
                for event in run:
                    _event(event, ops, launches, begins, ends)
    except InputError as exc:  # the stream's own words, naming the option
        _, problem, remedy = exc.parts
        raise InputError(path, f"{option}: {problem}", remedy, line=exc.line) from None
    except GZIP_ERRORS as exc:
        why = f"{option}: its gzip stream is damaged ({exc})"
        raise InputError(path, why, _remedy(option)) from None
    except (UnicodeDecodeError, ValueError) as exc:
        why = f"{option}: is no Kineto JSON trace ({exc})"
        raise InputError(path, why, _remedy(option)) from None
    return ops, launches, _windows(sorted(begins), sorted(ends))


def _gzipped(path: str) -> bool:
    with open(path, "rb") as raw:
        return raw.read(2) == b"\x1f\x8b"


def _event(
    event: _Event | None,
    ops: list[_Op],
    launches: list[_Launch],
    begins: list[int],
    ends: list[int],
) -> None:
    if event is None or event.ph != "X" or (start := ns(event.ts)) is None:
        return
    cat, name, args = event.cat, str(event.name), event.args or _NO_ARGS
    thread = (_key(event.pid), _key(event.tid))
    if cat in OP_CATS and (dur := ns(event.dur)) is not None:
        inputs = (_text(args.dims), _text(args.types), _text(args.concrete))
        ops.append(_Op(thread, start, start + dur, name, inputs))
    elif cat in RUNTIME_CATS:
        if type(args.kernel) is str:
            launches.append(_Launch(thread, start, normalise(args.kernel)))
        elif CAPTURE_BEGIN.match(name):
            begins.append(start)
        elif END.match(name):
            ends.append(start)


def _key(value: object) -> object:
    """A pid or tid as a dict key (a damaged one, a list, by its text)."""
    return value if value is None or type(value) in (int, str) else repr(value)


def _text(value: object) -> str | None:
    """An input list as the Kineto reader keeps it: Python's text of its decoded value
    (floats as Decimal, as the reader decodes them)."""
    return None if value is None else str(value)


def _windows(begins: list[int], ends: list[int]) -> list[tuple[int, int]]:
    """Each begin of a capture and the first end after it."""
    out = []
    for begin in begins:
        after = bisect_right(ends, begin)
        if after < len(ends):
            out.append((begin, ends[after]))
    return out


def _graphs(
    ops: list[_Op], launches: list[_Launch], windows: Sequence[tuple[int, int]]
) -> list[Graph]:
    launches.sort(key=lambda launch: launch.start)
    chains = _nest(ops, launches)
    spans = windows or [(launches[0].start, launches[-1].start)]
    graphs = []
    for begin, end in spans:
        mine = [i for i, launch in enumerate(launches) if begin <= launch.start <= end]
        if mine:
            graphs.append(_graph([launches[i] for i in mine], [chains[i] for i in mine]))
    return graphs


def _nest(ops: list[_Op], launches: list[_Launch]) -> list[list[_Op]]:
    """Each launch's operators of its thread open at its start, innermost first: one sweep
    per thread over its operators by (start, -end) with the stack of those still open."""
    by_thread: defaultdict[tuple[object, object], list[_Op]] = defaultdict(list)
    for op in ops:
        by_thread[op.thread].append(op)
    for mine in by_thread.values():
        mine.sort(key=lambda op: (op.start, -op.end))
    at = dict.fromkeys(by_thread, 0)
    stacks: defaultdict[tuple[object, object], list[_Op]] = defaultdict(list)
    chains = []
    for launch in launches:  # in time order
        mine, stack = by_thread.get(launch.thread, []), stacks[launch.thread]
        i = at.get(launch.thread, 0)
        while i < len(mine) and mine[i].start <= launch.start:
            while stack and stack[-1].end < mine[i].start:
                stack.pop()
            stack.append(mine[i])
            i += 1
        at[launch.thread] = i
        while stack and stack[-1].end < launch.start:
            stack.pop()
        chains.append([op for op in reversed(stack) if op.end >= launch.start])
    return chains


def _graph(launches: list[_Launch], chains: list[list[_Op]]) -> Graph:
    """The launches of one graph and the operators around them, numbered in order."""
    kept: dict[_Op, int] = {}
    parents: dict[_Op, _Op | None] = {}
    for chain in chains:
        for inner, outer in zip(chain, [*chain[1:], None], strict=True):
            parents[inner] = outer
            kept.setdefault(inner, len(kept))
    return Graph(
        tuple(launch.kernel for launch in launches),
        tuple(kept[chain[0]] if chain else None for chain in chains),
        tuple(_captured(op, parents[op], kept) for op in kept),
    )


def _captured(op: _Op, parent: _Op | None, kept: dict[_Op, int]) -> CapturedOp:
    dims, types, concrete = op.inputs
    up = None if parent is None else kept[parent]
    return CapturedOp(op.name, op.start, op.end, dims, types, concrete, up)
