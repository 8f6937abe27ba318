"""Columns of Omniperf / rocprof-compute workload CSVs and what they mean in the model.

Generations (docs/formats/rocprof-compute.md, "Generations"), all read through one column table:

1. Omniperf 1.x + rocprof v1: raw rocprof v1 columns (``Index, KernelName, gpu-id, ...,
   BeginNs, EndNs``).
2. Omniperf 2.x + rocprof v1: the same columns renamed (``Dispatch_ID, Kernel_Name, GPU_ID,
   Grid_Size, ..., Start_Timestamp, End_Timestamp``) and pass copies (``obj_1``,
   ``GRBM_COUNT_13``).
3. Omniperf 2.x + rocprofv2: ``Wave_Size``, ``Correlation_ID``, ``XCC_Index`` and per-XCD TCC
   columns flattened to ``TCC_HIT[0..127]``.
4. rocprof-compute 3.x + rocprofv3 csv: ``Kernel_ID`` copies, values written as floats
   (``630.0``), timestamps averaged over passes (``...386.5``, rounded to whole ns).
5. rocprof-compute 3.2+ with rocpd: a LONG ``pmc_perf.csv`` (one row per counter, dispatch
   and pass; RDNA test data add ``GUID``), pivoted by
   :func:`roofscope.readers.amd.compute.rocprof_compute.load_long`.

A column ``X_N`` whose base ``X`` is also a column is a pass copy of ``X`` and is dropped
(native names such as ``SQC_DCACHE_REQ_READ_16`` have no such base and stay counters).
``SQ_ACCUM_PREV_HIRES`` integrates the counter just before it in its pass, so each copy is a
different quantity: it is stored as ``<that counter>_ACCUM`` (``SQ_LEVEL_WAVES_ACCUM``, the
name rocprof-compute 3.x gives the same accumulation).
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from roofscope.errors import InputError
from roofscope.readers.io.csv_layout import CsvLayout, header_name, is_unnamed
from roofscope.readers.io.duck_sql import ident

# model column <- the file columns (lower case) that hold it, rocprof v1 and rocprof-compute names
MODEL = {
    name: model
    for model, names in {
        "dispatch_id": "dispatch_id index",
        "device": "gpu_id gpu-id",
        "pid": "pid",
        "tid": "tid",
        "queue": "queue_id queue-id",
        "grid_size": "grid_size grd",
        "workgroup_size": "workgroup_size wgr",
        "lds_bytes": "lds_per_workgroup lds",
        "scratch_bytes": "scratch_per_workitem scr",
        "arch_vgpr": "arch_vgpr vgpr",
        "accum_vgpr": "accum_vgpr",
        "sgpr": "sgpr",
        "wave_size": "wave_size",
        "start_ns": "start_timestamp beginns",
        "end_ns": "end_timestamp endns",
    }.items()
    for name in names.split()
}
NAME = ("kernel_name", "kernelname")
_FIXED = {
    *MODEL,
    *NAME,
    *["queue-index", "sig", "obj", "fbar", "dispatchns", "completens", "durationns"],
    *["correlation_id", "kernel_id", "xcc_index", "guid", "node"],
}
_PASS_COPY = re.compile(r"^(.+)_(\d+)$")
ACCUMULATOR = "SQ_ACCUM_PREV_HIRES"


def open_bytes(path: Path) -> BinaryIO | gzip.GzipFile:
    """``path`` for reading, gunzipped when its name ends in ``.gz`` (rocprof-compute 3.9
    compresses its workload CSVs; DuckDB's read_csv does the same by the name)."""
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    return path.open("rb")


def read_header(path: Path) -> list[str]:
    """The first line split as CSV (BOM and CR removed), however long it is."""
    try:
        with open_bytes(path) as f:
            raw = f.readline()
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise InputError(
            str(path),
            f"cannot be decompressed ({exc})",
            "copy the file again from the workload folder (a profile killed mid-write leaves it "
            "truncated), or re-run rocprof-compute profile",
        ) from None
    line = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return [h.strip() for h in next(csv.reader(io.StringIO(line.rstrip("\r\n"))), [])]


def is_long(header: list[str]) -> bool:
    return "Counter_Name" in header and "Counter_Value" in header


def _fixed(col: str) -> bool:
    return col.lower() in _FIXED


def _copy_of(col: str, present: set[str]) -> str | None:
    m = _PASS_COPY.match(col)
    return m.group(1) if m and m.group(1) in present else None


def _stored_name(names: list[str], i: int, present: set[str]) -> str | None:
    """The counter name column ``i`` is stored under; None when it is no counter."""
    col = names[i]
    if _fixed(col):
        return None
    base = _copy_of(col, present)
    if ACCUMULATOR not in (col, base):
        return col if base is None else None
    before = names[i - 1] if i else ""
    accumulated = _copy_of(before, present) or before
    if before and not _fixed(before) and ACCUMULATOR not in (before, accumulated):
        return f"{accumulated}_ACCUM"
    return col if base is None else None


def wide_layout(path: Path, header: list[str]) -> CsvLayout:
    """Columns, model mapping and counters of a wide workload CSV (generations 1-4)."""
    present = set(header)
    columns: list[tuple[str, str]] = []
    mapping: dict[str, str] = {}
    counters: list[str] = []
    name = None
    taken: set[str] = set()
    for i, col in enumerate(header):
        if is_unnamed(col):
            columns.append((header_name(col, i), "VARCHAR"))
            continue
        stored = _stored_name(header, i, present)
        scan = stored or col
        if scan in taken:
            scan, stored = f"{col}#{i}", None  # written twice: keep the first
        taken.add(scan)
        columns.append((scan, "VARCHAR"))
        low = col.lower()
        if stored is not None:
            counters.append(stored)
        elif low in NAME and name is None:
            name = scan
        elif low in MODEL and MODEL[low] not in mapping:
            mapping[MODEL[low]] = f"TRY_CAST({ident(scan)} AS BIGINT)"
    if name is None:
        raise InputError(
            str(path),
            "has no Kernel_Name (or KernelName) column",
            "pass the CSV files rocprof-compute wrote, with their header line",
            line=1,
        )
    return CsvLayout(columns=columns, mapping=mapping, name=name, counters=counters)


def require_columns(
    path: Path, header: list[str], need: Sequence[str], what: str, remedy: str
) -> None:
    """Refuse, naming line 1, a ``what`` (``a long counter table``) whose header lacks any
    of ``need``."""
    missing = [c for c in need if c not in header]
    if missing:
        raise InputError(str(path), f"is {what} without {', '.join(missing)}", remedy, line=1)
