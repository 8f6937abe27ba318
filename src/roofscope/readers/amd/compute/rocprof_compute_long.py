"""Long rocprof-compute counter tables (rocpd path): one row per counter, dispatch and pass,
pivoted to one dispatch row with its counters (docs/formats/rocprof-compute.md, "Long
counter tables").

Two layouts hold them, and the release that wrote each times a dispatch its own way:

- 3.2-3.3: ONE ``pmc_perf.csv`` with every pass's rows concatenated. rocprof-compute 3.3
  (``rocpd_data.process_rocpd_csv``) gives the dispatch the median of End - Start over all
  its counter rows: :attr:`Timing.MEDIAN`.
- 3.6 on: one ``results_pmc_perf_N.csv`` (3.9: ``.csv.gz``) per pass, the same dispatch id in
  each. rocprof-compute concatenates them in file-name order and keeps the first row's Start
  and End (``process_rocpd_csv`` / ``pivot_counter_rows`` take ``iloc[0]``): the timing of the
  first file holding the dispatch, ``results_pmc_perf_0.csv`` for every dispatch it has:
  :attr:`Timing.FIRST`. Every other pass's counters are joined on the dispatch.

A dispatch is the key rocprof-compute groups by: (Dispatch_ID, Kernel_Name, Grid_Size,
Workgroup_Size, LDS_Per_Workgroup). A counter written twice keeps its last value (file order,
then row order), as the tool's ``dict(zip(...))`` does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from enum import Enum
from pathlib import Path

from roofscope.model import words
from roofscope.model.profile import Profile
from roofscope.model.schema import DURATION, Role
from roofscope.readers.amd.compute.rocprof_compute_columns import (
    MODEL,
    read_header,
    require_columns,
)
from roofscope.readers.io.csvload import register_names
from roofscope.readers.io.duck_sql import ident, read_csv


class Timing(Enum):
    MEDIAN = "median"  # 3.2-3.3: median of End - Start over the dispatch's counter rows
    FIRST = "first"  # 3.6 on: the first file's (in name order) Start and End


_INTS = (
    *("dispatch_id", "device", "grid_size", "workgroup_size", "lds_bytes", "scratch_bytes"),
    *("arch_vgpr", "accum_vgpr", "sgpr", "start_ns", "end_ns"),
)
ROW = ("pass", *_INTS, "raw", "counter", "value")  # the columns of ``<tag>_rows``, in order
_KEY = ("dispatch_id", "raw", "grid_size", "workgroup_size", "lds_bytes")
_NEED = ["Dispatch_ID", "Kernel_Name", "Start_Timestamp", "End_Timestamp"]
_ids = itertools.count()
# fills the temp table ``<tag>_rows`` (made by :func:`create_rows`) from the given passes
Stage = Callable[[Profile, list[Path], str], None]


def load_long(
    profile: Profile,
    paths: list[Path],
    *,
    fmt: str,
    role: Role,
    timing: Timing,
    stage: Stage | None = None,
) -> dict[str, int]:
    """Pivot the long tables ``paths`` (one file, or one per pass in file-name order) into
    dispatches; each counter name with the index in ``paths`` of the file that gave it.
    ``stage`` reads the passes' rows when they are not long CSV files (the raw rocpd
    databases of :mod:`roofscope.readers.amd.compute.rocprof_compute_raw`)."""
    tag = f"long{next(_ids)}"
    try:
        create_rows(profile, tag)
        (stage or _stage)(profile, paths, tag)
        _pivot(profile, tag, timing)
        return _insert(profile, paths, tag, fmt=fmt, role=role, timing=timing)
    finally:
        profile.con.execute(f"DROP TABLE IF EXISTS {tag}_rows; DROP TABLE IF EXISTS {tag}_d")


def create_rows(profile: Profile, tag: str) -> None:
    """The table of long rows: one per pass, dispatch and counter, columns :data:`ROW`."""
    fields = ", ".join(f"{m} BIGINT" for m in _INTS)
    profile.con.execute(
        f"""CREATE TEMP TABLE {tag}_rows (pass INTEGER, {fields}, raw VARCHAR,
        counter VARCHAR, value DOUBLE)"""
    )


def _stage(profile: Profile, paths: list[Path], tag: str) -> None:
    for index, path in enumerate(paths):
        header = read_header(path)
        _check_header(path, header)
        given: dict[str, str] = {}
        for col in header:
            given.setdefault(MODEL.get(col.lower(), ""), f"TRY_CAST({ident(col)} AS BIGINT)")
        values = ", ".join(given.get(m, "NULL::BIGINT") for m in _INTS)
        profile.con.execute(
            f"""INSERT INTO {tag}_rows SELECT {index}, {values}, "Kernel_Name",
            "Counter_Name", TRY_CAST("Counter_Value" AS DOUBLE)
            FROM {read_csv(path, [(c, "VARCHAR") for c in header])}"""
        )


def _check_header(path: Path, header: list[str]) -> None:
    remedy = "pass the pmc_perf.csv (or results_pmc_perf_N.csv) rocprof-compute wrote"
    require_columns(path, header, _NEED, "a long counter table", remedy)


def _pivot(profile: Profile, tag: str, timing: Timing) -> None:
    if timing is Timing.MEDIAN:
        times = f"min(start_ns) AS start_ns, quantile_cont({DURATION}, 0.5) AS duration"
        passes = "count(DISTINCT start_ns)"
    else:
        times = f"arg_min(start_ns, pass) AS start_ns, arg_min({DURATION}, pass) AS duration"
        passes = "count(DISTINCT pass)"
    key = ", ".join(_KEY)
    profile.con.execute(
        f"""CREATE TEMP TABLE {tag}_d AS SELECT row_number() OVER (ORDER BY {key}) - 1 AS k,
        {key}, min(device) AS device, min(scratch_bytes) AS scratch_bytes,
        min(arch_vgpr) AS arch_vgpr, min(accum_vgpr) AS accum_vgpr, min(sgpr) AS sgpr,
        {times}, {passes} AS passes
        FROM {tag}_rows WHERE dispatch_id IS NOT NULL AND raw IS NOT NULL GROUP BY {key}"""
    )


def _insert(
    profile: Profile, paths: list[Path], tag: str, *, fmt: str, role: Role, timing: Timing
) -> dict[str, int]:
    con = profile.con
    source, first = profile.begin_input(), profile.count("dispatches")
    register_names(profile, paths[0], f"{tag}_d")
    con.execute(
        f"""INSERT INTO dispatches (source, name_id, device, dispatch_id, start_ns, end_ns)
        SELECT {source}, n.name_id, d.device, d.dispatch_id, d.start_ns,
        d.start_ns + CAST(round(d.duration) AS BIGINT)
        FROM {tag}_d d JOIN names n ON n.raw_name = d.raw ORDER BY d.k"""
    )
    found = con.execute(
        f"SELECT counter, min(pass) FROM {tag}_rows WHERE counter IS NOT NULL GROUP BY 1"
    ).fetchall()
    counters = {str(name): int(index) for name, index in sorted(found)}
    joined = " AND ".join(f"r.{c} IS NOT DISTINCT FROM d.{c}" for c in _KEY)
    profile.insert_counters(
        f"""SELECT {first} + d.k AS row_id, r.counter, arg_max(r.value, r.rowid) AS value
        FROM {tag}_rows r JOIN {tag}_d d ON {joined}
        WHERE r.counter IS NOT NULL AND r.value IS NOT NULL
        GROUP BY d.k, r.counter ORDER BY 1, 2""",
        list(counters),
    )
    shape = "grid_size, workgroup_size, lds_bytes, scratch_bytes, arch_vgpr, accum_vgpr, sgpr"
    con.execute(
        f"""INSERT INTO launches (source, name_id, {shape}, dispatches)
        SELECT {source}, n.name_id, {shape}, count(*)
        FROM {tag}_d d JOIN names n ON n.raw_name = d.raw GROUP BY ALL"""
    )
    _report(profile, paths, tag, fmt=fmt, role=role, timing=timing)
    return counters


def _report(
    profile: Profile, paths: list[Path], tag: str, *, fmt: str, role: Role, timing: Timing
) -> None:
    rows, replayed, passes, dropped = profile.con.execute(
        f"""SELECT count(*), count(*) FILTER (passes > 1), max(passes),
        (SELECT count(*) FROM {tag}_rows WHERE dispatch_id IS NULL OR raw IS NULL)
        FROM {tag}_d"""
    ).fetchone() or (0, 0, 0, 0)
    if replayed:
        profile.warn("pass-timestamps-differ", _timing_note(paths, replayed, passes, timing))
    if dropped:
        profile.warn(
            "malformed-row",
            f"{paths[0] if len(paths) == 1 else paths[0].parent}: "
            f"{words.count(int(dropped), 'row')} without a dispatch id or kernel name skipped",
            count=int(dropped),
        )
    profile.add_input(str(paths[0]), fmt, int(rows), role)
    for path in paths[1:]:
        profile.add_input(str(path), fmt, int(rows), Role.COUNTER_PASS)


def _timing_note(paths: list[Path], replayed: int, passes: int, timing: Timing) -> str:
    if timing is Timing.MEDIAN:
        return (
            f"{paths[0]}: {words.count(replayed, 'dispatch')} recorded once per pass (up to "
            f"{words.count(passes, 'pass')}) "
            "with different timestamps; each is kept once, its duration the median of End - "
            "Start over its counter rows (as rocprof-compute computes it), its start the earliest"
        )
    what = "pass folders" if paths[0].is_dir() else "per-pass files"
    return (
        f"{paths[0].parent}: {words.count(replayed, 'dispatch')} recorded in "
        f"{words.count(passes, what[:-1], what)} with different timestamps; each is kept once "
        f"with the Start and End of the first {what[:-1]} holding it ({paths[0].name}), as "
        "rocprof-compute 3.6 and later take them, and the counters of every pass"
    )
