"""A Kineto trace's operators and launches staged in DuckDB as they are read, and nested there
once the trace ends (see :mod:`~roofscope.readers.torch.kineto_ops`): memory bounded by a
batch of rows, whatever the trace's length.

Operators and launches are staged a batch at a time (``kineto_k_o``, ``kineto_k_l``: each
with its thread's number and a sequence number in reading order; an operator's name and
inputs as ids of their distinct texts). The nesting is one sweep per thread over the rows
streamed back from DuckDB in time order, a window of about a batch of rows at a time (so
DuckDB sorts no more than a window), holding only the stack of open operators: on a
thread's operators ordered by (start, -end, reading order), an operator's parent is the last
earlier one whose end is at or after its start, and a launch's operator the last one open at
its start (the stack never pops an operator still open). The sweep also numbers the
operators around some launch (thread by thread in the order of each thread's first launch,
then in time order) as it goes, so each batch of its answers is written at once: the kept
operators with their columns and texts, the launches with their operator's number. A trace
of 4,096 rows or more is nested in numpy instead, to the same answers
(:mod:`~roofscope.readers.torch.kineto_stack`: 0.6 s of the 1 M-kernel trace's 2 M rows,
the sweep 2.9 s); a smaller one loads no numpy. A batch of a large trace's rows, staged or
written, is compressed at once (:meth:`~roofscope.model.profile.Profile.compact`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from roofscope.model.profile import ROW_GROUP, Profile
from roofscope.model.schema import Table
from roofscope.readers.io.batches import Kind, column, fits, insert_lists, registered
from roofscope.readers.torch.kineto_rows import SMALL_BATCH

# rows staged, streamed back and written at a time: a row group, compressed once written
# (Profile.compact: the 1 M-kernel trace's peak 540 -> 414 MiB); each write of the nested
# operators scans the staged rows of its row groups (25,000 at a time, each row group was
# scanned five times: 1.34 s of writes, 0.44 s at a row group)
BATCH = WRITE = ROW_GROUP
OPS, LAUNCHES = "kineto_k_o", "kineto_k_l"
TEXTS, THREADS = "kineto_k_t", "kineto_k_r"
KEPT, NUMBERED = "kineto_k_u", "kineto_k_n"  # a batch's kept operators, launches
TABLES = (OPS, LAUNCHES, TEXTS, THREADS, KEPT, NUMBERED)

OP_COLUMNS: dict[str, Kind] = {
    "thread": "int", "seq": "int", "start_ns": "int", "end_ns": "int", "name": "int",
    "dims": "int", "types": "int", "concrete": "int", "flops": "float", "bytes": "float",
}  # fmt: skip
LAUNCH_COLUMNS: dict[str, Kind] = {
    "thread": "int", "seq": "int", "start_ns": "int", "correlation": "int"
}  # fmt: skip
_SQL = {"int": "BIGINT", "float": "DOUBLE", "text": "VARCHAR"}


def create(profile: Profile) -> None:
    """The staging tables, empty."""
    for table, kinds in ((OPS, OP_COLUMNS), (LAUNCHES, LAUNCH_COLUMNS)):
        columns = ", ".join(f"{c} {_SQL[k]}" for c, k in kinds.items())
        profile.con.execute(f"CREATE TABLE {table} ({columns})")


def drop(profile: Profile) -> None:
    for table in TABLES:
        profile.con.execute(f"DROP TABLE IF EXISTS {table}")


def stage(profile: Profile, table: str, kinds: dict[str, Kind], rows: dict[str, list[Any]]) -> None:
    """Columns of rows into a table: through numpy, or as DuckDB lists for a small batch; an
    integer past 64 bits (a damaged time or id) is left unknown. Both ways refuse such an
    integer, so only a batch that holds one is checked value by value (checking every
    value took 1.2 s of the 1 M-kernel trace's 2 M operators and launches)."""
    try:
        _stage(profile, table, kinds, rows)
    except OverflowError:
        for name, values in rows.items():
            if kinds[name] == "int":
                rows[name] = [None if v is not None and not fits(v) else v for v in values]
        _stage(profile, table, kinds, rows)


def _stage(
    profile: Profile, table: str, kinds: dict[str, Kind], rows: dict[str, list[Any]]
) -> None:
    if len(rows["seq"]) < SMALL_BATCH:
        insert_lists(profile, table, {c: (kinds[c], v) for c, v in rows.items()})
        return
    arrays = {c: column(v, kinds[c]) for c, v in rows.items()}
    with registered(profile, "kineto_stage_batch", arrays) as con:
        names = ", ".join(arrays)
        con.execute(f"INSERT INTO {table} ({names}) SELECT * FROM kineto_stage_batch").fetchall()
    profile.compact()


# -- the sweep ----------------------------------------------------------------------------

# every thread's operators (kind 0) and launches (kind 1) in the sweep's order: the threads
# in the order of their first launch, then an operator before the launches at its start, an
# operator before those it holds, launches by (start, correlation), ties in reading order;
# a window of them at a time (threads rank_lo to rank_hi, starts start_lo to start_hi)
_ROWS = f"""
    SELECT t.rank, o.start_ns, o.end_ns, o.seq, 0 AS kind, NULL AS correlation
    FROM {OPS} o JOIN {THREADS} t ON t.thread = o.thread
    WHERE o.start_ns IS NOT NULL AND o.end_ns IS NOT NULL
    UNION ALL
    SELECT t.rank, l.start_ns, NULL, l.seq, 1, l.correlation
    FROM {LAUNCHES} l JOIN {THREADS} t ON t.thread = l.thread"""
_STREAM = f"""
SELECT rank, start_ns, end_ns, seq FROM ({_ROWS})
WHERE rank BETWEEN $1 AND $2 AND start_ns BETWEEN $3 AND $4
ORDER BY rank, start_ns, kind, end_ns DESC, correlation, seq
"""
_ARRAYS = f"""
SELECT rank, start_ns, coalesce(end_ns, 0) AS end_ns, seq, kind FROM ({_ROWS})
WHERE rank BETWEEN $1 AND $2 AND start_ns BETWEEN $3 AND $4
ORDER BY rank, start_ns, kind, end_ns DESC, correlation, seq
"""
_COUNTS = f"SELECT rank, count(*) FROM ({_ROWS}) GROUP BY rank ORDER BY rank"
LOW, HIGH = -(2**63), 2**63 - 1  # BIGINT's range
Window = tuple[int, int, int, int]  # rank_lo, rank_hi, start_lo, start_hi


def thread_rows(profile: Profile) -> list[tuple[int, int]]:
    """(rank, rows) of each staged thread, in rank order."""
    return [(int(r), int(n)) for r, n in profile.con.execute(_COUNTS).fetchall()]


def windows(profile: Profile, counts: list[tuple[int, int]]) -> list[Window]:
    """The rows to sweep in windows of about BATCH rows, so that DuckDB sorts one window
    at a time (sorting the 1 M-kernel trace's 2 M rows at once held 195 MiB): a thread's
    rows cut at quantiles of their starts (rows of one start stay in one window), threads
    with fewer rows grouped."""
    out: list[Window] = []
    group: list[int] = []  # the ranks of a window of whole threads, and their rows
    held = 0
    for rank, rows in counts:
        if group and held + rows > BATCH:
            out.append((group[0], group[-1], LOW, HIGH))
            group, held = [], 0
        if rows <= BATCH:
            group, held = [*group, rank], held + rows
            continue
        cuts = _cuts(profile, rank, -(-rows // BATCH))
        bounds = zip([LOW, *cuts], [*cuts, HIGH + 1], strict=True)
        out += [(rank, rank, lo, hi - 1) for lo, hi in bounds]
    if group:
        out.append((group[0], group[-1], LOW, HIGH))
    return out


def _cuts(profile: Profile, rank: int, parts: int) -> list[int]:
    """The starts cutting one thread's rows into ``parts`` of about as many rows."""
    fractions = ", ".join(str(i / parts) for i in range(1, parts))
    sql = f"SELECT quantile_disc(start_ns, [{fractions}]) FROM ({_ROWS}) WHERE rank = $1"
    ((cuts,),) = profile.con.execute(sql, [rank]).fetchall()
    return sorted({c for c in cuts if c > LOW})


# an open or pending operator: [end, seq, the operator around it, op_id, kept, closed]
_END, _SEQ, _UP, _ID, _KEPT, _CLOSED = range(6)


class Sweep:
    """The stack sweep, a batch of rows at a time (its thread and stack carried from one
    batch to the next). It also numbers the operators around some launch as it goes: the
    stack is always a chain of parents, so a launch keeps every operator on it; an operator
    is numbered (in the sweep's order) once every earlier one is known to be kept or closed,
    so only the operators since the first still open and not yet kept are held
    (``pending``). The kept operators (seq, op_id, parent op_id) gather in ``numbered``,
    the launches (seq, op_id) in ``launched``, -1 for none; the caller empties both."""

    def __init__(self) -> None:
        self.thread: object = object()
        self.stack: list[list[Any]] = []  # the open operators, outermost first
        self.pending: deque[list[Any]] = deque()  # operators not yet numbered, in order
        self.next_id = 0
        self.numbered: dict[str, list[int]] = {"seq": [], "op_id": [], "parent": []}
        self.launched: dict[str, list[int]] = {"seq": [], "op_id": []}

    def run(self, rows: Iterable[tuple[Any, ...]]) -> tuple[dict[str, list[int]], ...]:
        """Rows (thread, start, end, seq; end None for a launch) -> the operators' (seq,
        parent) and the launches' (seq, leaf): the seq of the innermost operator open at
        the row's start, -1 for none."""
        ops: dict[str, list[int]] = {"seq": [], "parent": []}
        launches: dict[str, list[int]] = {"seq": [], "leaf": []}
        op_seq, parent, launch_seq, leaf = ops["seq"], ops["parent"], *launches.values()
        ids, launched = self.launched["op_id"], self.launched["seq"]
        thread, stack, pending = self.thread, self.stack, self.pending
        for mine, start, end, seq in rows:
            if mine != thread:
                self.finish()
                thread, stack = mine, self.stack
            if stack and stack[-1][_END] < start:
                while stack and stack[-1][_END] < start:
                    stack.pop()[_CLOSED] = True
                if pending and pending[0][_CLOSED]:
                    self._number()
            top = stack[-1] if stack else None
            if end is None:
                launch_seq.append(seq)
                leaf.append(-1 if top is None else top[_SEQ])
                launched.append(seq)
                if top is None:
                    ids.append(-1)
                    continue
                if not top[_KEPT]:  # kept, with its parents up to one kept (inline: a call
                    entry = top  # a launch cost); then all are kept or closed
                    while entry is not None and not entry[_KEPT]:
                        entry[_KEPT], entry = True, entry[_UP]
                    self._number()
                elif pending:
                    self._number()
                ids.append(top[_ID])
            else:
                op_seq.append(seq)
                parent.append(-1 if top is None else top[_SEQ])
                entry = [end, seq, top, -1, False, False]
                stack.append(entry)
                pending.append(entry)
        self.thread = thread
        return ops, launches

    def _number(self) -> None:
        """The pending operators numbered, in order, up to the first open and not kept."""
        pending, numbered = self.pending, self.numbered
        while pending and (pending[0][_KEPT] or pending[0][_CLOSED]):
            entry = pending.popleft()
            if entry[_KEPT]:
                entry[_ID], self.next_id = self.next_id, self.next_id + 1
                up = entry[_UP]
                numbered["seq"].append(entry[_SEQ])
                numbered["op_id"].append(entry[_ID])
                numbered["parent"].append(-1 if up is None else up[_ID])

    def finish(self) -> None:
        """A thread's end: its open operators closed, the pending ones numbered."""
        for entry in self.stack:
            entry[_CLOSED] = True
        self._number()
        self.stack = []


def nest(profile: Profile, source: int, threads: Sequence[int], texts: Sequence[str]) -> None:
    """The operators around a launch into ``operators`` (in op_id order), every staged
    launch into ``op_launches`` (in the sweep's order), a batch at a time; ``threads``: the
    threads in the order of their first launch, ``texts`` the operators' names and inputs by
    id. The rows are streamed to the sweep a window at a time on a cursor of their own (the
    profile's connection writes the sweep's answers meanwhile); the staged operators are
    dropped once nested."""
    _table(profile, THREADS, {"thread": threads, "rank": list(range(len(threads)))})
    _table(profile, TEXTS, {"id": list(range(len(texts))), "text": list(texts)})
    counts = thread_rows(profile)
    cut = windows(profile, counts)
    if sum(rows for _, rows in counts) >= SMALL_BATCH:
        _in_numpy(profile, source, cut)
    else:
        _in_python(profile, source, cut)
    for table in (OPS, TEXTS, THREADS):  # read: their memory to the analyses (the
        profile.con.execute(f"DROP TABLE {table}")  # launches are read on, then dropped)


def _in_python(profile: Profile, source: int, cut: list[Window]) -> None:
    """The sweep in Python: a small trace loads no numpy (37 ms)."""
    sweep, written = Sweep(), [0]
    with profile.con.cursor() as cursor:
        for window in cut:
            result = cursor.execute(_STREAM, list(window))
            while batch := result.fetchmany(BATCH):
                sweep.run(batch)
                _write(profile, source, sweep, written)
    sweep.finish()
    _write(profile, source, sweep, written)


def _in_numpy(profile: Profile, source: int, cut: list[Window]) -> None:
    """The same answers in numpy (:mod:`~roofscope.readers.torch.kineto_stack`), a window of
    rows at a time, written a batch at a time."""
    from roofscope.readers.torch.kineto_stack import Nesting

    nesting = Nesting()
    with profile.con.cursor() as cursor:
        for window in cut:
            nesting.add(cursor.execute(_ARRAYS, list(window)).fetchnumpy())
    kept, launched = nesting.numbered()
    del nesting
    for table, answers, insert in ((KEPT, kept, _OPERATORS), (NUMBERED, launched, _LAUNCHES)):
        for lo in range(0, len(answers["seq"]), WRITE):
            part = {c: v[lo : lo + WRITE] for c, v in answers.items()}
            seqs = part["seq"]
            with registered(profile, table, part) as con:
                con.execute(insert, [source, int(seqs.min()), int(seqs.max())]).fetchall()
            profile.compact()


def _write(profile: Profile, source: int, sweep: Sweep, written: list[int]) -> None:
    """The sweep's numbered operators and launches so far written with their columns (the
    launches in the sweep's order: ``pos``, from ``written``, the launches written so far)."""
    kept, launched = sweep.numbered, sweep.launched
    n = len(launched["seq"])
    launched["pos"] = list(range(written[0], written[0] + n))
    written[0] += n
    for table, answers, insert in ((KEPT, kept, _OPERATORS), (NUMBERED, launched, _LAUNCHES)):
        if answers["seq"]:
            _create(profile, table, list(answers))
            stage(profile, table, dict.fromkeys(answers, "int"), answers)
            seqs = answers["seq"]  # in reading order, as the staged rows: a scan skips
            profile.con.execute(insert, [source, min(seqs), max(seqs)])  # the rest
            profile.con.execute(f"DROP TABLE {table}")
        for values in answers.values():
            values.clear()
    del launched["pos"]


def _table(profile: Profile, table: str, columns: dict[str, Sequence[Any]]) -> None:
    kinds: dict[str, Kind] = {c: "text" if c == "text" else "int" for c in columns}
    ddl = ", ".join(f"{c} {_SQL[k]}" for c, k in kinds.items())
    profile.con.execute(f"CREATE TABLE {table} ({ddl})")
    if columns["id" if "id" in columns else "thread"]:
        insert_lists(profile, table, {c: (kinds[c], list(v)) for c, v in columns.items()})


def _create(profile: Profile, table: str, columns: list[str]) -> None:
    profile.con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} BIGINT' for c in columns)})")


_OPERATORS = f"""INSERT INTO {Table.OPERATORS}
    SELECT $1, k.op_id, nullif(k.parent, -1), tn.text, o.start_ns, o.end_ns, td.text, tt.text,
        tc.text, o.flops, o.bytes
    FROM {KEPT} k JOIN {OPS} o ON o.seq = k.seq AND o.seq BETWEEN $2 AND $3
    LEFT JOIN {TEXTS} tn ON tn.id = o.name LEFT JOIN {TEXTS} td ON td.id = o.dims
    LEFT JOIN {TEXTS} tt ON tt.id = o.types LEFT JOIN {TEXTS} tc ON tc.id = o.concrete
    ORDER BY k.op_id"""
_LAUNCHES = f"""INSERT INTO {Table.OP_LAUNCHES}
    SELECT $1, l.correlation, l.start_ns, nullif(n.op_id, -1)
    FROM {NUMBERED} n JOIN {LAUNCHES} l ON l.seq = n.seq AND l.seq BETWEEN $2 AND $3
    ORDER BY n.pos"""


def thread_launches(profile: Profile, thread: int) -> list[tuple[int, int]]:
    """One thread's launches (start, correlation) in time order, for its user ranges; a
    launch whose start is past 64 bits (staged without it) is in none."""
    sql = f"""SELECT start_ns, correlation FROM {LAUNCHES}
        WHERE thread = $1 AND start_ns IS NOT NULL ORDER BY start_ns, correlation, seq"""
    return [(s, c) for s, c in profile.con.execute(sql, [thread]).fetchall()]
