"""Every option more than one command takes, declared once with its help text.

A command names an option by its type here (``gpu: Gpu = None``); the analysis options
(``Format`` to ``SkipUnreadable``) are declared and checked in ``checkup/options.py`` and
travel on as one ``CheckupOptions``. An option only one command has is declared beside that
command.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from roofscope.checkup.options import DEFAULT_GAP_US, MAX_GAP_US, OPTIONS

__all__ = ["DEFAULT_GAP_US", "MAX_GAP_US"]


def _option(name: str) -> Any:
    """The Typer option of ``checkup/options.py``'s declaration: its flag and help. The range
    is checked there (``CheckupOptions.checked``), in the words of the command line."""
    option = OPTIONS[name]
    return typer.Option(option.flag, help=option.help, envvar=option.env)


# -- what is read and analysed (analyze, compare: both sides) -------------------------------

Format = Annotated[str | None, _option("fmt")]
Kernel = Annotated[str | None, _option("kernel")]
Device = Annotated[int | None, _option("device")]
GapUs = Annotated[float, _option("gap_us")]
Gpu = Annotated[str | None, _option("gpu")]
Fp32Matmul = Annotated[str, _option("fp32_matmul")]
Work = Annotated[list[str] | None, _option("work")]
Ceilings = Annotated[str | None, _option("ceilings")]
GraphCapture = Annotated[list[str] | None, _option("graph_capture")]
PeakFlops = Annotated[float | None, _option("peak_flops")]
PeakBw = Annotated[float | None, _option("peak_bw")]
Jobs = Annotated[int | None, _option("jobs")]
Scheduler = Annotated[str | None, _option("scheduler")]
SkipUnreadable = Annotated[bool, _option("skip_unreadable")]
MemoryLimit = Annotated[str | None, _option("memory_limit")]

# -- compare's gate ----------------------------------------------------------------------------

FailIfSlower = Annotated[float | None, _option("fail_if_slower")]
FailIfKernelSlower = Annotated[float | None, _option("fail_if_kernel_slower")]
MinShare = Annotated[float, _option("min_share")]

# -- what is written -------------------------------------------------------------------------

Json = Annotated[bool, typer.Option("--json", help="JSON (schema v1, SI units) on stdout.")]
Html = Annotated[
    str | None, typer.Option("--html", help="Also write the report as one offline HTML file.")
]
Svg = Annotated[
    str | None, typer.Option("--svg", help="Also write each chart as an SVG file into DIR.")
]
Png = Annotated[
    str | None,
    typer.Option("--png", help="Also write each chart as a PNG into DIR, at twice its size."),
]
FullNames = Annotated[
    bool,
    typer.Option(
        "--full-names",
        help="Kernel names whole as the profile names them (demangled): never shortened, "
        "wrapped in the terminal.",
    ),
]
Force = Annotated[
    bool, typer.Option("--force", help="Overwrite existing output files (never an input).")
]
OutDir = Annotated[
    str | None,
    typer.Option("-o", "--out", help="Write the HTML report into DIR, named after the inputs."),
]
