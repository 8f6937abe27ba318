"""The analysis options, declared and checked once, for both adapters: the command line
spells an option ``--gap-us``, Python ``gap_us=`` (:class:`Spelling`); every range check and
every message about an option is made here, in the caller's spelling.

Nothing here loads DuckDB or numpy: ``cli/options.py`` builds the command-line options from
:data:`OPTIONS` for ``--help``.
"""

from __future__ import annotations

import math
import re
from enum import Enum

import msgspec

from roofscope.errors import RoofscopeError, UsageError

FP32_MATMUL = ("fp32", "tf32")  # how a PyTorch trace's fp32 GEMMs ran (--fp32-matmul)

MAX_GAP_US = 1e12  # 11.6 days; beyond it the threshold overflowed the integer nanoseconds
# analysis.timeline.DEFAULT_GAP_NS in µs (tests/test_startup.py holds them equal): importing
# the analysis would load DuckDB and numpy for every command's help
DEFAULT_GAP_US = 10.0
LOCAL = "local"  # --scheduler local: this machine's worker processes, no Dask
MAX_SLOWER_PCT = 1e6  # 10,000 times slower; inf reached the JSON gate thresholds


class Spelling(Enum):
    """How the caller names an option: ``--gap-us`` on the command line, ``gap_us=`` in Python."""

    CLI = "cli"
    PYTHON = "python"


class Option(msgspec.Struct, frozen=True):
    """One analysis option: its Python name, its flag, its help, and its range (numbers)."""

    name: str
    flag: str
    help: str
    low: float | None = None
    high: float | None = None
    env: str | None = None  # the environment variable that gives it, when the flag does not
    choices: tuple[str, ...] = ()  # the values it takes, where it is one of a few words

    def spelt(self, spelling: Spelling) -> str:
        return self.flag if spelling is Spelling.CLI else f"{self.name}="


_OPTIONS = (
    Option("fmt", "--format", "Read every file as this format (see `roofscope formats`)."),
    Option("kernel", "--kernel", "Only kernels whose normalised name matches this regex."),
    Option("device", "--device", "Only dispatches on this device (agent) id."),
    Option("gap_us", "--gap-us", "Count idle gaps at least this long (µs).", 0, MAX_GAP_US),
    Option(
        "gpu", "--gpu",
        "The GPU it ran on, when the profile does not say (see `roofscope devices`).",
    ),
    Option(
        "fp32_matmul", "--fp32-matmul",
        "How a PyTorch trace's fp32 GEMMs ran, for their ceiling: fp32 (PyTorch's default "
        "matmul precision) or tf32 (allow_tf32, or a float32 matmul precision of 'high').",
        choices=FP32_MATMUL,
    ),
    Option(
        "work", "--work",
        "Work of a kernel: NAME=FLOPS:BYTES[@DTYPE] (totals), or a work file (TOML). Repeatable.",
    ),
    Option(
        "ceilings", "--ceilings",
        "Ceilings file (TOML): your peaks override measured and catalogue ones.",
    ),
    Option(
        "graph_capture", "--graph-capture",
        "A PyTorch trace of the CUDA/HIP graph capture: replayed kernels get the operators and "
        "shapes of their captured launches. Repeatable.",
    ),
    Option("peak_flops", "--peak-flops", "FP32 vector peak, FLOP/s (e.g. 22.6e12).", 0, math.inf),
    Option("peak_bw", "--peak-bw", "HBM bandwidth peak, B/s (e.g. 1.6e12).", 0, math.inf),
    Option(
        "jobs", "--jobs",
        "Worker processes reading the runs (ranks) of a job (default: all cores).", 1, math.inf,
    ),
    Option(
        "scheduler", "--scheduler",
        "Read each run (rank) on this Dask scheduler (tcp://HOST:PORT, or its --scheduler-file), "
        "or 'local': this machine's worker processes (--jobs). The check-up is the same.",
        env="ROOFSCOPE_SCHEDULER",
    ),
    Option(
        "skip_unreadable", "--skip-unreadable",
        "Leave out the runs (ranks) that cannot be read, even those named, and list them.",
    ),
    Option(
        "memory_limit", "--memory-limit",
        "Keep the profile's database within this much memory (500MB, 2GiB; at least 64MiB), "
        "spilling to a temporary folder beyond it: slower, for a trace larger than the memory "
        "you have. Default: DuckDB's, 80% of RAM.",
        env="ROOFSCOPE_MEMORY_LIMIT",
    ),
)  # fmt: skip
# compare's gate (--fail-if-slower ...): the command's options and Comparison.gate's arguments
_GATE = (
    Option(
        "fail_if_slower", "--fail-if-slower",
        "Fail (exit 3) if the total kernel time is this many % slower, beyond noise.",
        0, MAX_SLOWER_PCT,
    ),
    Option(
        "fail_if_kernel_slower", "--fail-if-kernel-slower",
        "Fail (exit 3) if a kernel above --min-share is this many % slower, beyond noise.",
        0, MAX_SLOWER_PCT,
    ),
    Option(
        "min_share", "--min-share",
        "Kernels the gate checks: at least this share of the baseline's kernel time.", 0, 1,
    ),
)  # fmt: skip
OPTIONS = {o.name: o for o in (*_OPTIONS, *_GATE)}


class CheckupOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The analysis options, as given; :meth:`checked` refuses a value out of range."""

    fmt: str | None = None
    kernel: str | None = None
    device: int | None = None
    gap_us: float = DEFAULT_GAP_US
    gpu: str | None = None
    fp32_matmul: str = FP32_MATMUL[0]
    work: tuple[str, ...] = ()
    ceilings: str | None = None
    graph_capture: tuple[str, ...] = ()
    peak_flops: float | None = None
    peak_bw: float | None = None
    jobs: int | None = None
    scheduler: str | None = None
    skip_unreadable: bool = False
    memory_limit: str | None = None

    @property
    def files(self) -> list[str]:
        """The paths the options name (work, ceilings and capture files): inputs, never
        outputs."""
        return [*self.work, *([self.ceilings] if self.ceilings else []), *self.graph_capture]

    def checked(self, spelling: Spelling) -> CheckupOptions:
        """These options, or a UsageError naming the first out of its range, or ``--jobs``
        with a Dask scheduler (whose workers are the cluster's)."""
        in_range(self, spelling)
        if self.fp32_matmul not in FP32_MATMUL:
            option = OPTIONS["fp32_matmul"].spelt(spelling)
            gap = "" if spelling is Spelling.PYTHON else " "
            raise UsageError(
                f"{option}{gap}{self.fp32_matmul!r}: expected one of {', '.join(FP32_MATMUL)}"
            )
        if self.jobs is not None and self.scheduler not in (None, LOCAL):
            jobs, scheduler = OPTIONS["jobs"].spelt(spelling), OPTIONS["scheduler"].spelt(spelling)
            raise UsageError(
                f"{jobs} sets this machine's worker processes, and {scheduler} "
                f"{self.scheduler} runs on the Dask cluster's workers; drop {jobs}, or use "
                f"{scheduler} {LOCAL}"
            )
        return self


# a memory size as DuckDB reads one: 1000^i units or 1024^i ones, the case ignored
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B)\s*", re.IGNORECASE)
_UNITS = {"k": 1, "m": 2, "g": 3, "t": 4}
MIN_MEMORY_BYTES = 64 << 20  # below it DuckDB cannot hold even a small trace's statements


def size_bytes(text: str, option: str, spelling: Spelling) -> int:
    """The bytes a size such as ``500MB`` or ``2GiB`` names, or a UsageError in the caller's
    spelling: no size, or less than :data:`MIN_MEMORY_BYTES`."""
    gap = "" if spelling is Spelling.PYTHON else " "
    found = _SIZE.fullmatch(text)
    if found is None:
        raise UsageError(
            f"{option}{gap}{text!r}: expected a size such as 500MB or 2GiB (KB, MB, GB, TB, "
            "or KiB, MiB, GiB, TiB)"
        )
    number, unit = found.groups()
    base = 1024 if unit[1] in "iI" else 1000
    size = int(float(number) * base ** _UNITS[unit[0].lower()])
    if size < MIN_MEMORY_BYTES:
        raise UsageError(f"{option}{gap}{text!r}: expected at least 64MiB")
    return size


class GateOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The compare gate's thresholds, as given; :meth:`checked` refuses one out of range."""

    fail_if_slower: float | None = None
    fail_if_kernel_slower: float | None = None
    min_share: float = 0.01

    def checked(self, spelling: Spelling) -> GateOptions:
        in_range(self, spelling)
        return self


def in_range(options: CheckupOptions | GateOptions, spelling: Spelling) -> None:
    """A UsageError naming the first option whose number is outside its declared range (NaN
    is outside every range), in the caller's spelling."""
    for name in options.__struct_fields__:  # fields() would resolve every annotation
        option, value = OPTIONS[name], getattr(options, name)
        if option.low is None or option.high is None or value is None:
            continue
        if not option.low <= value <= option.high:
            raise UsageError(
                f"{option.spelt(spelling)}{'' if spelling is Spelling.PYTHON else ' '}"
                f"{_number(value)}: expected a number from {_number(option.low)} to "
                f"{_number(option.high)}"
            )


def _number(value: float) -> str:
    """A bound as the messages show it: ``0``, ``1,000,000,000,000``, ``inf``."""
    from roofscope.model.words import sig  # the model stage: not for --help, which checks none

    return str(value) if not math.isfinite(value) else sig(value)


def worded(exc: RoofscopeError, spelling: Spelling = Spelling.CLI) -> str:
    """The one line for ``exc``: a selection error names the options the caller gave."""
    from roofscope.model.selection import BadPattern, EmptySelection  # DuckDB: not for --help

    kernel, device = OPTIONS["kernel"].spelt(spelling), OPTIONS["device"].spelt(spelling)
    gap = "" if spelling is Spelling.PYTHON else " "
    if isinstance(exc, BadPattern):
        return f"{kernel}{gap}{exc.pattern!r}: not a valid regular expression ({exc.why})"
    if isinstance(exc, EmptySelection):
        given = [f"{kernel}{gap}{exc.kernel!r}"] if exc.kernel is not None else []
        given += [f"{device}{gap}{exc.device}"] if exc.device is not None else []
        known = ", ".join(map(str, exc.devices)) or "none named"
        return (
            f"{' '.join(given)}: selects nothing of the profile (its devices: {known}); "
            f"widen the selection ({kernel} searches the normalised kernel names)"
        )
    return str(exc)
