"""``roofscope mcp``: the check-up as an MCP server for coding agents (docs/mcp.md)."""

from __future__ import annotations

import importlib.util

from roofscope.cli.parse import Command, Opt
from roofscope.errors import UsageError

INSTALL = "roofscope mcp needs the MCP SDK: pip install 'roofscope[mcp]'"


def mcp(root: list[str] | None = None, http: int | None = None) -> None:
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


ROOT = Opt(
    ("--root",),
    "root",
    "Serve files under this folder only (repeatable); default: the client's MCP roots, else "
    "the current folder.",
    "many",
    metavar="DIR",
)
HTTP = Opt(
    ("--http",),
    "http",
    "Serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio.",
    "int",
    low=1,
    high=65535,
    metavar="PORT",
)
MCP = Command("mcp", mcp, (ROOT, HTTP))
