"""The idle gaps of a window, one by one, with what the host and the copy engine did in each
(analysis/gaps.py), against the files' own rows swept in plain Python."""

from __future__ import annotations

import csv
import sqlite3
from itertools import pairwise

from roofscope.analysis.gaps import COPY, gaps
from roofscope.analysis.timeline import timeline
from roofscope.readers.load import load
from tests.conftest import DATA, DEMO

CLOVER = DATA / "nsys" / "cloverleaf-a100.sqlite"
TEN_US = 10_000
Span = tuple[int, int]


def swept(intervals: list[Span], threshold: int) -> list[Span]:
    """The gaps of at least ``threshold`` between the union of ``intervals``."""
    out, reach = [], None
    for start, end in sorted(intervals):
        if reach is not None and start - reach >= threshold:
            out.append((reach, start))
        reach = end if reach is None else max(reach, end)
    return out


def inside(gap: Span, spans: list[Span]) -> int:
    """The time of ``gap`` covered by the union of ``spans``, by a walk over nanosecond
    boundaries (each elementary piece counted once)."""
    cuts = sorted({gap[0], gap[1], *(t for s in spans for t in s if gap[0] < t < gap[1])})
    return sum(b - a for a, b in pairwise(cuts)
               if any(s <= a and b <= e for s, e in spans))  # fmt: skip


def rows(sql: str) -> list[tuple[int, ...]]:
    con = sqlite3.connect(f"file:{CLOVER}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_whole_span_holds_the_timelines_gaps_longest_first() -> None:
    """The demo's rocprof CSV: 1,000 gaps of at least 10 µs (38.2 ms), swept from its
    BeginNs/EndNs columns; over the whole span ``gaps`` gives each of them."""
    with (DEMO / "results.csv").open(newline="") as f:
        kernels = [(int(r["BeginNs"]), int(r["EndNs"])) for r in csv.DictReader(f)]
    want = swept(kernels, TEN_US)
    assert len(want) == 1000
    profile = load([DEMO / "results.csv"])
    found = gaps(profile, 0, 1 << 62, TEN_US)
    assert sorted((g.start_ns, g.end_ns) for g in found) == want
    lengths = [g.length_ns for g in found]
    assert lengths == sorted(lengths, reverse=True)
    tl = timeline(profile)
    assert tl is not None and (tl.gaps, tl.gap_ns) == (len(want), sum(b - a for a, b in want))
    assert all(g.inside == () and g.cause is None for g in found)  # no host side, no copy


def test_a_window_holds_the_gaps_that_overlap_it() -> None:
    with (DEMO / "results.csv").open(newline="") as f:
        kernels = [(int(r["BeginNs"]), int(r["EndNs"])) for r in csv.DictReader(f)]
    every = swept(kernels, TEN_US)
    lo, hi = every[100][0] + 1, every[110][1] - 1  # cuts into the 101st and the 111th
    found = gaps(load([DEMO / "results.csv"]), lo, hi, TEN_US)
    assert sorted((g.start_ns, g.end_ns) for g in found) == every[100:111]
    assert gaps(load([DEMO / "results.csv"]), hi, hi, TEN_US) == ()  # an empty window


def test_each_gap_says_how_much_of_it_the_host_synchronised_or_copied() -> None:
    """CloverLeaf on an A100 (nsys SQLite): a cudaDeviceSynchronize after every launch. Each
    gap's time inside the blocking calls (cudaDeviceSynchronize, cudaMemcpy) and inside the
    copies, from the export's own rows."""
    kernels = rows("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL")
    syncs = rows(
        """SELECT r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s
        ON s.id = r.nameId WHERE s.value IN ('cudaDeviceSynchronize_v3020', 'cudaMemcpy_v3020')"""
    )
    moved = rows("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY")
    want = swept([(a, b) for a, b in kernels], TEN_US)
    found = gaps(load([CLOVER]), 0, 1 << 62, TEN_US)
    assert sorted((g.start_ns, g.end_ns) for g in found) == want
    for g in found[:40]:  # the longest 40
        gap = (g.start_ns, g.end_ns)
        expected = {"sync": inside(gap, syncs), COPY: inside(gap, moved)}
        assert dict(g.inside) == {k: ns for k, ns in expected.items() if ns}
        kind, ns = max(expected.items(), key=lambda kv: kv[1])
        assert g.cause == (kind if 2 * ns >= g.length_ns else None)
    assert {g.cause for g in found} >= {"sync"}


def test_no_timestamps_no_gaps() -> None:
    """A kernel summary (no timeline): no gap."""
    assert gaps(load([DATA / "summary" / "kernels.csv"]), 0, 1 << 62, TEN_US) == ()
