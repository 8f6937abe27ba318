"""``roofscope devices`` and ``roofscope formats``: what roofscope knows."""

from __future__ import annotations

import json
import sys

from roofscope.cli.parse import Command, Opt, Pos
from roofscope.errors import UsageError


def devices(name: str | None = None, as_json: bool = False) -> None:
    """List the GPUs in the catalogue, or show one with its ceilings and their sources."""
    from roofscope.catalogue import devices as catalogue

    found = catalogue.catalogue() if name is None else catalogue.resolve(name)
    if not found:
        raise UsageError(catalogue.not_found(name or ""))
    if as_json:
        doc = {"devices": [catalogue.as_dict(d) for d in found]}
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
        return
    if name is None or len(found) > 1:
        if name is not None:
            print(f"{name!r} fits {len(found)} parts; `roofscope devices KEY` shows one:")
        for d in found:
            units = f"{d.compute_units or '?':>4} {d.unit_word}"
            print(f"{d.key:22} {d.arch:8} {units}  {d.vendor} {d.model}")
        if name is not None:
            shared = ", ".join(c.name for c in catalogue.shared_ceilings(found)) or "none"
            print(f"ceilings they share (used for --gpu {name}): {shared}")
        return
    sys.stdout.write(catalogue.describe(found[0]))


def formats() -> None:
    """List the input formats roofscope recognises."""
    from roofscope.readers import registry

    for reader in registry.readers():
        print(f"{reader.name:24} {reader.description}")


DEVICES = Command(
    "devices",
    devices,
    (
        Pos("name", "Show this GPU (a natural name such as a100 or 'rtx 4090' works).", "?"),
        Opt(("--json",), "as_json", "Write JSON to stdout.", "flag"),
    ),
)
FORMATS = Command("formats", formats, ())
