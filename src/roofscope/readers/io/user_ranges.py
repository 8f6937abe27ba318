"""The ranges a user named around kernel launches (PyTorch ``record_function``, NVTX push/pop)
and the launches each holds, for ``user_ranges`` and ``range_launches``
(docs/formats/pytorch-kineto.md, "User ranges")."""

from __future__ import annotations

from typing import Any

from roofscope.model.profile import Profile
from roofscope.readers.io.batches import Kind, insert_rows

# start, end, name, its thread (ranges of one name and times on two threads are two)
UserRange = tuple[int, int, str, Any]
USER_RANGE_COLUMNS: tuple[tuple[str, Kind], ...] = (
    ("source", "int"), ("range_id", "int"), ("name", "text"), ("start_ns", "int"),
    ("end_ns", "int"),
)  # fmt: skip
RANGE_LAUNCH_COLUMNS: tuple[tuple[str, Kind], ...] = (
    ("source", "int"), ("range_id", "int"), ("correlation", "int"),
)  # fmt: skip


def around(
    user: list[UserRange],
    launches: list[tuple[int, int]],
    ids: dict[UserRange, int],
    out: list[tuple[Any, ...]],
) -> None:
    """User ranges against one thread's launches (sorted by start): every range open at a
    launch's start holds it; each range holding one gets an id in ``ids`` (the first time),
    and (range id, correlation) goes to ``out``."""
    user = sorted(user, key=lambda r: (r[0], -r[1]))
    open_: list[UserRange] = []
    i = 0
    for start, correlation in launches:
        while i < len(user) and user[i][0] <= start:
            open_.append(user[i])
            i += 1
        open_ = [r for r in open_ if r[1] >= start]
        for r in open_:
            out.append((ids.setdefault(r, len(ids)), correlation))


def insert(profile: Profile, source: int, ids: dict[UserRange, int], held: list[Any]) -> None:
    """The ranges that hold a launch (``ids``) and the (range id, correlation) pairs."""
    ranges = [(source, n, r[2][:200], r[0], r[1]) for r, n in ids.items()]
    insert_rows(profile, "user_ranges", USER_RANGE_COLUMNS, ranges)
    pairs = [(source, *pair) for pair in dict.fromkeys(held)]  # a launch's two API rows: once
    insert_rows(profile, "range_launches", RANGE_LAUNCH_COLUMNS, pairs)
