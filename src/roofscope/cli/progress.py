"""The check-up with a spinner on stderr while a big input is read (on a terminal only): what
``analyze``, ``compare``, ``profile`` and ``demo`` run (``checkup.engine.check_up`` prints
nothing)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from roofscope.checkup.engine import AS_GIVEN, Settings, check_up
from roofscope.readers.sniff import size_if_file
from roofscope.report import Report

PROGRESS_BYTES = 64 << 20


def run_checkup(paths: Sequence[str], settings: Settings = AS_GIVEN) -> Report:
    """``check_up``, with a spinner on stderr while a big input is read (a terminal only)."""
    with spinner(paths) as tick:
        return check_up(paths, settings, progress=tick)


@contextmanager
def spinner(paths: Sequence[str]) -> Iterator[Callable[[str], None] | None]:
    """A spinner on stderr for big inputs, only when stderr is a terminal."""
    size = sum(size_if_file(Path(p)) or 0 for p in paths)
    if not sys.stderr.isatty() or size < PROGRESS_BYTES:
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("reading…") as status:
        yield lambda name: status.update(f"reading {name}")
