"""Timestamps rounded by a spreadsheet, told apart from whole seconds a clock gives by chance.

A spreadsheet re-saves the ns timestamp 810970123456789 as ``8.1097E+14``, keeping 5 to 7
significant digits of 15 or 16: every timestamp it touched becomes a whole number of seconds.
An honest clock of resolution r lands on a whole second (U = 1e9 ns) with probability r / U per
timestamp, so of n timestamps about n * r / U do by chance: a 12.8 s Kineto trace of 1 M
kernels at 1 µs has 2 M timestamps and expects 2 on whole seconds (6 or more 1.7 % of the
time). A file's timestamps are judged rounded when the chance of at least as many whole
seconds, the binomial tail P(X >= k), X ~ B(n, r / U), is below ``CHANCE``: at most one honest
file in a million is misjudged. The warning then names the digits the rounding kept, read
from the file's whole-second timestamp with the fewest trailing zeros (``Example``).

The resolution is the coarsest of 1, 10, 100 and 1000 ns that divides every timestamp of the
file, at most 1 µs, the coarsest clock a supported profiler writes (Kineto's and rocprof v1
JSON's µs): guessing it too coarse only makes the judgement more lenient. Only timestamps past
``AFTER_NS`` (1e12 ns) of dispatches whose End is not before their Begin count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
from msgspec.structs import replace

from roofscope.model.access import Relation, query
from roofscope.model.profile import Profile
from roofscope.model.schema import VALID_DURATION, Role
from roofscope.model.selection import dispatches

UNIT_NS = 1_000_000_000  # a whole second: where a spreadsheet's 5 to 7 digits leave a 1e15 ns clock
AFTER_NS = 1_000_000_000_000
CHANCE = 1e-6
RESOLUTIONS_NS = (1000, 100, 10)  # the coarsest that divides every timestamp wins; else 1 ns


class Stamps(msgspec.Struct, frozen=True):
    """One dispatch file's timestamps, counted against chance."""

    source: int
    stamps: int  # timestamps counted (two per dispatch)
    whole: int  # of them on a whole second
    dispatches: int  # dispatches with a Begin or End on a whole second
    zero: int  # dispatches of the file whose End equals their Begin
    negative: int  # and those whose End precedes their Begin
    resolution_ns: int = 1000  # read from the timestamps only where some are on whole seconds
    untimed: int = 0  # dispatches of the file without a Begin or an End
    rows: int = 0  # every dispatch of the file

    @property
    def expected(self) -> float:
        """Whole seconds that chance gives at this resolution."""
        return self.stamps * self.resolution_ns / UNIT_NS

    @property
    def chance(self) -> float:
        return binomial_tail(self.stamps, self.resolution_ns / UNIT_NS, self.whole)

    @property
    def rounded(self) -> bool:
        return self.whole > 0 and self.chance < CHANCE


class Example(msgspec.Struct, frozen=True):
    """The rounded timestamp of a file with the most significant digits left."""

    ns: int

    @property
    def digits(self) -> int:
        """Significant digits the rounding kept."""
        return len(str(self.ns).rstrip("0")) or 1

    @property
    def unit_ns(self) -> int:
        """The place of the last digit kept: how far a rounded timestamp may be off."""
        return int(10 ** (len(str(self.ns)) - self.digits))

    @property
    def text(self) -> str:
        """As the spreadsheet wrote it: 8.1097E+14."""
        return f"{self.ns:.{self.digits - 1}E}"


def binomial_tail(n: int, p: float, k: int) -> float:
    """P(X >= k) for X ~ B(n, p); 1 where k is not beyond the mean n * p."""
    if k <= 0 or k <= n * p:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    log_term = (
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        + k * math.log(p) + (n - k) * math.log1p(-p)
    )  # fmt: skip
    total, term, ratio = 0.0, 1.0, p / (1.0 - p)
    for j in range(k, n + 1):  # the terms fall from the first one on, since k > n * p
        total += term
        term *= (n - j) / (j + 1) * ratio
        if term < 1e-17 * total:
            break
    return min(1.0, math.exp(log_term) * total)


def timestamp_stamps(profile: Profile) -> list[Stamps]:
    """Per dispatch file with timestamps: its whole-second count, resolution and zeros, and
    its dispatches without times (the checks' ``missing-time``), in one scan of them."""
    sources = profile.sources(Role.DISPATCHES)
    if not sources:
        return []
    # one file (most profiles) needs no grouping: 0.014 of the scan's 0.08 s of CPU at 4 M
    # dispatches; HAVING leaves a file without rows out, as a group it would not have
    keys = ("source", "GROUP BY source ORDER BY source")
    one, by = keys if len(sources) > 1 else (str(sources[0]), "HAVING count(*) > 0")
    rows = query(
        profile,
        _counted(profile, sources),
        f"""SELECT {one}, count(*) FILTER (counted),
        count(*) FILTER (counted AND whole_start) + count(*) FILTER (counted AND whole_end),
        count(*) FILTER (counted AND (whole_start OR whole_end)),
        count(*) FILTER (end_ns = start_ns), count(*) FILTER (end_ns < start_ns),
        count(*) FILTER (start_ns IS NULL OR end_ns IS NULL), count(*)
        FROM d {by}""",
    ).fetchall()
    out = [
        Stamps(int(s), 2 * int(n), int(w), int(d), int(z), int(neg), untimed=int(u), rows=int(r))
        for s, n, w, d, z, neg, u, r in rows
    ]
    return [replace(s, resolution_ns=_resolution(profile, s)) if s.whole else s for s in out]


def _counted(profile: Profile, sources: Sequence[int]) -> Relation:
    """The sources' dispatch times, ``counted`` where they are real (ordered, after 0), and
    whether each is on a whole second (each remainder computed once, not per count)."""
    u = UNIT_NS
    return dispatches(profile, sources=sources).project(
        f"source, start_ns, end_ns, {VALID_DURATION} AND start_ns > {AFTER_NS} AS counted, "
        f"start_ns % {u} = 0 AS whole_start, end_ns % {u} = 0 AS whole_end"
    )


def _resolution(profile: Profile, s: Stamps) -> int:
    """The coarsest of RESOLUTIONS_NS dividing every counted timestamp of the file, else 1."""
    fine = ", ".join(
        f"count(*) FILTER (start_ns % {r} = 0 AND end_ns % {r} = 0)" for r in RESOLUTIONS_NS
    )
    (counts,) = query(
        profile, _counted(profile, [s.source]), f"SELECT {fine} FROM d WHERE counted"
    ).fetchall()
    return next((r for r, c in zip(RESOLUTIONS_NS, counts, strict=True) if 2 * c == s.stamps), 1)


def example(profile: Profile, source: int) -> Example:
    """The file's whole-second timestamp with the fewest trailing zeros (the smallest)."""
    u = UNIT_NS
    zeros = " ".join(f"WHEN t % 1{'0' * z} = 0 THEN {z}" for z in range(18, 9, -1))
    (row,) = query(
        profile,
        _counted(profile, [source]),
        f"""SELECT arg_min(t, (CASE {zeros} ELSE 9 END, t)) FROM (
        SELECT start_ns AS t FROM d WHERE counted AND start_ns % {u} = 0
        UNION ALL
        SELECT end_ns FROM d WHERE counted AND end_ns % {u} = 0)""",
    ).fetchall()
    return Example(int(row[0]) if row and row[0] is not None else 0)
