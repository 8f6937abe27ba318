"""Command line: the only package that touches argv, stdout/stderr and exit codes.

One module per command (``analyze``, ``compare``, ``measure``: profile and peaks, ``demo``,
``lists``: devices and formats) over one set of option definitions (``options``) and one
check-up (``checkup.run_checkup``) that analyze, compare and profile run; ``commands``
lists them and ``parse`` reads a command line (argparse).

``roofscope --version`` answers before any command loads; the rest loads only when a command
needs it.

Exit codes: 0 ok, 1 analysis or input error, 2 usage error, 3 the compare gate failed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from roofscope.errors import RoofscopeError
from roofscope.version import __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code instead of raising."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        sys.stdout.write(f"roofscope {__version__}\n")
        return 0
    _one_blas_thread()
    from roofscope.cli.commands import chosen

    try:
        found = chosen(args)
        if isinstance(found, str):  # the help: asked for, or the answer to no arguments
            sys.stdout.write(found)
            return 2 if not args else 0
        command, keywords = found
        return command.run(**keywords) or 0
    except RoofscopeError as exc:
        from roofscope.checkup.options import worded

        sys.stderr.write(f"roofscope: error: {worded(exc)}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("roofscope: aborted\n")
        return 130
    except BrokenPipeError:
        return 0


def run() -> NoReturn:
    """The console script (and ``python -m roofscope``): :func:`main`, then, once its output
    is flushed and every profile's DuckDB connection that spilled to disk closed (with its
    temporary files), out of the process without tearing the interpreter down: freeing every
    module and object at exit took about 40 ms of each command (0.53 to 0.49 s on HTA's
    trace_filter). An exception main lets through takes the ordinary way out, with its
    traceback."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (| head): nothing left to say
        pass
    if "roofscope.model.profile" in sys.modules:
        from roofscope.model.profile import close_spilled

        close_spilled()
    os._exit(code)


def _one_blas_thread() -> None:
    """numpy's OpenBLAS starts a thread per core when numpy loads, and they spin: 0.15 s of
    CPU and 0.06 s of wall time of a 0.5 s ``analyze`` of a small trace (2 cores). roofscope
    multiplies no matrices, so one thread, unless the user's environment says otherwise.
    Worker processes (``--jobs``) inherit it; the Python API leaves its caller's alone."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
