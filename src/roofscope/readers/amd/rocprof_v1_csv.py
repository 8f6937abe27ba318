"""rocprof v1 ``results.csv``: one row per kernel dispatch (docs/formats/rocprof-v1.md,
"results.csv").

Header layouts: the ROCm < 5.3 one (``vgpr,sgpr,fbar``), the ROCm >= 5.3 one
(``arch_vgpr,accum_vgpr,sgpr,wave_size``), the quoted one with ``DurationNs``, the ROCm 6.0
upper-case names, and header-less slices of ROCm 4.x output (layout a + ``DurationNs``).
Columns that are not part of the fixed layout are counters.
"""

from __future__ import annotations

import re
from pathlib import Path

from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import DISPATCH_COLUMNS, Role
from roofscope.readers.amd.rocminfo import rocminfo_beside
from roofscope.readers.io.csv_layout import CsvLayout, header_name, is_unnamed
from roofscope.readers.io.dispatch_csv import read_dispatch_csv
from roofscope.readers.io.rowfix import split_row
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

# file column (lower case) -> model column
_MODEL = {
    "index": "dispatch_id",
    "gpu-id": "device",
    "queue-id": "queue",
    "pid": "pid",
    "tid": "tid",
    "grd": "grid_size",
    "wgr": "workgroup_size",
    "lds": "lds_bytes",
    "scr": "scratch_bytes",
    "vgpr": "arch_vgpr",
    "arch_vgpr": "arch_vgpr",
    "accum_vgpr": "accum_vgpr",
    "sgpr": "sgpr",
    "wave_size": "wave_size",
    "beginns": "start_ns",
    "endns": "end_ns",
}
MODEL_FIELDS = frozenset(_MODEL)  # the rocprof v1 fields the model keeps (lower case)
_TEXT = {"kernelname", "sig", "obj"}
_FIXED = set(_MODEL) | _TEXT | {"queue-index", "fbar", "dispatchns", "completens", "durationns"}
# Only the dispatch columns are typed in the scan; the others are text, converted (when
# used at all) with TRY_CAST, so a trace's one scan spends no time on them.
_TYPED = {col for col, model in _MODEL.items() if model in DISPATCH_COLUMNS}

# ROCm 4.x --hsa-trace --timestamp slices carry no header: layout (a) + DurationNs.
HEADERLESS = [
    "Index",
    "KernelName",
    "gpu-id",
    "queue-id",
    "queue-index",
    "pid",
    "tid",
    "grd",
    "wgr",
    "lds",
    "scr",
    "vgpr",
    "sgpr",
    "fbar",
    "sig",
    "obj",
    "DispatchNs",
    "BeginNs",
    "EndNs",
    "CompleteNs",
    "DurationNs",
]
_HEADERLESS_ROW = re.compile(r'^\d+,"')


def layout_for(header: list[str], *, has_header: bool = True) -> CsvLayout:
    """Column types, model mapping and counters for a rocprof v1 header."""
    columns: list[tuple[str, str]] = []
    mapping: dict[str, str] = {}
    loose: dict[str, str] = {}
    counters: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(header):
        col = header_name(raw, i)
        while col in seen:  # passes merged by other tools repeat helper counters
            col += "_dup"
        seen.add(col)
        low = col.lower()
        columns.append((col, DISPATCH_COLUMNS[_MODEL[low]] if low in _TYPED else "VARCHAR"))
        if low not in _FIXED and not is_unnamed(raw):
            counters.append(col)
        if low in _MODEL and _MODEL[low] not in mapping:
            quoted = f'"{col}"'
            mapping[_MODEL[low]] = quoted if low in _TYPED else f"TRY_CAST({quoted} AS BIGINT)"
            if low not in _TYPED:
                loose[_MODEL[low]] = col
    name = next(c for c, _ in columns if c.lower() == "kernelname")
    return CsvLayout(
        columns=columns,
        mapping=mapping,
        name=name,
        counters=counters,
        header=has_header,
        loose=loose,
        barriers=True,  # tblextr lists "<barrier packet>" records among the kernels
    )


def is_timed(layout: CsvLayout) -> bool:
    return "start_ns" in layout.mapping and "end_ns" in layout.mapping


class RocprofV1Csv(Reader):
    name = "rocprof-v1-csv"
    description = "rocprof v1 results.csv (kernel dispatches, with or without counters)"
    producer = "rocprof"
    priority = 10

    def detect(self, head: Head) -> bool:
        fields = [f.strip().lower() for f in head.fields()[:3]]
        if fields == ["index", "kernelname", "gpu-id"]:
            return True
        return bool(_HEADERLESS_ROW.match(head.first_line)) and len(head.fields()) == len(
            HEADERLESS
        )

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def timed(self, head: Head) -> bool:
        return is_timed(self.layout(head))

    def layout(self, head: Head) -> CsvLayout:
        if head.fields() and head.fields()[0].strip().lower() == "index":
            return layout_for(head.fields())
        return layout_for(HEADERLESS, has_header=False)

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        layout = self.layout(head)
        read_dispatch_csv(profile, path, layout, fmt=self.name, role=role)
        _check_cut_duration(profile, path, layout)
        if not layout.header:
            profile.warn(
                "no-header",
                f"{path}: no header line; read as the ROCm 4.x layout "
                f"({len(HEADERLESS)} columns ending in DurationNs)",
            )
        profile.set_run(RunInfo(producer=self.producer))
        rocminfo_beside(profile, path)


def _check_cut_duration(profile: Profile, path: Path, layout: CsvLayout) -> None:
    """A last row cut inside its final field (DurationNs) still has every field, so no parser
    notices; its DurationNs then disagrees with EndNs - BeginNs. Its times come from Begin
    and End, which are whole, so the row is kept and the cut is reported."""
    cols = [c.lower() for c, _ in layout.columns]
    if not cols or cols[-1] != "durationns" or not is_timed(layout):
        return
    with path.open("rb") as f:
        f.seek(max(0, f.seek(0, 2) - 65536))
        tail = f.read()
    if tail.endswith(b"\n"):
        return  # a whole last line
    text = tail.rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace").rstrip("\r")
    row, _ = split_row(text, layout.columns, cols.index("kernelname"))
    if row is None:
        return  # too short: already dropped as a truncated row
    begin, end, duration = (row[cols.index(c)] for c in ("beginns", "endns", "durationns"))
    if isinstance(begin, int) and isinstance(end, int) and str(duration) != str(end - begin):
        profile.warn(
            "truncated-last-row",
            f"{path}: the last row ends inside its DurationNs ({duration}, where EndNs - "
            f"BeginNs = {end - begin}): the profiler was stopped while writing; the row is "
            "kept, its time taken from BeginNs and EndNs, which are whole",
        )
