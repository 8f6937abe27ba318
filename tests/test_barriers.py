"""Barrier packets (rocprof v1 ``<barrier packet>``) are no kernel: kept out of kernel time,
the hotspots, the timeline and compare, and reported apart with what they usually mean.

The data: tests/data/rocprofv1-barrier-mi250x, derived from the real MI250X laplacian trace
by tools/derive_barrier_sample.py (see tests/data/PROVENANCE.md). Every expected number is
taken from the files themselves with the csv module: the kernel totals from the REAL
laplacian results.stats.csv (which rocprof wrote without barriers), the barrier count and
time from the derived rows, the barrier share from the derived stats file's own Percentage.
"""

from __future__ import annotations

import csv
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from roofscope.readers.io.barriers import MEANING, is_barrier
from tests.conftest import DATA
from tests.test_bad_inputs import analyze_ok, run, warnings_by_code
from tests.test_compare import compare_json

BARRIER = DATA / "rocprofv1-barrier-mi250x"
REAL = DATA / "rocprofv1-mi250x" / "laplacian"
SCHEMA = json.loads(
    (resources.files("roofscope") / "schema" / "report-v1.schema.json").read_text("utf-8")
)

Cap = pytest.CaptureFixture[str]


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def real_kernel_totals() -> dict[str, tuple[int, int]]:
    """Raw name -> (calls, total ns), from the real stats file rocprof wrote."""
    return {
        r["Name"]: (int(r["Calls"]), int(r["TotalDurationNs"]))
        for r in rows(REAL / "results.stats.csv")
    }


def barrier_rows() -> list[dict[str, str]]:
    return [r for r in rows(BARRIER / "results.csv") if r["KernelName"] == "<barrier packet>"]


def barrier_percentage() -> float:
    """The derived stats file's own Percentage of its barrier row, as a fraction."""
    (row,) = [r for r in rows(BARRIER / "results.stats.csv") if r["Name"] == "<barrier packet>"]
    return float(row["Percentage"]) / 100


def busy_ns(trace: Path) -> int:
    """The union of the kernels' [Begin, End] intervals of a trace (barriers left out)."""
    spans = sorted(
        (int(r["BeginNs"]), int(r["EndNs"]))
        for r in rows(trace)
        if r["KernelName"] != "<barrier packet>"
    )
    total, start, end = 0, *spans[0]
    for b, e in spans[1:]:
        if b > end:
            total, start = total + end - start, b
        end = max(end, e)
    return total + end - start


def kernel_totals(doc: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {k["raw_names"][0]: (k["calls"], round(k["total_s"] * 1e9)) for k in doc["kernels"]}


def test_names_that_are_barrier_packets() -> None:
    assert is_barrier("<barrier packet>")
    assert is_barrier('"<barrier packet>"')  # tblextr keeps the quotes in the name it stores
    assert not is_barrier("barrier_kernel")
    assert not is_barrier("void foo<barrier packet>(int)")


def test_v1_barrier_packets_are_not_kernels(capsys: Cap) -> None:
    """results.csv with its results.stats.csv (a cross-check): the kernels are the real
    ones, the barriers a line of their own, and the cross-check agrees."""
    doc = analyze_ok(capsys, BARRIER)
    jsonschema.validate(doc, SCHEMA)
    real = real_kernel_totals()
    assert kernel_totals(doc) == real
    assert doc["summary"]["dispatches"] == sum(c for c, _ in real.values()) == 1004
    assert doc["summary"]["kernel_time_s"] == pytest.approx(sum(t for _, t in real.values()) / 1e9)
    assert doc["summary"]["busy_s"] == pytest.approx(busy_ns(REAL / "results.csv") / 1e9)
    barriers = barrier_rows()
    total = sum(int(r["DurationNs"]) for r in barriers)
    assert (len(barriers), total) == (11, 29081966)
    assert doc["barriers"] == {
        "records": 11,
        "total_s": pytest.approx(total / 1e9),
        "share_of_kernel_and_barrier_time": pytest.approx(barrier_percentage(), rel=1e-12),
        "meaning": MEANING,
    }
    assert [a for a in doc["activity"] if a["kind"] == "barrier"] == [
        {"kind": "barrier", "name": "<barrier packet>", "calls": 11, "total_s": total / 1e9}
    ]
    roles = [(Path(f["path"]).name, f["role"], f["rows"]) for f in doc["inputs"]]
    assert roles == [
        ("results.csv", "dispatches", 1004),
        ("results.csv", "barriers", 11),
        ("results.stats.csv", "cross-check", 4),
    ]
    assert "stats-mismatch" not in warnings_by_code(doc)


def test_v1_stats_barrier_rows_are_not_kernels(capsys: Cap) -> None:
    doc = analyze_ok(capsys, BARRIER / "results.stats.csv")
    real = real_kernel_totals()
    assert kernel_totals(doc) == real
    assert doc["barriers"]["records"] == 11
    assert doc["barriers"]["total_s"] == pytest.approx(29081966 / 1e9)
    share = doc["barriers"]["share_of_kernel_and_barrier_time"]
    assert share == pytest.approx(barrier_percentage(), rel=1e-12)


def test_v1_barrier_line_in_text_and_html(
    capsys: Cap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the line unwrapped
    line = (
        "Barrier packets (not kernel time): 11 records, 29.1 ms (1.1% of kernel + barrier "
        f"time); {MEANING}."
    )
    html = tmp_path / "report.html"
    code, out, err = run(capsys, "analyze", str(BARRIER), "--html", str(html))
    assert (code, err) == (0, ""), err
    assert line in out.splitlines()
    assert "<barrier packet>" not in out.split(line)[1]  # not among the hotspots after it
    assert '<p id="barriers">Barrier packets (not kernel time): 11 records' in html.read_text(
        encoding="utf-8"
    )


def test_v1_json_barrier_events_are_not_kernels(capsys: Cap, tmp_path: Path) -> None:
    """results.json as tblextr writes it: kernels in pid 6 + gpu-id with their KernelName,
    barrier packets in pid 6 + gpu-id + 512 ("GPU Barriers8"), named with the quotes tblextr
    stores (so the event is not valid JSON and is recovered by pattern)."""
    events = ['{ "traceEvents":[{}']
    for r in rows(BARRIER / "results.csv"):
        times = f'"BeginNs":"{r["BeginNs"]}","EndNs":"{r["EndNs"]}"'
        if r["KernelName"] == "<barrier packet>":
            events.append(
                ',{"ph":"X","name":""<barrier packet>"","pid":526,"tid":1,"ts":"0",'
                f'"dur":"0","args":{{{times}}}}}'
            )
        else:
            events.append(
                f',{{"ph":"X","name":"{r["KernelName"]}","pid":14,"tid":0,"ts":"0","dur":"0",'
                f'"args":{{"KernelName":"{r["KernelName"]}","gpu-id":"8",{times}}}}}'
            )
    path = tmp_path / "results.json"
    path.write_text("\n".join(events) + '\n],"otherData":{}}\n', encoding="utf-8")
    doc = analyze_ok(capsys, path)
    assert kernel_totals(doc) == real_kernel_totals()
    assert (doc["barriers"]["records"], doc["barriers"]["total_s"]) == (
        11,
        pytest.approx(29081966 / 1e9),
    )
    assert [d["device"] for d in doc["devices"]] == [8]


def test_compare_leaves_barrier_packets_out(capsys: Cap) -> None:
    """The same run without and with barrier rows: the same kernels, none added."""
    doc = compare_json(capsys, str(REAL / "results.csv"), str(BARRIER / "results.csv"))
    assert doc["added"] == [] and doc["removed"] == []
    assert sorted(k["base_name"] for k in doc["kernels"]) == sorted(
        k.removesuffix(".kd") for k in real_kernel_totals()
    )


def test_barriers_of_two_ranks_stay_apart(capsys: Cap, tmp_path: Path) -> None:
    """Two processes (the derived trace and a copy under another pid): each file's barrier
    packets are its own input, never a rank of the rank view."""
    text = (BARRIER / "results.csv").read_text(encoding="utf-8")
    for rank, pid in (("r0", "1580852"), ("r1", "1580999")):
        (tmp_path / rank).mkdir()
        same = text.replace(",1580852,1580852,", f",{pid},{pid},")
        (tmp_path / rank / "results.csv").write_text(same, encoding="utf-8")
    doc = analyze_ok(capsys, tmp_path)
    assert doc["summary"]["dispatches"] == 2 * 1004
    assert (doc["barriers"]["records"], doc["barriers"]["total_s"]) == (
        22,
        pytest.approx(2 * 29081966 / 1e9),
    )
    assert len(doc["ranks"]["labels"]) == 2
    assert [f["role"] for f in doc["inputs"]] == ["dispatches", "barriers"] * 2
