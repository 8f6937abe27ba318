"""The per-dispatch counter table every counter formula reads (analysis/counters.py): its
values on a profile written by hand, and that it is built once per profile and sources; the
name ids of the kernels in counter runs (analysis/work/assign.py), built once per kernels."""

from __future__ import annotations

import math

import pytest

from roofscope.analysis.counters import dispatch_counters
from roofscope.analysis.work import assign
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.load import load
from roofscope.report import analyse
from tests.conftest import DATA, insert_counters

#          kernel start  end
_ROWS = [("k", 0, 100), ("m", 150, 400), ("k", None, None), ("m", 500, 600)]
# (row_id, counter, value), in no particular order; row 3 has no counters at all
_VALUES = [
    (2, "A", 3.0), (0, "A", 1.0), (1, "A", 2.0),
    (0, "B", 10.0), (1, "B", None), (2, "B", 30.0),  # NULL: B is missing on row 1
    (1, "C", 7.0),  # on one dispatch only
    (0, "D", math.nan), (1, "D", 1.0), (2, "D", 1.0),  # NaN: no value on row 0
    (1, "E", 0.5), (2, "E", 0.25), (0, "E", 4.0),
]  # fmt: skip


def _profile() -> Profile:
    profile = Profile.empty()
    ids = profile.name_ids(["k", "m"])
    for name, start, end in _ROWS:
        profile.con.execute(
            "INSERT INTO dispatches (source, name_id, start_ns, end_ns) VALUES (0, ?, ?, ?)",
            [ids[name], start, end],
        )
    insert_counters(profile, _VALUES)
    profile.add_input("synthetic", "test", len(_ROWS), Role.DISPATCHES)
    return profile


def test_one_column_per_counter_every_dispatch_has() -> None:
    profile = _profile()
    table = dispatch_counters(profile, [0])
    assert table is not None
    ids = profile.name_ids(["k", "m"])
    assert table.name_ids == [ids["k"], ids["m"], ids["k"]]  # row 3: no counters
    assert table.duration_ns.tolist()[:2] == [100.0, 250.0] and math.isnan(table.duration_ns[2])
    assert table.counters.names() == ["A", "E"]  # B, C and D lack a dispatch
    assert table.counters["A"].tolist() == [1.0, 2.0, 3.0]
    assert table.counters["E"].tolist() == [4.0, 0.5, 0.25]
    assert [(n, m.tolist()) for n, m in table.by_kernel()] == [
        (ids["k"], [True, False, True]),
        (ids["m"], [False, True, False]),
    ]


def test_built_once_shared_read_only_and_renewed_by_a_new_input() -> None:
    profile = _profile()
    first = dispatch_counters(profile, [0])
    assert first is not None and dispatch_counters(profile, [0]) is first
    with pytest.raises(TypeError, match="does not support item assignment"):
        first.counters["A"].values[0] = 5.0  # type: ignore[index]  # one analysis cannot change what another reads
    with pytest.raises(TypeError, match="does not support item assignment"):
        first.duration_ns.values[0] = 0.0  # type: ignore[index]
    insert_counters(profile, [(r, "F", 2.0 * r) for r in range(4)])
    profile.add_input("pass", "test", len(_ROWS), Role.COUNTER_RUN)
    again = dispatch_counters(profile, [0])
    assert again is not None and again is not first
    assert again.size == 4 and again.counters.names() == ["F"]  # A and E lack row 3
    assert again.counters["F"].tolist() == [0.0, 2.0, 4.0, 6.0]
    assert dispatch_counters(profile, []) is None and dispatch_counters(profile, [1]) is None


def test_run_name_ids_built_once_per_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """stencils: a trace of 13 kernels and a counter run (bankconflicts.csv) of the same
    program. The work asks for all 13 kernels; the metrics and the diagnosis both for the
    8 they study, which are looked up once."""
    profile = load([str(DATA / "rocprofv1-mi250x" / "stencils")])
    built: list[tuple[str, ...]] = []
    real = assign._run_name_ids
    monkeypatch.setattr(
        assign, "_run_name_ids", lambda p, kernels: built.append(tuple(kernels)) or real(p, kernels)
    )
    analyse(profile)
    assert sorted(len(kernels) for kernels in built) == [8, 13]
    studied = next(kernels for kernels in built if len(kernels) == 8)
    ids = dict(profile.con.execute("SELECT kernel, name_id FROM names").fetchall())
    assert assign.run_name_ids(profile, studied) == {k: [ids[k]] for k in studied}
    assert len(built) == 2  # the call above was answered from the cache
