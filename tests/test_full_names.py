"""``--full-names`` (issue 36, point 7): every kernel name whole, as the profile names it, in
the terminal (wrapped, never cut), the HTML and the charts; the API's ``full_names=True``.

The names are the profiles' own: the Name column of an nsys ``cuda_gpu_kern_sum`` export (RTX
5090, cuBLAS gemv and PyTorch kernels) read with the csv module, and the kernels of HTA's
inference trace (CUTLASS and cuBLAS names of 150 to 400 characters)."""

from __future__ import annotations

import csv
import re
from html import escape, unescape
from pathlib import Path

import pytest

import roofscope
from roofscope.cli.app import main
from roofscope.render.charts.labels import text_width
from roofscope.render.name_fit import wrap
from roofscope.render.names import full_names, short_names
from tests.conftest import DATA

DECODE = DATA / "nsys" / "decode_cuda_gpu_kern_sum.csv"
INFERENCE = DATA / "kineto" / "inference_rank_1.json.gz"


def top_names(path: Path, n: int) -> list[str]:
    """The ``n`` kernels with the most total time, as the export names them."""
    with path.open(newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: -int(r["Total Time (ns)"]))
    return [r["Name"] for r in rows[:n]]


def squeezed(text: str) -> str:
    return "".join(text.split())


def name_column(text: str) -> list[str]:
    """Each kernel row's name as the table shows it, its lines joined (the mark dropped)."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("#") and "Kernel" in line)
    at = lines[header].index("Kernel")
    rows: list[list[str]] = []
    for line in lines[header + 2 :]:
        if re.match(r"\d+\s", line):
            rows.append([re.split(r"\s{2,}", line[at:])[0].removeprefix("● ")])
        elif rows and line.startswith(" " * at) and len(re.split(r"\s{2,}", line.strip())) == 1:
            rows[-1].append(line.strip())  # a name's next line: no other column beside it
        else:
            break
    return [" ".join(parts) for parts in rows]


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_analyze_shows_each_name_whole_wrapped_in_the_width(
    columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["analyze", str(DECODE), "--full-names", "--top", "4"]) == 0
    out = capsys.readouterr().out
    shown = name_column(out)
    assert [squeezed(s) for s in shown] == [squeezed(n) for n in top_names(DECODE, 4)]
    assert all(len(line.rstrip()) <= columns for line in out.splitlines())
    assert "…" not in "".join(shown)


def test_without_the_option_names_are_short(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["analyze", str(DECODE), "--top", "4"]) == 0
    shown = name_column(capsys.readouterr().out)
    assert len(shown) == 4 and all(len(s) <= 60 for s in shown)
    assert shown[0] != top_names(DECODE, 1)[0]


def test_compare_shows_each_name_whole(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["compare", str(DECODE), str(DECODE), "--full-names"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Kernel "))
    # the kernel table ends where the categories' (or, without them, the warnings) begin
    ends = ("Kernel categories", "Warnings (data quality)")
    end = next((i for i, line in enumerate(lines) if i > at and line.startswith(ends)), None)
    rows: list[list[str]] = []
    for line in lines[at + 2 : end or len(lines)]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) > 1 and cells[1].endswith("s"):  # a row: its name, then Base [ms]
            rows.append([cells[0]])
        elif len(cells) == 1 and cells[0] and rows and not line.startswith(" "):
            rows[-1].append(cells[0])
        else:
            break
    every = {squeezed(n) for n in top_names(DECODE, 1000)}
    assert len(rows) >= 10 and all(squeezed(" ".join(r)) in every for r in rows)


def test_the_api_html_shows_names_whole() -> None:
    report = roofscope.analyze(DECODE, full_names=True)
    page = report.to_html()
    for name in top_names(DECODE, 5):
        assert f'<td class="name" title="{escape(name)}">' in page
    assert '<td class="name"><details>' not in page  # nothing to open: the name is whole
    short = roofscope.analyze(DECODE).to_html()
    assert '<td class="name"><details>' in short


def test_the_hotspot_chart_makes_room_for_whole_names() -> None:
    names = top_names(DECODE, 3)
    svg = roofscope.analyze(DECODE, full_names=True).hotspots_svg(top=3)
    labels = re.findall(r'<text x="(\d+)" [^>]*text-anchor="end"[^>]*>([^<]*)</text>', svg)
    assert [text for _, text in labels[:3]] == [escape(n, quote=False) for n in names]
    longest = max(text_width(n, 11) for n in names)
    assert all(int(x) >= longest for x, _ in labels)  # each label starts right of x=0
    short = roofscope.analyze(DECODE).hotspots_svg(top=3)
    shown = re.findall(r'text-anchor="end"[^>]*>([^<]*)</text>', short)
    assert 'width="760"' in short and all(len(unescape(t)) <= 38 for t in shown)


def test_the_timeline_legend_shows_whole_names_one_to_a_row() -> None:
    report = roofscope.analyze(INFERENCE, full_names=True)
    svg = report.timeline_svg()
    keys = re.findall(r'<g class="tl-key[^"]*"[^>]*><title>([^<]*)</title>.*?y="(\d+)" font', svg)
    texts = re.findall(r'<g class="tl-key[^"]*"[^>]*>.*?<text [^>]*>([^<]*)</text></g>', svg)
    kernels = report.checkup.lanes.kernels if report.checkup.lanes else ()
    assert kernels and texts[: len(kernels)] == [escape(k, quote=False) for k in kernels]
    assert len({y for _, y in keys}) == len(keys)  # one to a row
    width = int(re.search(r'id="timeline" width="(\d+)"', svg).group(1))  # type: ignore[union-attr]
    assert width >= max(180 + 14 + text_width(k, 11) for k in kernels)


def test_the_waterfall_moves_right_for_whole_names() -> None:
    svg = roofscope.compare(DECODE, DECODE, full_names=True).waterfall_svg()
    steps = [unescape(t) for t in re.findall(r'<g data-k="\d+">.*?font-size="11">([^<]*)<', svg)]
    every = top_names(DECODE, 1000)
    assert len(steps) == 20 and all(s in every for s in steps)  # the 20 steps, names whole
    shift = int(re.search(r"translate\((\d+),0\)", svg).group(1))  # type: ignore[union-attr]
    assert shift + 250 - 6 >= max(text_width(s, 11) for s in steps)
    assert "translate" not in roofscope.compare(DECODE, DECODE).waterfall_svg()


def test_short_names_are_the_demangled_names_within_full_names() -> None:
    mangled = "_ZN5aiter50fmoe_bf16_pertokenMXfp4_g1u1_flat_novs_silu_16x128E"
    with full_names():
        assert short_names([mangled, "void f<int>(int*)"], 8) == [
            "aiter::fmoe_bf16_pertokenMXfp4_g1u1_flat_novs_silu_16x128",
            "void f<int>(int*)",
        ]
    assert short_names(["void f<int>(int*)"], 8) == ["f<int>"]


def test_wrap_breaks_after_separators_and_folds_only_long_words() -> None:
    name = "void at::native::vectorized_elementwise_kernel<(int)4, std::array<char *, 3>>(int)"
    lines = wrap(name, 24)
    assert lines == [
        "void at::native::",
        "vectorized_elementwise_k",
        "ernel<(int)4, std::",
        "array<char *, 3>>(int)",
    ]
    assert all(len(line) <= 24 for line in lines)
    assert wrap("Unknown command type", 80) == ["Unknown command type"]


def test_the_roofline_labels_kernels_whole_where_a_name_fits() -> None:
    """The demo's OpenMP kernels: ``__omp_offloading_…__QQmain_l18`` short, whole with
    ``full_names``; a label with no room is left out (its point's tooltip names it)."""
    demo = Path(roofscope.__file__).parent / "data" / "demo" / "openmp-collapse-mi300a"
    label = r'class="kernel-label".*?</title>([^<]*)</text>'
    whole = roofscope.analyze(demo, full_names=True)
    labels = [unescape(t) for t in re.findall(label, whole.roofline_svg())]
    assert "__omp_offloading_32_6b6b__QQmain_l18" in labels
    assert set(labels) <= {k.name for k in whole.kernels}
    short = re.findall(label, roofscope.analyze(demo).roofline_svg())
    assert "__omp_offloading_…__QQmain_l18" in short
