"""Command line: the only package that touches argv, stdout/stderr and exit codes.

One module per command (``analyze``, ``compare``, ``measure``: profile and peaks, ``demo``,
``lists``: devices and formats) over one set of option definitions (``options``) and one
check-up (``checkup.run_checkup``) that analyze, compare and profile run.

Exit codes: 0 ok, 1 analysis or input error, 2 usage error, 3 the compare gate failed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from roofscope import __version__
from roofscope.cli.analyze import analyze
from roofscope.cli.compare import compare
from roofscope.cli.demo import demo
from roofscope.cli.lists import devices, formats
from roofscope.cli.measure import peaks, profile
from roofscope.cli.words import worded
from roofscope.errors import RoofscopeError

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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code instead of raising."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # without standalone mode, click returns the code of a typer.Exit (the gate's 3)
        code = app(args=args, prog_name="roofscope", standalone_mode=False)
    except RoofscopeError as exc:
        sys.stderr.write(f"roofscope: error: {worded(exc)}\n")
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("roofscope: aborted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if not _is_usage_error(exc):
            raise
        sys.stderr.write(f"roofscope: error: {exc.format_message()}\n")  # type: ignore[attr-defined]
        return 2
    return code if isinstance(code, int) else 0


def _is_usage_error(exc: Exception) -> bool:
    """Click's (or Typer's vendored click's) usage errors, whichever Typer is installed."""
    return hasattr(exc, "format_message") and hasattr(exc, "exit_code")
