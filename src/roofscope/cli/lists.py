"""``roofscope devices`` and ``roofscope formats``: what roofscope knows."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from roofscope.errors import UsageError
from roofscope.readers import registry


def devices(
    name: Annotated[
        str | None, typer.Argument(help="Show this GPU with the source of every value.")
    ] = None,
) -> None:
    """List the GPUs in the catalogue, or show one with its ceilings and their sources."""
    from roofscope.catalogue import devices as catalogue

    if name is None:
        for d in catalogue.catalogue():
            typer.echo(f"{d.key:14} {d.arch:8} {d.model}")
        return
    found = catalogue.find(name)
    if found is None:
        near = ", ".join(catalogue.closest(name)) or "none"
        raise UsageError(f"{name!r}: not in the catalogue (closest: {near})")
    sys.stdout.write(catalogue.describe(found))


def formats() -> None:
    """List the input formats roofscope recognises."""
    for reader in registry.readers():
        typer.echo(f"{reader.name:24} {reader.description}")
