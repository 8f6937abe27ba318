"""Reading the TOML files users write (work files, ceilings files) with one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roofscope.errors import InputError


def read_toml(path: Path, what: str) -> tuple[str, dict[str, Any]]:
    """The file's text (to find lines for messages) and its parsed document."""
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(shown, f"cannot be read ({e})", f"pass a UTF-8 TOML {what}") from None
    import tomllib  # only for a file the user gives: not loaded for every command

    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(shown, f"is not valid TOML ({e})", "fix the syntax") from None


def line_of(text: str, needle: str) -> int | None:
    """The first line holding ``needle`` (1-based), for pointing at a value in a message."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle and needle in line:
            return number
    return None
