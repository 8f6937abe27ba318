"""Every option more than one command takes, declared once with its help text.

A command names an option by its type here (``gpu: Gpu = None``); the analysis options
(``Format`` to ``Jobs``) travel on as one ``CheckupOptions`` (``cli/checkup.py``). An option
only one command has is declared beside that command.
"""

from __future__ import annotations

from typing import Annotated

import typer

MAX_GAP_US = 1e12  # 11.6 days; beyond it the threshold overflowed the integer nanoseconds
# analysis.timeline.DEFAULT_GAP_NS in µs (tests/test_startup.py holds them equal): importing
# the analysis would load DuckDB and numpy for every command's help
DEFAULT_GAP_US = 10.0

# -- what is read and analysed (analyze, compare: both sides) -------------------------------

Format = Annotated[
    str | None,
    typer.Option("--format", help="Read every file as this format (see `roofscope formats`)."),
]
Kernel = Annotated[
    str | None,
    typer.Option("--kernel", help="Only kernels whose normalised name matches this regex."),
]
Device = Annotated[
    int | None, typer.Option("--device", help="Only dispatches on this device (agent) id.")
]
GapUs = Annotated[
    float,
    typer.Option(
        "--gap-us", min=0, max=MAX_GAP_US, help="Count idle gaps at least this long (µs)."
    ),
]
Gpu = Annotated[
    str | None,
    typer.Option(
        "--gpu", help="The GPU it ran on, when the profile does not say (see `roofscope devices`)."
    ),
]
Work = Annotated[
    list[str] | None,
    typer.Option(
        "--work",
        help="Work of a kernel: NAME=FLOPS:BYTES[@DTYPE] (totals), or a work file (TOML). "
        "Repeatable.",
    ),
]
Ceilings = Annotated[
    str | None,
    typer.Option(
        "--ceilings", help="Ceilings file (TOML): your peaks override measured and catalogue ones."
    ),
]
PeakFlops = Annotated[
    float | None,
    typer.Option("--peak-flops", min=0, help="FP32 vector peak, FLOP/s (e.g. 22.6e12)."),
]
PeakBw = Annotated[
    float | None,
    typer.Option("--peak-bw", min=0, help="HBM bandwidth peak, B/s (e.g. 1.6e12)."),
]
Jobs = Annotated[
    int | None,
    typer.Option(
        "--jobs", min=1, help="Worker processes reading many ranks' files (default: all cores)."
    ),
]

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
