"""The model's accessors and selections: the facts they give, and their errors' words."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from roofscope.diagnosis.evidence import ACTIVITY, counter_facts
from roofscope.model.access import count, names
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.model.selection import (
    BadPattern,
    EmptySelection,
    Selection,
    dispatches,
    require_some,
)
from roofscope.readers.load import load
from tests.conftest import DATA

STALL = DATA / "rocprofv3-counters" / "gfx1151_stall_counter_collection.csv"
COPY = "__amd_rocclr_copyBuffer"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _ids(profile: Profile, raw: str) -> list[int]:
    rows = names(profile).project("name_id, raw_name").fetchall()
    return [int(i) for i, r in rows if r == raw]


@pytest.mark.parametrize("activity", [("GRBM_GUI_ACTIVE",), ACTIVITY])
def test_counter_facts_of_one_or_many_activity_counters(activity: tuple[str, ...]) -> None:
    """A one-element tuple pasted as SQL (``IN ('X',)``) was a syntax error; the facts are
    counted from the CSV itself."""
    profile = load([str(STALL)])
    mine = [r for r in _rows(STALL) if r["Kernel_Name"] == COPY]
    active = [r for r in mine if r["Counter_Name"] in activity]
    expected = (
        len({r["Dispatch_Id"] for r in mine}),
        len(mine),
        len(active),
        sum(float(r["Counter_Value"]) != 0 for r in active),
    )
    assert expected[0] == 2 and expected[2] > 0  # the kernel ran twice, with activity counters
    sources = profile.sources(Role.DISPATCHES)
    assert counter_facts(profile, sources, _ids(profile, COPY), activity) == expected


def test_dispatch_relation_follows_the_selection() -> None:
    profile = load([str(STALL)])
    rows = _rows(STALL)
    assert count(profile, dispatches(profile)) == len({r["Dispatch_Id"] for r in rows})
    copies = {r["Dispatch_Id"] for r in rows if r["Kernel_Name"] == COPY}
    assert count(profile, dispatches(profile, Selection(kernel="^__amd_rocclr_copy"))) == len(
        copies
    )


def test_selection_errors_carry_facts_not_options() -> None:
    profile = load([str(STALL)])
    agents = sorted({int(r["Agent_Id"].split()[-1]) for r in _rows(STALL)})
    with pytest.raises(EmptySelection) as caught:
        require_some(profile, Selection(kernel="no_such_kernel", device=7))
    devices = tuple(d for (d,) in dispatches(profile).project("device").distinct().fetchall())
    assert (caught.value.kernel, caught.value.device) == ("no_such_kernel", 7)
    assert caught.value.devices == devices and len(devices) == len(agents)
    assert "--" not in str(caught.value)
    with pytest.raises(BadPattern) as bad:
        Selection(kernel="a(").pattern()
    assert bad.value.pattern == "a(" and "--" not in str(bad.value)


def _storage(profile: Profile, table: str) -> set[tuple[bool, str]]:
    sql = f"SELECT DISTINCT persistent, compression FROM pragma_storage_info('{table}')"
    return set(profile.con.execute(sql).fetchall())


def test_compact_compresses_the_rows_written_since() -> None:
    """An in-memory table is held uncompressed until a CHECKPOINT: 300,000 rows of
    0, 1, 2, ... are 2.3 MiB of BIGINTs, held as bit-packed (or constant) segments once
    compacted; rows written after are uncompressed again until the next time."""
    profile = Profile.empty()
    con = profile.con
    con.execute("CREATE TABLE t AS SELECT i FROM range(300000) r(i)")
    assert _storage(profile, "t") == {(False, "Uncompressed")}
    profile.compact()
    assert {c for p, c in _storage(profile, "t")} <= {"BitPacking", "Constant"}
    assert all(p for p, _ in _storage(profile, "t"))
    con.execute("INSERT INTO t SELECT i FROM range(300000, 400000) r(i)")
    assert (False, "Uncompressed") in _storage(profile, "t")
    assert con.execute("SELECT count(*), sum(i) FROM t").fetchall() == [(400000, 79999800000)]
