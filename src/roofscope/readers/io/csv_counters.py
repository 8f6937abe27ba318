"""The counter columns of a dispatch CSV (rocprof-compute's pmc_perf.csv has 2,000 and more):
staged as one list per row, a pass of ``STAGE_BATCH`` columns at a time, then inserted as
``counters`` rows; the fields that are no numbers are counted per column and warned about."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from roofscope.model import words
from roofscope.model.profile import Profile
from roofscope.readers.io.csv_layout import CsvLayout
from roofscope.readers.io.duck_sql import ident


def warn_per_field(
    profile: Profile, code: str, path: Path, rows: Mapping[str, int], what: str, then: str
) -> None:
    """One warning for fields whose text was no number: per file column, its rows."""
    bad = {column: int(n) for column, n in rows.items() if n}
    if bad:
        fields = ", ".join(f"{column} in {words.count(n, 'row')}" for column, n in bad.items())
        profile.warn(code, f"{path}: {what} ({fields}); {then}", count=sum(bad.values()))


Part = tuple[str, Sequence[str]]  # a table and the counters in its list, _counters
# Counter columns per pass over a wide CSV. Each pass costs DuckDB some 20 µs a column of the
# file whatever its rows; with WIDE_FLUSH, passes of 1,024 keep the peak RSS of passes of 512
# (MI300X GEMM workload, 2,024 columns: 135 MiB either way, 0.78 -> 0.68 s; vcopy MI200, 1,022
# columns: 110 -> 112 MiB, 0.47 -> 0.44 s)
STAGE_BATCH = 1024
WIDE = 512  # counter columns from which a CSV is wide: its buffers are handed back at once
# Freed memory DuckDB hands back to the system at once (its allocator keeps what a statement
# freed, up to 512 MiB by default): each pass over a wide CSV frees its buffers (tens of MiB
# whatever the rows), which would otherwise stay in the process. On the 301-dispatch MI300X
# workload of 2,024 counter columns, peak RSS of analyze 171-177 MiB -> 136-140 MiB; not set
# for narrow files, where the returns cost a long trace some 7 % more CPU.
WIDE_FLUSH = "SET allocator_bulk_deallocation_flush_threshold = '1MiB'"


def stage_counters(
    profile: Profile, stage: str, layout: CsvLayout, key: str, from_sql: str, again: str | None
) -> list[Part]:
    """Create ``stage``: the rows of ``from_sql`` with their counter fields as one list,
    ``_counters``; return where each counter's fields are. A table of thousands of columns
    (rocprof-compute's 2,000 and more) costs a vector of each per row group, some 30 KiB a
    column even for a few rows, where a list holds just its values.

    Scanning a CSV of 2,000 columns at once costs DuckDB about 110 MiB of buffers whatever its
    rows (a 301-row file: 107 MiB for all its columns, 30 MiB for 200). So when ``again`` (the
    same CSV, read without keeping its rejects) is given, the first pass keeps the first
    ``STAGE_BATCH`` counters and every later pass the next ones, each in a table of its own
    whose rows are the stage's in the same order: every pass reads the same columns besides
    its counters, so the same lines are rejected. Where the row counts still differ, the
    stage is made in one pass."""
    con = profile.con
    counters = list(layout.counters)
    wide = again is not None and len(counters) > STAGE_BATCH
    batches = [counters[i : i + STAGE_BATCH] for i in range(0, len(counters), STAGE_BATCH)]
    first = batches[0] if wide else counters
    if len(counters) > WIDE:
        con.execute(WIDE_FLUSH)
    con.execute(f"CREATE TEMP TABLE {stage} AS {staged_sql(layout, key, first, from_sql)}")
    parts: list[Part] = [(stage, first)]
    if not wide or again is None:
        return parts
    ((rows,),) = con.execute(f"SELECT count(*) FROM {stage}").fetchall()
    for batch in batches[1:]:
        table = f"{stage}_{len(parts)}"
        parts.append((table, batch))
        con.execute(f"CREATE TEMP TABLE {table} AS {staged_sql(layout, 'NULL', batch, again)}")
        ((n,),) = con.execute(f"SELECT count(*) FROM {table}").fetchall()
        if n != rows:  # lines the passes read differently: one pass after all
            for t, _ in parts:
                con.execute(f"DROP TABLE {t}")
            con.execute(
                f"CREATE TEMP TABLE {stage} AS {staged_sql(layout, key, counters, from_sql)}"
            )
            return [(stage, counters)]
    return parts


def staged_sql(layout: CsvLayout, key: str, counters: Sequence[str], from_sql: str) -> str:
    """The rows of ``from_sql``: the key, every column that is not a counter, and these
    ``counters`` as one list, ``_counters``."""
    every = set(layout.counters)
    kept = "".join(f", {ident(c)}" for c, _ in layout.columns if c not in every)
    fields = ", ".join(ident(c) for c in counters)
    return f"SELECT {key} AS _k{kept}, [{fields}] AS _counters {from_sql}"


def _warn_unread(profile: Profile, parts: list[Part], kept: int, path: Path) -> None:
    """The ``unread-counter`` warning: per counter column, the rows whose text is no number
    (``1,234`` re-saved by a spreadsheet, ``n/a``): those counters are absent there. The
    non-empty fields are compared with the ``kept`` counters first (no cast), per column only
    on a miss."""
    con = profile.con
    count = "SELECT coalesce(sum(list_count(_counters)), 0) FROM "
    given = sum(int(con.execute(count + t).fetchall()[0][0]) for t, _ in parts)
    if given == kept:
        return
    bad: dict[str, int] = {}
    for table, names in parts:
        fields = (
            f"(SELECT generate_subscripts(_counters, 1) AS i, unnest(_counters) AS t FROM {table})"
        )
        found = dict(
            con.execute(
                f"SELECT i, count(t) - count(TRY_CAST(t AS DOUBLE)) FROM {fields} GROUP BY i"
            ).fetchall()
        )
        bad |= {c: int(found.get(i, 0)) for i, c in enumerate(names, start=1)}
    warn_per_field(
        profile,
        "unread-counter",
        path,
        bad,
        "counter fields that are not numbers",
        "those counters are absent for those dispatches, so the metrics over them are unknown "
        "there",
    )


def insert_counters(profile: Profile, parts: list[Part], first: int, where: Path) -> None:
    """The staged counters as ``counters`` rows, the stage's rows being the dispatches from
    row ``first`` on, in order; warn about the fields that are no numbers."""
    kept = 0
    for table, names in parts:  # each part's rows are the stage's, in its order
        ids = profile.counter_ids(names)
        ((n,),) = profile.con.execute(
            f"""INSERT INTO counters SELECT row_id, counter_id, value FROM
            (SELECT {first} + rowid AS row_id, unnest($1::INTEGER[]) AS counter_id,
                TRY_CAST(unnest(_counters) AS DOUBLE) AS value FROM {table})
            WHERE value IS NOT NULL""",
            [[ids[c] for c in names]],
        ).fetchall()
        kept += n
    if parts:
        _warn_unread(profile, parts, kept, where)
