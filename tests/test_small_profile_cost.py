"""The fixed cost of a small profile's check-up (issue 41, point 3): the tables that hold a
row asked once (model/access.py ``filled``), so that an analysis whose table is empty runs
no statement; the host range kinds asked once; an operator without a formula left undecoded
(analysis/ops/link.py ``works``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from roofscope.analysis.ops import link
from roofscope.analysis.ops.link import Signature, works
from roofscope.analysis.work.shapes import has_formula
from roofscope.model import access
from roofscope.model.profile import Profile
from roofscope.model.schema import Role, Table
from roofscope.readers.io.batches import _int_text, column, insert_lists, registered
from roofscope.readers.load import load

MI250 = Path(__file__).parent / "data" / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"


def test_filled_names_the_tables_that_hold_a_row_of_a_real_trace() -> None:
    profile = load([str(MI250)])
    counted = {t: profile.count(t) for t in Table}
    assert access.filled(profile) == {t for t, n in counted.items() if n}
    # a Kineto trace: kernels, launches, operators and ranges; no producer summary, counter
    # or profiler rule
    assert {Table.DISPATCHES, Table.OPERATORS, Table.USER_RANGES} <= access.filled(profile)
    assert not access.has_summaries(profile) and not access.has_activity(profile)
    assert not access.has_counters(profile) and not access.has_producer_rules(profile)
    assert access.has_dispatches(profile) and access.has_range_launches(profile)
    assert access.has_copies(profile) == (counted[Table.COPIES] > 0)
    assert access.has_graph_launches(profile) == (counted[Table.GRAPH_LAUNCHES] > 0)


def test_host_range_kinds_are_the_kinds_of_the_rows() -> None:
    profile = load([str(MI250)])
    rows = profile.con.execute("SELECT kind, count(*) FROM host_ranges GROUP BY kind").fetchall()
    assert rows and access.host_range_kinds(profile) == {str(kind) for kind, _ in rows}


def test_filled_is_asked_again_after_an_input_is_added() -> None:
    profile = Profile.empty()
    assert access.filled(profile) == frozenset()
    assert access.host_range_kinds(profile) == frozenset()
    profile.name_ids(["k"])
    profile.con.execute("INSERT INTO host_ranges VALUES (0, 'sync', 'hipDeviceSynchronize', 1, 2)")
    profile.add_input("x.json", "kineto", 1, Role.DISPATCHES)
    assert access.filled(profile) == {Table.NAMES, Table.HOST_RANGES}
    assert access.host_range_kinds(profile) == {"sync"}


def test_only_operators_with_a_formula_have_their_inputs_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoded: list[str] = []
    decode = ast.literal_eval

    def literal_eval(text: str) -> object:
        decoded.append(text)
        return decode(text)

    monkeypatch.setattr(link.ast, "literal_eval", literal_eval)
    relu = Signature("aten::empty", "[[2, 3]]", "['float']", "['']")
    mm = Signature("aten::mm", "[[2, 3], [3, 4]]", "['float', 'float']", "['', '']")
    assert not has_formula("aten::empty") and has_formula("aten::mm")
    assert has_formula("triton_poi_fused_add_0") and not has_formula("triton_helper")
    found = works([relu, mm], "fp32-vector")
    assert list(found) == [mm] and found[mm].flops == 2 * 2 * 3 * 4
    assert decoded == ["[[2, 3], [3, 4]]", "['float', 'float']", "['', '']"]


@pytest.mark.parametrize(
    "values",
    [
        [1, None, -(2**63 - 1), 2**63 - 1, 0],  # plain ints and None: written as list text
        [None, None],
        [],
        [True, 2],  # a bool: the Python list, converted as before
        [1.0, 2],
    ],
)
def test_an_integer_column_reads_back_as_given(values: list[object]) -> None:
    profile = Profile.empty()
    profile.con.execute("CREATE TABLE t (a BIGINT, b VARCHAR)")
    texts = [None if v is None else f"'{v}" for v in values]  # a quote, as the text column
    insert_lists(profile, "t", {"a": ("int", values), "b": ("text", texts)})
    rows = profile.con.execute("SELECT a, b FROM t ORDER BY rowid").fetchall()
    wanted = [None if v is None else int(v) for v in values]  # type: ignore[call-overload]
    assert rows == list(zip(wanted, texts, strict=True))
    assert _int_text(values) == (
        str(values).replace("None", "NULL") if all(type(v) is int or v is None for v in values)
        else values
    )  # fmt: skip


@pytest.mark.parametrize("values", [[1, 2**63], [True, -(2**64)]])
def test_an_integer_past_64_bits_is_refused_either_way(values: list[int]) -> None:
    with pytest.raises(OverflowError):
        insert_lists(Profile.empty(), "names", {"name_id": ("int", values)})


@pytest.mark.parametrize("values", [[None] * 5000, [None, 1.5, None] * 2000, [0.25] * 5000])
def test_a_float_column_reads_back_as_given(values: list[float | None]) -> None:
    """A numpy float column: None is read as NULL, whether the whole column is None (built
    at once) or some of it (converted value by value)."""
    profile = Profile.empty()
    profile.con.execute("CREATE TABLE t (x DOUBLE)")
    with registered(profile, "batch", {"x": column(values, "float")}) as con:
        con.execute("INSERT INTO t SELECT x FROM batch").fetchall()
    rows = profile.con.execute("SELECT x FROM t ORDER BY rowid").fetchall()
    assert [r[0] for r in rows] == values
