"""The Typer application: the root options and one command per module of this package.

Each command module imports at its top only Typer and the option declarations; what a
command runs (DuckDB, numpy, the renderers) loads inside the command, so building this
application for ``--help`` or for one command loads none of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from roofscope.cli.analyze import analyze
from roofscope.cli.compare import compare
from roofscope.cli.demo import demo
from roofscope.cli.lists import devices, formats
from roofscope.cli.mcp import mcp
from roofscope.cli.measure import peaks, profile
from roofscope.version import __version__

COMMANDS = (analyze, profile, peaks, demo, compare, devices, formats, mcp)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"roofscope {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """roofscope reads rocprof/rocprofv3 output and reports the baseline and the hotspots."""


def application(args: Sequence[str] = ()) -> typer.Typer:
    """The application that runs ``args``: when they start with a command's name, with that
    command alone (Typer inspects each command's signature as it builds it: 8.5 ms for all
    seven before ``mcp``, against 2 ms for ``analyze``), else with every command, for the
    root's help and its errors, which list them."""
    app = typer.Typer(
        add_completion=False,
        no_args_is_help=True,
        help="A full check-up of GPU programs from the files their profiler already wrote.",
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    app.callback()(_root)
    named = [c for c in COMMANDS if args and c.__name__ == args[0]]
    for command in named or COMMANDS:
        app.command(short_help=_summary(command.__doc__ or ""))(command)
    return app


def _summary(doc: str) -> str:
    """A command's first paragraph in one line: the root's list shows it whole, wrapped
    between words (click would cut it at the width left, with "...")."""
    return " ".join(doc.strip().split("\n\n")[0].split())


app = application()  # every command (the tests' and the docs' view of the whole CLI)
