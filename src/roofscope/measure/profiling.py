"""``roofscope profile``: run a program under a profiler with the counters the check-up needs.

The counters are not listed by hand: they are the ones the roofline's work formulas
(:mod:`roofscope.analysis.work.counters`, :mod:`roofscope.analysis.work.nvidia`) and, for
``--set full``, the metric catalogue (:mod:`roofscope.analysis.metrics.derived`) read, found
by evaluating those formulas over a recorder that notes every counter name asked for. They
are then kept to those the profiler says exist on this machine (``rocprofv3 --list-avail``,
``ncu --query-metrics``).

Per profiler:

``rocprofv3``
    pass 1: ``--kernel-trace --stats`` (the timed dispatches); then one pass per counter group
    (``--pmc``), at most :data:`PASS_LIMITS` counters of one hardware block per pass (a
    conservative split: a pass the hardware cannot take fails and is reported). Each pass
    writes CSV into ``DIR/pass_N``.
``rocprof`` (v1)
    pass 1: ``--stats --timestamp on``; counter passes through ``-i`` files of ``pmc:`` lines.
``ncu``
    one run: ncu replays each kernel as often as its metrics need; ``--csv --page details``
    with the device's attributes (:data:`NCU_DEVICE`: name, SMs, clocks, memory bus, L2) and
    with ``--metrics`` (roofline) or ``--set full`` plus them (full) into ``DIR/ncu.csv``;
    ``--clock-control none``, so kernels run at the clocks the program gets and the roofline's
    peaks assume (ncu's default locks base clocks: on an H200 a bf16 product then reached 671
    TFLOP/s, against 780 unprofiled).
``nsys``
    one run: ``nsys profile`` then ``nsys stats`` (cuda_gpu_trace); timing only, so the
    ``roofline`` and ``full`` sets are refused with a pointer to ncu.

Every run is recorded in ``DIR/roofscope-manifest.json`` (command, working directory,
profiler and version, passes with their command lines, start and end times and exit codes).
A pass that fails stops the run with a one-line error naming it; what was written is kept.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import asdict, fields, replace

from roofscope.analysis.counters import Array, Counters, Missing
from roofscope.analysis.metrics.column import Column
from roofscope.analysis.metrics.derived import CATALOGUE
from roofscope.analysis.metrics.machine import Machine
from roofscope.analysis.work import nvidia
from roofscope.analysis.work.counters import BYTES, FLOPS
from roofscope.errors import InputError, UsageError

PROFILERS = ("rocprofv3", "rocprof", "ncu", "nsys")
SETS = ("hotspots", "roofline", "full")
# counters of one hardware block per pass (the block is the name's prefix before "_")
PASS_LIMITS = {"SQ": 8, "TCC": 4, "TCP": 4, "TA": 2, "TD": 2, "GRBM": 2}
DEFAULT_LIMIT = 2
MANIFEST = "roofscope-manifest.json"
# what ncu knows of the device, recorded with each kernel: its name identifies the GPU in the
# catalogue; SMs, clocks, memory bus and L2 size describe one that is in no catalogue
NCU_DEVICE = (
    "device__attribute_display_name",
    "device__attribute_multiprocessor_count",
    "device__attribute_clock_rate",
    "device__attribute_max_gpu_frequency_khz",
    "device__attribute_memory_clock_rate",
    "device__attribute_max_mem_frequency_khz",
    "device__attribute_global_memory_bus_width",
    "device__attribute_l2_cache_size",
)


# -- which counters -------------------------------------------------------------------------


class _Recorder(dict[str, Array]):
    """A counter mapping that has every counter but ``absent`` and notes each name asked."""

    def __init__(self, absent: frozenset[str]) -> None:
        super().__init__()
        self.absent = absent
        self.asked: set[str] = set()

    def get(self, name: str, default: object = None) -> Array | None:  # type: ignore[override]
        self.asked.add(name)
        gone = name in self.absent or f"{name}_sum" in self.absent  # X stands in for X_sum
        return None if gone else Column([1.0])


def _asked(formulas: Sequence[Callable[[Counters], object]]) -> set[str]:
    """Every counter a formula may read, through each alternative it falls back to: each
    formula is run again with each counter it asked for taken away, until nothing new."""
    asked: set[str] = set()
    for formula in formulas:
        todo, seen = [frozenset[str]()], set[frozenset[str]]()
        while todo and len(seen) < 1024:
            absent = todo.pop()
            seen.add(absent)
            recorder = _Recorder(absent)
            with contextlib.suppress(Missing, ArithmeticError):
                formula(Counters(recorder, size=1))
            asked |= recorder.asked
            todo += [absent | {n} for n in recorder.asked - absent if absent | {n} not in seen]
    return {n for n in asked if "@" not in n and "[" not in n}


def _metric_counters() -> set[str]:
    constants: dict[str, Any] = {
        f.name: 1 for f in fields(Machine) if f.name not in ("arch", "sources")
    }
    machine = replace(Machine(), **constants)
    one = Column([1.0])
    formulas = [(lambda c, m=metric: m.parts(c, machine, one)) for metric in CATALOGUE]
    return _asked(formulas)


def wanted(vendor: str, counter_set: str) -> list[str]:
    """The counters the roofline (and for ``full`` the metric catalogue) reads."""
    if counter_set == "hotspots":
        return []
    work = [*nvidia.FLOPS.values(), *nvidia.BYTES.values()] if vendor == "nvidia" else []
    work = work or [*FLOPS.values(), *BYTES.values()]
    names = _asked(work)
    if counter_set == "full":
        names |= _metric_counters()
    nv = {n for n in names if "__" in n}
    return sorted(nv if vendor == "nvidia" else names - nv)


def keep_available(names: Sequence[str], listing: str) -> list[str]:
    """``names`` the profiler's listing mentions; ``X_sum`` is kept as ``X`` when only ``X``
    is listed (rocprofv3 sums a counter's instances itself)."""
    listed = set(re.findall(r"[A-Za-z][\w.]*", listing))
    bases = {n.split(".")[0] for n in listed}
    out = []
    for name in names:
        if name in listed or (name.split(".")[0] in bases and "__" in name):
            out.append(name)
        elif name.endswith("_sum") and name.removesuffix("_sum") in listed:
            out.append(name.removesuffix("_sum"))
    kept = set(out)
    return sorted(n for n in kept if f"{n}_sum" not in kept)  # one of X and X_sum


def split_passes(counters: Sequence[str]) -> list[list[str]]:
    """Counters in passes, each holding at most PASS_LIMITS[block] counters of a block."""
    passes: list[list[str]] = []
    for name in sorted(counters):
        block = name.split("_")[0]
        limit = PASS_LIMITS.get(block, DEFAULT_LIMIT)
        for group in passes:
            if sum(c.split("_")[0] == block for c in group) < limit:
                group.append(name)
                break
        else:
            passes.append([name])
    return passes


# -- command lines --------------------------------------------------------------------------


class Pass(msgspec.Struct, frozen=True):
    argv: tuple[str, ...]
    folder: str  # where it writes, relative to the output folder
    counters: tuple[str, ...] = ()
    stdout: str | None = None  # a file (relative) that receives the profiler's stdout


def plan(
    profiler: str,
    counter_set: str,
    counters: Sequence[str],
    command: Sequence[str],
    *,
    kernel: str | None = None,
) -> list[Pass]:
    """The profiler runs for one check-up, in order."""
    cmd = tuple(command)
    if profiler == "rocprofv3":
        only = ("--kernel-include-regex", kernel) if kernel else ()
        out = ("--output-format", "csv")
        passes = [
            Pass(
                ("rocprofv3", "--kernel-trace", "--stats", *only, *out, "-d", "pass_1", "--", *cmd),
                "pass_1",
            )
        ]
        for i, group in enumerate(split_passes(counters), start=2):
            folder = f"pass_{i}"
            argv = ("rocprofv3", "--pmc", *group, *only, *out, "-d", folder, "--", *cmd)
            passes.append(Pass(argv, folder, tuple(group)))
        return passes
    if profiler == "rocprof":
        passes = [
            Pass(
                ("rocprof", "--stats", "--timestamp", "on", "-o", "pass_1/results.csv", *cmd),
                "pass_1",
            )
        ]
        for i, group in enumerate(split_passes(counters), start=2):
            folder = f"pass_{i}"
            argv = (
                "rocprof",
                "-i",
                f"{folder}/input.txt",
                "--timestamp",
                "on",
                "-o",
                f"{folder}/results.csv",
                *cmd,
            )
            passes.append(Pass(argv, folder, tuple(group)))
        return passes
    if profiler == "ncu":
        only = ("--kernel-name", f"regex:{kernel}") if kernel else ()
        metrics = ("gpu__time_duration.sum", *NCU_DEVICE, *counters)
        what = ("--set", "full") if counter_set == "full" else ()
        argv = (
            "ncu",
            "--clock-control",
            "none",
            "--csv",
            "--page",
            "details",
            *what,
            "--metrics",
            ",".join(metrics),
            *only,
            *cmd,
        )
        return [Pass(argv, ".", tuple(counters), stdout="ncu.csv")]
    if counter_set != "hotspots":
        raise UsageError(
            f"--set {counter_set}: nsys records timing only; use --with ncu for counters"
        )
    return [
        Pass(("nsys", "profile", "--force-overwrite", "true", "-o", "report", *cmd), "."),
        Pass(
            (
                "nsys",
                "stats",
                "--force-export",
                "true",
                "--report",
                "cuda_gpu_trace",
                "--format",
                "csv",
                "--output",
                "report",
                "report.nsys-rep",
            ),
            ".",
        ),
    ]


# -- running --------------------------------------------------------------------------------


def pick(name: str | None, which: Callable[[str], str | None] = shutil.which) -> str:
    """The profiler named, or the first of PROFILERS on PATH."""
    if name is not None:
        if name not in PROFILERS:
            raise UsageError(f"--with {name}: unknown profiler; use one of {', '.join(PROFILERS)}")
        if which(name) is None:
            raise InputError(
                name, "is not on PATH", "install it (ROCm or the CUDA toolkit) or add it to PATH"
            )
        return name
    for candidate in PROFILERS:
        if which(candidate):
            return candidate
    raise InputError(
        "roofscope profile",
        f"found no profiler on PATH ({', '.join(PROFILERS)})",
        "install ROCm (rocprofv3) or the CUDA toolkit (ncu, nsys), or add it to PATH",
    )


def vendor_of(profiler: str) -> str:
    return "nvidia" if profiler in ("ncu", "nsys") else "amd"


def listing(profiler: str) -> str:
    """What the profiler says it can count on this machine ('' when it cannot say)."""
    argv = {
        "rocprofv3": ["rocprofv3", "--list-avail"],
        "rocprof": ["rocprof", "--list-basic"],
        "ncu": ["ncu", "--query-metrics"],
    }.get(profiler)
    if argv is None:
        return ""
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def version(profiler: str) -> str:
    done = subprocess.run([profiler, "--version"], capture_output=True, text=True, check=False)
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[-1].strip() if lines else "unknown"


class Manifest(msgspec.Struct):
    command: list[str]
    cwd: str
    profiler: str
    profiler_version: str
    counter_set: str
    counters: list[str]
    passes: list[dict[str, object]] = msgspec.field(default_factory=list)
    started: str = ""
    ended: str = ""

    def write(self, out: Path) -> None:
        path = out / MANIFEST
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run(passes: Sequence[Pass], out: Path, cwd: Path, manifest: Manifest) -> Iterator[Pass]:
    """Run each pass (in ``cwd``, writing under ``out``); yields each one that finished, and
    raises InputError for the first whose process failed. The manifest is kept current."""
    manifest.started = _now()
    for number, p in enumerate(passes, start=1):
        folder = out / p.folder
        folder.mkdir(parents=True, exist_ok=True)
        if p.argv[0] == "rocprof" and p.counters:
            (folder / "input.txt").write_text(f"pmc: {' '.join(p.counters)}\n", encoding="utf-8")
        argv = [_absolute(a, out, p) for a in p.argv]
        entry: dict[str, object] = {"argv": argv, "folder": p.folder, "started": _now()}
        manifest.passes.append(entry)
        manifest.write(out)
        stdout = (out / p.stdout).open("w", encoding="utf-8") if p.stdout else None
        try:
            code = subprocess.run(argv, cwd=cwd, stdout=stdout, check=False).returncode
        except OSError as exc:
            code = 127
            entry["error"] = str(exc)
        finally:
            if stdout:
                stdout.close()
        entry.update(ended=_now(), exit_code=code)
        manifest.ended = _now()
        manifest.write(out)
        if code != 0:
            raise InputError(
                f"pass {number} ({' '.join(argv[:2])} ...)",
                f"exited with code {code}",
                f"see the program's messages above; what it wrote is kept in {folder}",
            )
        yield p


def _absolute(arg: str, out: Path, p: Pass) -> str:
    """Output paths of the command line (the pass folder and what is in it) under ``out``."""
    if p.folder != "." and (arg == p.folder or arg.startswith(f"{p.folder}/")):
        return str(out / arg)
    if p.folder == "." and arg in ("report", "report.nsys-rep"):
        return str(out / arg)
    return arg


def counters_for(
    profiler: str, counter_set: str, list_avail: Mapping[str, str] | None = None
) -> list[str]:
    """The counters to collect: wanted by the analyses, and listed by the profiler."""
    names = wanted(vendor_of(profiler), counter_set)
    if not names:
        return []
    text = (list_avail or {}).get(profiler)
    return keep_available(names, listing(profiler) if text is None else text)


def wrote_dispatches(folder: Path, p: Pass) -> bool:
    """Whether a pass left a profiler file with at least one row after its header."""
    files = [folder / p.stdout] if p.stdout else sorted(folder.rglob("*"))
    for path in files:
        if path.is_file() and path.suffix in (".csv", ".db", ".sqlite", ".json"):
            with path.open("rb") as f:
                if sum(1 for _, _ in zip(range(2), f, strict=False)) >= 2:
                    return True
    return False
