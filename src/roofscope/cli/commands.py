"""The Typer application: the root options and one command per module of this package.

Each command module imports at its top only Typer and the option declarations; what a
command runs (DuckDB, numpy, the renderers) loads inside the command, so building this
application for ``--help`` or for one command loads none of it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from roofscope import __version__
from roofscope.cli.analyze import analyze
from roofscope.cli.compare import compare
from roofscope.cli.demo import demo
from roofscope.cli.lists import devices, formats
from roofscope.cli.measure import peaks, profile

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="A full check-up of GPU programs from the files their profiler already wrote.",
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"roofscope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """roofscope reads rocprof/rocprofv3 output and reports the baseline and the hotspots."""


for command in (analyze, profile, peaks, demo, compare, devices, formats):
    app.command()(command)
