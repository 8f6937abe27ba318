"""The one registry of input formats: each reader says what it recognises and what it gives.

Every format, CSV, JSON or SQLite, is a :class:`Reader` subclass in a module of its own, listed
in :data:`BUILT_IN`. Detection asks each reader, in that order, whether it knows a file's head
(:mod:`~roofscope.readers.sniff`); the first that does reads the file, in the role the planner
(:mod:`~roofscope.readers.plan`) gives it. A new format of roofscope's own is one new module and
one line in :data:`BUILT_IN` (docs/ARCHITECTURE.md, "Add an input format"); code outside
roofscope adds its reader with :func:`add`, after the built-in ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import ClassVar

from roofscope.errors import UsageError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.sniff import Head


class Reader:
    """One input format. Subclasses set the class variables and implement two methods."""

    name: ClassVar[str]
    description: ClassVar[str]
    producer: ClassVar[str]
    # Lower wins when two files of one run both give dispatches (trace CSV before JSON).
    priority: ClassVar[int] = 50
    # Whether one run's dispatches may come in several files of this format, each an export
    # of the same launches (ncu's details and raw pages): the planner reads every one, and
    # the reader puts a later one's content on the dispatches of the first (``same-launches``)
    exports: ClassVar[bool] = False
    # Whether it reads gzip-compressed files itself (``head.gzip``; head.text is what is inside)
    compressed: ClassVar[bool] = False
    # The kinds of file head (:attr:`Head.kind`) it is asked about: "text" or "sqlite"
    kinds: ClassVar[tuple[str, ...]] = ("text",)

    def detect(self, head: Head) -> bool:
        """Whether the file is of this format, from its head (a text head's first 64 KiB;
        an SQLite file's tables, opened read-only)."""
        raise NotImplementedError

    def mismatch(self, head: Head) -> str | None:
        """For ``--format`` naming this reader and a file it does not detect: the one thing
        that stops it, in words ("it is a JSON object without a traceEvents array"); None
        where it cannot say."""
        return None

    def explain_unknown(self, head: Head) -> None:
        """For a file of one of its kinds that no reader recognised: raise an InputError
        saying what the file is, where this reader can tell (an SQLite file that is no rocpd
        database names the tool that wrote it). Returns where it cannot."""

    def role(self, head: Head) -> Role:
        """What this file offers the planner (readers/plan.py), which decides which file wins
        when several describe the same run: DISPATCHES, KERNEL_SUMMARY, ACTIVITY, COPIES,
        WORKLOAD, COUNTER_COLLECTION or METADATA."""
        raise NotImplementedError

    def timed(self, head: Head) -> bool:
        """Whether its dispatches carry start and end times (else they are a counter run)."""
        return True

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        """Add the file's content to ``profile`` in the given role."""
        raise NotImplementedError


def readers(head: Head | None = None) -> Iterator[Reader]:
    """Every format, in the order detection asks them: the built-in ones, then :data:`ADDED`;
    with ``head``, only the built-in ones that may be asked about it (:func:`_asks`). A
    built-in reader's module is imported when the iteration reaches it, so that detecting a
    rocprof CSV loads none of the Nsight, Kineto or rocpd readers, and detecting a gzipped
    Kineto trace none of the CSV or SQLite ones (12 ms of a 0.33 s ``analyze``)."""
    for module, reader, kinds, compressed in BUILT_IN:
        if head is None or (_asks(head, kinds, compressed) and _may_be(head, module)):
            yield getattr(import_module(f"roofscope.readers.{module}"), reader)()
    yield from ADDED


TEXT, SQLITE = ("text",), ("sqlite",)

# The built-in readers as (module under roofscope.readers, class, its ``kinds``, whether it is
# ``compressed``), in detection order; imported by name: each reader module imports this one
# for Reader and the roles. The kinds and compressed are the class's own (a test holds them
# equal), written here so that a file no reader of a module can be asked about leaves that
# module unloaded.
BUILT_IN: tuple[tuple[str, str, tuple[str, ...], bool], ...] = (
    ("amd.rocprof_v1_csv", "RocprofV1Csv", TEXT, False),
    ("amd.rocprof_v1_stats", "RocprofV1Stats", TEXT, False),
    ("amd.rocprof_v1_json", "RocprofV1Json", TEXT, False),
    ("amd.rocprofv3", "KernelTrace", TEXT, False),
    ("amd.rocprofv3", "Stats", TEXT, False),
    ("amd.rocprofv3", "MemoryCopyTrace", TEXT, False),
    ("amd.rocprofv3_host", "ApiTrace", TEXT, False),
    ("amd.rocprofv3_counters", "CounterCollection", TEXT, False),
    ("amd.rocprofv3_agent_info", "AgentInfo", TEXT, False),
    ("amd.rocprofv3_json", "ResultsJson", TEXT, True),
    ("summary_csv", "SummaryCsv", TEXT, False),
    ("amd.compute.rocprof_compute", "Workload", TEXT, False),
    ("amd.compute.rocprof_compute", "WorkloadCsv", TEXT, False),
    ("amd.rocpd", "Rocpd", SQLITE, False),
    ("torch.kineto", "KinetoTrace", TEXT, True),
    ("nvidia.nsys_csv", "KernSum", TEXT, False),
    ("nvidia.nsys_trace", "GpuTrace", TEXT, False),
    ("nvidia.nsys_csv", "MemTimeSum", TEXT, False),
    ("nvidia.nsys_csv", "ApiSum", TEXT, False),
    ("nvidia.nsys_host", "ApiTrace", TEXT, False),
    ("nvidia.nsys_host", "NvtxTrace", TEXT, False),
    ("nvidia.nsys_sqlite", "NsysSqlite", SQLITE, False),
    ("nvidia.ncu_csv", "Ncu", TEXT, False),
)


def _asks(head: Head, kinds: tuple[str, ...], compressed: bool) -> bool:
    """Whether a reader of these ``kinds`` is asked about a file with this head: one of its
    kinds, and not gzipped unless it reads gzip itself (``compressed``)."""
    return head.kind in kinds and (compressed or not head.gzip)


# The modules whose readers recognise nothing but a JSON object (text that begins with "{"
# after white space): a CSV or a log is not asked of them, so that detecting a folder of CSVs
# does not import their JSON machinery (gzip, the stream decoder: 25-30 ms). A test holds
# each one's detect() False for any other text.
OBJECT_ONLY = frozenset({"amd.rocprofv3_json", "torch.kineto"})


def _may_be(head: Head, module: str) -> bool:
    """Whether the readers of ``module`` may recognise ``head`` (:data:`OBJECT_ONLY`)."""
    return module not in OBJECT_ONLY or head.text.lstrip().startswith("{")


# Readers added from outside roofscope (:func:`add`), asked after the built-in ones.
ADDED: tuple[Reader, ...] = ()


def add(*new: Reader) -> None:
    """Register readers from outside roofscope (a plugin, a test). A reader used with worker
    processes (``--jobs``) must be a module-level class, so that it can be pickled."""
    global ADDED
    taken = {r.name for r in readers()}
    for reader in new:
        if reader.name in taken:
            raise ValueError(f"a reader named {reader.name!r} is registered already")
        taken.add(reader.name)
    ADDED = (*ADDED, *new)


def detect(head: Head) -> Reader | None:
    """The reader that recognises this file's content, if any."""
    for reader in readers(head):
        if _asks(head, reader.kinds, reader.compressed) and reader.detect(head):
            return reader
    return None


def explain_unknown(head: Head) -> None:
    """Raise what the readers of its kind can say of a file none of them recognised."""
    for reader in readers():
        if head.kind in reader.kinds:
            reader.explain_unknown(head)


def by_name(name: str) -> Reader:
    for reader in readers():
        if reader.name == name:
            return reader
    known = ", ".join(r.name for r in readers())
    raise UsageError(f"--format {name}: unknown format; use one of {known}")
