"""Load a dispatch CSV into the model with DuckDB, fast and without holding its names per row.

Kernel names are long (hundreds of bytes) and repeat millions of times, so the file is read
once, straight into the ``dispatches`` table, with each name turned into its id through a
DuckDB ENUM built from the names in the first rows; names first seen later travel as text
in the ``raw_overflow`` column, which only rare rows fill, until they get their id (where
the sample holds every name of a large file, as its end says, the scan reads the name column
as that ENUM itself: :mod:`~roofscope.readers.io.csv_names`). Rows DuckDB rejects
(unquoted commas, embedded quotes, a cut last line, bytes that are not UTF-8) come back with
their byte offset and are parsed again in Python, from the right, by
:mod:`roofscope.readers.io.rowfix`.

How each dispatch was launched (thread, queue, stream, grid, workgroup, registers, ...) goes
to the ``launches`` table, one row per distinct combination of a kernel. Parsing those fields
costs as much as the rest of a row, so for a plain trace they are read by a second scan that
runs only when an analysis asks for them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import msgspec

from roofscope.errors import InputError
from roofscope.model.duck import duckdb
from roofscope.model.profile import Profile
from roofscope.model.schema import DISPATCH_COLUMNS, LAUNCH_COLUMNS
from roofscope.readers.io.barriers import barrier_sql
from roofscope.readers.io.csv_counters import (
    WIDE,
    Part,
    insert_counters,
    stage_counters,
    warn_per_field,
)
from roofscope.readers.io.csv_layout import CsvLayout
from roofscope.readers.io.csv_names import (
    BAD_ROW,
    TypedRows,
    name_id_sql,
    typed_first,
    typed_rows,
)
from roofscope.readers.io.duck_sql import ident, read_csv

SAMPLE_ROWS = 20_000
_ids = itertools.count()


class Rejected(msgspec.Struct, frozen=True):
    line: int
    byte_offset: int | None
    error: str


class LoadResult(msgspec.Struct, frozen=True):
    rows: int
    rejected: list[Rejected]


def _reader_sql(path: Path, layout: CsvLayout, *, rejects: str | None, strict: bool = False) -> str:
    return read_csv(path, layout.columns, header=layout.header, rejects=rejects, strict=strict)


def load_dispatch_csv(profile: Profile, path: Path, layout: CsvLayout, source: int) -> LoadResult:
    """Read ``path`` into ``profile.dispatches`` (and ``counters``); return what was rejected."""
    con = profile.con
    tag = f"csv{next(_ids)}"
    scan = f"FROM {_reader_sql(path, layout, rejects=None)}"
    append = partial(_append, profile, layout=layout, source=source, where=path, lazy_shapes=scan)
    if len(layout.counters) > WIDE:
        # a counter collection: few rows, but every scan of its columns costs DuckDB some
        # 20 µs a column whatever the rows (20 ms at 1,022 columns); its names are not
        # sampled first but travel as text, to get their ids after the one scan
        return LoadResult(
            *_scan(profile, partial(append, key="NULL", code_ids=[]), path, layout, tag)
        )
    name = ident(layout.name)
    sample = con.execute(
        f"SELECT DISTINCT n FROM (SELECT {name} AS n {scan} LIMIT {SAMPLE_ROWS}) "
        "WHERE n IS NOT NULL"
    ).fetchall()
    sampled = [str(r[0]) for r in sample] or [""]
    ids = profile.name_ids(sampled)
    enum = f"{tag}_names"
    con.execute(f"CREATE TYPE {enum} AS ENUM (SELECT unnest($1::VARCHAR[]))", [sampled])
    code_ids = [ids[n] for n in sampled]
    coded = partial(append, key=f"TRY_CAST({name} AS {enum})", code_ids=code_ids)
    try:
        if typed_first(path, layout, sampled):
            typed = typed_rows(path, layout, enum, sampled, source, code_ids)
            rows = _append_typed(profile, typed, layout, source, path, scan)
            if rows is not None:
                return LoadResult(rows, [])
        return LoadResult(*_scan(profile, coded, path, layout, tag))
    finally:
        con.execute(f"DROP TYPE IF EXISTS {enum}")


def _append_typed(
    profile: Profile, typed: TypedRows, layout: CsvLayout, source: int, path: Path, scan: str
) -> int | None:
    """Append the typed scan's rows to ``dispatches``, their launch shapes staged in the
    same scan where the check-up will ask for them, else left to a deferred second scan
    (``scan``): the count; None, with nothing inserted, where a row stopped the scan."""
    first = profile.count("dispatches")
    rows, exprs, params = typed
    try:
        if _stages_shapes(profile, layout):
            return _append_with_shapes(profile, rows, exprs, params, layout, source, path)
        profile.con.execute(
            f"INSERT INTO dispatches ({', '.join(exprs)}) "
            f"SELECT {', '.join(exprs.values())} FROM ({rows})",
            params,
        )
    except BAD_ROW:
        if profile.count("dispatches") != first:  # it failed past the scan: no bad row
            raise
        return None
    profile.defer(partial(_insert_shapes, profile, scan, layout, source, path))
    return profile.count("dispatches") - first


def _scan(
    profile: Profile,
    append: Callable[[str], int],
    path: Path,
    layout: CsvLayout,
    tag: str,
) -> tuple[int, list[Rejected]]:
    """A clean file (most are) in one strict scan, some 10 % cheaper than one that keeps the
    rows DuckDB rejects; its first bad row stops that scan whole (an INSERT inserts all or
    nothing), and the file is scanned again keeping them, for rowfix."""
    before = profile.count("dispatches")
    try:
        return append(f"FROM {_reader_sql(path, layout, rejects=None, strict=True)}"), []
    except BAD_ROW:
        if profile.count("dispatches") != before:  # it failed past the scan: no bad row
            raise
        rows = append(f"FROM {_reader_sql(path, layout, rejects=tag)}")
        return rows, _rejected(profile.con, tag)


def register_names(profile: Profile, path: Path, table: str) -> None:
    """Give every raw name in ``table``'s ``raw`` column an id; an error when it has none."""
    names = [str(r[0]) for r in profile.con.execute(f"SELECT DISTINCT raw FROM {table}").fetchall()]
    if not names:
        raise InputError(
            str(path),
            "has no dispatch rows (header only, or every row malformed)",
            "check that the profiled program launched kernels and the profiler finished",
        )
    profile.name_ids(sorted(names))


def insert_rows(
    profile: Profile, rows: Sequence[Sequence[object]], layout: CsvLayout, source: int, path: Path
) -> int:
    """Insert rows of ``path`` already split into the layout's columns (the rows Python had
    to fix)."""
    if not rows:
        return 0
    con = profile.con
    table = f"fix{next(_ids)}"
    con.execute(
        f"CREATE TEMP TABLE {table} ({', '.join(f'{ident(c)} {t}' for c, t in layout.columns)})"
    )
    marks = ", ".join("?" for _ in layout.columns)
    con.executemany(f"INSERT INTO {table} VALUES ({marks})", [list(r) for r in rows])
    try:
        count = _append(
            profile, f"FROM {table}", layout, source, key="NULL", code_ids=[], where=path
        )
    finally:
        con.execute(f"DROP TABLE {table}")
    return count


def _append(
    profile: Profile,
    from_sql: str,
    layout: CsvLayout,
    source: int,
    *,
    key: str,
    code_ids: list[int],
    where: Path,
    lazy_shapes: str | None = None,
) -> int:
    """Append the rows of ``from_sql`` to ``dispatches`` (with counters and shapes); the count.

    Names known from the sample get their id straight from the ENUM code; others travel in
    ``raw_overflow`` until they are registered, then get their id in one UPDATE. When
    ``lazy_shapes`` is given and no staging table is needed, launch shapes are read from it
    later, on demand, instead of from ``from_sql`` now; or, where the check-up will ask for
    them (``profile.shapes_wanted``), from the same scan as the rows.
    """
    con = profile.con
    first = profile.count("dispatches")
    name = ident(layout.name)
    model_cols = [c for c in DISPATCH_COLUMNS if c in layout.mapping]
    code, params = name_id_sql(code_ids)
    cols = ["source", "name_id", "raw_overflow", *model_cols]
    exprs = [
        _source_sql(layout, source),
        code,
        f"CASE WHEN _k IS NULL THEN {name} END",
        *[layout.mapping[c] for c in model_cols],
    ]
    inner = f"SELECT {key} AS _k, * {from_sql}"
    if lazy_shapes is not None and _stages_shapes(profile, layout):
        given = dict(zip(cols, exprs, strict=True))
        return _append_with_shapes(profile, inner, given, params, layout, source, where)
    stage = None
    parts: list[Part] = []
    if layout.counters:
        stage = f"stage{next(_ids)}"
        parts = stage_counters(profile, stage, layout, key, from_sql, lazy_shapes)
        inner = f"SELECT * FROM {stage}"
    con.execute(
        f"INSERT INTO dispatches ({', '.join(cols)}) SELECT {', '.join(exprs)} FROM ({inner})",
        params,
    )
    insert_counters(profile, parts, first, where)
    rows = profile.count("dispatches") - first
    _resolve_overflow(profile, f"{source}, {source + 1}" if layout.barriers else str(source))
    if stage is None and lazy_shapes is not None:
        profile.defer(partial(_insert_shapes, profile, lazy_shapes, layout, source, where))
    else:
        _insert_shapes(profile, f"FROM {stage}" if stage else from_sql, layout, source, where)
    for table, _ in parts:  # the stage is the first
        con.execute(f"DROP TABLE {table}")
    return rows


def _source_sql(layout: CsvLayout, source: int) -> str:
    """The ``source`` of a row: barrier packets go to the source after the file's own."""
    if not layout.barriers:
        return str(source)
    return f"CASE WHEN {barrier_sql(ident(layout.name))} THEN {source + 1} ELSE {source} END"


def barrier_rows(profile: Profile, layout: CsvLayout, source: int) -> int:
    """How many barrier packets a file read as ``source`` held (kept as ``source + 1``)."""
    return profile.count(f"dispatches WHERE source = {source + 1}") if layout.barriers else 0


def _stages_shapes(profile: Profile, layout: CsvLayout) -> bool:
    """Whether the launch shapes are read in the rows' scan: the check-up will ask for them,
    the file has some, and no counter stage reads them already."""
    return profile.shapes_wanted and not layout.counters and bool(_shape_fields(layout)[0])


def _append_with_shapes(
    profile: Profile,
    inner: str,
    exprs: dict[str, str],
    params: list[object],
    layout: CsvLayout,
    source: int,
    where: Path,
) -> int:
    """Append the rows of ``inner`` (``exprs``: each dispatch column's SQL) to ``dispatches``
    and their launch shapes to ``launches`` from one scan: the rows staged with their shape
    fields, which are grouped by the name's ENUM code ``_k``, not the name. A shape field
    left unknown (no number, or empty) needs its text to tell which: those shapes are read
    by the second scan after all (:func:`_insert_shapes`), as without a stage."""
    con, first, stage = profile.con, profile.count("dispatches"), f"stage{next(_ids)}"
    shape, loose = _shape_fields(layout)
    values = "".join(f", {layout.mapping[c]} AS {c}" for c in shape)
    given = ", ".join(f"{sql} AS {column}" for column, sql in exprs.items())
    con.execute(f"CREATE TEMP TABLE {stage} AS SELECT _k, {given}{values} FROM ({inner})", params)
    try:
        cols = ", ".join(exprs)
        con.execute(f"INSERT INTO dispatches ({cols}) SELECT {cols} FROM {stage}")
        _resolve_overflow(profile, f"{source}, {source + 1}" if layout.barriers else str(source))
        if _all_known(profile, stage, list(loose)):
            _fill_shapes(profile, _grouped(stage, shape, list(loose)), layout, source, where)
        else:
            scan = f"FROM {_reader_sql(where, layout, rejects=None)}"
            _insert_shapes(profile, scan, layout, source, where)
    finally:  # none where the scan stopped
        con.execute(f"DROP TABLE IF EXISTS {stage}")
    return profile.count("dispatches") - first


def _all_known(profile: Profile, stage: str, loose: list[str]) -> bool:
    """Whether no staged row left a loose shape field unknown (then none held text that is
    no number: a cast that gave a value had one)."""
    if not loose:
        return True
    unknown = " OR ".join(f"{c} IS NULL" for c in loose)
    return not profile.con.execute(f"SELECT 1 FROM {stage} WHERE {unknown} LIMIT 1").fetchall()


def _grouped(stage: str, shape: list[str], loose: list[str]) -> str:
    """The staged shapes per raw name (from the ENUM code, or the name that came after the
    sample), as :func:`_fill_shapes` takes them; no field unread."""
    bad = "".join(f", 0 AS _bad_{c}" for c in loose)
    return f"""SELECT coalesce(_k::VARCHAR, raw_overflow) AS _raw, * EXCLUDE (_k, raw_overflow)
        FROM (SELECT _k, raw_overflow, {", ".join(shape)}, count(*) AS dispatches{bad}
            FROM {stage} GROUP BY ALL)"""


def _shape_fields(layout: CsvLayout) -> tuple[list[str], dict[str, str]]:
    """The launch columns ``layout`` has, and of those the loose ones (file column by launch
    column): text that may not be a number."""
    shape = [c for c in LAUNCH_COLUMNS if c in layout.mapping]
    return shape, {c: layout.loose[c] for c in shape if c in layout.loose}


def _insert_shapes(
    profile: Profile, from_sql: str, layout: CsvLayout, source: int, where: Path
) -> None:
    """Count the distinct launch shapes of each kernel in ``from_sql`` into ``launches``
    (text counted where the cast is NULL: no per-row test, so the scan costs what it did)."""
    shape, loose = _shape_fields(layout)
    if not shape:
        return
    values = ", ".join(f"{layout.mapping[c]} AS {c}" for c in shape)
    text = "".join(f", {ident(raw)} AS _text_{c}" for c, raw in loose.items())
    unread = "".join(f", count(_text_{c}) - count({c}) AS _bad_{c}" for c in loose)
    # grouped by the raw name, then joined to the names: the long names are hashed once a
    # row, not twice (2.1 s of CPU instead of 3.1 s at 2 M dispatches)
    grouped = f"""SELECT _raw, {", ".join(shape)}, count(*) AS dispatches{unread}
        FROM (SELECT {ident(layout.name)} AS _raw, {values}{text} {from_sql}) GROUP BY ALL"""
    _fill_shapes(profile, grouped, layout, source, where)


def _fill_shapes(
    profile: Profile, grouped: str, layout: CsvLayout, source: int, where: Path
) -> None:
    """Insert ``grouped`` (per raw name ``_raw`` and shape: ``dispatches``, and ``_bad_<c>``
    per loose field) into ``launches``; warn about the fields of ``layout.loose`` that held
    text which is not a number."""
    shape, loose = _shape_fields(layout)
    if not shape:
        return
    bad = "".join(f", s._bad_{c}" for c in loose)
    con, table = profile.con, f"shapes{next(_ids)}"
    kernels = f"WHERE NOT {barrier_sql('s._raw')}" if layout.barriers else ""
    con.execute(
        f"""CREATE TEMP TABLE {table} AS
        SELECT {source} AS source, n.name_id, {", ".join(f"s.{c}" for c in shape)},
            s.dispatches{bad}
        FROM ({grouped}) s JOIN names n ON n.raw_name = s._raw {kernels}"""
    )
    try:
        con.execute(
            f"""INSERT INTO launches (source, name_id, {", ".join(shape)}, dispatches)
            SELECT source, name_id, {", ".join(shape)}, dispatches FROM {table}"""
        )
        if loose:
            _warn_unread_shapes(profile, table, loose, where)
    finally:
        con.execute(f"DROP TABLE {table}")


def _warn_unread_shapes(profile: Profile, table: str, loose: dict[str, str], where: Path) -> None:
    sums = ", ".join(f"coalesce(sum(_bad_{c}), 0)" for c in loose)
    counts = profile.con.execute(f"SELECT {sums} FROM {table}").fetchone() or ()
    warn_per_field(
        profile,
        "unread-launch-field",
        where,
        dict(zip(loose.values(), counts, strict=True)),
        "launch fields that are not whole numbers within 64 bits",
        "they are unknown, so occupancy and the launch-shape rules pass those dispatches by",
    )


def _resolve_overflow(profile: Profile, sources: str) -> None:
    """Give the rows of ``sources`` (a list of ids in SQL) whose name came after the
    sample its id."""
    con = profile.con
    extra = con.execute(
        "SELECT DISTINCT raw_overflow FROM dispatches "
        f"WHERE source IN ({sources}) AND raw_overflow IS NOT NULL"
    ).fetchall()
    if not extra:
        return
    profile.name_ids(str(r[0]) for r in extra)
    con.execute(
        f"""UPDATE dispatches SET name_id = n.name_id, raw_overflow = NULL FROM names n
        WHERE dispatches.source IN ({sources}) AND dispatches.raw_overflow = n.raw_name"""
    )


def _rejected(con: duckdb.DuckDBPyConnection, tag: str) -> list[Rejected]:
    rows = con.execute(
        f"SELECT line, min(line_byte_position), string_agg(DISTINCT error_type, ', ') "
        f"FROM {tag}_errors GROUP BY line ORDER BY line"
    ).fetchall()
    return [Rejected(int(r[0]), None if r[1] is None else int(r[1]), str(r[2])) for r in rows]
