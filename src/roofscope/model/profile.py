"""The one model every reader fills and every analysis reads.

A :class:`Profile` holds its data in a DuckDB connection:

``names``
    one row per distinct raw kernel name: ``name_id``, ``raw_name``, ``kernel`` (normalised).
``dispatches``
    one row per kernel launch, when the input has launches: who ran it, where and when.
    Times in nanoseconds. Barrier packets a producer lists among its kernels (rocprof v1)
    are rows here too, under a source id of their own whose input has role ``barriers``:
    every analysis takes the sources of role ``dispatches`` only.
``launches``
    how each kernel was launched: host thread, queue, stream and shape (grid, workgroup,
    registers, LDS, scratch, wave size), one row per distinct combination with its number
    of dispatches. These repeat across millions of dispatches, so they are not kept per
    row; a reader may defer filling this table until an analysis asks for it
    (:meth:`Profile.launches`), which keeps a large trace's load to one scan.
``counters``
    long table of per-dispatch counter values (``row_id``, ``counter_id``, ``value``): a
    wide counter run holds hundreds of thousands of them, so the counter is an id.
``counter_names``
    one row per distinct counter name: ``counter_id``, ``counter``.
``kernel_summary``
    per-kernel totals when the input is already aggregated (a stats file).
``activity_summary``
    API, copy and barrier-packet summaries (hip_stats, copy_stats, the ``<barrier packet>``
    rows of a stats file, ...), never mixed into kernel time.
``copies``
    memory copies with their timestamps (rocprofv3 memory_copy_trace).
``producer_rules``
    the profiler's own analysis rows (Nsight Compute rules) per dispatch row, kept as evidence.
``host_ranges``
    host-side ranges that explain GPU idle time, with their times (``kind`` "data-loader":
    a PyTorch ``enumerate(DataLoader)`` step), under the source of the trace's dispatches.
``graph_launches``
    CUDA/HIP graph launches (runtime calls that replay a captured graph) and their
    correlation ids, which the kernels they replayed carry.
``operators``
    the host's operators that launched kernels (a PyTorch trace's ``cpu_op`` events around
    a launch) with their id, the id of the operator around them (``parent``), times and
    recorded input shapes, types and concrete values (as the trace wrote them), and the FLOPs
    and bytes a compiler annotated them with (Inductor's ``kernel_flop``, ``kernel_num_gb``),
    under the source of the trace's dispatches.
``op_launches``
    the host's kernel and graph launches (runtime calls): correlation id (which the kernels
    they launched carry as ``dispatch_id``), start, and the innermost operator of its
    thread around it (``op_id``; None when none was).
``kernel_annotations``
    FLOPs and bytes written on kernel events themselves (``kernel_flop``,
    ``kernel_num_gb``), by correlation id.
``user_ranges``
    the ranges the user named around launches (a PyTorch trace's ``record_function`` and
    ``ProfilerStep#N``): ``range_id``, ``name``, times; only those holding a launch.
``range_launches``
    each launch (``correlation``) and each user range of its thread around it (``range_id``;
    a launch in nested ranges has a row per range).
``graph_kernel_ops``
    a graph-replayed dispatch (``row_id``) matched to a launch of a capture trace of its graph
    (``--graph-capture``) and the captured operator around that launch (``op_id``, an
    operator added under the replay's source); filled on the merged profile, after the map
    step, so no partial carries it.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NewType, TypeVar, cast

import msgspec
from msgspec.structs import replace

from roofscope.catalogue.ceilings import Ceiling
from roofscope.model import words
from roofscope.model.duck import duckdb
from roofscope.model.names import normalise
from roofscope.model.relation import Relation
from roofscope.model.schema import DDL, Role, Table

T = TypeVar("T")

# An input's id: its index in ``Profile.inputs``, carried by the rows it gave (``source``).
SourceId = NewType("SourceId", int)


class InputFile(msgspec.Struct, frozen=True):
    """One file that was read, what it was read as and what it contributed."""

    path: str
    format: str
    rows: int
    role: Role  # what it gave and whether it is counted (see the enum)
    group: str = ""  # files of one run share it
    rank: int | None = None  # the process's rank in a parallel job, where the producer says
    # False when its dispatches carry durations only, laid end to end in launch order (a
    # replaying profiler such as Nsight Compute): no timeline is drawn from them
    on_timeline: bool = True


class RunInfo(msgspec.Struct, frozen=True):
    """What is known about the run; None where the input does not say."""

    producer: str | None = None
    producer_version: str | None = None
    gpu: str | None = None  # the name the profiler reports, e.g. "AMD Instinct MI250X", "MI100"
    arch: str | None = None  # gfx arch or sm_XY
    compute_units: int | None = None  # of the profiled agent (one GCD on MI250X)
    xcds: int | None = None  # accelerator complex dies in the agent (MI300X: 8)
    partition: str | None = None  # compute partition mode where reported (SPX, CPX, ...)
    # the device's own attributes, as the profiler recorded them (ceilings from them:
    # catalogue/from_attributes.py)
    clock_mhz: float | None = None  # maximum engine (SM/shader) clock
    memory_clock_mhz: float | None = None  # maximum memory clock
    bus_width_bits: int | None = None  # memory interface width
    memory_bytes: int | None = None  # device memory
    # the parallel job, where the producer states it (Kineto's distributedInfo); each
    # input's own rank is InputFile.rank
    world_size: int | None = None  # ranks in the job
    backend: str | None = None  # its communication backend, e.g. "nccl"


class Runs(msgspec.Struct, frozen=True):
    """The runs found in the inputs (readers/runs.py): those read, those left out, and whether
    the ones read are ranks of one job."""

    read: tuple[str, ...] = ()  # one path per run read: its dispatch source
    nested: tuple[str, ...] = ()  # folders of runs below a read run's folder, left out
    job: str | None = None  # the evidence that the runs read are ranks of one job

    @property
    def separate(self) -> bool:
        """Several runs read that are not ranks of one job."""
        return len(self.read) > 1 and self.job is None


class Warning(msgspec.Struct, frozen=True):
    """A data-quality finding reported in every output."""

    code: str
    message: str
    count: int = 1


# the input (summed file sizes, compressed where the file is) below which DuckDB runs on one
# thread: it shares out a CSV scan by 32 MiB buffers and a table scan by row groups of
# 122,880 rows, so that an input this small gives a second thread nothing but hand-offs
# (8 MiB: a rocprof CSV of some 19,000 dispatches, a gzipped Kineto trace of some 400,000
# events). HTA's alexnet trace: 0.402 s of wall and 0.391 s of CPU with a thread per core,
# 0.385 and 0.381 s on one (medians of 7, alternating).
ONE_THREAD_BYTES = 8 << 20


# every profile's connection while it lives: the command line's fast exit closes those that
# spilled (close_spilled), so an in-memory database removes its temporary files
OPEN: weakref.WeakSet[duckdb.DuckDBPyConnection] = weakref.WeakSet()


# the profiles whose files lie in a temporary folder of their own (Profile.empty's database
# file, or what a memory limit spills), with that folder
ON_DISK: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, str] = weakref.WeakKeyDictionary()


def close_spilled() -> None:
    """Close the connections whose database may have spilled to disk: DuckDB creates its
    temporary folder at the first spill and removes it (with its files) on close; a database
    file's folder is removed with it. The others are left to the process's exit, which frees
    their memory at once, where closing freed their tables first (25-30 ms of a 4 M-dispatch
    rocprof CSV's analyze)."""
    for con, folder in list(ON_DISK.items()):
        con.close()
        shutil.rmtree(folder, ignore_errors=True)
    for con in list(OPEN):
        try:
            ((folder,),) = con.execute("SELECT current_setting('temp_directory')").fetchall()
        except duckdb.ConnectionException:  # closed already
            continue
        if folder and Path(str(folder)).exists():
            con.close()


_Config = dict[str, str | bool | int | float | list[str]]  # duckdb.connect's settings
ROW_GROUP = 122_880  # DuckDB's rows per row group: what a CHECKPOINT compresses whole


def _in(folder: str, config: _Config, on_disk: bool) -> duckdb.DuckDBPyConnection:
    """A connection whose files (its database file where ``on_disk``, what it spills) lie in
    ``folder``, removed with the connection, by :func:`close_spilled` or at the process's end."""
    where = str(Path(folder) / "profile.duckdb") if on_disk else ":memory:"
    con = duckdb.connect(where, config=config)
    ON_DISK[con] = folder
    weakref.finalize(con, shutil.rmtree, folder, True)  # with the connection, or at exit
    return con


class Profile(msgspec.Struct):
    """Tables in DuckDB plus what was read and what was noticed while reading."""

    con: duckdb.DuckDBPyConnection
    inputs: list[InputFile] = msgspec.field(default_factory=list)
    run: RunInfo = msgspec.field(default_factory=RunInfo)
    warnings: list[Warning] = msgspec.field(default_factory=list)
    deferred: list[Callable[[], None]] = msgspec.field(default_factory=list)
    # the check-up will ask for launch shapes (the GPU's compute units given): a reader that
    # would defer them to a second scan of its file reads them in its first instead
    shapes_wanted: bool = False
    ceilings: list[Ceiling] = msgspec.field(default_factory=list)  # measured ones (roofline.csv)
    # rocprof-compute sysinfo.csv fields
    sysinfo: dict[str, str] = msgspec.field(default_factory=dict)
    # source -> counter -> the file of the pass that counted it, where a source's counters come
    # from separate replays (rocprof-compute 3.6+ per-pass files): a ratio across two passes
    # divides counts of two different runs of the dispatch
    counter_passes: dict[int, dict[str, str]] = msgspec.field(default_factory=dict)
    runs: Runs = msgspec.field(default_factory=Runs)  # set once every file is read
    # relations built once (a selection's names are found by a query)
    _views: dict[tuple[object, ...], Relation] = msgspec.field(default_factory=dict)
    # the ids of the ``names`` and ``counter_names`` rows, which only name_ids and
    # counter_ids insert: ids are 0, 1, ... in the order registered, known without a query
    _name_ids: dict[str, int] = msgspec.field(default_factory=dict)
    _counter_ids: dict[str, int] = msgspec.field(default_factory=dict)
    # values computed from the tables, built once (see :meth:`derived`)
    _derived: dict[tuple[object, ...], object] = msgspec.field(default_factory=dict)

    @classmethod
    def empty(
        cls, *, on_disk: bool = False, one_thread: bool = False, memory: int | None = None
    ) -> Profile:
        """A profile without rows; ``on_disk``: its tables in a database file in a temporary
        folder (compressed: a job's dispatches take a tenth of the memory they take in an
        in-memory database), removed with the connection or at the process's end;
        ``one_thread``: DuckDB runs its statements on this thread alone, for a small input
        (:data:`ONE_THREAD_BYTES`), where its threads per core had no work to share out
        and only cost their hand-offs; ``memory``: the bytes DuckDB may hold (``--memory-limit``),
        what is beyond them spilled to a temporary folder of its own (DuckDB's default, ``.tmp``
        in the working directory, would write beside the user's files), removed as a
        database file's folder is."""
        config: _Config = {"preserve_insertion_order": True}  # a setting, not a statement
        if one_thread:
            config["threads"] = 1
        folder = tempfile.mkdtemp(prefix="roofscope-") if on_disk or memory else None
        if memory is not None:
            config.update(memory_limit=f"{memory}B", temp_directory=f"{folder}/spill")
        con = duckdb.connect(config=config) if folder is None else _in(folder, config, on_disk)
        OPEN.add(con)
        con.execute(DDL)
        return cls(con=con)

    # -- filled by readers -------------------------------------------------------------

    def begin_input(self) -> SourceId:
        """The id of the input a reader is about to read: the rows it inserts carry it, and
        its :meth:`add_input` comes before any other input's. (A dispatch file's barrier
        packets are the input after it, added by :func:`readers.io.dispatch_csv.add_barrier_input`.)
        """
        return SourceId(len(self.inputs))

    def add_input(
        self,
        path: str,
        fmt: str,
        rows: int,
        role: Role,
        *,
        rank: int | None = None,
        on_timeline: bool = True,
    ) -> None:
        self.inputs.append(InputFile(path, fmt, rows, role, "", rank, on_timeline))
        self._derived.clear()  # its rows are in: what was built from the tables is stale

    def has_input(self, path: Path) -> bool:
        """Whether the file at ``path`` was read already (as any role, under any spelling)."""
        wanted = path.resolve()
        return any(Path(f.path).resolve() == wanted for f in self.inputs)

    def tag_group(self, start: int, group: str) -> None:
        """Mark the inputs added from index ``start`` on as files of one run."""
        for i in range(start, len(self.inputs)):
            f = self.inputs[i]
            self.inputs[i] = replace(f, group=group)

    def sources(self, *roles: Role) -> list[SourceId]:
        """Source ids (indices into ``inputs``) of the given roles."""
        return [SourceId(i) for i, f in enumerate(self.inputs) if f.role in roles]

    def warn(self, code: str, message: str, count: int = 1) -> None:
        self.warnings.append(Warning(code=code, message=message, count=count))

    def warn_deviceless(self, path: object, source: int, why: str) -> None:
        """Warn when dispatches of ``source`` name no GPU the model can read (``Agent_Id``
        "GPU", a Device without its index, past 2^31): the timeline keeps them apart as
        one device more, so a one-GPU trace would read as two."""
        ((rows, n),) = self.con.execute(
            f"SELECT count(*), count(*) - count(device) FROM dispatches WHERE source = {source}"
        ).fetchall()
        if n:
            self.warn(
                "unknown-device",
                f"{path}: {n:,} of {words.count(rows, 'dispatch row')} naming no GPU the model "
                f"can read ({why}); their device is unknown, and the timeline keeps them apart "
                "as one device more",
                count=n,
            )

    def name_ids(self, raw_names: Iterable[str]) -> dict[str, int]:
        """Ids for raw names, registering the ones not seen before."""
        wanted, new = _unknown(self._name_ids, raw_names)
        if new:
            self.con.execute(
                "INSERT INTO names SELECT $1 + generate_subscripts($2, 1) - 1, unnest($2), "
                "unnest($3)",
                [len(self._name_ids), new, [normalise(raw) for raw in new]],
            )
            _known(self._name_ids, new)
        return {n: self._name_ids[n] for n in wanted}

    def counter_ids(self, counters: Iterable[str]) -> dict[str, int]:
        """Ids for counter names, registering the ones not seen before."""
        wanted, new = _unknown(self._counter_ids, counters)
        if new:
            self.con.execute(
                "INSERT INTO counter_names SELECT $1 + generate_subscripts($2, 1) - 1, unnest($2)",
                [len(self._counter_ids), new],
            )
            _known(self._counter_ids, new)
        return {n: self._counter_ids[n] for n in wanted}

    def known_counter_ids(self, counters: Iterable[str]) -> list[int]:
        """The ids of those of ``counters`` that a reader registered, in that order (a counter
        no input named has none); asks DuckDB nothing."""
        return [self._counter_ids[c] for c in counters if c in self._counter_ids]

    def insert_counters(self, rows: str, counters: Sequence[str]) -> None:
        """Insert the rows of the query ``rows`` (``row_id``, ``counter`` by name, ``value``)
        into ``counters``, in their order; ``counters`` holds every name they use. Each name
        becomes its id through an ENUM of the names (a lookup, no join to reorder rows)."""
        ids = self.counter_ids(counters)
        if not ids:
            return
        enum = "counter_enum"
        self.con.execute(f"CREATE TYPE {enum} AS ENUM (SELECT unnest($1::VARCHAR[]))", [list(ids)])
        try:
            self.con.execute(
                f"""INSERT INTO counters SELECT row_id,
                list_extract($1::INTEGER[], enum_code(counter::{enum}) + 1), value FROM ({rows})""",
                [list(ids.values())],
            )
        finally:
            self.con.execute(f"DROP TYPE {enum}")

    def defer(self, fill: Callable[[], None]) -> None:
        """Run ``fill`` (which fills ``launches``) only when an analysis needs launch shapes."""
        self.deferred.append(fill)

    def set_run(self, run: RunInfo) -> None:
        """Merge what a reader learnt about the run; the first value seen wins."""
        self.run = RunInfo(
            producer=self.run.producer or run.producer,
            producer_version=self.run.producer_version or run.producer_version,
            gpu=self.run.gpu or run.gpu,
            arch=self.run.arch or run.arch,
            compute_units=self.run.compute_units or run.compute_units,
            xcds=self.run.xcds or run.xcds,
            partition=self.run.partition or run.partition,
            clock_mhz=self.run.clock_mhz or run.clock_mhz,
            memory_clock_mhz=self.run.memory_clock_mhz or run.memory_clock_mhz,
            bus_width_bits=self.run.bus_width_bits or run.bus_width_bits,
            memory_bytes=self.run.memory_bytes or run.memory_bytes,
            world_size=self.run.world_size or run.world_size,
            backend=self.run.backend or run.backend,
        )

    # -- read by analyses ---------------------------------------------------------------

    def launches(self) -> Relation:
        """The ``launches`` table, filled first by any reader that deferred it."""
        while self.deferred:
            self.deferred.pop(0)()
        return Relation(self.con, "SELECT * FROM launches")

    def view(self, table: Table, fields: str) -> Relation:
        """``fields`` of every row of ``table``."""
        return Relation(self.con, f"SELECT {fields} FROM {table}")

    def kept(self, key: tuple[object, ...], build: Callable[[], Relation]) -> Relation:
        """The relation built for ``key`` before, else ``build()``'s. A relation is a query,
        read when fetched, so it stays true while readers add rows; building one may ask the
        tables (a selection's kernel names), which analyses asking for it again are spared."""
        if key not in self._views:
            self._views[key] = build()
        return self._views[key]

    def derived(self, key: tuple[object, ...], build: Callable[[], T]) -> T:
        """The value built for ``key`` before, else ``build()``'s: what several analyses
        compute from the same tables (analysis/counters.py's per-dispatch counter table) is
        computed once. ``key`` starts with the name of what is built, which decides its type.
        A reader adding an input forgets them all, so none outlives the rows it was built on.
        """
        if key not in self._derived:
            self._derived[key] = build()
        return cast(T, self._derived[key])

    def compact(self) -> None:
        """Compress the rows written since the last time: an in-memory database holds a
        table uncompressed until a CHECKPOINT (DuckDB 2.0) compresses its row groups (a
        reader staging millions of rows a batch at a time calls it after each batch of
        :data:`ROW_GROUP` rows: a partial row group is compressed again by the next one;
        the 1 M-kernel Kineto trace's staged operators, 80 MB of columns, took 13 MiB).
        A temporary table is never compressed; nor is a table being compressed for
        free: 0.2 us a row of ten columns, so a reader that writes its rows once (the
        CSV path: 0.26 s of a 2 M-dispatch file's 1.3 s) does not call it."""
        self.con.execute("CHECKPOINT")

    def count(self, table: str) -> int:
        ((n,),) = self.con.execute(f"SELECT count(*) FROM {table}").fetchall()
        return int(n)


def _unknown(known: dict[str, int], names: Iterable[str]) -> tuple[list[str], list[str]]:
    """``names`` once each, in order, and those of them without an id in ``known``."""
    wanted = list(dict.fromkeys(names))
    return wanted, [n for n in wanted if n not in known]


def _known(known: dict[str, int], new: list[str]) -> None:
    """Give ``new`` the ids after those in ``known``, in order."""
    known.update(zip(new, range(len(known), len(known) + len(new)), strict=True))
