"""compare above the kernels, and kernels matched through their operators, on a real pair:
bert-small in bf16 on an MI300X and on an H100 (tests/data/PROVENANCE.md). The two share no
GEMM or attention kernel name (``Cijk_*``, ``attn_fwd`` vs ``cutlass::Kernel2<...>``,
``sm90_xmma_*``, ``flash_fwd_kernel``); their operators are the same. Every expected number
is summed here from the traces' own events: a kernel belongs to the ``cpu_op`` whose
``External id`` it carries."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from roofscope.analysis.ops.operators import OperatorRow, Operators
from roofscope.cli.app import main
from roofscope.verify.byop import by_operator
from roofscope.verify.match import Matching, Pair
from tests.conftest import DATA
from tests.test_compare import TRACE, compare_json

MI300X = DATA / "kineto" / "mi300x_bert_small_metadata_first.json.gz"
H100 = DATA / "kineto" / "h100_bert_small_metadata_first.json.gz"
FLASH = "aten::_flash_attention_forward"
QKV = [[1, 141, 8, 64]] * 3 + [[]] * 12
GEMMS = [  # (operator, input dims, calls a step)
    ("aten::addmm", [[512], [141, 512], [512, 512], [], []], 17),
    ("aten::addmm", [[2048], [141, 512], [512, 2048], [], []], 4),
    ("aten::addmm", [[512], [141, 2048], [2048, 512], [], []], 4),
    ("aten::addmm", [[30522], [141, 512], [512, 30522], [], []], 1),
]
MATCHED = [*GEMMS, (FLASH, QKV, 4)]

Signature = tuple[str, str]  # operator name, its Input Dims as JSON


def by_signature(path: Path) -> dict[Signature, tuple[list[float], set[str]]]:
    """Per operator signature: the durations (ns) of the kernels it launched, and their
    names; plain Python over the trace's events."""
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    ops = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op"}
    out: dict[Signature, tuple[list[float], set[str]]] = defaultdict(lambda: ([], set()))
    for e in events:
        if e.get("cat") == "kernel":
            op = ops[e["args"]["External id"]]
            durations, names = out[(op["name"], json.dumps(op["args"]["Input Dims"]))]
            durations.append(e["dur"] * 1000)
            names.add(e["name"])
    return out


@pytest.fixture(scope="module")
def traces() -> tuple[dict[Signature, Any], dict[Signature, Any]]:
    return by_signature(MI300X), by_signature(H100)


def compare_doc(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return compare_json(capsys, str(MI300X), str(H100))


def test_gemm_and_attention_operators_match_across_vendors(
    capsys: pytest.CaptureFixture[str], traces: Any
) -> None:
    """Each addmm shape and the flash attention: matched, with the calls and the kernel time
    each trace gives it, and the speedup those give (MI300X time / H100 time)."""
    doc = compare_doc(capsys)
    assert doc["devices"]["across_gpus"] is True
    rows = {(o["name"], o["input_dims"]): o for o in doc["operators"]["matched"]}
    for name, dims, calls in MATCHED:
        key = (name, json.dumps(dims))
        (base, _), (new, _) = traces[0][key], traces[1][key]
        row = rows[key]
        assert row["calls"] == [calls, calls] == [len(base), len(new)]
        assert row["total_s"] == pytest.approx([sum(base) / 1e9, sum(new) / 1e9], rel=1e-12)
        assert row["speedup"] == pytest.approx(sum(base) / sum(new), rel=1e-12)
    # every signature of both traces is on both sides: none is listed apart
    assert len(rows) == len(traces[0]) == len(traces[1]) == 15
    assert doc["operators"]["removed"] == doc["operators"]["added"] == []


def test_their_kernels_are_matched_by_operator(
    capsys: pytest.CaptureFixture[str], traces: Any
) -> None:
    """No GEMM or attention kernel name is shared; each signature's one kernel per side is
    paired with the other's, ``matched_by: operator``, with the signature's own times."""
    doc = compare_doc(capsys)
    by_base = {k["base_name"]: k for k in doc["kernels"] if k["base_name"]}
    for name, dims, _ in MATCHED:
        key = (name, json.dumps(dims))
        (base, base_names), (new, new_names) = traces[0][key], traces[1][key]
        assert len(base_names) == len(new_names) == 1 and not base_names & new_names
        k = by_base[next(iter(base_names))]
        assert k["matched_by"] == "operator" and k["score"] is None
        assert k["new_name"] == next(iter(new_names))
        assert k["total_s"] == pytest.approx([sum(base) / 1e9, sum(new) / 1e9], rel=1e-12)
        assert k["speedup"] == pytest.approx(sum(base) / sum(new), rel=1e-12)
    gemm_attention = {next(iter(traces[0][(n, json.dumps(d))][1])) for n, d, _ in MATCHED}
    assert not gemm_attention & set(doc["removed"])


def test_gemm_and_attention_categories(capsys: pytest.CaptureFixture[str], traces: Any) -> None:
    """GEMM is the four addmm shapes' kernels, attention the flash ones, on both sides."""
    doc = compare_doc(capsys)
    cats = {c["category"]: c for c in doc["categories"]}
    for category, signatures in (("gemm", GEMMS), ("attention", [(FLASH, QKV, 4)])):
        keys = [(n, json.dumps(d)) for n, d, _ in signatures]
        base = sum(sum(traces[0][k][0]) for k in keys)
        new = sum(sum(traces[1][k][0]) for k in keys)
        calls = sum(c for _, _, c in signatures)
        assert cats[category]["calls"] == [calls, calls]
        assert cats[category]["total_s"] == pytest.approx([base / 1e9, new / 1e9], rel=1e-12)
        assert cats[category]["speedup"] == pytest.approx(base / new, rel=1e-12)
    # attention is its 4 flash kernels a side, each timed 4 times: a bootstrap interval
    interval = cats["attention"]["interval"]
    assert interval["method"] == "bootstrap over dispatches"
    assert interval["low"] < cats["attention"]["speedup"] < interval["high"]
    # the 30522-wide addmm ran once a side: GEMM's total has no spread (as compare's kernels)
    assert cats["gemm"]["interval"] is None


def test_the_text_says_across_gpus_first_then_shows_the_levels(
    capsys: pytest.CaptureFixture[str], traces: Any
) -> None:
    assert main(["compare", str(MI300X), str(H100)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if not line.startswith(("roofscope", "  ")))
    assert lines[first].startswith("Across GPUs: the baseline ran on Instinct MI300X")
    assert "7 kernel pairs matched by operator" in out
    assert "Kernel categories" in out and "Operators matched by name and input shapes" in out
    flash = traces[0][(FLASH, json.dumps(QKV))][0], traces[1][(FLASH, json.dumps(QKV))][0]
    speedup = sum(flash[0]) / sum(flash[1])
    assert f"{speedup:.2f}x faster" in next(ln for ln in lines if "_flash_attention_forward" in ln)
    assert "5 more matched operators in the JSON report" in out  # 15 matched, 10 shown


def test_html_and_markdown_show_the_levels(tmp_path: Path) -> None:
    html, md = tmp_path / "c.html", tmp_path / "c.md"
    args = ["compare", str(MI300X), str(H100), "--html", str(html), "--markdown", str(md)]
    assert main(args) == 0
    page = html.read_text("utf-8")
    assert 'id="categories"' in page and 'id="operators"' in page
    assert 'id="by-operator"' in page and "<td>by operator</td>" in page
    text = md.read_text("utf-8")
    assert "| category | base | new | speedup |" in text and "| GEMM |" in text
    assert "(by operator)" in text


def test_a_trace_against_itself_pairs_nothing_by_operator(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """compare(a, a): every kernel by name, every category and operator 1x."""
    doc = compare_json(capsys, str(H100), str(H100))
    assert {k["matched_by"] for k in doc["kernels"]} == {"name"}
    assert all(c["speedup"] == 1.0 for c in doc["categories"])
    assert all(o["speedup"] == 1.0 for o in doc["operators"]["matched"])
    assert len(doc["operators"]["matched"]) == 15


def test_profiles_without_operators_have_categories_but_no_operator_level(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A rocprof trace (the demo) has kernel categories, no operators: no ``operators`` key."""
    doc = compare_json(capsys, str(TRACE), str(TRACE))
    assert doc["categories"] and "operators" not in doc
    assert sum(c["total_s"][0] for c in doc["categories"]) == pytest.approx(
        doc["end_to_end"]["kernel_time_s"][0], rel=1e-12
    )


def row(name: str, dims: str, kernels: tuple[str, ...]) -> OperatorRow:
    return OperatorRow(name, dims, "[]", 1, len(kernels), 1.0, 0.1, kernels, None, None, None)


def table(*rows: OperatorRow) -> Operators:
    return Operators(tuple(rows), 0, 0.0, 0, 0.0, "fp32-matrix")


def test_several_kernels_a_call_pair_longest_with_longest() -> None:
    """A signature that launches two kernels a side pairs them in its table's order (the
    longest dispatch first); a kernel matched by name stays so; a signature on one side
    only pairs nothing; a kernel two signatures launch is paired once."""
    base = table(
        row("aten::mm", "[[8, 8]]", ("gemm_a", "reduce_a", "same")),
        row("aten::add", "[[8]]", ("gemm_a",)),
        row("aten::only_base", "[[1]]", ("lonely_a",)),
    )
    new = table(
        row("aten::mm", "[[8, 8]]", ("gemm_b", "same", "reduce_b")),
        row("aten::add", "[[8]]", ("add_b",)),
    )
    matching = Matching(
        (Pair("same", "same", "name", 1.0),),
        ("gemm_a", "reduce_a", "lonely_a"),
        ("gemm_b", "reduce_b", "add_b"),
    )
    got = by_operator(matching, base, new)
    assert [(p.base, p.new, p.how) for p in got.pairs] == [
        ("same", "same", "name"),
        ("gemm_a", "gemm_b", "operator"),
        ("reduce_a", "reduce_b", "operator"),
    ]
    assert got.removed == ("lonely_a",) and got.added == ("add_b",)
    assert by_operator(matching, base, None) is matching


def test_the_levels_as_pandas_tables(traces: Any) -> None:
    """``to_pandas(level=...)``: the same numbers as the JSON, one row a category or
    operator signature; an unknown level is refused in the caller's words."""
    import roofscope

    cmp = roofscope.compare(str(MI300X), str(H100))
    ops = cmp.to_pandas(level="operators")
    assert len(ops) == 15 and set(ops["side"]) == {"both"}
    flash = ops[ops["name"] == FLASH].iloc[0]
    base, new = traces[0][(FLASH, json.dumps(QKV))][0], traces[1][(FLASH, json.dumps(QKV))][0]
    assert (flash["base_calls"], flash["new_calls"]) == (4, 4)
    assert flash["base_s"] == pytest.approx(sum(base) / 1e9, rel=1e-12)
    assert flash["speedup"] == pytest.approx(sum(base) / sum(new), rel=1e-12)
    cats = cmp.to_pandas(level="categories").set_index("category")
    assert cats.loc["attention", "new_s"] == pytest.approx(sum(new) / 1e9, rel=1e-12)
    assert bool(cats.loc["attention", "beyond_noise"]) is True
    assert (cmp.to_pandas()["matched_by"] == "operator").sum() == 7
    with pytest.raises(ValueError, match="level='ops': expected one of 'kernels'"):
        cmp.to_pandas(level="ops")
