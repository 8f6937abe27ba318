"""The commands, in the order the root's help lists them, and how a command line finds its
command.

Each command module imports at its top only the parser's declarations; what a command runs
(DuckDB, numpy, the renderers) loads inside the command, so ``--help`` loads none of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from roofscope.cli.analyze import ANALYZE
from roofscope.cli.compare import COMPARE
from roofscope.cli.demo import DEMO
from roofscope.cli.lists import DEVICES, FORMATS
from roofscope.cli.mcp import MCP
from roofscope.cli.measure import PEAKS, PROFILE
from roofscope.cli.parse import Command, keywords, parser, root_help
from roofscope.errors import UsageError

COMMANDS = {c.name: c for c in (ANALYZE, PROFILE, PEAKS, DEMO, COMPARE, DEVICES, FORMATS, MCP)}
ABOUT = "A full check-up of GPU programs from the files their profiler already wrote."
HELP = ("-h", "--help")


def help_text(name: str | None = None) -> str:
    """The help of ``roofscope`` (``name`` None) or of one command."""
    if name is None:
        return root_help(list(COMMANDS.values()), ABOUT)
    return parser(COMMANDS[name]).format_help()


def chosen(args: Sequence[str]) -> tuple[Command, dict[str, Any]] | str:
    """The command ``args`` run and its keywords, or the help text they ask for."""
    if not args or args[0] in HELP:
        return help_text()
    name, rest = args[0], list(args[1:])
    if name not in COMMANDS:
        listed = ", ".join(COMMANDS)
        raise UsageError(f"No such command {name!r} (the commands: {listed}; see roofscope --help)")
    command = COMMANDS[name]
    if any(a in HELP for a in _options_part(command, rest)):
        return help_text(name)
    return command, keywords(command, rest)


def _options_part(command: Command, args: list[str]) -> list[str]:
    """The arguments before ``--`` (the program profile runs may take -h of its own)."""
    return args[: args.index("--")] if "--" in args else args
