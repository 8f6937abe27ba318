"""Where the server may read: under the client's MCP roots or ``--root DIR``, symlinks resolved,
so that neither ``..`` nor a link leads out."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import msgspec

from roofscope.errors import InputError, UsageError


class Roots(msgspec.Struct, frozen=True):
    """The folders a tool may read under, resolved."""

    folders: tuple[Path, ...]

    @classmethod
    def of(cls, folders: list[str]) -> Roots:
        found = tuple(Path(f).expanduser().resolve() for f in folders)
        if not found:
            raise UsageError("no root to read under: grant the server a folder (MCP roots) "
                             "or start it with --root DIR")  # fmt: skip
        missing = [str(f) for f in found if not f.is_dir()]
        if missing:
            raise UsageError(f"root {missing[0]}: no such folder; name a folder to serve")
        return cls(found)

    def check(self, path: str) -> str:
        """``path`` resolved (relative to the first root), or an InputError when it leads
        outside every root."""
        if not path:
            raise UsageError("path '': no profile given; pass a file or folder under a root")
        given = Path(path).expanduser()
        resolved = (given if given.is_absolute() else self.folders[0] / given).resolve()
        if any(resolved.is_relative_to(root) for root in self.folders):
            return str(resolved)
        raise InputError(
            path, f"outside the folders this server may read ({self.said()})",
            "pass a path under one of them, or start `roofscope mcp --root DIR` with its folder",
        )  # fmt: skip

    def said(self) -> str:
        return ", ".join(map(str, self.folders))


def from_uris(uris: list[str]) -> list[str]:
    """The folders of the client's ``file://`` roots (other schemes name no folder here)."""
    return [unquote(u.path) for u in map(urlparse, uris) if u.scheme == "file"]
