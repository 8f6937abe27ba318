"""The terminal view and the CLI entry points."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from roofscope.cli.app import main
from roofscope.readers.load import load
from roofscope.render.compare.out import _row as compare_row
from roofscope.render.compare.out import render_compare_text
from roofscope.render.compare.words import spread_unknown
from roofscope.render.names import short_name
from roofscope.render.report.roofline_text import _row as roofline_row
from roofscope.render.report.text import render_text
from roofscope.report import analyse
from roofscope.verify.compare import compare, run_of
from roofscope.verify.gate import gate
from tests.conftest import DATA, DEMO
from tests.test_compare import TRACE, rewrite, scale


def test_text_view_of_the_demo() -> None:
    report = analyse(load([str(DEMO)]))
    lines = render_text(report, width=140).splitlines()
    assert lines[0] == "roofscope 0.1.0 · rocprof · AMD Instinct MI250X/MI250 · gfx90a"
    # results.stats.csv: 1001 calls, 2608618986 ns = 99.917% of 2610787312 ns
    assert "Kernel time 2.61 s in 1,004 dispatches of 4 kernels; 1 kernel makes 80% of it." in lines
    hot = next(line for line in lines if "laplacian_kernel" in line)
    assert hot.split()[:2] == ["1", "●"]
    # Total [ms]: the column's unit leaves the biggest value four digits (2608.6 ms)
    assert "Total [ms]" in next(line for line in lines if "Kernel" in line and "Calls" in line)
    assert "1,001" in hot and "2,609" in hot and "99.9%" in hot and "█" * 10 in hot
    cold = next(line for line in lines if "fillBufferAligned" in line)
    assert "●" not in cold
    wide = render_text(report, width=1000).splitlines()  # no wrap, wherever the checkout lies
    assert [line for line in wide if line.startswith("  input: ")] == [
        f"  input: {DEMO / 'results.csv'} (rocprof-v1-csv, 1,004 rows, dispatches)",
        f"  input: {DEMO / 'results.sysinfo.txt'} (rocminfo, metadata)",
        f"  input: {DEMO / 'results.stats.csv'} (rocprof-v1-stats, 4 rows, cross-check)",
    ]


def test_one_row_is_one_row(tmp_path: Path) -> None:
    trace = tmp_path / "results.csv"
    lines = (DEMO / "results.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    trace.write_text("".join(lines[:2]), encoding="utf-8")
    text = render_text(analyse(load([str(trace)])), width=1000)
    assert f"  input: {trace} (rocprof-v1-csv, 1 row, dispatches)" in text.splitlines()


def test_top_folds_the_rest_into_other() -> None:
    text = render_text(
        analyse(load([str(DATA / "rocprofv1-mi250x" / "stencils")])), top=3, width=140
    )
    other = next(line for line in text.splitlines() if "other (10 kernels)" in line)
    # 1024 dispatches in all; the top three kernels have 100 calls each
    assert "724" in other


def test_kernel_names_are_not_markup() -> None:
    import tempfile
    from pathlib import Path

    from tests.test_analysis_maths import write_trace

    with tempfile.TemporaryDirectory() as tmp:
        path = write_trace(Path(tmp) / "results.csv", [("k[bold]<[/]>(int)", 0, 0, 10)])
        text = render_text(analyse(load([str(path)])), width=140)
    # shown short (parameters dropped), as text: the brackets are not rich markup
    assert "k[bold]<[/]>" in text


def test_demo_formats_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    assert "laplacian_kernel" in capsys.readouterr().out
    assert main(["formats"]) == 0
    assert "rocprofv3-kernel-trace" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == "roofscope 0.1.0\n"


def test_python_dash_m() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "roofscope", "analyze", str(DEMO), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and '"schema_version": "1"' in done.stdout


def _cells_after_name(line: str, cells: list[str]) -> bool:
    """The line is a name (whole, or cut with an ellipsis) followed by these cells, whole."""
    return re.search(r"\s{2,}".join(map(re.escape, cells)) + "$", line) is not None


@pytest.mark.parametrize("width", [80, 100, 120])
def test_roofline_table_numbers_whole(width: int) -> None:
    """Every cell the roofline table formats shows whole at 80, 100 and 120 columns; below
    100 the ceiling's name makes way for the kernel's (the bound names its kind)."""
    report = analyse(load([str(DATA / "rocprof-compute-mi200")]))
    (kernel,) = report.roofline.result.kernels
    cells = roofline_row(kernel)
    shown = cells[1:] if width >= 100 else cells[1:6]
    lines = render_text(report, width=width).splitlines()
    header = next(line for line in lines if line.startswith("Kernel ") and "AI [FLOP/B]" in line)
    assert header.endswith("Bound" if width < 100 else "Ceiling")
    line = next(line for line in lines if line.startswith(short_name(kernel.name)[:16]))
    assert len(line) <= width and _cells_after_name(line, shown)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_compare_table_numbers_whole(tmp_path: Path, width: int) -> None:
    """The demo against itself with laplacian_kernel twice as fast: speedups, times and
    shares show whole at every width; how a pair was matched, then its share, make way."""
    new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale({"laplacian_kernel": 0.5}))
    runs = [[run_of(p, analyse(p))] for p in (load([str(TRACE)]), load([str(new)]))]
    cmp = compare(runs[0], runs[1], (str(TRACE), str(new)))
    verdict = gate(cmp, fail_if_slower=None, fail_if_kernel_slower=None, min_share=0.01)
    lines = render_compare_text(cmp, verdict, width=width).splitlines()
    matched = [k for k in cmp.kernels if k.how in ("name", "similarity")]
    assert matched
    for k in matched:
        cells = compare_row(k, spread_unknown(cmp))
        shown = cells[1:] if width >= 120 else cells[1:5] if width >= 100 else cells[1:4]
        line = next(line for line in lines if line.startswith(short_name(k.name)[:16]))
        assert len(line) <= width and _cells_after_name(line, shown), (line, shown)


def test_one_kernel_folded_into_other_is_singular() -> None:
    """13 kernels (the stencils' own count), the top 12 shown: 'other (1 kernel)'."""
    profile = load([str(DATA / "rocprofv1-mi250x" / "stencils")])
    report = analyse(profile)
    kernels = len(report.hotspots.kernels)
    text = render_text(report, top=kernels - 1, width=140)
    assert "other (1 kernel)" in text and "other (1 kernels)" not in text
