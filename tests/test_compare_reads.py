"""compare reads top-down: the verdict and the kernel table first, the data-quality warnings
after them folded by kind with their counts, gate failures named as the table names them."""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, SHARED_CORPUS

MI100 = DATA / "omniperf-v1-mi100"  # Omniperf 1.0.3's Axes1 workload, trimmed
MI200 = DATA / "rocprof-compute-omniperf1-mi200"
AXES1 = SHARED_CORPUS / "amd" / "omniperf-v1-2022" / "Axes1"
Cap = pytest.CaptureFixture[str]


def dispatches(timestamps: Path) -> Counter[str]:
    """Dispatches per kernel in an Omniperf timestamps.csv (rocprof v1 columns)."""
    with timestamps.open(newline="") as f:
        return Counter(r["KernelName"].removesuffix(".kd") for r in csv.DictReader(f))


def totals_ns(timestamps: Path) -> dict[str, int]:
    """EndNs - BeginNs summed per kernel."""
    out: dict[str, int] = defaultdict(int)
    with timestamps.open(newline="") as f:
        for r in csv.DictReader(f):
            out[r["KernelName"].removesuffix(".kd")] += int(r["EndNs"]) - int(r["BeginNs"])
    return out


def single(timestamps: Path) -> int:
    return sum(1 for n in dispatches(timestamps).values() if n == 1)


def test_warnings_fold_by_kind_after_the_table(capsys: Cap, tmp_path: Path) -> None:
    """The trimmed MI200 workload against itself: each side's single-dispatch kernels fold
    into one line, after the table, in text, Markdown and HTML."""
    md, html = tmp_path / "gate.md", tmp_path / "cmp.html"
    args = ["--markdown", str(md), "--html", str(html)]
    assert main(["compare", str(MI200), str(MI200), *args]) == 0
    out = capsys.readouterr().out
    n = single(MI200 / "timestamps.csv")
    assert n == 12
    for side in ("baseline", "candidate"):
        folded = f"! {side}: [single-dispatch] {n} kernels: "
        assert out.count(f"! {side}: [single-dispatch]") == 1
        assert out.index("Kernel ") < out.index("Warnings (data quality)") < out.index(folded)
    assert f"+{n - 3} more: one dispatch: " in " ".join(out.split())
    document = md.read_text(encoding="utf-8")
    assert document.count("[single-dispatch]") == 2
    assert f"- baseline: [single-dispatch] {n} kernels: " in document
    assert document.index("| kernel |") < document.index("Data-quality warnings:")
    page = html.read_text(encoding="utf-8")
    assert f"<li>candidate: [single-dispatch] {n} kernels: " in page
    assert page.index('id="changes"') < page.index('id="warnings"')


def test_a_warning_of_one_kernel_names_it_first() -> None:
    """A fold of one kernel reads as the unfolded warning did: the kernel, then the words."""
    from roofscope.render.compare.folds import fold_text, folds
    from roofscope.verify.quality import SideWarning

    one = SideWarning("baseline", None, "single-dispatch", "one dispatch", 1, "void k<int>(int*)")
    two = SideWarning("candidate", None, "clocks-apart", "apart", 1)
    (a, b) = folds([one, two])
    assert fold_text(a, {"void k<int>(int*)": "k<int>"}) == "[single-dispatch] k<int>: one dispatch"
    assert fold_text(b, {}) == "[clocks-apart] apart" and b.blocks_gate


@pytest.mark.skipif(not AXES1.is_dir(), reason="needs ../shared/corpus")
def test_gate_failures_name_the_tables_names(capsys: Cap) -> None:
    """Omniperf MI100 against MI200: 1,033 lines with 334 single-dispatch lines before the
    table; the kernels over 5 % slower each on one line, by their short name."""
    args = ["compare", str(AXES1 / "mi100"), str(AXES1 / "mi200"), "--fail-if-kernel-slower", "5"]
    assert main([*args]) == 3
    out = capsys.readouterr().out
    base, new = (
        totals_ns(AXES1 / "mi100" / "timestamps.csv"),
        totals_ns(AXES1 / "mi200" / "timestamps.csv"),
    )
    whole = sum(base.values())  # the gate checks kernels of at least 1 % (--min-share)
    slower = {
        k
        for k in base.keys() & new.keys()
        if new[k] / base[k] - 1 > 0.05 and base[k] >= 0.01 * whole
    }
    failed = [line for line in out.splitlines() if line.startswith("  x ")]
    assert len(failed) == len(slower) == 4
    for line in failed:
        assert (
            line.startswith("  x benchmark_func<")
            and "void " not in line
            and "(" not in line.split(":")[0]
        )
    assert out.index("Gate: FAIL") < out.index("Kernel ") < out.index("Warnings (data quality)")
    assert out.count("[single-dispatch]") == 2
    for side, run in (("baseline", "mi100"), ("candidate", "mi200")):
        n = single(AXES1 / run / "timestamps.csv")
        assert n == 167 and f"! {side}: [single-dispatch] {n} kernels: " in out
    assert len(out.splitlines()) < 120


def test_one_run_a_side_says_the_spread_is_unknown_once(capsys: Cap) -> None:
    """One run a side: no speedup has an interval. The end-to-end line says so, with how to
    get one; the kernel and category tables show bare speedups. With another run of each
    side, the intervals come back and the words go."""
    assert main(["compare", str(MI200), str(MI200)]) == 0
    out = capsys.readouterr().out
    assert out.count("spread unknown") == 1
    words = " ".join(out.split())
    assert "(spread unknown: one run a side: give more with --base-run and --new-run" in words
    table = out[out.index("Kernel ") : out.index("Warnings (data quality)")]
    rows = [line for line in table.splitlines() if line.startswith("benchmark_func")]
    assert rows and all("   no change   " in line for line in rows)
    more = ["--base-run", str(MI200), "--new-run", str(MI200)]
    assert main(["compare", str(MI200), str(MI200), *more]) == 0
    assert "spread unknown" not in capsys.readouterr().out


@pytest.mark.skipif(not AXES1.is_dir(), reason="needs ../shared/corpus")
def test_kernels_placed_on_one_side_only_are_one_line(capsys: Cap) -> None:
    """Omniperf MI100 (no FLOP counters: nothing placed) against MI200: the kernels of the
    table that the roofline places after only are one line, their count the JSON's, the
    first three named; none is said to be 'bound differently'."""
    args = ["compare", str(AXES1 / "mi100"), str(AXES1 / "mi200")]
    assert main([*args, "--json"]) == 0

    doc = json.loads(capsys.readouterr().out)
    moved = [k["roofline"] for k in doc["kernels"] if k["roofline"]][:20]  # the text's top
    placed = [m for m in moved if m["bound"][0] is None and m["bound"][1]]
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    n = len(placed)
    assert n == 20 and f"{n} kernels placed after only (no work known before): " in out
    assert f"; {n - 3} more" in out and "bound differently" not in out
