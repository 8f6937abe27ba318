"""Names a person can tell apart and numbers as a person writes them (issue 22, points 3-4):
the formatter and the shortener on values worked by hand, and the text of real profiles."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roofscope.cli.app import main
from roofscope.model.words import sized
from roofscope.render.compare.words import speedup_text
from roofscope.render.names import fit, short_name, short_names
from roofscope.render.numbers import (
    cell,
    column_unit,
    duration,
    quantity,
    ratio_range,
    si,
    sig,
)
from roofscope.verify.compare import Interval
from tests.conftest import DATA, SHARED_CORPUS
from tests.test_compare import TRACE, rewrite, scale

EXPONENT = re.compile(r"\d[eE][+-]?\d")
MI200 = SHARED_CORPUS / "amd" / "omniperf-v1-2022" / "Axes1" / "mi200"
VCOPY = SHARED_CORPUS / "amd" / "rocprof-compute-vcopy-2025"
NSYS_SUMMARY = DATA / "nsys" / "decode_cuda_gpu_kern_sum.csv"
# a number in scientific notation: 1e5, 1.93e+03, 6E-06 (a value quoted from a file, in
# double quotes, is the file's text and is left out)
SCIENTIFIC = re.compile(r"\d(?:\.\d+)?[eE][+-]?\d")


def scientific(text: str) -> list[str]:
    unquoted = re.sub(r'"[^"\n]*"', "", text)
    return [line for line in unquoted.splitlines() if SCIENTIFIC.search(line)]


# -- the formatter ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3432, "3,430"),  # 3 significant figures, never 3.43e+03
        (0.0123456, "0.0123"),
        (9.996, "10"),  # rounds up a digit
        (1.5, "1.5"),
        (257.4, "257"),
        (0, "0"),
        (1e18, "1,000,000,000,000,000,000"),  # a limit in a message, never 1e+18
        (1e30 * 1e9, "1," + ",".join(["000"] * 13)),  # never the float's 999,...,112 digits
        (-2.468e21, "-2,470,000,000,000,000,000,000"),
    ],
)
def test_significant_figures(value: float, text: str) -> None:
    assert sig(value) == text


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (1e308, "", f"a {len(str(10**308))}-digit number"),  # a damaged file's counter
        (1e39, "ns", f"a {len(str(10**39))}-digit number of ns"),
        (-(2.0**74), "", f"a {len(str(2**74))}-digit negative number"),
        (1e19, "", f"{10**19:,}"),  # up to 21 digits, every digit shown
        (123456789.0, "B", "123,457,000 B"),
        (float("inf"), "", "inf"),
    ],
)
def test_an_absurd_value_is_sized_in_words(value: float, unit: str, text: str) -> None:
    assert sized(value, unit) == text


def test_si_prefixes() -> None:
    assert si(1.226e14, "FLOP/s") == "123 TFLOP/s"  # the HTML ceilings table read 1.226e+14
    assert si(4.3e12, "B/s") == "4.3 TB/s"
    assert si(999.7e9, "FLOP/s") == "1 TFLOP/s"  # 999.7 G rounds to 1000 G: one T
    assert si(0, "B/s") == "0 B/s"
    assert si(None, "B/s") == "-"
    # a profiler's prefixed unit re-prefixed: DRAM Bandwidth 4.3e+03 GB/s
    assert quantity(4300, "GB/s") == "4.3 TB/s"
    assert quantity(3432, "waves") == "3,430 waves"
    assert quantity(0.185, "%") == "0.185 %"


def test_durations_in_the_unit_that_fits() -> None:
    assert duration(410_000) == "410 µs"
    assert duration(2.61e9) == "2.61 s"
    assert duration(75e9) == "75 s"
    assert duration(1.93e12) == "32.2 min"  # 1930 s / 60; it read "1.93e+03 s wall"
    assert duration(None) == "n/a"


def test_a_time_column_keeps_small_values() -> None:
    # 2608.6 ms and 5.44 µs in one column: ms (four digits at most), the small one 0.00544
    scale, unit = column_unit([2_608_618_986, 5_440])
    assert unit == "ms"
    assert cell(2_608_618_986, scale) == "2,609" and cell(5_440, scale) == "0.00544"
    assert column_unit([12_000_000_000_000])[1] == "s"  # 12,000 s: no larger unit in a table


def test_ratio_intervals_as_ranges() -> None:
    assert ratio_range(1.97, 2.01) == "[1.97, 2.01]"
    assert speedup_text(1.99, Interval(1.97, 2.01, "bootstrap")) == "1.99x faster [1.97, 2.01]"
    # 0.8x is 1.25x slower; the interval stays the speedup's, after the speedup (issue 38)
    slower = speedup_text(0.8, Interval(0.75, 0.85, "bootstrap"))
    assert slower == "0.800x [0.750, 0.850]: 1.25x slower"
    assert speedup_text(1.0, None) == "no change (spread unknown)"
    assert speedup_text(0.8, None) == "1.25x slower (spread unknown)"
    assert speedup_text(0.999, Interval(0.99, 1.01, "x")) == "no change [0.990, 1.01], within noise"


# -- the shortener ---------------------------------------------------------------------------


def test_template_arguments_that_differ_are_kept() -> None:
    names = [  # two of the Omniperf MI200 workload's kernels
        "void benchmark_func<int, 256, 8u, 512u>(int, int*)",
        "void benchmark_func<float, 256, 8u, 256u>(float, float*)",
    ]
    assert short_names(names) == ["benchmark_func<int,…,512u>", "benchmark_func<float,…,256u>"]
    assert short_name(names[0]) == "benchmark_func<int,256,8u,512u>"  # alone: all of them


def test_real_names_shortened() -> None:
    # the demo's mangled symbol (results.csv), demangled and without its parameters
    assert (
        short_name("_Z16laplacian_kernelIdEvPT_PKS0_iiiS0_S0_S0_S0_") == "laplacian_kernel<double>"
    )
    # nsys decode summary: namespaces, casts and blanks out
    assert (
        short_name(
            "void at::native::vectorized_elementwise_kernel<(int)4, "
            "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char *, (unsigned long)3>>"
            "(int, T2, T3)"
        )
        == "vectorized_elementwise_kernel<4,CUDAFunctor_add<BFloat16>,array<char*,3>>"
    )
    # a lambda: its function and its parameters
    assert (
        short_name(
            "void at::native::vectorized_elementwise_kernel<(int)4, "
            "at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase &)::"
            "[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)"
        )
        == "vectorized_elementwise_kernel<4,bfloat16_copy_kernel_cuda:λ(float),array<char*,2>>"
    )
    assert (
        short_name(
            "void (anonymous namespace)::softmax_warp_forward<float, float, 10, false>(float*)"
        )
        == "softmax_warp_forward<float,float,10,false>"
    )
    assert short_name("__amd_rocclr_fillBufferAligned") == "__amd_rocclr_fillBufferAligned"
    assert short_names(["f(int)", "f(float)"]) == ["f(int)", "f(float)"]  # overloads


def test_fit_elides_nested_arguments_then_cuts() -> None:
    text = "benchmark_func<HIP_vector_type<float,2u>,…,512u>"  # 48 characters
    assert fit(text, 48) == text
    assert fit(text, 41) == "benchmark_func<HIP_vector_type<…>,…,512u>"
    # 20 characters, after the nested arguments went (41): the last 9 (half of 19 left after
    # the ellipsis), the first 10
    assert fit(text, 20) == "benchmark_…>,…,512u>"


# -- the text of real profiles ---------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> str:
    assert main(list(args)) == code
    return capsys.readouterr().out


@pytest.mark.skipif(not MI200.is_dir(), reason="needs ../shared/corpus")
def test_mi200_workload_text(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    out = run(capsys, "analyze", str(MI200))
    assert scientific(out) == []
    rows = [m.group(1) for m in re.finditer(r"(?m)^\s*\d+\s+● (?:! )?(\S+)\s+1\s", out)]
    assert len(rows) == 20 and len(set(rows)) == 20, rows
    assert "benchmark_func<int,…,512u>" in rows and "benchmark_func<float,…,512u>" in rows
    assert all(len(line) <= 120 for line in out.splitlines())


@pytest.mark.skipif(not MI200.is_dir(), reason="needs ../shared/corpus")
def test_gpu_given_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    out = run(capsys, "analyze", str(MI200), "--gpu", "a100-sxm4-40gb", "--html", str(html))
    assert out.splitlines()[0].startswith("roofscope 0.1.0 · omniperf · A100 SXM4 40GB (--gpu;")
    title = re.search(r"<title>(.*?)</title>", html.read_text(encoding="utf-8"))
    assert title is not None and "A100 SXM4 40GB" in title.group(1)
    assert "GPU unknown" not in out


def test_demo_counters_and_nsys_summary(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for columns in ("80", "120"):
        monkeypatch.setenv("COLUMNS", columns)
        assert scientific(run(capsys, "demo", "counters")) == []
        out = run(capsys, "analyze", str(NSYS_SUMMARY))
        assert scientific(out) == []
        assert all(len(line) <= int(columns) for line in out.splitlines())


@pytest.mark.skipif(not VCOPY.is_dir(), reason="needs ../shared/corpus")
def test_compare_mi200_to_mi300x(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "compare", str(VCOPY / "MI200"), str(VCOPY / "MI300X_A1"))
    assert scientific(out) == []
    assert "Gate: no gate set" in out and "PASS" not in out


def test_compare_intervals_and_gate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale({"laplacian_kernel": 0.5}))
    out = run(capsys, "compare", str(TRACE), str(new))
    assert "±" not in out and re.search(r"2\.00x faster \[\d\.\d\d, \d\.\d\d\]", out)
    assert "Gate: no gate set" in out and "PASS" not in out
    gated = run(capsys, "compare", str(TRACE), str(new), "--fail-if-slower", "5")
    assert "Gate: PASS" in gated


def test_kineto_lambdas() -> None:
    """PyTorch's Kineto trace (tests/data/kineto): ``{lambda(int)#1}`` after the function's
    parameters, ``operator()() const`` between lambdas, ``> >`` closing."""
    functor = "at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, " + (
        "at::native::AddFunctor<float> >"
    )
    impl = (
        f"at::native::gpu_kernel_impl<{functor} >(at::TensorIteratorBase&, {functor} const&)"
        "::{lambda(int)#1}"
    )
    name = f"void at::native::elementwise_kernel<128, 4, {impl}>(int, {impl})"
    assert short_name(name) == (
        "elementwise_kernel<128,4,gpu_kernel_impl<BinaryFunctor<Half,Half,Half,AddFunctor<float>>>"
        ":λ(int)>"
    )


def test_a_count_has_its_noun_singular_only_for_one() -> None:
    """The warnings (readers, checks) and the renderers word a count alike:
    ``1 dispatch``, never ``dispatch(es)``."""
    from roofscope.model.words import count as whole_count
    from roofscope.render.numbers import count

    assert whole_count(1, "dispatch") == "1 dispatch"
    assert whole_count(2258, "dispatch") == "2,258 dispatches"
    assert whole_count(2, "kernel launch") == "2 kernel launches"
    assert whole_count(0, "kernel summary row") == "0 kernel summary rows"
    assert count(2.5, "call") == "2.5 calls" and count(1.0, "call") == "1 call"


@pytest.mark.parametrize(
    ("share", "efficiency", "speedup"),
    [(1.0, 0.001, "1,000"), (0.5, 0.0, "2"), (0.9999, 0.0, "10,000"), (0.3, 0.5, "1.18")],
)
def test_the_program_speedup_bound_has_no_exponent(
    share: float, efficiency: float, speedup: str
) -> None:
    """1 / (1 - share x (1 - efficiency)), worked by hand: 1 / 0.001 = 1,000 (``.3g`` wrote
    ``1e+03x``); 1 / 0.5 = 2; 1 / 0.0001 = 10,000; 1 / 0.85 = 1.176."""
    from roofscope.diagnosis.findings import kernel_gain
    from roofscope.diagnosis.profiler import ProfilerRule, _gain

    _, formula = kernel_gain(share, efficiency)
    assert formula is not None and formula.endswith(f"= {speedup}x")
    rule = ProfilerRule("S", "R", "OPT", "", "global", 100 * (1 - efficiency))
    _, ncu = _gain(rule, share)
    assert ncu is not None and ncu.endswith(f"= {speedup}x") and not EXPONENT.search(ncu)


def test_a_tiny_ncu_speedup_reads_without_exponent() -> None:
    from roofscope.diagnosis.profiler import ProfilerRule, _gain

    _, formula = _gain(ProfilerRule("S", "R", "OPT", "", "global", 0.00001), 0.5)
    assert formula == (
        "gain = share x ncu's global speedup = 0.500 x 0.00001% = 0.000; "
        "program speedup <= 1 / (1 - 0.000) = 1x"
    )


def test_a_value_from_a_file_keeps_its_digits_without_exponent() -> None:
    """ncu's estimated speedup as the file writes it (80.34, not 80.3), never ``1e-05``."""
    from roofscope.diagnosis.profiler import ProfilerRule, _gain
    from roofscope.model.words import plain

    assert [plain(x) for x in (80.34, 1e-05, 100.0, 2.5e16)] == [
        "80.34",
        "0.00001",
        "100",
        "25000000000000000",
    ]
    _, formula = _gain(ProfilerRule("S", "R", "OPT", "", "global", 80.34), 0.5)
    assert formula is not None and " x 80.34% = 0.402" in formula
