"""``roofscope mcp``: the check-up as an MCP server for coding agents (docs/mcp.md)."""

from __future__ import annotations

import importlib.util
from typing import Annotated

import typer

from roofscope.errors import UsageError

INSTALL = "roofscope mcp needs the MCP SDK: pip install 'roofscope[mcp]'"


def mcp(
    root: Annotated[
        list[str] | None,
        typer.Option(
            "--root",
            metavar="DIR",
            help="Serve files under this folder only (repeatable); default: the client's "
            "MCP roots, else the current folder.",
        ),
    ] = None,
    http: Annotated[
        int | None,
        typer.Option(
            "--http",
            min=1,
            max=65535,
            metavar="PORT",
            help="Serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio.",
        ),
    ] = None,
) -> None:
    """Serve the check-up to coding agents over MCP (stdio, or --http on loopback)."""
    if importlib.util.find_spec("mcp") is None:
        raise UsageError(INSTALL)
    from roofscope.agent.roots import Roots
    from roofscope.agent.worker import start

    folders = [str(f) for f in Roots.of(root or ["."]).folders]  # a bad --root: no worker
    # the worker forked now imports the engine while this process imports the SDK
    engine = start(folders, fork=http is None)
    try:
        from roofscope.agent.server import serve
    except BaseException:
        engine.close()
        raise
    serve(root or [], http, engine)
