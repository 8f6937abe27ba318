"""A Kineto trace's operators and launches staged in DuckDB as they are read, and nested there
once the trace ends (see :mod:`~roofscope.readers.torch.kineto_ops`): memory bounded by a
batch of rows, whatever the trace's length.

Operators and launches are staged a batch at a time (``kineto_k_o``, ``kineto_k_l``: each
with its thread's number and a sequence number in reading order; an operator's name and
inputs as ids of their distinct texts). The nesting is one sweep per thread over the rows
streamed back from DuckDB in time order, holding only the stack of open operators: on a
thread's operators ordered by (start, -end, reading order), an operator's parent is the last
earlier one whose end is at or after its start, and a launch's operator the last one open at
its start (the stack never pops an operator still open). The sweep's answers go back to
DuckDB; there, the operators around some launch are found (a recursive walk up the parents
from the launches' operators), numbered thread by thread (in the order of each thread's
first launch), then in time order, and written with their texts (in no row order).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from roofscope.model.profile import Profile
from roofscope.model.schema import Table
from roofscope.readers.io.batches import Kind, column, fits, insert_lists, registered
from roofscope.readers.torch.kineto_rows import SMALL_BATCH

BATCH = 100_000  # rows staged, and streamed back, at a time
OPS, LAUNCHES = "kineto_k_o", "kineto_k_l"
PARENTS, LEAVES, TEXTS, THREADS = "kineto_k_p", "kineto_k_f", "kineto_k_t", "kineto_k_r"
KEPT, NUMBERED = "kineto_k_u", "kineto_k_n"
TABLES = (OPS, LAUNCHES, PARENTS, LEAVES, TEXTS, THREADS, KEPT, NUMBERED)

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


# -- the sweep ----------------------------------------------------------------------------

# one thread's operators (kind 0) and launches (kind 1) in the sweep's order: an operator
# before the launches at its start, an operator before those it holds, launches by
# (start, correlation), ties in reading order
_STREAM = f"""
SELECT thread, start_ns, end_ns, seq FROM (
    SELECT o.thread, o.start_ns, o.end_ns, o.seq, 0 AS kind, NULL AS correlation
    FROM {OPS} o SEMI JOIN {THREADS} t ON t.thread = o.thread
    WHERE o.start_ns IS NOT NULL AND o.end_ns IS NOT NULL
    UNION ALL
    SELECT thread, start_ns, NULL, seq, 1, correlation FROM {LAUNCHES})
ORDER BY thread, start_ns, kind, end_ns DESC, correlation, seq
"""


class Sweep:
    """The stack sweep, a batch of rows at a time (its thread and stack carried from one
    batch to the next): a generator yielding a row at a time, and a dict lookup a row to
    gather its answers, cost 2.4 s of the 1 M-kernel trace's 2 M rows under pyinstrument."""

    def __init__(self) -> None:
        self.thread: object = object()
        self.stack: list[tuple[int, int]] = []  # (end, seq) of the open operators

    def run(self, rows: Iterable[tuple[Any, ...]]) -> tuple[dict[str, list[int]], ...]:
        """Rows (thread, start, end, seq; end None for a launch) -> the operators' (seq,
        parent) and the launches' (seq, leaf): the seq of the innermost operator open at
        the row's start, -1 for none."""
        ops: dict[str, list[int]] = {"seq": [], "parent": []}
        launches: dict[str, list[int]] = {"seq": [], "leaf": []}
        op_seq, parent, launch_seq, leaf = ops["seq"], ops["parent"], *launches.values()
        thread, stack = self.thread, self.stack
        for mine, start, end, seq in rows:
            if mine != thread:
                thread, stack = mine, []
            while stack and stack[-1][0] < start:
                stack.pop()
            top = stack[-1][1] if stack else -1
            if end is None:
                launch_seq.append(seq)
                leaf.append(top)
            else:
                op_seq.append(seq)
                parent.append(top)
                stack.append((end, seq))
        self.thread, self.stack = thread, stack
        return ops, launches


def nest(profile: Profile, source: int, threads: Sequence[int], texts: Sequence[str]) -> None:
    """The operators around a launch into ``operators``, every staged launch into
    ``op_launches``; ``threads``: the threads in the order of their first launch, ``texts``
    the operators' names and inputs by id. The rows are streamed to the sweep on a cursor
    of their own (the profile's connection stages the sweep's answers meanwhile)."""
    con = profile.con
    _table(profile, THREADS, {"thread": threads, "rank": list(range(len(threads)))})
    con.execute(f"CREATE TABLE {PARENTS} (seq BIGINT, parent BIGINT)")
    con.execute(f"CREATE TABLE {LEAVES} (seq BIGINT, leaf BIGINT)")
    sweep = Sweep()
    with con.cursor() as cursor:
        result = cursor.execute(_STREAM)
        while batch := result.fetchmany(BATCH):
            for table, answers in zip((PARENTS, LEAVES), sweep.run(batch), strict=True):
                if answers["seq"]:
                    stage(profile, table, dict.fromkeys(answers, "int"), answers)
    _table(profile, TEXTS, {"id": list(range(len(texts))), "text": list(texts)})
    for statement in _NEST:
        con.execute(statement, [source] if "$1" in statement else [])


def _table(profile: Profile, table: str, columns: dict[str, Sequence[Any]]) -> None:
    kinds: dict[str, Kind] = {c: "text" if c == "text" else "int" for c in columns}
    ddl = ", ".join(f"{c} {_SQL[k]}" for c, k in kinds.items())
    profile.con.execute(f"CREATE TABLE {table} ({ddl})")
    if columns["id" if "id" in columns else "thread"]:
        insert_lists(profile, table, {c: (kinds[c], list(v)) for c, v in columns.items()})


# the operators are written in no order: every query joins them by op_id (sorting 1 M rows
# with their texts took 150 MiB, the nesting's peak, on the 1 M-kernel trace)
_NEST = (
    f"""CREATE TABLE {KEPT} AS
    WITH RECURSIVE up(seq) AS (
        SELECT leaf FROM {LEAVES} WHERE leaf >= 0
        UNION
        SELECT p.parent FROM up JOIN {PARENTS} p ON p.seq = up.seq WHERE p.parent >= 0)
    SELECT seq FROM up""",
    f"""CREATE TABLE {NUMBERED} AS
    SELECT o.seq, row_number() OVER (ORDER BY t.rank, o.start_ns, o.end_ns DESC, o.seq) - 1
        AS op_id
    FROM {OPS} o SEMI JOIN {KEPT} k ON k.seq = o.seq JOIN {THREADS} t ON t.thread = o.thread""",
    f"""INSERT INTO {Table.OPERATORS}
    SELECT $1, n.op_id, pn.op_id, tn.text, o.start_ns, o.end_ns, td.text, tt.text, tc.text,
        o.flops, o.bytes
    FROM {NUMBERED} n JOIN {OPS} o ON o.seq = n.seq JOIN {PARENTS} p ON p.seq = n.seq
    LEFT JOIN {NUMBERED} pn ON pn.seq = p.parent
    LEFT JOIN {TEXTS} tn ON tn.id = o.name LEFT JOIN {TEXTS} td ON td.id = o.dims
    LEFT JOIN {TEXTS} tt ON tt.id = o.types LEFT JOIN {TEXTS} tc ON tc.id = o.concrete""",
    f"""INSERT INTO {Table.OP_LAUNCHES}
    SELECT $1, l.correlation, l.start_ns, n.op_id
    FROM {LAUNCHES} l JOIN {LEAVES} f ON f.seq = l.seq JOIN {THREADS} t ON t.thread = l.thread
    LEFT JOIN {NUMBERED} n ON n.seq = f.leaf
    ORDER BY t.rank, l.start_ns, l.correlation, l.seq""",
)


def thread_launches(profile: Profile, thread: int) -> list[tuple[int, int]]:
    """One thread's launches (start, correlation) in time order, for its user ranges."""
    sql = f"""SELECT start_ns, correlation FROM {LAUNCHES} WHERE thread = $1
        ORDER BY start_ns, correlation, seq"""
    return [(s, c) for s, c in profile.con.execute(sql, [thread]).fetchall()]
