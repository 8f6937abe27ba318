"""Long lists (kernels, findings, devices) in pages: each answer says how many there are and
gives the cursor of the next page, so nothing is cut off unsaid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from roofscope.errors import UsageError

T = TypeVar("T")
DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def page(items: Sequence[T], cursor: str | None, limit: int) -> dict[str, Any]:
    """One page of ``items``: ``items``, ``total``, ``offset`` and ``next_cursor`` (None at
    the end). The cursor is the offset of the next item, as an earlier answer gave it."""
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"limit {limit}: expected a number from 1 to {MAX_LIMIT}")
    start = _offset(cursor, len(items))
    end = min(start + limit, len(items))
    following = str(end) if end < len(items) else None
    return {"items": list(items[start:end]), "total": len(items), "offset": start,
            "next_cursor": following}  # fmt: skip


def _offset(cursor: str | None, total: int) -> int:
    if cursor is None or cursor == "":
        return 0
    if not cursor.isdigit() or int(cursor) > total:
        raise UsageError(
            f"cursor {cursor!r}: expected the next_cursor of an earlier answer (0 to {total}); "
            "leave it out for the first page"
        )
    return int(cursor)
