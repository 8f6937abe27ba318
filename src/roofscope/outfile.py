"""Output files written whole or not at all.

Every report, image and ceilings file goes to a temporary file beside its destination and is
renamed onto it, so an interrupted run (a kill, a full disk) leaves the old file or none,
never a half-written one. An existing file is replaced only with ``force``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path

from roofscope.errors import UsageError


def refuse_existing(path: Path, *, force: bool, keep: Collection[str] = ()) -> None:
    """A UsageError for a file that exists (without ``force``) or is one of ``keep``, the
    files the run read: ``--force`` never replaces an input."""
    try:
        exists = path.exists()
    except OSError as e:
        raise unwritable(path, e) from None
    if exists and any(_same_file(path, Path(k)) for k in keep):
        raise UsageError(f"{path}: is an input of this run; pass another path")
    if exists and not force:
        raise UsageError(f"{path}: exists; pass --force to overwrite it, or another path")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def write_atomically(
    path: Path, data: str | bytes, *, force: bool = False, keep: Collection[str] = ()
) -> None:
    """``data`` into ``path`` through a temporary file and a rename."""

    def fill(temp: Path) -> None:
        with temp.open("wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())

    produce_atomically(path, fill, force=force, keep=keep)


def produce_atomically(
    path: Path, fill: Callable[[Path], None], *, force: bool = False, keep: Collection[str] = ()
) -> None:
    """Let ``fill`` write a temporary file beside ``path``, then rename it onto ``path``."""
    refuse_existing(path, force=force, keep=keep)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
    except OSError as e:
        raise unwritable(path, e) from None
    temp = Path(name)
    try:
        fill(temp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp's 0600 would hide the file from others
        os.replace(temp, path)
    except OSError as e:
        raise unwritable(path, e) from None
    finally:
        temp.unlink(missing_ok=True)


def make_folder(path: Path) -> Path:
    """The output folder ``path``, made with its parents where missing."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(
            f"{path}: cannot be made a folder ({e.strerror}); pass a folder you can write to"
        ) from None
    return path


def unwritable(path: Path, e: OSError) -> UsageError:
    return UsageError(f"{path}: cannot be written ({e.strerror}); pass a writable path")
