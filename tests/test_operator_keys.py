"""The operator view's keys (analysis/ops/link.py): operators are joined and grouped by 64-bit
hashes of their texts, whose texts are looked up for the few distinct keys; two texts of one
hash would merge two operators' rows, so they are refused, in one line."""

from __future__ import annotations

import pytest

from roofscope.analysis.ops import link
from roofscope.cli.app import main
from tests.test_operator_roofline import H100


@pytest.mark.parametrize("key", ["SIG_KEY", "OP_KEY", "NAME_KEY"])
def test_two_operator_texts_of_one_hash_are_refused_in_one_line(
    key: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(link, key, "0::UBIGINT")  # every operator's key the same
    code = main(["analyze", str(H100), "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    (line,) = err.strip().splitlines()
    assert "two operator signatures share the hash 0" in line
    assert "please report this trace" in line
