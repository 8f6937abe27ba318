"""Nsight Compute ``ncu --csv`` output (formats-nvidia-torch.md section 1).

One reader, ``ncu``, for the three pages ncu writes as CSV; the page is told by the header,
so ``--format ncu`` needs no page name and the registry gets one line:

details page (default ``--page details``, header generations (a)-(d))
    long: one row per (launch, metric) or per (launch, rule). Rows of the same
    (``Process ID``, ``ID``) are one launch.
raw page (``--page raw``)
    wide: one row per launch, one column per metric; the second CSV line holds the units.
per-kernel summary (``--print-summary per-kernel``)
    one row per (kernel, metric) with Minimum/Maximum/Average over ``Invocations``.

What surrounds the CSV: lines that do not begin with ``"`` (program output, ``==PROF==``,
``==WARNING==``, ``==ERROR==`` banners) are skipped wherever they are; a repeated header
starts a new block. A file without any CSV but with banners is ncu output too; reading it
fails with a one-line error quoting its ``==ERROR==``/``==WARNING==`` line.

Mapping into the model (details and raw pages):

``dispatches``
    one row per launch: name = ``Kernel Name``, pid = ``Process ID``, dispatch_id = ``ID``,
    device = ``Device`` (0 when the column is absent). ncu replays kernels one at a time and
    writes no timestamps, so the launches are laid end to end in the order ncu wrote them
    (its ID order): start = the sum of the durations before, end = start + duration, and the
    input is added with ``on_timeline=False``. The duration is ``gpu__time_duration.sum`` (the
    raw metric or the details label ``Duration``); without it, NERSC's
    ``sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second`` (section 5.3). A launch
    with neither keeps NULL times (counted in a warning) and does not move the clock.
``launches``
    grid_size = product(``Grid Size``) x product(``Block Size``) (total threads, as AMD's grid
    is in work-items; from ``launch__grid_size`` x ``launch__block_size`` when the columns are
    absent, in headers (a)/(b)), workgroup_size = product(``Block Size``), arch_vgpr =
    ``launch__registers_per_thread``, lds_bytes = static + dynamic shared memory per block,
    stream = ``Stream``, wave_size = 32; one row per distinct shape with its dispatch count.
``counters``
    every numeric value of the launch in SI base units (seconds, bytes, byte/second, hz;
    percentages stay 0-100), keyed by the raw metric name. Details rows of a section carry a
    human label; :data:`LABELS` maps (section, label) to the metric from NVIDIA's section
    files (doc section 4). Labels not in it are kept as ``<section>/<label>`` (with the
    ``Body Item Label`` between them when the per-section export has one). Non-numeric values
    (``n/a``, ``CachePreferNone``) are skipped; units that :func:`unit_factor` does not know
    keep their value as written and are counted in a warning.
``producer_rules``
    rule rows: section identifier, rule name, kind (OPT/WRN/INF), text, speedup kind and %.
``run``
    arch = ``sm_`` + CC without the dot, gpu = ``device__attribute_display_name`` and
    compute_units = ``device__attribute_multiprocessor_count`` (raw page).

The summary page gives ``kernel_summary`` rows: calls = ``Invocations``; mean/min/max from the
duration metric (``gpu__time_duration.sum``, label ``Duration``, then ``gpu__time_duration.avg``,
``gpu__time_active.sum``, ``gpu__time_active.avg``); total = Average x Invocations.

The files are replay measurements without timestamps: :meth:`Ncu.timed` is False, so beside a
timed trace of the same run the planner may read them as a counter run.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from roofscope.errors import InputError
from roofscope.model import Profile, RunInfo
from roofscope.readers.registry import DISPATCHES, KERNEL_SUMMARY, Reader
from roofscope.readers.sniff import Head
from roofscope.readers.stats_csv import insert_kernel_summary

DETAILS_START = '"ID","Process ID"'
SUMMARY_START = '"Process ID","Process Name"'
BANNERS = ("==PROF==", "==ERROR==", "==WARNING==")
DURATION = "gpu__time_duration.sum"
_REMEDY = "pass the CSV that `ncu --csv` wrote (details, raw or --print-summary per-kernel page)"

# -- numbers and units ----------------------------------------------------------------------

_PREFIXES = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_TIMES = {"second": 1.0, "s": 1.0, "msecond": 1e-3, "ms": 1e-3, "usecond": 1e-6, "us": 1e-6}
_TIMES |= {"nsecond": 1e-9, "ns": 1e-9}
_COUNTS = {"byte", "cycle", "inst", "sector", "request", "warp", "thread", "block", "register"}
_COUNTS |= {"SM", "cluster", "wavefront", "hz", "Hz", "op", "flop"}
_LOCALE = re.compile(r"^-?\d{1,3}(\.\d{3})+,\d+$")  # 1.234.567,89 (European Windows)


def unit_factor(unit: str) -> float | None:
    """The factor that turns a value in ``unit`` into SI base units (seconds, bytes, hz,
    byte/second, counts); None for a unit it does not know. ``%`` and ``""`` give 1."""
    unit = unit.strip()
    if unit in ("", "%"):
        return 1.0
    top, _, bottom = unit.partition("/")
    num = _term(top)
    if num is None or not bottom:
        return num
    den = _term(bottom)
    return None if den is None or den == 0 else num / den


def _term(term: str) -> float | None:
    """One side of a unit: an SI-prefixed count (``Mbyte``, ``Ghz``) or a time (``us``)."""
    if term in _TIMES:
        return _TIMES[term]
    for prefix, factor in _PREFIXES.items():
        if term.startswith(prefix) and term[len(prefix) :] in _COUNTS:
            return factor
    return None


def parse_number(text: str) -> float | None:
    """A metric value as a float: thousands separators dropped (a ``1.234,5`` value is read as
    locale-swapped); None for what is no finite number (``n/a``, ``PolicySpread``)."""
    token = text.strip()
    if _LOCALE.match(token):
        token = token.replace(".", "").replace(",", ".")
    else:
        token = token.replace(",", "")
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def to_si(text: str, unit: str) -> tuple[float | None, bool]:
    """(value in SI base units or None when not a number, whether the unit was known)."""
    value = parse_number(text)
    factor = unit_factor(unit)
    if value is None or factor is None:
        return value, factor is not None
    return value * factor, True


# -- details-page labels ------------------------------------------------------------------

_SOL = "GPU Speed Of Light Throughput"
_MEM = "Memory Workload Analysis"
_LAUNCH = "Launch Statistics"
_OCC = "Occupancy"
_SCHED = "Scheduler Statistics"

LABELS: dict[tuple[str, str], str] = {
    (_SOL, "Duration"): DURATION,
    (_SOL, "Compute (SM) Throughput"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    (_SOL, "Memory Throughput"): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    (_SOL, "DRAM Throughput"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    (_SOL, "L1/TEX Cache Throughput"): "l1tex__throughput.avg.pct_of_peak_sustained_active",
    (_SOL, "L2 Cache Throughput"): "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    (_SOL, "Elapsed Cycles"): "gpc__cycles_elapsed.max",
    (_SOL, "SM Active Cycles"): "sm__cycles_active.avg",
    (_SOL, "SM Frequency"): "gpc__cycles_elapsed.avg.per_second",
    (_SOL, "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    (_MEM, "Memory Throughput"): "dram__bytes.sum.per_second",
    (_MEM, "Mem Busy"): "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",
    (_MEM, "Max Bandwidth"): "gpu__compute_memory_request_throughput.avg"
    ".pct_of_peak_sustained_elapsed",
    (_MEM, "Mem Pipes Busy"): "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed",
    (_MEM, "L1/TEX Hit Rate"): "l1tex__t_sector_hit_rate.pct",
    (_MEM, "L2 Hit Rate"): "lts__t_sector_hit_rate.pct",
    (_LAUNCH, "Grid Size"): "launch__grid_size",
    (_LAUNCH, "Block Size"): "launch__block_size",
    (_LAUNCH, "Threads"): "launch__thread_count",
    (_LAUNCH, "Registers Per Thread"): "launch__registers_per_thread",
    (_LAUNCH, "Static Shared Memory Per Block"): "launch__shared_mem_per_block_static",
    (_LAUNCH, "Dynamic Shared Memory Per Block"): "launch__shared_mem_per_block_dynamic",
    (_LAUNCH, "Driver Shared Memory Per Block"): "launch__shared_mem_per_block_driver",
    (_LAUNCH, "Shared Memory Configuration Size"): "launch__shared_mem_config_size",
    (_LAUNCH, "Waves Per SM"): "launch__waves_per_multiprocessor",
    (_LAUNCH, "Stack Size"): "launch__stack_size",
    (_LAUNCH, "Cluster Size"): "launch__cluster_size",
    (_LAUNCH, "# SMs"): "launch__sm_count",
    (_LAUNCH, "# TPCs"): "launch__tpc_count",
    (_LAUNCH, "Uses Green Context"): "launch__uses_green_context",
    (_OCC, "Achieved Occupancy"): "sm__warps_active.avg.pct_of_peak_sustained_active",
    (_OCC, "Achieved Active Warps Per SM"): "sm__warps_active.avg.per_cycle_active",
    (_OCC, "Theoretical Occupancy"): "sm__maximum_warps_per_active_cycle_pct",
    (_OCC, "Theoretical Active Warps per SM"): "sm__maximum_warps_avg_per_active_cycle",
    (_OCC, "Block Limit Registers"): "launch__occupancy_limit_registers",
    (_OCC, "Block Limit Shared Mem"): "launch__occupancy_limit_shared_mem",
    (_OCC, "Block Limit Warps"): "launch__occupancy_limit_warps",
    (_OCC, "Block Limit SM"): "launch__occupancy_limit_blocks",
    (_OCC, "Block Limit Barriers"): "launch__occupancy_limit_barriers",
    (_OCC, "Cluster Occupancy"): "launch__occupancy_cluster_pct",
    (_OCC, "Max Active Clusters"): "launch__cluster_max_active",
    (_OCC, "Max Cluster Size"): "launch__cluster_max_potential_size",
    (_OCC, "Overall GPU Occupancy"): "launch__occupancy_cluster_gpu_pct",
    (_SCHED, "One or More Eligible"): "smsp__issue_active.avg.pct_of_peak_sustained_active",
    (_SCHED, "No Eligible"): "smsp__issue_inst0.avg.pct_of_peak_sustained_active",
    (_SCHED, "Issued Warp Per Scheduler"): "smsp__issue_active.avg.per_cycle_active",
    (_SCHED, "Eligible Warps Per Scheduler"): "smsp__warps_eligible.avg.per_cycle_active",
    (_SCHED, "Active Warps Per Scheduler"): "smsp__warps_active.avg.per_cycle_active",
}
# the Launch Statistics section repeats the occupancy it shows with the same labels
LABELS |= {(_LAUNCH, label): m for (s, label), m in LABELS.items() if s == _OCC}


def metric_key(section: str, body: str, label: str) -> str:
    """The counter name of a details row: the raw metric name, the metric a section label
    stands for, else ``<section>/[<body item>/]<label>``."""
    if "__" in label and " " not in label:
        return label
    if not body and (mapped := LABELS.get((section, label))):
        return mapped
    return "/".join(p for p in (section, body, label) if p)


# -- scanning the file ------------------------------------------------------------------------


@dataclass
class Scan:
    """CSV records of one file, with the banner lines seen around them."""

    path: Path
    banners: list[tuple[int, str]] = field(default_factory=list)
    cut: int | None = None  # the line of a last record that ends inside quotes

    def records(self) -> Iterator[tuple[int, list[str]]]:
        """(line number, fields) of each record: a line starting with ``"`` and the lines that
        continue a quoted field it opens. Other lines are kept in ``banners`` or skipped."""
        pending, start = "", 0
        try:
            with self.path.open(encoding="utf-8-sig", errors="replace", newline="") as f:
                for number, line in enumerate(f, start=1):
                    if not pending and not line.startswith('"'):
                        if line.startswith(BANNERS):
                            self.banners.append((number, line.strip()))
                        continue
                    pending, start = pending + line, start or number
                    if pending.count('"') % 2 == 0:
                        yield start, _split(self.path, pending, start)
                        pending, start = "", 0
        except OSError as exc:
            raise InputError(
                str(self.path), f"cannot be read ({exc.strerror})", "check its permissions"
            ) from None
        if pending:
            self.cut = start
            yield start, _split(self.path, pending, start)


def _split(path: Path, text: str, line: int) -> list[str]:
    text = text.rstrip("\r\n")
    try:
        return next(csv.reader([text]), [])
    except csv.Error as exc:
        what = "a quoted field is not closed on its line" if "\n" in text else str(exc)
        raise InputError(str(path), f"is not valid CSV ({what})", _REMEDY, line=line) from None


def no_csv(path: Path, scan: Scan) -> InputError:
    """The error for a file in which no ncu CSV header was found."""
    said = [b for b in scan.banners if b[1].startswith(("==ERROR==", "==WARNING=="))]
    if said:
        line, text = said[0]
        return InputError(
            str(path),
            f"holds no ncu CSV, only ncu messages: {text!r}",
            "fix what ncu reports and re-run it (no kernels were profiled)",
            line=line,
        )
    if scan.banners:
        return InputError(
            str(path),
            "holds only ==PROF== lines and no ncu CSV (no kernels were profiled)",
            "check that the application launches kernels and ncu's --kernel-name filters",
        )
    return InputError(str(path), 'has no ncu CSV header ("ID","Process ID",...)', _REMEDY)


def page_of(text: str) -> str | None:
    """``details``, ``raw``, ``summary``, ``banners`` (ncu messages, no CSV) or None, from
    the first line that begins with ``"`` (the lines before it are program output)."""
    banners = False
    for line in text.splitlines():
        if line.startswith(DETAILS_START):
            return "details" if '"Metric Name"' in line else "raw"
        if line.startswith(SUMMARY_START):
            return "summary" if '"Invocations"' in line else None
        if line.startswith('"'):
            return None
        banners = banners or line.startswith(BANNERS)
    return "banners" if banners else None


Rule = tuple[str, str, str, str, str | None, float | None]  # section, name, kind, text, speedup

# -- launches ---------------------------------------------------------------------------------


@dataclass
class Launch:
    """One profiled kernel launch: who, where, its shape and its metric values (SI)."""

    pid: int
    id: int
    name: str
    device: int
    stream: int | None
    cc: str
    block: int | None  # threads per block, from the "Block Size" column
    grid: int | None  # blocks, from the "Grid Size" column
    metrics: dict[str, float] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)

    def duration_ns(self) -> int | None:
        seconds = self.metrics.get(DURATION)
        if seconds is None:
            cycles = self.metrics.get("sm__cycles_elapsed.avg")
            rate = self.metrics.get("sm__cycles_elapsed.avg.per_second")
            seconds = cycles / rate if cycles is not None and rate else None
        return None if seconds is None else round(seconds * 1e9)


def product(shape: str) -> int | None:
    """``"(256, 1, 1)"`` -> 256; None for an empty or malformed shape."""
    parts = shape.strip().strip("()").split(",")
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        return None
    return math.prod(dims) if dims else None


def integer(text: str | None) -> int | None:
    try:
        return int((text or "").strip())
    except ValueError:
        return None


@dataclass
class Columns:
    """A header's column positions; ``get`` gives "" for fields a ragged row lacks."""

    names: list[str]

    def __post_init__(self) -> None:
        self.index = {n: i for i, n in enumerate(self.names)}

    def get(self, row: list[str], name: str) -> str:
        i = self.index.get(name)
        return row[i] if i is not None and i < len(row) else ""

    def width(self, needed: tuple[str, ...]) -> int:
        """The number of fields a row needs to hold all these columns."""
        return max(self.index[n] for n in needed) + 1

    def require(self, path: Path, line: int, needed: tuple[str, ...]) -> None:
        missing = [n for n in needed if n not in self.index]
        if missing:
            raise InputError(
                str(path), f"the ncu header lacks column(s) {', '.join(missing)}", _REMEDY,
                line=line,
            )  # fmt: skip


def new_launch(path: Path, cols: Columns, row: list[str], line: int) -> Launch:
    """The launch a row belongs to, from its identity columns; IDs must be integers."""
    key = {c: integer(cols.get(row, c)) for c in ("ID", "Process ID")}
    for column, value in key.items():
        if value is None:
            raise InputError(
                str(path),
                f"{column} {cols.get(row, column)!r} is not an integer",
                "pass the CSV as ncu wrote it; this row is damaged",
                line=line,
            )
    block, grid = cols.get(row, "Block Size"), cols.get(row, "Grid Size")
    return Launch(
        pid=key["Process ID"] or 0,
        id=key["ID"] or 0,
        name=cols.get(row, "Kernel Name"),
        device=integer(cols.get(row, "Device")) or 0,
        stream=integer(cols.get(row, "Stream")),
        cc=cols.get(row, "CC").strip(),
        block=product(block) if block else None,
        grid=product(grid) if grid else None,
    )


# -- inserting ------------------------------------------------------------------------------


def arch_of(cc: str) -> str | None:
    """``"8.0"`` -> ``"sm_80"``; None when the compute capability is unknown."""
    major, _, minor = cc.partition(".")
    return f"sm_{major}{minor or '0'}" if major.isdigit() and minor.isdigit() else None


def lay_out(launches: list[Launch]) -> tuple[list[int | None], list[int | None], int]:
    """Start and end times laid end to end; the number of launches without a duration."""
    starts: list[int | None] = []
    ends: list[int | None] = []
    clock, untimed = 0, 0
    for launch in launches:
        duration = launch.duration_ns()
        if duration is None:
            untimed += 1
            starts.append(None)
            ends.append(None)
            continue
        starts.append(clock)
        clock += duration
        ends.append(clock)
    return starts, ends, untimed


def _ints(values: list[int | None]) -> npt.NDArray[np.int64]:
    data = np.array([0 if v is None else v for v in values], dtype=np.int64)
    if all(v is not None for v in values):
        return data
    return np.ma.masked_array(data, mask=np.array([v is None for v in values]))


def _insert(profile: Profile, table: str, columns: str, arrays: Mapping[str, object]) -> None:
    duck = profile.con
    duck.register("ncu_batch", arrays)
    try:
        duck.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM ncu_batch").fetchall()
    finally:
        duck.unregister("ncu_batch")


def shape(launch: Launch) -> tuple[int | None, ...]:
    """(stream, grid threads, block threads, LDS bytes, registers) of a launch."""
    m = launch.metrics
    block = launch.block or _whole(m.get("launch__block_size"))
    blocks = launch.grid or _whole(m.get("launch__grid_size"))
    lds = m.get("launch__shared_mem_per_block")
    if lds is None and "launch__shared_mem_per_block_static" in m:
        lds = m["launch__shared_mem_per_block_static"] + m.get(
            "launch__shared_mem_per_block_dynamic", 0.0
        )
    grid = blocks * block if blocks is not None and block is not None else None
    regs = m.get("launch__registers_per_thread")
    return launch.stream, grid, block, _whole(lds), _whole(regs)


def _whole(value: float | None) -> int | None:
    return None if value is None else round(value)


def insert_launches(profile: Profile, path: Path, launches: list[Launch], role: str) -> None:
    """The launches into dispatches, launches, counters and producer_rules."""
    source, first = len(profile.inputs), profile.count("dispatches")
    ids = profile.name_ids(launch.name for launch in launches)
    starts, ends, untimed = lay_out(launches)
    _insert(
        profile,
        "dispatches",
        "source, name_id, pid, device, dispatch_id, start_ns, end_ns",
        {
            "source": np.full(len(launches), source, dtype=np.int64),
            "name_id": np.array([ids[x.name] for x in launches], dtype=np.int64),
            "pid": np.array([x.pid for x in launches], dtype=np.int64),
            "device": np.array([x.device for x in launches], dtype=np.int64),
            "dispatch_id": np.array([x.id for x in launches], dtype=np.int64),
            "start_ns": _ints(starts),
            "end_ns": _ints(ends),
        },
    )
    _insert_shapes(profile, source, [(ids[x.name], *shape(x)) for x in launches])
    _insert_counters(profile, first, launches)
    _insert_rules(profile, first, launches)
    if untimed:
        profile.warn(
            "ncu-no-duration",
            f"{path}: {untimed} launch(es) without gpu__time_duration.sum or "
            "sm__cycles_elapsed.avg(.per_second); their time is unknown",
            untimed,
        )
    profile.add_input(str(path), Ncu.name, len(launches), role, on_timeline=False)


def _insert_shapes(profile: Profile, source: int, rows: list[tuple[int | None, ...]]) -> None:
    counts: dict[tuple[int | None, ...], int] = {}
    for row in rows:
        counts[row] = counts.get(row, 0) + 1
    columns = ["name_id", "stream", "grid_size", "workgroup_size", "lds_bytes", "arch_vgpr"]
    arrays: dict[str, object] = {c: _ints([k[i] for k in counts]) for i, c in enumerate(columns)}
    arrays |= {
        "source": np.full(len(counts), source, dtype=np.int64),
        "wave_size": np.full(len(counts), 32, dtype=np.int64),
        "dispatches": np.array(list(counts.values()), dtype=np.int64),
    }
    _insert(profile, "launches", ", ".join(["source", *columns, "wave_size", "dispatches"]), arrays)


def _insert_counters(profile: Profile, first: int, launches: list[Launch]) -> None:
    rows = [(first + k, c, v) for k, x in enumerate(launches) for c, v in x.metrics.items()]
    if rows:
        row_ids, names, values = zip(*rows, strict=True)
        arrays = {
            "row_id": np.array(row_ids, dtype=np.int64),
            "counter": np.array(names, dtype=object),
            "value": np.array(values, dtype=np.float64),
        }
        _insert(profile, "counters", "row_id, counter, value", arrays)


def _insert_rules(profile: Profile, first: int, launches: list[Launch]) -> None:
    rows = [(first + k, *r) for k, x in enumerate(launches) for r in x.rules]
    if rows:
        profile.con.executemany("INSERT INTO producer_rules VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def run_info(launches: list[Launch]) -> RunInfo:
    first = launches[0]
    cus = first.metrics.get("device__attribute_multiprocessor_count")
    return RunInfo(
        producer=Ncu.producer,
        gpu=first.texts.get("device__attribute_display_name") or None,
        arch=arch_of(first.cc),
        compute_units=None if cus is None else round(cus),
    )


# -- the pages ------------------------------------------------------------------------------

_DETAILS_NEEDED: tuple[str, ...] = ("ID", "Process ID", "Kernel Name", "Section Name")
_DETAILS_NEEDED += ("Metric Name", "Metric Unit", "Metric Value")
_RAW_NEEDED = ("ID", "Process ID", "Kernel Name")
_IDENTITY = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time"}
_IDENTITY |= {"Context", "Stream", "Block Size", "Grid Size", "Device", "CC"}
_SUMMARY_NEEDED: tuple[str, ...] = ("Process ID", "Kernel Name", "Invocations", "Metric Name")
_SUMMARY_NEEDED += ("Metric Unit",)
_SUMMARY_NEEDED += ("Minimum", "Maximum", "Average")


@dataclass
class Notes:
    """What was noticed while reading, reported once per file."""

    units: dict[str, int] = field(default_factory=dict)
    conflicts: int = 0
    cut: int | None = None  # the line of a last row that was cut short

    def unit(self, unit: str) -> None:
        self.units[unit] = self.units.get(unit, 0) + 1

    def report(self, profile: Profile, path: Path) -> None:
        if self.units:
            shown = ", ".join(f"{u!r} ({n})" for u, n in sorted(self.units.items()))
            profile.warn(
                "ncu-unknown-unit",
                f"{path}: values in units roofscope does not know were kept as written: {shown}",
                sum(self.units.values()),
            )
        if self.conflicts:
            profile.warn(
                "ncu-duplicate-metric",
                f"{path}: {self.conflicts} metric(s) given twice for one launch with different "
                "values; the first is kept",
                self.conflicts,
            )
        if self.cut is not None:
            profile.warn(
                "ncu-truncated",
                f"{path}:{self.cut}: the last CSV row is cut short (file truncated); it is "
                "left out",
            )


def put(launch: Launch, key: str, text: str, unit: str, notes: Notes) -> None:
    value, known = to_si(text, unit)
    if not known and value is not None:
        notes.unit(unit)
    if value is None:
        if text.strip() and key not in launch.texts:
            launch.texts[key] = text
        return
    old = launch.metrics.setdefault(key, value)
    if old != value and not math.isclose(old, value, rel_tol=1e-9):
        notes.conflicts += 1


class Blocks:
    """Walks a scan's records: a header line starts a block, the other records are its rows.
    A row shorter than the header's required columns (``full``: all of them) is refused
    unless it is the file's last, which is left out as a cut-short file (``cut``)."""

    def __init__(self, path: Path, scan: Scan, start: str, needed: tuple[str, ...]) -> None:
        self.path, self.scan, self.needed = path, scan, needed
        self.start = next(csv.reader([start]))[:2]
        self.cut: int | None = None

    def rows(self, *, full: bool = False) -> Iterator[tuple[int, Columns, list[str]]]:
        cols: Columns | None = None
        held: tuple[int, int, int] | None = None  # line, fields, fields expected
        for line, row in self.scan.records():
            if held is not None:
                raise InputError(
                    str(self.path), f"a row has {held[1]} fields where {held[2]} were expected",
                    _REMEDY, line=held[0],
                )  # fmt: skip
            if row[:2] == self.start:
                cols = Columns(row)
                cols.require(self.path, line, self.needed)
                yield line, cols, []
            elif cols is not None:
                width = len(cols.names) if full else cols.width(self.needed)
                if line == self.scan.cut or len(row) < width:
                    held = (line, len(row), width)
                    continue
                yield line, cols, row
        if held is not None:
            self.cut = held[0]


def read_details(path: Path, scan: Scan, notes: Notes) -> list[Launch]:
    launches: dict[tuple[int, int], Launch] = {}
    blocks = Blocks(path, scan, DETAILS_START, _DETAILS_NEEDED)
    for line, cols, row in blocks.rows():
        if not row:
            continue
        launch = new_launch(path, cols, row, line)
        launch = launches.setdefault((launch.pid, launch.id), launch)
        if label := cols.get(row, "Metric Name"):
            section, body = cols.get(row, "Section Name"), cols.get(row, "Body Item Label")
            key = metric_key(section, body, label)
            put(launch, key, cols.get(row, "Metric Value"), cols.get(row, "Metric Unit"), notes)
        if rule := cols.get(row, "Rule Name"):
            launch.rules.append(_rule(cols, row, rule))
    notes.cut = blocks.cut
    return list(launches.values())


def _rule(cols: Columns, row: list[str], rule: str) -> Rule:
    speedup = cols.get(row, "Estimated Speedup")
    return (
        cols.get(row, "Section Name"),
        rule,
        cols.get(row, "Rule Type"),
        cols.get(row, "Rule Description"),
        cols.get(row, "Estimated Speedup Type") or None,
        parse_number(speedup) if speedup else None,
    )


def read_raw(path: Path, scan: Scan, notes: Notes) -> list[Launch]:
    launches: list[Launch] = []
    units: list[str] = []
    blocks = Blocks(path, scan, DETAILS_START, _RAW_NEEDED)
    for line, cols, row in blocks.rows(full=True):
        if not row:
            units = []
        elif not units and not cols.get(row, "ID").strip():
            units = row
        else:
            launch = new_launch(path, cols, row, line)
            for i, name in enumerate(cols.names):
                if name not in _IDENTITY:
                    put(launch, name, row[i], units[i] if i < len(units) else "", notes)
            launches.append(launch)
    notes.cut = blocks.cut
    return launches


SummaryRow = tuple[str, int, float, float | None, float | None, float | None, float | None]
_GROUP = ("Process ID", "Kernel Name", "Block Size", "Grid Size", "Device")


def read_summary(path: Path, scan: Scan, notes: Notes) -> list[tuple[int, SummaryRow | None]]:
    """(pid, kernel_summary row) per kernel group; None for a group without a duration."""
    groups: dict[tuple[str, ...], dict[str, tuple[float, float, float]]] = {}
    calls: dict[tuple[str, ...], int] = {}
    blocks = Blocks(path, scan, SUMMARY_START, _SUMMARY_NEEDED)
    for line, cols, row in blocks.rows():
        if not row:
            continue
        key = tuple(cols.get(row, c) for c in _GROUP)
        n, pid = integer(cols.get(row, "Invocations")), integer(key[0])
        if n is None or pid is None:
            raise InputError(
                str(path), "Process ID or Invocations is not an integer", _REMEDY, line=line
            )
        calls[key] = n
        stats = _stats(cols, row, notes)
        label = metric_key(cols.get(row, "Section Name"), "", cols.get(row, "Metric Name"))
        metrics = groups.setdefault(key, {})
        if stats is not None:
            metrics[label] = stats
    notes.cut = blocks.cut
    return [(int(key[0]), _summary_row(key, calls[key], m)) for key, m in groups.items()]


def _stats(cols: Columns, row: list[str], notes: Notes) -> tuple[float, float, float] | None:
    """(average, minimum, maximum) in SI units, or None when one is not a number."""
    unit = cols.get(row, "Metric Unit")
    got = [to_si(cols.get(row, c), unit) for c in ("Average", "Minimum", "Maximum")]
    if not all(known for _, known in got):
        notes.unit(unit)
    (mean, _), (low, _), (high, _) = got
    if mean is None or low is None or high is None:
        return None
    return mean, low, high


_SUMMARY_DURATIONS = (
    DURATION,
    "gpu__time_duration.avg",
    "gpu__time_active.sum",
    "gpu__time_active.avg",
)


def _summary_row(
    key: tuple[str, ...], calls: int, metrics: dict[str, tuple[float, float, float]]
) -> SummaryRow | None:
    found = next((metrics[m] for m in _SUMMARY_DURATIONS if m in metrics), None)
    if found is None:
        return None
    mean, low, high = (v * 1e9 for v in found)
    return key[1], calls, mean * calls, mean, low, high, None


class Ncu(Reader):
    name = "ncu"
    description = (
        "Nsight Compute `ncu --csv` output: details page, raw page (--page raw) or "
        "--print-summary per-kernel"
    )
    producer = "ncu"
    priority = 40

    def detect(self, head: Head) -> bool:
        return head.kind == "text" and page_of(head.text) is not None

    def role(self, head: Head) -> str:
        return KERNEL_SUMMARY if page_of(head.text) == "summary" else DISPATCHES

    def timed(self, head: Head) -> bool:
        return False

    def read(self, path: Path, head: Head, profile: Profile, *, role: str) -> None:
        scan, notes = Scan(path), Notes()
        page = _page_in_file(path, scan)
        if page == "summary":
            self._read_summary(path, scan, notes, profile, role)
        else:
            read = read_raw if page == "raw" else read_details
            launches = read(path, scan, notes)
            if not launches:
                raise InputError(str(path), "has an ncu header but no kernel launches", _REMEDY)
            insert_launches(profile, path, launches, role)
            profile.set_run(run_info(launches))
        notes.report(profile, path)

    def _read_summary(
        self, path: Path, scan: Scan, notes: Notes, profile: Profile, role: str
    ) -> None:
        rows = read_summary(path, scan, notes)
        timed = [(pid, r) for pid, r in rows if r is not None]
        if not timed:
            raise InputError(
                str(path),
                "has no duration metric (gpu__time_duration.sum) in its per-kernel summary",
                "re-run ncu --print-summary per-kernel with --metrics gpu__time_duration.sum",
            )
        source = len(profile.inputs)
        for pid in dict.fromkeys(pid for pid, _ in timed):
            mine = [r for p, r in timed if p == pid]
            insert_kernel_summary(profile, source, mine, pid=pid)
        if len(timed) < len(rows):
            profile.warn(
                "ncu-no-duration",
                f"{path}: {len(rows) - len(timed)} kernel(s) without a duration metric left out",
                len(rows) - len(timed),
            )
        profile.add_input(str(path), self.name, len(timed), role, on_timeline=False)
        profile.set_run(RunInfo(producer=self.producer))


def _page_in_file(path: Path, scan: Scan) -> str:
    """The page of the first CSV header in the whole file (the head may show only banners)."""
    for line, row in Scan(path).records():
        text = ",".join(f'"{f}"' for f in row[:2])
        if text == DETAILS_START:
            return "details" if "Metric Name" in row else "raw"
        if text == SUMMARY_START and "Invocations" in row:
            return "summary"
        raise InputError(
            str(path), f"its first CSV line is not an ncu header ({text[:60]})", _REMEDY,
            line=line,
        )  # fmt: skip
    # read the whole file for its banners before giving up
    for _ in scan.records():
        pass
    raise no_csv(path, scan)
