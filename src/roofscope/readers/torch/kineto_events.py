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
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any, ClassVar

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


class Event(msgspec.Struct, gc=False):
    """One element of ``traceEvents``; ``args`` None when absent or no object."""

    ph: Any = None
    cat: Any = None
    name: Any = ""
    pid: Any = None
    tid: Any = None
    ts: Any = None
    dur: Any = None
    args: Args | None = None


NO_ARGS = Args()
_RUN = msgspec.json.Decoder(list[Event], float_hook=Decimal)
_FIELDS = [f for f in Event.__struct_fields__ if f != "args"]


def from_dict(value: object, event: type[Event] = Event, args: type[Args] = Args) -> Event | None:
    """The ``event`` (with its ``args``) a stdlib-decoded element holds; None for one that is
    no object."""
    if type(value) is not dict:
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
