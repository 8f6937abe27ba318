"""bench/peer_report.py, the pure half of the peer bench: answers read from each tool's output,
their comparison, the markdown table and the docs section. No peer is run; the outputs are
cut from real runs (rocprof-compute 3.3.0 on the vcopy MI200 workload, HTA 0.5.0's
breakdown printed as bench/peer_bench.py prints it)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
from bench.peer_report import (
    Answer,
    Floor,
    Result,
    differences,
    from_floor,
    from_hta,
    from_rocprof_compute,
    from_roofscope,
    met,
    table,
    with_section,
)

# rocprof-compute 3.3.0 analyze -p vcopy/MI200: the top of its report, name wrapped by tabulate
# (the second row, "other", is added here: reading stops at the first row)
RPC = """\
0. Top Stats
0.1 Top Kernels
╒════╤══════════════════════════════════════════╤═════════╤═══════════╤════════════╤══════════════╤════════╕
│    │ Kernel_Name                              │   Count │   Sum(ns) │   Mean(ns) │   Median(ns) │    Pct │
╞════╪══════════════════════════════════════════╪═════════╪═══════════╪════════════╪══════════════╪════════╡
│  0 │ vecCopy(double*, double*, double*, int,  │    3.00 │  52320.00 │   17440.00 │     16320.00 │ 100.00 │
│    │ int) [clone .kd]                         │         │           │            │              │        │
├────┼──────────────────────────────────────────┼─────────┼───────────┼────────────┼──────────────┼────────┤
│  1 │ other                                    │    1.00 │     10.00 │      10.00 │        10.00 │   0.02 │
╘════╧══════════════════════════════════════════╧═════════╧═══════════╧════════════╧══════════════╧════════╛
0.2 Dispatch List
"""  # noqa: E501
VCOPY = "vecCopy(double*, double*, double*, int, int) [clone .kd]"


def roofscope_json(names: list[str], calls: int, total_s: float, kernel_time_s: float) -> str:
    top = {"raw_names": names, "calls": calls, "total_s": total_s}
    return json.dumps({"summary": {"kernel_time_s": kernel_time_s}, "kernels": [top]})


def test_rocprof_compute_top_kernel_joins_the_wrapped_name() -> None:
    answer = from_rocprof_compute(RPC)
    assert answer.top == ("vecCopy(double*, double*, double*, int,int) [clone .kd]",)
    assert (answer.calls, answer.top_ns, answer.total_ns) == (3, 52320, 52320)
    assert answer.total_rel_tol == 0.005 / 100  # Pct printed to 0.01 %


def test_rocprof_compute_total_is_sum_over_share() -> None:
    text = RPC.replace("  52320.00 │", "  26160.00 │").replace(" 100.00 │", "  40.00 │")
    answer = from_rocprof_compute(text)
    assert (answer.top_ns, answer.total_ns) == (26160, 65400)  # 26160 / 0.4


def test_roofscope_answer_from_json() -> None:
    answer = from_roofscope(roofscope_json([VCOPY], 3, 5.232e-05, 5.232e-05))
    assert answer == Answer((VCOPY,), 3, 52320, 52320)


def test_hta_sums_ranks_and_leaves_out_copies_and_syncs() -> None:
    rows = [
        ["k1", 2, 10.5],
        ["k2", 1, 7.25],
        ["k1", 1, 3.0],  # rank 1
        ["Memcpy HtoD (Pageable -> Device)", 16, 55503.0],
        ["Stream Wait Event", 20, 10.0],
    ]
    answer = from_hta(json.dumps(rows))
    assert answer == Answer(("k1",), 3, 13500, 20750)


def test_answers_agree_when_names_differ_only_in_white_space() -> None:
    ours = from_roofscope(roofscope_json(["x", VCOPY], 3, 5.232e-05, 5.232e-05))
    assert differences(ours, from_rocprof_compute(RPC)) == []


def test_each_difference_is_named() -> None:
    ours = Answer(("a",), 3, 100, 1000)
    peer = Answer(("b",), 4, 101, 1002, total_rel_tol=0.001)  # 1 ns allowed of 1002
    assert differences(ours, peer) == [
        "top kernel 'a' vs 'b'",
        "calls 3 vs 4",
        "top kernel 100 ns vs 101 ns",
        "total 1000 ns vs 1002 ns",
    ]
    assert differences(ours, Answer(("a",), 3, 100, 1001, total_rel_tol=0.001)) == []


def result(ours_s: list[float], peer_s: list[float], rss_goal: float | None) -> Result:
    return Result("w", "HTA", ours_s, [100.0, 120.0], peer_s, [50.0, 100.0], 0.5, rss_goal, "yes")


def test_table_gives_medians_largest_rss_and_whether_the_goal_is_met() -> None:
    rows = [result([1.0, 3.0, 2.0], [4.0, 5.0, 9.0], None), result([3.0], [5.0], 1.1)]
    assert table(rows).splitlines()[2:] == [
        "| w | HTA | 2.00 | 120 | 5.00 | 100 | 0.40 | 1.20 | <= 0.50 | yes | yes |",
        "| w | HTA | 3.00 | 120 | 5.00 | 100 | 0.60 | 1.20 | <= 0.50, RSS <= 1.1x | no | yes |",
    ]
    assert met(result([2.0], [4.0], 1.2)) and not met(result([2.0], [4.0], 1.1))


def test_section_replaced_up_to_the_next_heading_or_appended() -> None:
    doc = "# P\n\n## A\n\nold\n\n## Against the peers\n\nold table\n\n## Z\n\nz\n"
    new = "## Against the peers\n\nnew\n"
    want = "# P\n\n## A\n\nold\n\n## Against the peers\n\nnew\n\n## Z\n\nz\n"
    assert with_section(doc, new) == want
    assert with_section("# P\n\ntext\n", new) == "# P\n\ntext\n\n## Against the peers\n\nnew\n"
    last = "# P\n\n## Against the peers\n\nold\n"
    assert with_section(last, new) == "# P\n\n## Against the peers\n\nnew\n"


def test_the_sampler_counts_the_whole_process_tree() -> None:
    """bench/measure.py sums the resident memory of a process and its descendants: a child
    holding 128 MiB counts, its parent (a bare interpreter) adds its own."""
    import subprocess
    import sys
    import time

    from bench.measure import _tree_rss_kib

    child = "x = bytearray(128 << 20); import time; time.sleep(3)"
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    proc = subprocess.Popen([sys.executable, "-c", parent])
    try:
        peak = 0
        for _ in range(200):  # until the child has touched its 128 MiB
            peak = max(peak, _tree_rss_kib(proc.pid))
            if peak > 128 << 10:
                break
            time.sleep(0.01)
        assert 128 << 10 < peak < 300 << 10
    finally:
        proc.kill()
        proc.wait()


def test_floor_answer_is_its_top_kernel_and_total() -> None:
    rows = [["b", 2, 30], ["a", 5, 70], ["c", 1, 1]]
    assert from_floor(json.dumps(rows)) == Answer(("a",), 5, 70, 101)


def test_duckdb_floor_aggregates_the_csv_and_agrees_with_roofscope(tmp_path: Path) -> None:
    """bench/peer_bench.py's CSV floor on a small file written by bench/gen_results_csv.py:
    its rows are the csv module's count and sum of EndNs - BeginNs per kernel, and its answer
    is roofscope's."""
    import subprocess

    from bench import gen_results_csv, peer_bench

    path = tmp_path / "results.csv"
    gen_results_csv.generate(path, 2_000, kernels=12)
    expected: dict[str, list[int]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            entry = expected.setdefault(row["KernelName"], [0, 0])
            entry[0] += 1
            entry[1] += int(row["EndNs"]) - int(row["BeginNs"])
    out = subprocess.run(
        peer_bench.duckdb_floor([path]), capture_output=True, text=True, check=True
    ).stdout
    assert {n: [c, t] for n, c, t in json.loads(out)} == expected
    ours = subprocess.run(
        [sys.executable, "-m", "roofscope", "analyze", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert differences(from_roofscope(ours), from_floor(out)) == []


def test_floors_plug_in_by_workload_name() -> None:
    """The CSV's row is the one against its floor; another workload's floor adds a row and
    keeps the peer's; a floor of no workload stops the bench with the names it knows."""
    from bench.peer_bench import CSV, Workload, with_floors

    def work(name: str) -> Workload:
        return Workload(name, "HTA", [Path("t.json")], Path("."), 0.5)

    made = {CSV: lambda: work(CSV), "K": lambda: work("K")}
    floor = Floor("gunzip + decode floor", lambda inputs: ["true"], 1.3, answers=False)
    csv_floor = Floor("DuckDB group-by floor", lambda inputs: ["true"], 1.2)
    rows = with_floors(made, {CSV: csv_floor, "K": floor})
    assert list(rows) == [CSV, "K", "K / gunzip + decode floor"]
    assert (rows[CSV]().peer, rows[CSV]().goal) == ("DuckDB group-by floor", 1.2)
    assert rows["K"]().peer == "HTA"
    extra = rows["K / gunzip + decode floor"]()
    assert (extra.name, extra.peer, extra.goal, extra.floor) == ("K", floor.label, 1.3, floor)
    with pytest.raises(SystemExit, match="no workload named 'X'"):
        with_floors(made, {"X": floor})
