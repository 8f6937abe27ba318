"""Which dispatches and summary rows an analysis looks at: a kernel-name regex and a device.

A :class:`Selection` becomes relations here (:func:`dispatches`, :func:`summary`), its
constants quoted by :mod:`roofscope.model.relation`, never pasted into SQL.
Its errors carry the facts (the pattern, the device, the devices there are); the CLI words
them with its options.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from roofscope.errors import UsageError
from roofscope.model.profile import Profile
from roofscope.model.relation import Relation, among
from roofscope.model.schema import Role, Table

# The columns of a dispatch relation: ``row_id`` is the row's id, which counters and
# producer rules refer to.
DISPATCH_FIELDS = "rowid AS row_id, source, name_id, pid, device, dispatch_id, start_ns, end_ns"
SUMMARY_FIELDS = "source, name_id, calls, total_ns, mean_ns, min_ns, max_ns, std_ns, median_ns, pid"


class BadPattern(UsageError):
    """A kernel pattern that is no regular expression."""

    def __init__(self, pattern: str, why: str) -> None:
        super().__init__(f"kernel pattern {pattern!r}: not a valid regular expression ({why})")
        self.pattern, self.why = pattern, why


class EmptySelection(UsageError):
    """A selection that leaves nothing of a profile that has rows."""

    def __init__(self, kernel: str | None, device: int | None, devices: tuple[int, ...]) -> None:
        given = [f"kernel pattern {kernel!r}"] if kernel is not None else []
        given += [f"device {device}"] if device is not None else []
        super().__init__(
            f"{' and '.join(given)}: selects nothing of the profile (its devices: "
            f"{', '.join(map(str, devices)) or 'none named'}); widen the selection (the "
            "pattern is searched in the normalised kernel names)"
        )
        self.kernel, self.device, self.devices = kernel, device, devices


class Selection(msgspec.Struct, frozen=True):
    """Kernel-name regex (searched in the normalised name) and device id; None = all."""

    kernel: str | None = None
    device: int | None = None
    sources: tuple[int, ...] | None = None  # restrict to these inputs (cross-checks)

    def pattern(self) -> re.Pattern[str] | None:
        if self.kernel is None:
            return None
        try:
            return re.compile(self.kernel)
        except re.error as exc:
            raise BadPattern(self.kernel, str(exc)) from None


EVERYTHING = Selection()


def name_ids(profile: Profile, selection: Selection) -> list[int] | None:
    """The name ids whose kernel the regex finds (None when there is no regex)."""
    pattern = selection.pattern()
    if pattern is None:
        return None
    rows = profile.view(Table.NAMES, "name_id, kernel").fetchall()
    return [int(i) for i, kernel in rows if pattern.search(kernel)]


def _sources(profile: Profile, selection: Selection) -> list[int]:
    sources = profile.sources(Role.DISPATCHES)
    if selection.sources is not None:
        return [s for s in sources if s in selection.sources]
    return list(sources)


def dispatches(
    profile: Profile,
    selection: Selection = EVERYTHING,
    *,
    sources: Sequence[int] | None = None,
    kernels: Sequence[int] | None = None,
) -> Relation:
    """The selected dispatches of the counted inputs (role DISPATCHES), or of ``sources``,
    of the ``kernels`` (name ids) where given:
    ``row_id, source, name_id, pid, device, dispatch_id, start_ns, end_ns``."""
    key = (
        "dispatches",
        selection,
        sources is None,
        tuple(profile.sources(Role.DISPATCHES) if sources is None else sources),
        None if kernels is None else tuple(kernels),
    )
    return profile.kept(key, lambda: _dispatches(profile, selection, sources, kernels))


def _dispatches(
    profile: Profile,
    selection: Selection,
    sources: Sequence[int] | None,
    kernels: Sequence[int] | None,
) -> Relation:
    where = among("source", _sources(profile, selection) if sources is None else sources)
    if kernels is not None:
        where = f"{where} AND {among('name_id', kernels)}"
    ids = name_ids(profile, selection)
    if ids is not None:
        where = f"{where} AND {among('name_id', ids)}"
    if selection.device is not None:
        where = f"{where} AND device = {int(selection.device)}"
    return profile.view(Table.DISPATCHES, DISPATCH_FIELDS).filter(where)


def summary(profile: Profile, selection: Selection = EVERYTHING) -> Relation:
    """The selected rows of the kernel summaries read as such (role KERNEL_SUMMARY); none
    when a device is selected (summaries have no device)."""
    sources = profile.sources(Role.KERNEL_SUMMARY)
    key = ("summary", selection, tuple(sources))
    return profile.kept(key, lambda: _summary(profile, selection, sources))


def _summary(profile: Profile, selection: Selection, sources: Sequence[int]) -> Relation:
    where = among("source", sources if selection.device is None else [])
    ids = name_ids(profile, selection)
    if ids is not None:
        where = f"{where} AND {among('name_id', ids)}"
    return profile.view(Table.KERNEL_SUMMARY, SUMMARY_FIELDS).filter(where)


def _count(profile: Profile, relation: Relation) -> int:
    (n,) = profile.con.execute(f"SELECT count(*) FROM ({relation.sql})").fetchall()[0]
    return int(n)


def require_some(profile: Profile, selection: Selection) -> None:
    """:class:`EmptySelection` when the kernel regex or device leave nothing of a profile
    that has rows."""
    if selection.kernel is None and selection.device is None:
        return
    if _count(profile, dispatches(profile, selection)) or _count(
        profile, summary(profile, selection)
    ):
        return
    everything = Selection(sources=selection.sources)
    whole = dispatches(profile, everything)
    if not (_count(profile, whole) or _count(profile, summary(profile, everything))):
        return  # nothing to select from: the report says so
    devices = whole.filter("device IS NOT NULL").project("device").distinct().order("device")
    raise EmptySelection(
        selection.kernel, selection.device, tuple(int(d) for (d,) in devices.fetchall())
    )
