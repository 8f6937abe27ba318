"""ncu's kernel launches: one per (``Process ID``, ``ID``), built from a row's identity
columns, laid end to end in time and written into dispatches, launches, counters and
producer_rules."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from roofscope.errors import InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.model.words import count, sized
from roofscope.readers.io.batches import column, fits, registered
from roofscope.readers.io.stats_csv import PLAUSIBLE
from roofscope.readers.nvidia.ncu_labels import DURATION
from roofscope.readers.nvidia.ncu_scan import Columns
from roofscope.readers.nvidia.ncu_units import integer, product

if TYPE_CHECKING:
    from roofscope.readers.io.batches import Column

Rule = tuple[str, str, str, str, str | None, float | None]  # section, name, kind, text, speedup
MAX_COMPUTE_UNITS = 100_000  # SMs of one GPU; beyond it the attribute is damage
MAX_CLOCK_KHZ = 100e6  # 100 GHz: beyond any GPU or memory clock, the attribute is damage
MAX_BUS_BITS = 1 << 20  # bits of a memory interface, likewise

# -- launches ---------------------------------------------------------------------------------


class Launch(msgspec.Struct):
    """One profiled kernel launch: who, where, its shape and its metric values (SI)."""

    pid: int
    id: int
    name: str
    device: int
    stream: int | None
    cc: str
    block: int | None  # threads per block, from the "Block Size" column
    grid: int | None  # blocks, from the "Grid Size" column
    metrics: dict[str, float] = msgspec.field(default_factory=dict)
    texts: dict[str, str] = msgspec.field(default_factory=dict)
    rules: list[Rule] = msgspec.field(default_factory=list)

    def duration_ns(self) -> int | None:
        seconds = self.metrics.get(DURATION)
        if seconds is None:
            cycles = self.metrics.get("sm__cycles_elapsed.avg")
            rate = self.metrics.get("sm__cycles_elapsed.avg.per_second")
            seconds = cycles / rate if cycles is not None and rate else None
        return None if seconds is None else round(seconds * 1e9)


def new_launch(path: Path, cols: Columns, row: list[str], line: int) -> Launch:
    """The launch a row belongs to, from its identity columns; IDs must be integers."""
    key = {c: integer(cols.get(row, c)) for c in ("ID", "Process ID")}
    for name, value in key.items():
        if value is None:
            raise InputError(
                str(path),
                f"{name} {cols.get(row, name)!r} is not an integer of 64 bits",
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


def lay_out(path: Path, launches: list[Launch]) -> tuple[list[int | None], list[int | None], int]:
    """Start and end times laid end to end; the number of launches without a duration. A
    duration past 10^18 ns (31 years) is an error naming the launch."""
    starts: list[int | None] = []
    ends: list[int | None] = []
    clock, untimed = 0, 0
    for launch in launches:
        duration = launch.duration_ns()
        if duration is not None and not 0 <= duration <= PLAUSIBLE:
            raise InputError(
                str(path),
                f"launch {launch.id} of process {launch.pid} ({launch.name[:60]!r}) lasts "
                f"{sized(duration, 'ns')}, beyond any kernel's time",
                "pass the report as ncu wrote it",
            )
        if duration is None:
            untimed += 1
            starts.append(None)
            ends.append(None)
            continue
        starts.append(clock)
        clock += duration
        ends.append(clock)
    return starts, ends, untimed


def _insert(profile: Profile, table: str, columns: str, arrays: dict[str, Column]) -> None:
    with registered(profile, "ncu_batch", arrays) as duck:
        duck.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM ncu_batch").fetchall()


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
    return launch.stream, _whole(grid), block, _whole(lds), _whole(regs)


def _whole(value: float | None) -> int | None:
    """A shape value as int; None (unknown) when absent or past 64 bits."""
    return None if value is None or not fits(value) else round(value)


def insert_launches(
    profile: Profile, path: Path, launches: list[Launch], role: Role, *, fmt: str
) -> None:
    """The launches into dispatches, launches, counters and producer_rules, as an input of
    reader ``fmt``."""
    import numpy as np  # when ncu is read: detection (every folder's CSVs) needs none

    source, first = profile.begin_input(), profile.count("dispatches")
    ids = profile.name_ids(launch.name for launch in launches)
    starts, ends, untimed = lay_out(path, launches)
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
            "start_ns": column(starts, "int"),
            "end_ns": column(ends, "int"),
        },
    )
    _insert_shapes(profile, source, [(ids[x.name], *shape(x)) for x in launches])
    _insert_counters(profile, first, launches)
    _insert_rules(profile, first, launches)
    if untimed:
        profile.warn(
            "ncu-no-duration",
            f"{path}: {count(untimed, 'launch')} without gpu__time_duration.sum or "
            "sm__cycles_elapsed.avg(.per_second); their time is unknown",
            untimed,
        )
    profile.add_input(str(path), fmt, len(launches), role, on_timeline=False)


def _insert_shapes(profile: Profile, source: int, rows: list[tuple[int | None, ...]]) -> None:
    import numpy as np  # when ncu is read: detection (every folder's CSVs) needs none

    counts: dict[tuple[int | None, ...], int] = {}
    for row in rows:
        counts[row] = counts.get(row, 0) + 1
    columns = ["name_id", "stream", "grid_size", "workgroup_size", "lds_bytes", "arch_vgpr"]
    arrays = {c: column([k[i] for k in counts], "int") for i, c in enumerate(columns)}
    arrays |= {
        "source": np.full(len(counts), source, dtype=np.int64),
        "wave_size": np.full(len(counts), 32, dtype=np.int64),
        "dispatches": np.array(list(counts.values()), dtype=np.int64),
    }
    _insert(profile, "launches", ", ".join(["source", *columns, "wave_size", "dispatches"]), arrays)


def _insert_counters(profile: Profile, first: int, launches: list[Launch]) -> None:
    insert_metrics(profile, range(first, first + len(launches)), launches, set())


def insert_metrics(
    profile: Profile, row_ids: Sequence[int], launches: list[Launch], held: set[tuple[int, str]]
) -> None:
    """Each launch's metrics onto its dispatch row, in one batch; those ``held`` (row,
    metric) already are left out (a second export of the same launches)."""
    import numpy as np  # when ncu is read: detection (every folder's CSVs) needs none

    rows = [
        (row, c, v)
        for row, x in zip(row_ids, launches, strict=True)
        for c, v in x.metrics.items()
        if (row, c) not in held
    ]
    if rows:
        row_ids, names, values = zip(*rows, strict=True)
        ids = profile.counter_ids(names)
        arrays = {
            "row_id": np.array(row_ids, dtype=np.int64),
            "counter_id": np.array([ids[n] for n in names], dtype=np.int64),
            "value": np.array(values, dtype=np.float64),
        }
        _insert(profile, "counters", "row_id, counter_id, value", arrays)


def _insert_rules(profile: Profile, first: int, launches: list[Launch]) -> None:
    rows = [(first + k, *r) for k, x in enumerate(launches) for r in x.rules]
    if rows:
        profile.con.executemany("INSERT INTO producer_rules VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


def run_info(launches: list[Launch], *, producer: str) -> RunInfo:
    """The run's GPU, arch, compute units and device attributes, from the first launch.

    ncu writes the CUDA device attributes as CUDA defines them: clocks in kHz (the maximum
    ``max_gpu_frequency_khz``/``max_mem_frequency_khz``, else ``clock_rate``/
    ``memory_clock_rate``), the bus width in bits (``global_memory_bus_width``, else
    ``fb_bus_width``). A details page without them still gives the SM count (Launch
    Statistics "# SMs") and the DRAM clock it ran at (Speed Of Light "DRAM Frequency": HBM
    runs at its one clock, which names the part: 2.6 GHz an H100 SXM, 3.2 GHz an H200)."""
    m = launches[0].metrics
    cus = m.get("device__attribute_multiprocessor_count")
    cus = m.get("launch__sm_count") if cus is None else cus  # the details page's "# SMs"
    bus = m.get("device__attribute_global_memory_bus_width")
    bus = m.get("device__attribute_fb_bus_width") if bus is None else bus
    return RunInfo(
        producer=producer,
        gpu=launches[0].texts.get("device__attribute_display_name") or None,
        arch=arch_of(launches[0].cc),
        compute_units=round(cus) if cus is not None and 0 < cus <= MAX_COMPUTE_UNITS else None,
        clock_mhz=_mhz(m, "max_gpu_frequency_khz", "clock_rate"),
        memory_clock_mhz=_mhz(m, "max_mem_frequency_khz", "memory_clock_rate") or _dram_mhz(m),
        bus_width_bits=round(bus) if bus is not None and 0 < bus <= MAX_BUS_BITS else None,
    )


def _mhz(metrics: dict[str, float], *names: str) -> float | None:
    """The first of the ``device__attribute_<name>`` clocks (kHz) that is plausible, in MHz."""
    for name in names:
        khz = metrics.get(f"device__attribute_{name}")
        if khz is not None and 0 < khz <= MAX_CLOCK_KHZ:
            return khz / 1000
    return None


def _dram_mhz(metrics: dict[str, float]) -> float | None:
    """The details page's "DRAM Frequency" (``dram__cycles_elapsed.avg.per_second``, Hz), in
    MHz, when plausible."""
    hz = metrics.get("dram__cycles_elapsed.avg.per_second")
    return hz / 1e6 if hz is not None and 0 < hz <= MAX_CLOCK_KHZ * 1000 else None
