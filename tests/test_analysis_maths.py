"""Hotspot statistics and busy/idle time against brute-force definitions."""

from __future__ import annotations

import statistics
from pathlib import Path
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from roofscope.analysis.hotspots import hotspots
from roofscope.analysis.timeline import timeline
from roofscope.model.names import normalise
from roofscope.model.selection import Selection
from roofscope.readers.load import load

HEADER = (
    '"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds",'
    '"scr","arch_vgpr","accum_vgpr","sgpr","wave_size","sig","obj","DispatchNs","BeginNs",'
    '"EndNs","CompleteNs","DurationNs"\n'
)

Row = tuple[str, int, int, int]  # name, device, begin, end


def write_trace(path: Path, rows: list[Row]) -> Path:
    lines = [HEADER]
    for i, (name, device, begin, end) in enumerate(rows):
        lines.append(
            f'{i},"{name}",{device},0,{i},42,42,64,64,0,0,8,0,16,64,"0x0","0x1",'
            f"{begin},{begin},{end},{end},{end - begin}\n"
        )
    path.write_text("".join(lines))
    return path


def union_length(intervals: list[tuple[int, int]]) -> int:
    covered: set[int] = set()
    for begin, end in intervals:
        covered.update(range(begin, end))
    return len(covered)


rows_strategy = st.lists(
    st.tuples(
        st.sampled_from(["a(int)", "b(float) [clone .kd]", "c.kd"]),
        st.integers(0, 1),
        st.integers(0, 300),
        st.integers(0, 60),
    ).map(lambda t: (t[0], t[1], t[2], t[2] + t[3])),
    min_size=1,
    max_size=40,
)


@settings(max_examples=80, deadline=None)  # 40 a path, as before the sorted fetch
@given(
    rows=rows_strategy,
    in_order=st.booleans(),
    together=st.sampled_from([1, 3, 1 << 20]),
    sorted_rows=st.sampled_from([0, 1 << 16]),
)
def test_busy_is_the_union_of_intervals(
    tmp_path_factory: object, rows: list[Row], in_order: bool, together: int, sorted_rows: int
) -> None:
    """Rows in start order are swept as they come, others after a sort; each device on its
    own or (up to TOGETHER_ROWS rows on several, SORTED_ROWS on one) all in one sorted query."""
    folder = tmp_path_factory.mktemp("t")  # type: ignore[attr-defined]
    written = sorted(rows, key=lambda r: r[2]) if in_order else rows
    profile = load([str(write_trace(folder / "results.csv", written))])
    with (
        patch("roofscope.analysis.timeline.TOGETHER_ROWS", together),
        patch("roofscope.analysis.timeline.SORTED_ROWS", sorted_rows),
    ):
        t = timeline(profile, gap_threshold_ns=1)
    assert t is not None
    for d in t.devices:
        mine = [(b, e) for _, dev, b, e in rows if dev == d.device]
        span = max(e for _, e in mine) - min(b for b, _ in mine)
        assert d.busy_ns == union_length(mine)
        assert d.span_ns == span and d.idle_ns == span - d.busy_ns
        assert d.gap_ns == d.idle_ns  # with a 1 ns threshold every idle stretch is a gap
    assert t.wall_ns == max(e for *_, e in rows) - min(b for *_, b, _ in rows)
    assert t.busy_ns == sum(d.busy_ns for d in t.devices)


@settings(max_examples=40, deadline=None)
@given(rows=rows_strategy, threshold=st.integers(0, 80))
def test_one_query_and_the_streamed_sweep_agree(
    tmp_path_factory: object, rows: list[Row], threshold: int
) -> None:
    """A small timeline is one SQL query (a window over each device's dispatches in start
    order), a long one a sweep of each device's rows in their order (a streaming window):
    both give every device's idle and gaps alike, ties of start and zero-length dispatches
    included, at any gap threshold."""
    folder = tmp_path_factory.mktemp("q")  # type: ignore[attr-defined]
    profile = load([str(write_trace(folder / "results.csv", rows))])
    with patch("roofscope.analysis.timeline.SORTED_ROWS", 1 << 16):
        one_query = timeline(profile, gap_threshold_ns=threshold)
    with (  # no group small enough for one query: each device swept on its own
        patch("roofscope.analysis.timeline.SORTED_ROWS", 0),
        patch("roofscope.analysis.timeline.TOGETHER_ROWS", 1),
    ):
        swept = timeline(profile, gap_threshold_ns=threshold)
    assert one_query == swept


def test_a_one_ns_gap_and_ties_by_hand(tmp_path: Path) -> None:
    """[0, 10) and [5, 8) and [10, 10) overlap or touch: no idle; [11, 20) leaves 1 ns; two
    dispatches starting at 30 after [11, 20) leave 10 ns once, whichever comes first."""
    rows = [("a(int)", 0, 0, 10), ("a(int)", 0, 5, 8), ("a(int)", 0, 10, 10)]
    rows += [("a(int)", 0, 11, 20), ("a(int)", 0, 30, 31), ("a(int)", 0, 30, 45)]
    profile = load([str(write_trace(tmp_path / "results.csv", rows))])
    for threshold, gaps, gap_ns in ((1, 2, 11), (2, 1, 10), (11, 0, 0)):
        t = timeline(profile, gap_threshold_ns=threshold)
        assert t is not None
        (d,) = t.devices
        assert (d.span_ns, d.idle_ns, d.busy_ns) == (45, 11, 34)
        assert (d.gaps, d.gap_ns) == (gaps, gap_ns)


@settings(max_examples=40, deadline=None)
@given(rows=rows_strategy)
def test_kernel_statistics(tmp_path_factory: object, rows: list[Row]) -> None:
    folder = tmp_path_factory.mktemp("h")  # type: ignore[attr-defined]
    profile = load([str(write_trace(folder / "results.csv", rows))])
    result = hotspots(profile)
    grand = sum(e - b for *_, b, e in rows)
    assert result.total_ns == grand and result.dispatches == len(rows)
    for k in result.kernels:
        durations = [e - b for name, _, b, e in rows if normalise(name) == k.name]
        assert k.calls == len(durations) and k.total_ns == sum(durations)
        assert k.min_ns == min(durations) and k.max_ns == max(durations)
        assert k.median_ns == statistics.median(durations)
        if len(durations) > 1:
            assert abs((k.std_ns or 0) - statistics.stdev(durations)) <= 1e-6 * (1 + max(durations))
        else:
            assert k.std_ns is None
        if grand:
            assert k.share == sum(durations) / grand
    totals = [k.total_ns or 0 for k in result.kernels]
    assert totals == sorted(totals, reverse=True)


def test_gap_threshold_and_device_filter(tmp_path: Path) -> None:
    rows = [
        ("a(int)", 0, 0, 100),
        ("a(int)", 0, 105, 200),
        ("b(int)", 0, 300, 400),
        ("a(int)", 1, 0, 50),
        ("b(int)", 1, 40, 90),
    ]
    profile = load([str(write_trace(tmp_path / "results.csv", rows))])
    t = timeline(profile, gap_threshold_ns=50)
    assert t is not None
    dev0, dev1 = t.devices
    assert (dev0.busy_ns, dev0.idle_ns, dev0.gaps, dev0.gap_ns) == (295, 105, 1, 100)
    assert (dev1.busy_ns, dev1.idle_ns, dev1.gaps) == (90, 0, 0)
    only1 = timeline(profile, selection=Selection(device=1))
    assert only1 is not None and only1.busy_ns == 90
    b_only = hotspots(profile, selection=Selection(kernel="^b"))
    assert [(k.name, k.calls, k.total_ns) for k in b_only.kernels] == [("b(int)", 2, 150)]


def test_end_before_begin_is_left_out(tmp_path: Path) -> None:
    rows = [("a(int)", 0, 0, 100), ("a(int)", 0, 500, 400), ("a(int)", 0, 600, 600)]
    profile = load([str(write_trace(tmp_path / "results.csv", rows))])
    result = hotspots(profile)
    assert (result.kernels[0].calls, result.total_ns) == (2, 100)


def test_names_normalise_across_tools() -> None:
    assert normalise("void f<float>(float*, int) [clone .kd]") == "void f<float>(float*, int)"
    assert normalise("__amd_rocclr_fillBufferAligned.kd") == "__amd_rocclr_fillBufferAligned"
    assert normalise('"vecCopy(double*, int) (.kd)"') == "vecCopy(double*, int)"
    assert normalise("_Z16laplacian_kernelIdEvPT_PKS0_iiiS0_S0_S0_S0_") == (
        "void laplacian_kernel<double>(double*, double const*, int, int, int, double, double, "
        "double, double)"
    )
    assert normalise("_Zbroken") == "_Zbroken"


def test_std_of_long_kernels_is_exact(tmp_path: Path) -> None:
    """Three 1 s dispatches of 1,000,000,001, ...002 and ...003 ns: the sample standard
    deviation is exactly 1 ns (statistics.stdev agrees). Their squares sum to 3.0e18, above
    2^53, where a float sum of squares keeps no unit digit and (Σx² - n·mean²) cancels to
    rounding noise; the sums of integer durations are integers, so the variance is too."""
    begins = [0, 2_000_000_000, 4_000_000_000]
    rows = [("long(int)", 0, b, b + 1_000_000_001 + i) for i, b in enumerate(begins)]
    profile = load([str(write_trace(tmp_path / "results.csv", rows))])
    (k,) = hotspots(profile).kernels
    assert statistics.stdev([1_000_000_001, 1_000_000_002, 1_000_000_003]) == 1.0
    assert k.std_ns == 1.0


def swept_by(profile: object, threshold: int) -> tuple[object, list[str]]:
    """The timeline of a long trace (no group small enough for one query) and which sweep
    statements ran, in order."""
    from roofscope.analysis import timeline as module

    ran: list[str] = []
    real = module._sweep_rows

    def watch(p: object, rows: object, t: int, sql: str) -> object:
        ran.append("serial" if sql == module.SERIAL_SWEEP else "reach")
        return real(p, rows, t, sql)  # type: ignore[arg-type]

    with patch.object(module, "_sweep_rows", watch), patch.object(module, "SORTED_ROWS", 0):
        return timeline(profile, gap_threshold_ns=threshold), ran  # type: ignore[arg-type]


def test_kernels_one_after_another_swept_by_lag_alone(tmp_path: Path) -> None:
    """Ends in order as well as starts: the End before a row is the furthest, and one
    statement of ``lag`` windows sweeps them: [0, 10) [10, 12) [15, 20) [40, 41) leave 3 and
    20 ns idle."""
    rows = [("a(int)", 0, 0, 10), ("a(int)", 0, 10, 12), ("a(int)", 0, 15, 20)]
    profile = load([str(write_trace(tmp_path / "results.csv", [*rows, ("a(int)", 0, 40, 41)]))])
    t, ran = swept_by(profile, 5)
    assert ran == ["serial"]
    assert t is not None and t.devices[0].span_ns == 41
    assert (t.idle_ns, t.busy_ns, t.gaps, t.gap_ns) == (23, 18, 1, 20)


def test_an_end_before_the_one_before_needs_the_running_max(tmp_path: Path) -> None:
    """[0, 30) holds [5, 8) within it: the End before [20, 25) that counts is 30, not 8, so
    the lag statement gives way to the running max: [0, 30) [5, 8) [20, 25) [32, 40) leave
    2 ns idle (the lag alone would count 12 before [20, 25))."""
    rows = [("a(int)", 0, 0, 30), ("a(int)", 0, 5, 8), ("a(int)", 0, 20, 25)]
    profile = load([str(write_trace(tmp_path / "results.csv", [*rows, ("a(int)", 0, 32, 40)]))])
    t, ran = swept_by(profile, 1)
    assert ran == ["serial", "reach"]
    assert t is not None and (t.idle_ns, t.busy_ns, t.gaps, t.gap_ns) == (2, 38, 1, 2)


def test_starts_out_of_order_sorted_after_both_statements(tmp_path: Path) -> None:
    """[10, 20) written before [0, 5): neither sweep reads them in their order; they are
    sorted and swept again, and leave 5 ns idle."""
    rows = [("a(int)", 0, 10, 20), ("a(int)", 0, 0, 5)]
    profile = load([str(write_trace(tmp_path / "results.csv", rows))])
    t, ran = swept_by(profile, 1)
    assert ran == ["serial", "reach", "serial"]
    assert t is not None and (t.idle_ns, t.busy_ns, t.gaps, t.gap_ns) == (5, 15, 1, 5)
