"""Which files of a rocprof-compute workload folder give its dispatches, and which add counters
(docs/formats/rocprof-compute.md, "Workload folder").

The releases wrote different folders:

- 1.x-3.3: ``pmc_perf.csv`` (every pass merged; long on the 3.2-3.3 rocpd path), with
  ``SQ_*.csv`` counter runs, ``timestamps.csv`` and, with ``--verbose``, ``pmc_perf_N.csv``.
- 3.6-3.8: one long ``results_pmc_perf_N.csv`` per pass and no ``pmc_perf.csv``.
- 3.9: the same, gzipped (``results_pmc_perf_N.csv.gz``; a ``pmc_perf.csv.gz`` too).
- newest (in development, "Phase C"): only the raw files of each pass,
  ``out/<pass>/<pid>/<pid>.db`` (rocpd) and ``out/<pass>/<pid>_native_counter_collection.csv.gz``
  (``dispatch_id, gpu_id, kernel_id, lds_per_workgroup, counter_id, counter_name,
  counter_value``), read by :mod:`roofscope.readers.amd.compute.rocprof_compute_raw`; its analyze
  rebuilds from them even where a ``pmc_perf.csv.gz`` is beside them, so they come first.
- PC sampling only (3.8 on): ``ps_file_results.json`` (``<pid>_ps_file_results.json``), no
  counter file at all by design.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from roofscope.errors import InputError
from roofscope.readers.amd.compute.rocprof_compute_columns import is_long, open_bytes, read_header

PER_PASS = re.compile(r"^(?:results_)?pmc_perf_(\d+)\.csv(?:\.gz)?$")
_PC_SAMPLING = re.compile(r"^(?:\d+_)?ps_file_results\.json$")


class WorkloadFiles(msgspec.Struct, frozen=True):
    """``dispatches``: the file (or, for per-pass long files, the files in name order; with
    ``raw``, the ``out/<pass>`` folders in name order) the dispatches come from; ``runs``:
    wide files whose counters are matched onto them; ``long``: the dispatches are long
    per-pass tables (3.6+), joined on the dispatch (a wide ``pmc_perf_N.csv`` of an older
    release, read when no pmc_perf.csv is there, is not)."""

    dispatches: list[Path]
    runs: list[Path]
    raw: bool = False
    long: bool = False


def workload_files(folder: Path) -> WorkloadFiles:
    """The raw pass folders, else every long per-pass file, else pmc_perf.csv(.gz), else
    timestamps.csv, else the first per-pass file that holds rows.

    Long per-pass files come before pmc_perf.csv: they are what rocprof-compute 3.6+
    analyses, while the ``pmc_perf.csv.gz`` beside them in 3.9 is written by its analyze from
    them; 3.2-3.3 rocpd workloads have no per-pass file, and the older per-pass files are
    wide. The raw pass folders come first of all, as the newest analyze rebuilds from them."""
    raw = raw_passes(folder)
    if raw:
        return WorkloadFiles(raw, [], raw=True)
    squads = sorted(folder.glob("SQ_*.csv"))
    passes = [p for p in per_pass(folder) if has_rows(p)]
    long = [p for p in passes if is_long(read_header(p))]
    if long:
        return WorkloadFiles(long, squads + [p for p in passes if p not in long], long=True)
    merged = _first_file(folder, "pmc_perf.csv", "pmc_perf.csv.gz")
    if merged is not None and has_rows(merged):
        return WorkloadFiles([merged], squads)
    source = _dispatch_file(folder, merged)
    return WorkloadFiles([source], squads + [p for p in passes if p != source])


def per_pass(folder: Path) -> list[Path]:
    """The per-pass files in name order (``_0, _1, _10, ..., _2``), the order rocprof-compute
    3.6+ reads them in."""
    return sorted((p for p in folder.iterdir() if PER_PASS.match(p.name)), key=lambda p: p.name)


def has_rows(path: Path) -> bool:
    read_header(path)  # a damaged gzip file is named here
    with open_bytes(path) as f:
        f.readline()
        return any(line.strip() for line in f)


def _first_file(folder: Path, *names: str) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_file()), None)


def _dispatch_file(folder: Path, merged: Path | None) -> Path:
    candidates = [merged or folder / "pmc_perf.csv", folder / "timestamps.csv", *per_pass(folder)]
    there = [p for p in candidates if p.is_file()]
    for path in there:
        if has_rows(path):
            return path
    if not there:
        raise _no_counter_file(folder)
    absent = "" if there[0] == candidates[0] else "no pmc_perf.csv; "
    raise InputError(
        str(folder),
        "is a rocprof-compute workload without dispatch rows "
        f"({absent}header only: {', '.join(p.name for p in there)})",
        "the profiled run launched no kernel that its --kernel/--dispatch filter kept; re-run "
        "rocprof-compute profile with a filter that matches",
    )


def _no_counter_file(folder: Path) -> InputError:
    native = sorted(folder.glob("out/*/*_native_counter_collection.csv*"))
    if native:
        return InputError(
            str(folder),
            f"is a rocprof-compute workload whose native counter files ("
            f"{native[0].relative_to(folder)}, {len(native)} in all) have no rocpd database "
            "beside them (out/<pass>/<pid>/<pid>.db), which names their dispatches",
            "copy the whole out/ folder that rocprof-compute profile wrote",
        )
    sampled = sorted(p.name for p in folder.iterdir() if _PC_SAMPLING.match(p.name))
    if sampled:
        trace = folder / "ps_file_kernel_trace.csv"
        remedy = (
            f"for kernel times pass {trace} (its kernel trace); for counters re-run "
            "rocprof-compute profile without --pc-sampling-only"
            if trace.is_file()
            else "for counters and kernel times re-run rocprof-compute profile without "
            "--pc-sampling-only"
        )
        return InputError(
            str(folder),
            f"is a rocprof-compute PC-sampling-only workload ({', '.join(sampled)}): it holds "
            "instruction samples and no counter file by design",
            remedy,
        )
    return InputError(
        str(folder),
        "is a rocprof-compute workload (sysinfo.csv) without pmc_perf.csv, "
        "results_pmc_perf_N.csv or timestamps.csv",
        "copy the whole workload folder that rocprof-compute profile wrote",
    )


# -- the raw layout (3.9+): out/<pass>/<host>/<pid>.db, read by rocprof_compute_raw; its
# folders are found here, where finding them loads neither rocpd nor numpy


def raw_passes(folder: Path) -> list[Path]:
    """The pass folders under ``folder/out`` that hold a database, in name order."""
    out = folder / "out"
    if not out.is_dir():
        return []
    return sorted((p for p in out.iterdir() if p.is_dir() and databases(p)), key=lambda p: p.name)


def workload_of(db: Path) -> Path | None:
    """The rocprof-compute workload folder whose ``out/<pass>/*/`` holds ``db``, if any."""
    path = db.resolve()
    if len(path.parents) < 4 or path.parents[2].name != "out":
        return None
    folder = path.parents[3]
    return folder if (folder / "sysinfo.csv").is_file() else None


def databases(pass_dir: Path) -> list[Path]:
    return sorted(pass_dir.glob("*/*.db"))
