"""The command line as data, parsed by argparse: each command's arguments and options
(:class:`Pos`, :class:`Opt`) declared beside its function, which gets them as keywords.

argparse, not Typer: importing Typer (0.28, with its click) cost 46 ms of CPU of every
command, argparse 8 ms, on the 2-core machine (issue 41: a small profile's check-up took
0.29 s). An option left out is not passed, so the function's default applies; an option with
an environment variable takes it when the flag is not given.
"""

from __future__ import annotations

import argparse
import os
import shutil
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import msgspec

from roofscope.errors import UsageError

KINDS: dict[str, Callable[[str], Any]] = {"text": str, "int": int, "float": float}


class Opt(msgspec.Struct, frozen=True):
    """An option: its flags, its help, the keyword it fills and its kind: text, int or
    float (one value), flag (no value) or many (repeatable text); ``low``, ``high``: the
    range of an int, checked here (other ranges are checked by the check-up's options)."""

    flags: tuple[str, ...]
    dest: str
    help: str
    kind: str = "text"
    low: int | None = None
    high: int | None = None
    metavar: str | None = None
    env: str | None = None


class Pos(msgspec.Struct, frozen=True):
    """A positional argument; ``nargs``: None (one), ``?``, ``+`` or ``...`` (the rest of
    the line, after ``--``)."""

    dest: str
    help: str
    nargs: str | None = None


class Command(msgspec.Struct, frozen=True):
    """A command: its name, its function and what it takes. The function returns its exit
    code, or None for 0."""

    name: str
    run: Callable[..., int | None]
    params: tuple[Pos | Opt, ...]

    @property
    def summary(self) -> str:
        """The first paragraph of the function's docstring, in one line."""
        return " ".join((self.run.__doc__ or "").strip().split("\n\n")[0].split())


class _Parser(argparse.ArgumentParser):
    """argparse that raises its usage errors instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message[:1].upper()}{message[1:]}; see {self.prog} --help")


class _Wrapped(argparse.HelpFormatter):
    """argparse's help wrapped between words only (never at a hyphen: finite-/difference)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        words = " ".join(text.split())
        return textwrap.fill(
            words, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
        )


def parser(command: Command) -> argparse.ArgumentParser:
    """The parser of one command's arguments."""
    width = shutil.get_terminal_size().columns - 2
    made = _Parser(
        prog=f"roofscope {command.name}",
        usage=f"%(prog)s [OPTIONS]{_positionals(command)}",
        description=" ".join((command.run.__doc__ or "").split()),
        formatter_class=lambda prog: _Wrapped(prog, width=width),
        argument_default=argparse.SUPPRESS,
        allow_abbrev=False,  # --js is no --json: a flag is named whole
    )
    for p in command.params:
        if isinstance(p, Pos):
            nargs = argparse.REMAINDER if p.nargs == "..." else p.nargs
            made.add_argument(p.dest, help=_escaped(p.help), nargs=nargs, metavar=p.dest.upper())
        else:
            made.add_argument(*p.flags, dest=p.dest, help=_escaped(p.help), **_how(p))
    return made


def _positionals(command: Command) -> str:
    """The usage of the positional arguments: ``PATHS...``, ``[NAME]``, ``-- COMMAND...``."""
    out = ""
    for p in command.params:
        if isinstance(p, Pos):
            name = p.dest.upper()
            shown = {"?": f"[{name}]", "+": f"{name}...", "...": f"-- {name}..."}
            out += " " + shown.get(p.nargs or "", name)
    return out


def _escaped(text: str) -> str:
    """``text`` as argparse's help, which it formats with ``%``."""
    return text.replace("%", "%%")


def _how(opt: Opt) -> dict[str, Any]:
    if opt.kind == "flag":
        return {"action": "store_true"}
    how: dict[str, Any] = {"metavar": opt.metavar or opt.kind.upper()}
    if opt.kind == "many":
        return {**how, "action": "append", "metavar": opt.metavar or "TEXT"}
    return {**how, "type": _ranged(opt) if opt.low is not None else KINDS[opt.kind]}


def _ranged(opt: Opt) -> Callable[[str], int]:
    def convert(text: str) -> int:
        value = int(text)  # ValueError: argparse says "invalid ... value"
        if value < (opt.low or 0) or (opt.high is not None and value > opt.high):
            top = f" and <= {opt.high}" if opt.high is not None else ""
            raise argparse.ArgumentTypeError(f"{value} is not >= {opt.low}{top}")
        return value

    convert.__name__ = "int"
    return convert


def keywords(command: Command, args: Sequence[str]) -> dict[str, Any]:
    """The keywords ``args`` give ``command``'s function (UsageError: they do not parse)."""
    made = parser(command)
    rest = [p.dest for p in command.params if isinstance(p, Pos) and p.nargs == "..."]
    found = vars(made.parse_args(args) if rest else made.parse_intermixed_args(args))
    for dest in rest:  # the program's own line: after the "--" that ends ours
        given = found.get(dest, [])
        found[dest] = given[1:] if given[:1] == ["--"] else given
        if not found[dest]:
            raise UsageError(f"Missing argument {dest!r}: give it after --")
    for opt in command.params:
        given = os.environ.get(opt.env) if isinstance(opt, Opt) and opt.env else None
        if given and isinstance(opt, Opt) and opt.dest not in found:
            found[opt.dest] = _from_environment(opt, given)
    return found


def _from_environment(opt: Opt, given: str) -> Any:
    try:
        return KINDS[opt.kind](given)
    except ValueError:
        raise UsageError(
            f"{opt.env}={given!r}: expected {opt.kind} (the value of {opt.flags[-1]}); "
            f"set it right or unset it"
        ) from None


def root_help(commands: Sequence[Command], about: str) -> str:
    """The help of ``roofscope`` itself: its usage and each command's summary, wrapped."""
    width = shutil.get_terminal_size().columns - 2
    pad = max(len(c.name) for c in commands) + 4
    lines = ["usage: roofscope [--version] [--help] COMMAND [ARGS]...", "", about, "", "commands:"]
    for c in commands:
        text = textwrap.wrap(c.summary, max(20, width - pad), break_on_hyphens=False)
        lines.append(f"  {c.name:<{pad - 2}}{text[0]}")
        lines += [" " * pad + t for t in text[1:]]
    lines += ["", "Run 'roofscope COMMAND --help' for a command's options."]
    return "\n".join(lines) + "\n"
