"""What the commands share: the output options, writing outputs, and reading --work."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from roofscope.analysis.work.spec import Rule, parse_inline, read_work_file
from roofscope.errors import UsageError
from roofscope.model.profile import Profile
from roofscope.outfile import make_folder, write_atomically
from roofscope.readers.sniff import size_if_file

Force = Annotated[
    bool, typer.Option("--force", help="Overwrite existing output files (never an input).")
]
OutDir = Annotated[
    str | None,
    typer.Option("-o", "--out", help="Write the HTML report into DIR, named after the input(s)."),
]


def stem(path: str) -> str:
    """A file-name-safe name for an input: its file or folder name without suffix."""
    name = Path(path).resolve().name
    stem = name.split(".")[0] or "profile"
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in stem)


def inputs_of(profile: Profile, named: list[str]) -> list[str]:
    """Every file the run read: the paths named and the files read from folders."""
    return [*named, *(f.path for f in profile.inputs)]


def work_rules(values: Sequence[str]) -> list[Rule]:
    """Inline rules first (in order), then the rules of each work file."""
    inline, files = [], []
    for v in values:
        if size_if_file(Path(v)) is not None:
            files.extend(read_work_file(Path(v)))
        elif "=" in v:
            inline.append(parse_inline(v))
        else:
            raise UsageError(
                f"--work {v!r}: neither NAME=FLOPS:BYTES[@DTYPE] nor a work file that exists"
            )
    return [*inline, *files]


def write_charts(
    charts: dict[str, str], svg: str | None, png: str | None, *, force: bool, keep: list[str]
) -> None:
    """Each chart that has something to show as ``DIR/NAME.svg`` and/or ``DIR/NAME.png``."""
    charts = {name: chart for name, chart in charts.items() if chart}
    if svg:
        make_folder(Path(svg))
        for name, chart in charts.items():
            write_atomically(Path(svg) / f"{name}.svg", chart, force=force, keep=keep)
    if png:
        from roofscope.render.png import write_pngs

        write_pngs(charts, Path(png), force=force, keep=keep)
