"""Every option more than one command takes, declared once with its help text.

A command lists the options it takes (``o.GPU``); the analysis options (``FORMAT`` to
``MEMORY_LIMIT``) are declared and checked in ``checkup/options.py`` and travel on as one
``CheckupOptions``. An option only one command has is declared beside that command.
"""

from __future__ import annotations

from typing import Any

import msgspec

from roofscope.checkup.options import (
    DEFAULT_GAP_US,
    MAX_GAP_US,
    OPTIONS,
    CheckupOptions,
    GateOptions,
)
from roofscope.checkup.options import (
    FP32_MATMUL as MATMUL_PRECISIONS,
)
from roofscope.cli.parse import Opt

__all__ = ["DEFAULT_GAP_US", "MAX_GAP_US"]


def _option(
    name: str, kind: str = "text", metavar: str | None = None, default: object = None
) -> Opt:
    """The option of ``checkup/options.py``'s declaration: its flag, help and environment
    variable, and ``default`` said in its help. The range is checked there
    (``CheckupOptions.checked``), in the words of the command line."""
    option = OPTIONS[name]
    said = "" if default is None else f" Default: {default}."
    return Opt((option.flag,), name, option.help + said, kind, metavar=metavar, env=option.env)


# -- what is read and analysed (analyze, compare: both sides) -------------------------------

FORMAT = _option("fmt", metavar="NAME")
KERNEL = _option("kernel", metavar="REGEX")
DEVICE = _option("device", "int", "ID")
GAP_US = _option("gap_us", "float", "US", f"{DEFAULT_GAP_US:g}")
GPU = _option("gpu", metavar="NAME")
FP32_MATMUL = _option("fp32_matmul", metavar="fp32|tf32", default=MATMUL_PRECISIONS[0])
WORK = _option("work", "many", "SPEC|FILE")
CEILINGS = _option("ceilings", metavar="FILE")
GRAPH_CAPTURE = _option("graph_capture", "many", "TRACE")
PEAK_FLOPS = _option("peak_flops", "float", "FLOP/S")
PEAK_BW = _option("peak_bw", "float", "B/S")
JOBS = _option("jobs", "int", "N")
SCHEDULER = _option("scheduler", metavar="ADDRESS")
SKIP_UNREADABLE = _option("skip_unreadable", "flag")
MEMORY_LIMIT = _option("memory_limit", metavar="SIZE")
# every one of them but --skip-unreadable and --graph-capture, which compare takes per side
SIDES: tuple[Opt, ...] = (FORMAT, KERNEL, DEVICE, GAP_US, GPU, FP32_MATMUL, WORK, CEILINGS)
SIDES += (PEAK_FLOPS, PEAK_BW, JOBS, SCHEDULER, MEMORY_LIMIT)


def checkup_options(given: dict[str, Any]) -> CheckupOptions:
    """The analysis options a command line gave (``SIDES`` and the like, by their Python
    names), the repeatable ones' lists as tuples; those left out keep their defaults."""
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items()}
    return CheckupOptions(**values)


# -- compare's gate ----------------------------------------------------------------------------

GATE = (
    _option("fail_if_slower", "float", "PCT"),
    _option("fail_if_kernel_slower", "float", "PCT"),
    _option("min_share", "float", "SHARE", f"{GateOptions().min_share:g}"),
)

# -- what is written -------------------------------------------------------------------------

JSON = Opt(("--json",), "as_json", "JSON (schema v1, SI units) on stdout.", "flag")
HTML = Opt(("--html",), "html", "Also write the report as one offline HTML file.", metavar="FILE")
SVG = Opt(("--svg",), "svg", "Also write each chart as an SVG file into DIR.", metavar="DIR")
PNG = Opt(
    ("--png",), "png", "Also write each chart as a PNG into DIR, at twice its size.", metavar="DIR"
)
FULL_NAMES = Opt(
    ("--full-names",),
    "whole_names",
    "Kernel names whole as the profile names them (demangled): never shortened, wrapped in "
    "the terminal.",
    "flag",
)
FORCE = Opt(("--force",), "force", "Overwrite existing output files (never an input).", "flag")
OUT_DIR = Opt(
    ("-o", "--out"),
    "out",
    "Write the HTML report into DIR, named after the inputs.",
    metavar="DIR",
)
FILES = (HTML, SVG, PNG, FORCE, OUT_DIR, FULL_NAMES)


class Files(msgspec.Struct, frozen=True):
    """What a command writes besides its text (the ``FILES`` options)."""

    html: str | None = None
    svg: str | None = None
    png: str | None = None
    force: bool = False
    out: str | None = None
    whole_names: bool = False


def files(given: dict[str, Any]) -> Files:
    """The ``FILES`` options taken out of ``given`` (a command's keywords), so that what is
    left is its analysis options."""
    return Files(**{opt.dest: given.pop(opt.dest) for opt in FILES if opt.dest in given})
