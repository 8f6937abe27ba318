"""A Kineto trace's events as typed values (see :mod:`~roofscope.readers.torch.kineto`): a run of
events decoded by msgspec into :class:`Event` structs, only the fields the reader reads, the
other keys skipped in C (docs/formats/pytorch-kineto.md, "Into the model").

Each field is decoded as JSON gives it (``Any``), floats as :class:`~decimal.Decimal` of their
literal text (``float_hook``), so ``ts`` and ``dur`` stay exact to the ns and every value is
the one ``json`` with ``parse_float=Decimal`` gives: a missing key is ``None`` (``name``:
``""``), a duplicated key its last value; an operator's inputs are kept as their JSON text
(:class:`msgspec.Raw`). A run msgspec refuses (NaN, a lone surrogate, an event or ``args``
that is no object, a cut that was no boundary) is decoded again by the stdlib, whose dicts
:func:`from_dict` turns into the same structs, and whose errors are the reader's.

Only complete events (``"ph": "X"``) are read: the phase is the tag of a union of structs,
an event of another phase (a flow's start or end, an instant, a counter, metadata: two of
five events of a traced launch are its flow's) decoded as an empty struct, its keys skipped
in C (a run of the 1 M-kernel bench trace: 50 to 40 ms). An event without a phase, or of
one the Chrome trace format does not define, is refused by the union, and its run decoded
by the stdlib.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any, ClassVar, Union

import msgspec

from roofscope.readers.io.json_stream import EventStream

Raw = msgspec.Raw
NULL = Raw(b"null")  # an absent input list, grid or block: as if the trace wrote null
FLOP, GB = "kernel_flop", "kernel_num_gb"  # Inductor's annotations (kineto_ops)


class Args(msgspec.Struct, gc=False):
    """The ``args`` keys the reader reads; the annotations are UNSET when absent."""

    device: Any = None
    correlation: Any = None
    stream: Any = None
    # a launch's grid and block as their JSON text too (a trace repeats a few: kineto_rows
    # multiplies each distinct one once); from the stdlib's dicts, the decoded value
    grid: Raw = NULL
    block: Raw = NULL
    shared_memory: Any = msgspec.field(default=None, name="shared memory")
    registers: Any = msgspec.field(default=None, name="registers per thread")
    # an operator's inputs as their JSON text (decoded once per distinct text: kineto_ops);
    # from the stdlib's dicts, the decoded value
    dims: Raw = msgspec.field(default=NULL, name="Input Dims")
    types: Raw = msgspec.field(default=NULL, name="Input type")
    concrete: Raw = msgspec.field(default=NULL, name="Concrete Inputs")
    flop: Any = msgspec.field(default=msgspec.UNSET, name=FLOP)
    gb: Any = msgspec.field(default=msgspec.UNSET, name=GB)

    @property
    def annotated(self) -> bool:
        return self.flop is not msgspec.UNSET or self.gb is not msgspec.UNSET


class Event(msgspec.Struct, gc=False, tag_field="ph", tag="X"):
    """One complete event (``"ph": "X"``) of ``traceEvents``; ``args`` None when absent or
    no object."""

    ph: ClassVar[str] = "X"
    cat: Any = None
    name: Any = ""
    pid: Any = None
    tid: Any = None
    ts: Any = None
    dur: Any = None
    args: Args | None = None


# the Chrome trace format's phases but "X", each an empty struct (``ph``: its phase)
PHASES = ("B", "E", "i", "I", "C", "b", "n", "e", "s", "t", "f", "P", "N", "O", "D", "M", "V",
          "v", "R", "c", "(", ")")  # fmt: skip
_SKIPPED = tuple(
    msgspec.defstruct(f"Phase{ord(p)}", [], tag_field="ph", tag=p, gc=False, namespace={"ph": p})
    for p in PHASES
)


def decoder(event: type[Event]) -> msgspec.json.Decoder[list[Any]]:
    """The decoder of a run of events: ``event`` structs for complete events, an empty
    struct for another phase's."""
    return msgspec.json.Decoder(list[Union[event, *_SKIPPED]], float_hook=Decimal)  # type: ignore[valid-type]


NO_ARGS = Args()
_RUN = decoder(Event)
_FIELDS = [f for f in Event.__struct_fields__ if f != "args"]


def from_dict(value: object, event: type[Event] = Event, args: type[Args] = Args) -> Event | None:
    """The ``event`` (with its ``args``) a stdlib-decoded complete event holds; None for an
    element that is no object or no complete event."""
    if type(value) is not dict or value.get("ph") != "X":
        return None
    fields = {f: value[f] for f in _FIELDS if f in value}
    given = value.get("args")
    if type(given) is dict:
        fields["args"] = args(**{f: given[k] for k, f in _keys(args).items() if k in given})
    return event(**fields)


@lru_cache(maxsize=8)
def _keys(args: type[Args]) -> dict[str, str]:
    """The ``args`` keys a struct reads, and its field for each."""
    return dict(zip(args.__struct_encode_fields__, args.__struct_fields__, strict=True))


class KinetoEvents(EventStream):
    """:class:`EventStream` whose ``traceEvents`` runs come back as :class:`Event` structs
    (None for an element that is no object); a subclass names its own event and args
    structs (subclasses of these) and their decoder (``typed``)."""

    event: ClassVar[type[Event]] = Event
    args: ClassVar[type[Args]] = Args
    typed: ClassVar[msgspec.json.Decoder[list[Any]]] = _RUN

    def _decode_run(self, text: str) -> list[Any]:
        try:
            return self.typed.decode(text)
        except msgspec.DecodeError:  # json's own decode: its dicts, or its error
            return [from_dict(v, self.event, self.args) for v in super()._decode_run(text)]

    def _element(self) -> Any:
        return from_dict(self._value(), self.event, self.args)


__all__ = ["NO_ARGS", "NULL", "Args", "Event", "KinetoEvents", "from_dict"]
