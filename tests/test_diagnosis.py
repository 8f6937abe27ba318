"""Findings: every rule and validity check fires on real (or trimmed real) data and stays
quiet where it should; gains are worked out by hand."""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from roofscope.diagnosis.diagnose import surely_short
from roofscope.model.names import normalise
from tests.conftest import DATA, DEMO, PEAKS, SHARED_CORPUS, SUMMARY, SUMMARY_WORK, run_json
from tests.test_validity_beside import assert_beside

OMNIPERF_MI200 = SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1/mi200"
ROOF_ONLY_MI200 = SHARED_CORPUS / "amd/omniperf-v1-2022/roof_only_Axes1/mi200"
needs_corpus = pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="needs ../shared/corpus")


def findings(doc: dict[str, Any], rule: str | None = None) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if rule is None or f["rule"] == rule]


def by_kernel(doc: dict[str, Any], rule: str) -> dict[str | None, dict[str, Any]]:
    return {f["kernel"]: f for f in findings(doc, rule)}


# -- the roofline issue's example ------------------------------------------------------------


def test_the_summary_example(capsys: pytest.CaptureFixture[str]) -> None:
    """vector_add (15.6 %) and layer_norm (30 %) are memory-bound under half their roof;
    softmax sits at exactly 50 % and mat_mul at 88.5 % (neither far below nor within 10 %)."""
    doc = run_json(capsys, str(SUMMARY), *SUMMARY_WORK, *PEAKS)
    got = [(f["rule"], f["kernel"]) for f in doc["findings"]]
    assert got == [
        ("memory-far-below-roof", "vector_add"),
        ("memory-far-below-roof", "layer_norm"),
    ]
    vector_add, layer_norm = doc["findings"]
    # share 3.2/5.8, efficiency 1e9/3.2e-3 s / (1.6e12 * 1.25) = 0.15625
    gain = 3.2 / 5.8 * (1 - 0.15625)
    assert vector_add["gain_share"] == pytest.approx(gain, rel=1e-12)
    assert vector_add["program_speedup_bound"] == pytest.approx(1 / (1 - gain), rel=1e-12)
    assert layer_norm["gain_share"] == pytest.approx(0.5 / 5.8 * (1 - 0.3), rel=1e-12)
    assert "coalesce" in vector_add["prescription"] and "vectorised" in vector_add["prescription"]
    assert vector_add["severity"] == "high" and layer_norm["severity"] == "medium"
    assert vector_add["evidence"]["efficiency"] == pytest.approx(0.15625)
    assert vector_add["thresholds"] == {"far_below": 0.5, "near": 0.9}
    assert vector_add["formula"].startswith("gain = share x (1 - efficiency) = 0.552 x")
    assert vector_add["formula"].endswith(f"= {1 / (1 - gain):.3g}x") and f"{gain:.4f}" == "0.4655"
    assert vector_add["formula"].endswith("= 1.87x")  # 3 significant figures


def test_work_per_call_puts_vector_add_above_its_roof(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same numbers per call: vector_add's 8 calls do 8e9 FLOPs in 3.2 ms at 1.25 FLOP/B:
    2.5 TFLOP/s against a 2 TFLOP/s roof (125 %). That is a validity problem, not a verdict."""
    work = tmp_path / "work.toml"
    work.write_text(
        "".join(
            f'[[kernel]]\nmatch = "^{name}$"\nper = "call"\nflops = {f}\nbytes = {b}\n\n'
            for name, f, b in [
                ("vector_add", "1.0e9", "8.0e8"),
                ("mat_mul", "2.6e10", "6.0e8"),
                ("layer_norm", "1.8e9", "2.4e8"),
                ("softmax", "4.0e9", "6.4e8"),
            ]
        ),
        encoding="utf-8",
    )
    doc = run_json(capsys, str(SUMMARY), "--work", str(work), *PEAKS)
    vector_add = [f for f in doc["findings"] if f["kernel"] == "vector_add"]
    assert [(f["rule"], f["kind"]) for f in vector_add] == [("above-roof", "validity")]
    assert vector_add[0]["evidence"]["efficiency"] == pytest.approx(8e9 / 3.2e-3 / 2e12)
    assert doc["findings"][0]["rule"] == "above-roof"  # validity problems rank first


# -- roofline rules on real data ------------------------------------------------------------


def unnamed_gfx950(tmp_path: Path) -> Path:
    """The MI350 vcopy workload with its sysinfo.csv naming no product (gpu_series and
    gpu_model blank): a gfx950 that may be an MI350X or an MI355X."""
    folder = tmp_path / "gfx950"
    shutil.copytree(DATA / "rocprof-compute-mi350", folder)
    sysinfo = folder / "sysinfo.csv"
    text = sysinfo.read_text(encoding="utf-8")
    assert text.count(",MI350,MI350,gfx950,") == 1
    sysinfo.write_text(text.replace(",MI350,MI350,gfx950,", ",,,gfx950,"), encoding="utf-8")
    return folder


def test_mi350_vcopy_without_an_integer_ceiling_gets_no_bound(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """MI350X and MI355X share no FP32 vector peak (their clocks differ), so when the profile
    says only gfx950 no integer ceiling derives from one: the copy's integer work has no
    ceiling, and no verdict."""
    doc = run_json(capsys, str(unnamed_gfx950(tmp_path)))
    roof = next(k for k in doc["kernels"] if k["name"].startswith("vecCopy("))["roofline"]
    assert (roof["placed_by"], roof["missing_ceiling"]) == ("iops", "int32-vector")
    assert (roof["bound"], roof["ceiling"], roof["efficiency"]) == (None, None, None)
    assert not findings(doc, "memory-far-below-roof")


def test_memory_far_below_roof_on_mi350_vcopy(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(DATA / "rocprof-compute-mi350"), "--gpu", "MI355X")
    (f,) = findings(doc, "memory-far-below-roof")
    assert f["kernel"].startswith("vecCopy(")
    roof = next(k for k in doc["kernels"] if k["name"] == f["kernel"])["roofline"]
    assert f["evidence"]["efficiency"] == roof["efficiency"] < 0.5


def test_mid_roof_kernel_gets_no_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    """MI200 vcopy runs at 62 % of the measured HBM peak: between 50 % and 90 %."""
    doc = run_json(capsys, str(DATA / "rocprof-compute-mi200"))
    roof = next(k for k in doc["kernels"] if k["name"].startswith("vecCopy("))["roofline"]
    assert 0.5 < roof["efficiency"] < 0.9
    assert not [f for f in doc["findings"] if f["rule"].endswith("roof")]


@needs_corpus
def test_near_roof_rules_on_omniperf_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    """Omniperf's MI200 roofline benchmark: some kernels within 10 % of their roofs. Its
    ceilings are measured (roofline.csv), lower bounds of the peak: kernels up to 110 % of
    them are at the roof too: at-measured-roof says so, once (no near-roof beside it). Since
    the limiter (issue 20), a kernel whose busiest unit is a compute unit at 90 % of its peak
    or more is compute-near-roof too, whatever the roofline says. memory-near-roof no longer
    fires where a compute unit is at 60 % of its peak or more (13 kernels, e.g. double 48u:
    hbm 91.4 %, VALU 83.3 %): both sides are busy."""
    doc = run_json(capsys, str(OMNIPERF_MI200))
    kernels = {k["name"]: k for k in doc["kernels"] if k["roofline"]}
    for rule, bound in (("memory-near-roof", "memory"), ("compute-near-roof", "compute")):
        fired = by_kernel(doc, rule)
        expected = {
            n
            for n, k in kernels.items()
            if (r := k["roofline"])["bound"] == bound
            and r["efficiency"] is not None
            and 0.9 <= r["efficiency"] <= 1.1
        }
        expected -= set(by_kernel(doc, "at-measured-roof"))  # said there, once (once_at_roof)
        if bound == "memory":  # none where a compute unit is at 60 % of its peak or more
            expected -= {n for n in expected if compute_pct(kernels[n]) >= 60}
        if bound == "compute":
            expected |= {
                n
                for n, k in kernels.items()
                if k["roofline"]["bound"] != "compute"
                and "above-roof" not in k["validity"]
                and (b := k["limiter"]["busiest"])["side"] == "compute"
                and b["pct_of_peak"] >= 90
            }
        assert fired and set(fired) == expected
    assert "void benchmark_func<int, 256, 8u, 512u>(int, int*)" in fired


def compute_pct(kernel: dict[str, Any]) -> float:
    """The busiest compute unit's % of its peak in a JSON kernel's limiter (0 without one)."""
    units = (kernel["limiter"] or {"units": []})["units"]
    return max((u["pct_of_peak"] for u in units if u["side"] == "compute"), default=0.0)


@needs_corpus
def test_compute_far_below_roof_on_roof_only_run(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(ROOF_ONLY_MI200))
    fired = by_kernel(doc, "compute-far-below-roof")
    assert fired
    for name, f in fired.items():
        assert f["evidence"]["bound"] == "compute" and f["evidence"]["efficiency"] < 0.5, name


# -- program rules ---------------------------------------------------------------------------


def idle_by_hand(trace: Path) -> tuple[float, int, int]:
    """(idle share, device span in ns, dispatches) of a one-device rocprofv3 kernel trace: the
    union of its Start/End intervals is busy."""
    with trace.open(newline="") as f:
        spans = sorted(
            (int(r["Start_Timestamp"]), int(r["End_Timestamp"])) for r in csv.DictReader(f)
        )
    busy, reach = 0, spans[0][0]
    for start, end in spans:
        busy += max(0, end - max(start, reach))
        reach = max(reach, end)
    span = max(e for _, e in spans) - spans[0][0]
    return (span - busy) / span, span, len(spans)


def test_idle_gaps(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """idle / span from a kernel trace's own Start/End timestamps (gfx1151 decode: 144
    dispatches over 180 ms); the same trace as two ranks is just as idle, not twice (the idle
    of both devices over the wall read 137% before the device spans were summed). A
    rocprof-compute workload's idle time is its counter passes' overhead: a note, no verdict."""
    trace = DATA / "rocprofv3-layouts" / "gfx1151_decode_kernel_trace.csv"
    expected, span, _ = idle_by_hand(trace)
    doc = run_json(capsys, str(trace))
    (f,) = findings(doc, "idle-gaps")
    assert f["gain_share"] == pytest.approx(expected, rel=1e-12)
    assert f["evidence"]["gaps"] == doc["summary"]["gaps"]
    assert f["severity"] == "high" and "severity_lowered" not in f["evidence"]
    for rank in ("a", "b"):
        (tmp_path / rank).mkdir()
        shutil.copy(trace, tmp_path / rank / f"{rank}_kernel_trace.csv")
    (f,) = findings(run_json(capsys, str(tmp_path)), "idle-gaps")
    assert f["gain_share"] == pytest.approx(expected, rel=1e-12)
    assert f["evidence"]["device_span_s"] == pytest.approx(2 * span / 1e9, rel=1e-12)
    demo = run_json(capsys, str(DEMO))  # 1.4 % idle
    assert not findings(demo, "idle-gaps") and demo["summary"]["idle_share"] < 0.2
    workload = run_json(capsys, str(DATA / "rocprof-compute-mi200"))
    assert not findings(workload, "idle-gaps")
    (note,) = findings(workload, "idle-in-counter-run")
    assert note["severity"] == "low" and note["gain_share"] is None


def test_short_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    trace = DATA / "rocprofv3-layouts" / "gfx1151_decode_kernel_trace.csv"
    with trace.open(newline="") as f:
        rows = list(csv.DictReader(f))
    short = sum(int(r["End_Timestamp"]) - int(r["Start_Timestamp"]) < 10_000 for r in rows)
    doc = run_json(capsys, str(trace))
    fired = findings(doc, "short-kernels")
    if len(rows) >= 100 and short >= len(rows) / 2:
        (f,) = fired
        assert f["evidence"] == {"short_dispatches": short, "dispatches": len(rows)}
    else:
        pytest.fail(f"the test file no longer shows the case: {short} of {len(rows)} short")
    assert not findings(run_json(capsys, str(DEMO)), "short-kernels")


def test_short_kernels_on_a_kernel_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """A cuda_gpu_kern_sum has no dispatches, but its Max, Med and Avg bound how many ran
    under 10 µs: all of a kernel whose max is under it, half of one whose median is, and
    by Markov's inequality at least calls - calls x mean / 10 µs (durations are never
    negative). The decode stage's report: 75,584 of 78,016 in kernels whose max is short."""
    path = DATA / "nsys" / "decode_cuda_gpu_kern_sum.csv"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    total, surely = 0, 0
    for r in rows:
        n, high, low = int(r["Instances"]), float(r["Max (ns)"]), float(r["Min (ns)"])
        total += n
        if high < 10_000:
            surely += n
        elif low < 10_000:
            half = -(-n // 2) if float(r["Med (ns)"]) < 10_000 else 0
            surely += max(half, n - math.ceil(n * float(r["Avg (ns)"]) / 10_000), 0)
    assert (total, surely) == (78_016, 75_584 + 1_152)
    (f,) = findings(run_json(capsys, str(path)), "short-kernels")
    assert f["evidence"] == {
        "short_dispatches": surely,
        "dispatches": total,
        "short_dispatches_from_summary": surely,
    }
    assert f["summary"].startswith(f"at least {surely / total:.0%} of 78,016 dispatches")


@pytest.mark.parametrize(
    ("calls", "mean", "median", "low", "high", "short"),
    [
        (10, 5_000.0, None, 1_000.0, 9_999.0, 10),  # max under 10 µs: all
        (10, 5_000.0, None, 10_000.0, 20_000.0, 0),  # min at 10 µs: none
        (7, 50_000.0, 9_000.0, 1_000.0, 90_000.0, 4),  # median under: half, rounded up
        (4, 2_500.0, 20_000.0, 0.0, None, 3),  # Markov: at most 4 x 0.25 = 1 long
        (4, 2_500.0, None, None, None, 3),
        (4, None, None, None, 50_000.0, 0),  # nothing known: no bound
    ],
)
def test_surely_short_bounds(
    calls: int,
    mean: float | None,
    median: float | None,
    low: float | None,
    high: float | None,
    short: int,
) -> None:
    assert surely_short(calls, mean, median, low, high) == short


@needs_corpus
def test_copies_dominate(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(SHARED_CORPUS / "amd/rocprofiler-sdk-docs-2024-10"))
    (f,) = findings(doc, "copies-dominate")
    copies = sum(a["total_s"] for a in doc["activity"] if a["kind"] == "copy")
    assert f["evidence"]["copy_s"] == pytest.approx(copies)
    assert copies >= 0.5 * doc["summary"]["kernel_time_s"]
    assert not findings(run_json(capsys, str(DEMO)), "copies-dominate")


# -- validity checks -------------------------------------------------------------------------


def test_at_measured_roof_on_omniperf_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    """Some bandwidth benchmarks beat the empirical HBM peak of roofline.csv by up to 7 %: a
    measured ceiling is a lower bound of the peak, so they are at the roof (a caveat naming
    the ceiling's origin, the verdict beside it), not above it."""
    doc = run_json(capsys, str(DATA / "rocprof-compute-omniperf1-mi200"))
    assert not findings(doc, "above-roof")
    fired = by_kernel(doc, "at-measured-roof")
    above = {
        k["name"]
        for k in doc["kernels"]
        if k["roofline"] and (k["roofline"]["efficiency"] or 0) > 1
    }
    assert set(fired) == above and len(findings(doc, "at-measured-roof")) == len(above) > 0
    for f in fired.values():
        assert f["kind"] == "validity" and f["severity"] == "low"
        assert 1 < f["evidence"]["efficiency"] <= 1.1
        assert f["evidence"]["ceiling_origin"] == "measured"
        assert "roofline.csv" in f["summary"]
    assert not [w for w in doc["warnings"] if w["code"] == "above-roof"]
    assert not findings(run_json(capsys, str(DATA / "rocprof-compute-mi200")), "above-roof")


def test_average_outside_range(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A rocprofv3 kernel_stats.csv summarising the 2025-08 trace (csv module), then one
    AverageNs edited above its MaxNs."""
    trace = DATA / "rocprofv3-layouts" / "2025-08_kernel_trace.csv"
    durations: dict[str, list[int]] = {}
    with trace.open(newline="") as f:
        for r in csv.DictReader(f):
            d = int(r["End_Timestamp"]) - int(r["Start_Timestamp"])
            durations.setdefault(r["Kernel_Name"], []).append(d)
    total = sum(sum(d) for d in durations.values())
    hottest = max(durations, key=lambda n: sum(durations[n]))

    def stats(edit: bool) -> Path:
        path = tmp_path / f"{'bad' if edit else 'good'}" / "1234_kernel_stats.csv"
        path.parent.mkdir(exist_ok=True)
        lines = [
            '"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"'
        ]
        for name, ds in sorted(durations.items()):
            mean = sum(ds) / len(ds) * (10 if edit and name == hottest else 1)
            lines.append(f'"{name}",{len(ds)},{sum(ds)},{mean},{100 * sum(ds) / total},'
                         f"{min(ds)},{max(ds)},0")  # fmt: skip
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    doc = run_json(capsys, str(stats(edit=True)))
    (f,) = findings(doc, "average-outside-range")
    assert f["kernel"] == hottest
    assert f["evidence"]["max_ns"] == max(durations[hottest])
    assert f["evidence"]["mean_ns"] == pytest.approx(
        10 * sum(durations[hottest]) / len(durations[hottest])
    )
    assert not findings(run_json(capsys, str(stats(edit=False))), "average-outside-range")
    assert "average-outside-range" in assert_beside(capsys, tmp_path, str(stats(edit=True)))


def test_counters_all_zero(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The MI200 vcopy workload with vecCopy's busy, wave and instruction counters zeroed."""
    from roofscope.diagnosis.evidence import ACTIVITY

    folder = tmp_path / "MI200"
    shutil.copytree(DATA / "rocprof-compute-mi200", folder)
    zeroed = 0
    for path in [folder / "pmc_perf.csv", *folder.glob("SQ_*.csv")]:
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
        cols = [i for i, c in enumerate(rows[0]) if c in ACTIVITY]
        zeroed += len(cols)
        for r in rows[1:]:
            for i in cols:
                r[i] = "0"
        with path.open("w", newline="") as f:
            csv.writer(f).writerows(rows)
    assert zeroed
    doc = run_json(capsys, str(folder))
    (f,) = findings(doc, "counters-all-zero")
    assert f["kernel"].startswith("vecCopy(")
    assert not [g for g in doc["findings"] if g["kind"] == "bottleneck"]
    assert not findings(run_json(capsys, str(DATA / "rocprof-compute-mi200")), "counters-all-zero")
    assert "counters-all-zero" in assert_beside(capsys, tmp_path, str(folder))


@needs_corpus
def test_counter_run_named_differently(capsys: pytest.CaptureFixture[str]) -> None:
    """finite-difference: the counter run (--basenames) names 'laplacian_kernel' what the
    trace beside it names in full; matched by base name, it gives the kernel its bytes."""
    folder = SHARED_CORPUS / "amd/hpctraining-rocprofv1-mi250x/finite-difference"
    doc = run_json(capsys, str(folder / "xr_laplacian_dp_kernel1"))
    lap = next(k for k in doc["kernels"] if k["name"] == "laplacian_kernel")
    assert lap["roofline"]["bytes"]["hbm"] > 0
    assert not findings(doc, "counters-missing") and not findings(doc, "pass-dispatch-mismatch")


def test_counters_missing_and_pass_mismatch(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """laplacian: the counter run trimmed to drop one kernel and half of another's rows."""
    src = DATA / "rocprofv1-mi250x" / "laplacian"
    shutil.copy(src / "results.csv", tmp_path / "results.csv")
    with (src / "data_movement.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    name = header.index("KernelName")
    lap = [r for r in body if "laplacian" in r[name]]
    kept = [r for r in body if "laplacian" not in r[name] and "fillBuffer" not in r[name]]
    kept += lap[: len(lap) // 2]
    with (tmp_path / "data_movement.csv").open("w", newline="") as f:
        csv.writer(f).writerows([header, *kept])
    doc = run_json(capsys, str(tmp_path))
    mismatch = by_kernel(doc, "pass-dispatch-mismatch")
    (kernel,) = [k for k in mismatch if k and "laplacian" in k]
    assert mismatch[kernel]["evidence"]["counter_run_calls"] == len(lap) // 2
    assert mismatch[kernel]["evidence"]["trace_calls"] == len(lap)
    whole = run_json(capsys, str(src))
    assert not findings(whole, "pass-dispatch-mismatch") and not findings(whole, "counters-missing")
    assert "pass-dispatch-mismatch" in assert_beside(capsys, tmp_path / "out", str(tmp_path))
    # the counter run without any laplacian row: the hot kernel has no counters at all
    with (tmp_path / "data_movement.csv").open("w", newline="") as f:
        csv.writer(f).writerows([header, *[r for r in body if "laplacian" not in r[name]]])
    doc = run_json(capsys, str(tmp_path))
    (missing,) = findings(doc, "counters-missing")
    assert "laplacian" in missing["kernel"]
    assert "counters-missing" in assert_beside(capsys, tmp_path / "out", str(tmp_path))


def test_single_dispatch_and_warm_up_are_caveats(capsys: pytest.CaptureFixture[str]) -> None:
    """The demo's check_kernel runs once; laplacian_kernel 1001 times."""
    doc = run_json(capsys, str(DEMO), "--work", "check_kernel=1e6:1e6", "--work",
                   "laplacian_kernel=1e6:1e6", *PEAKS)  # fmt: skip
    single = by_kernel(doc, "single-dispatch")
    assert any("check_kernel" in (k or "") for k in single)
    assert not any("laplacian_kernel" in (k or "") for k in single)
    # a caveat does not hold back the verdict
    assert any(
        "check_kernel" in (f["kernel"] or "") for f in findings(doc, "memory-far-below-roof")
    )
    trace = DATA / "rocprofv3-layouts" / "gfx1151_decode_kernel_trace.csv"
    warm = run_json(capsys, str(trace))
    fired = findings(warm, "warm-up")
    assert fired
    for f in fired:
        assert f["evidence"]["first_ns"] > 2 * f["evidence"]["rest_mean_ns"]
    # the demo's laplacian_kernel: its first dispatch is not slower than twice the others
    with (DEMO / "results.csv").open(newline="") as f:
        lap = [r for r in csv.DictReader(f) if "laplacian" in r["KernelName"]]
    first = min(lap, key=lambda r: int(r["BeginNs"]))
    durations = [int(r["EndNs"]) - int(r["BeginNs"]) for r in lap]
    first_ns = int(first["EndNs"]) - int(first["BeginNs"])
    assert first_ns < 2 * (sum(durations) - first_ns) / (len(durations) - 1)
    assert not findings(doc, "warm-up")


def test_warm_up_that_dominates_holds_back_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    """MI300A OpenMP offload: l18's first call takes 430.6 ms, its second 0.63 ms (first-touch
    page migration on the APU): 99.9 % of the kernel's time is the first call."""
    folder = DATA / "rocprof-compute-omniperf2-mi300a"
    with (folder / "pmc_perf.csv").open(newline="") as f:
        l18 = [r for r in csv.DictReader(f) if "l18" in r["Kernel_Name"]]
    spans = sorted((int(r["Start_Timestamp"]), int(r["End_Timestamp"])) for r in l18)
    first, second = (e - b for b, e in spans)
    doc = run_json(capsys, str(folder))
    (f,) = findings(doc, "warm-up-dominates")
    assert f["kernel"].endswith("_l18") and f["evidence"]["first_ns"] == first
    assert f["evidence"]["rest_mean_ns"] == second
    assert f["evidence"]["first_share"] == pytest.approx(first / (first + second))
    assert not [
        g for g in doc["findings"] if g["kernel"] == f["kernel"] and g["kind"] != "validity"
    ]


# -- rules over counter metrics and occupancy -------------------------------------------------


def test_occupancy_limited_by_registers(capsys: pytest.CaptureFixture[str]) -> None:
    """stencils (gfx90a): compute_fd_xyz_lds_window_vec_kernel has 64 arch + 128 accum VGPRs:
    192 of a SIMD's 512 let 2 waves in of 8 (25 %); lifting it to 3 waves needs 512 // 3 =
    170 -> 168 (granule 8) VGPRs, and 4 waves 128. compute_fd_xyz_lds_window_kernel (88
    VGPRs, 5 waves by registers, 4 by its 2 workgroups) sits at exactly 50 %: no finding."""
    doc = run_json(capsys, str(DATA / "rocprofv1-mi250x" / "stencils"))
    fired = by_kernel(doc, "occupancy-limited")
    assert set(fired) == {"compute_fd_xyz_lds_window_vec_kernel"}
    f = fired["compute_fd_xyz_lds_window_vec_kernel"]
    assert (f["evidence"]["limiter"], f["evidence"]["vgprs"]) == ("registers", 192)
    assert (f["evidence"]["waves_per_simd"], f["evidence"]["max_waves_per_simd"]) == (2, 8)
    assert f["evidence"]["lift_value"] == 128
    window = next(k for k in doc["kernels"] if k["name"] == "compute_fd_xyz_lds_window_kernel")
    assert window["occupancy"]["theoretical"]["fraction"] == 0.5


def test_low_l2_hit_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """MI200 vcopy: TCC_HIT / (TCC_HIT + TCC_MISS), mean over its 3 dispatches (csv module)."""
    folder = DATA / "rocprof-compute-mi200"
    with (folder / "pmc_perf.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Kernel_Name"].startswith("vecCopy(")]
    rates = [
        100 * float(r["TCC_HIT_sum"]) / (float(r["TCC_HIT_sum"]) + float(r["TCC_MISS_sum"]))
        for r in rows
    ]
    doc = run_json(capsys, str(folder))
    (f,) = findings(doc, "low-l2-hit-rate")
    assert f["evidence"]["L2 Cache Hit Rate"] == pytest.approx(sum(rates) / len(rates))
    assert sum(rates) / len(rates) < 50
    # the summary example has no counters: nothing to judge
    assert not findings(run_json(capsys, str(SUMMARY), *SUMMARY_WORK, *PEAKS), "low-l2-hit-rate")


def test_low_active_threads(capsys: pytest.CaptureFixture[str]) -> None:
    """hpctraining MI300A OpenMP offload: SQ_THREAD_CYCLES_VALU / SQ_ACTIVE_INST_VALU."""
    folder = DATA / "rocprof-compute-omniperf2-mi300a"
    doc = run_json(capsys, str(folder))
    fired = findings(doc, "low-active-threads")
    assert fired
    with (folder / "pmc_perf.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    for f in fired:
        mine = [r for r in rows if normalise(r["Kernel_Name"]) == f["kernel"]]
        assert mine
        threads = [
            float(r["SQ_THREAD_CYCLES_VALU"]) / float(r["SQ_ACTIVE_INST_VALU"]) for r in mine
        ]
        assert f["evidence"]["active_threads"] == pytest.approx(sum(threads) / len(threads))
        assert f["evidence"]["active_threads"] < 0.75 * 64
    vcopy = run_json(capsys, str(DATA / "rocprof-compute-mi200"))  # 64 of 64 lanes
    assert not findings(vcopy, "low-active-threads")


def test_lds_bank_conflicts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """stencils' counter run with LDSBankConflict edited to 25 % on one kernel's rows."""
    src = DATA / "rocprofv1-mi250x" / "stencils"
    for name in ("results.csv", "results.stats.csv", "results.sysinfo.txt"):
        shutil.copy(src / name, tmp_path / name)
    with (src / "bankconflicts.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    col, name = rows[0].index("LDSBankConflict"), rows[0].index("KernelName")
    for r in rows[1:]:
        if "compute_fd_xy_lds_kernel" in r[name]:
            r[col] = "25"
    with (tmp_path / "bankconflicts.csv").open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    doc = run_json(capsys, str(tmp_path))
    fired = by_kernel(doc, "lds-bank-conflicts")
    assert set(fired) == {"compute_fd_xy_lds_kernel"}
    assert fired["compute_fd_xy_lds_kernel"]["evidence"] == {"LDSBankConflict": 25.0}
    assert not findings(run_json(capsys, str(src)), "lds-bank-conflicts")  # all 0 as profiled


@needs_corpus
def test_metric_above_peak_when_workloads_are_mixed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Omniperf's Axes1 folder holds an MI100 and an MI200 workload: read together, one
    machine's constants meet the other's counters and metrics pass their peaks."""
    doc = run_json(capsys, str(SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1"))
    fired = findings(doc, "metric-above-peak")
    assert fired
    assert "metric-above-peak" in assert_beside(
        capsys, tmp_path, str(SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1")
    )
    for f in fired:
        assert f["evidence"]["value"] > 1.01 * f["evidence"]["peak"]
    for part in ("mi100", "mi200"):
        alone = run_json(capsys, str(SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1" / part))
        assert not findings(alone, "metric-above-peak")


@needs_corpus
def test_lost_timestamps_are_the_finding(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(SHARED_CORPUS / "amd/rocprof-compute-vcopy-2025/MI300A_A1"))
    (f,) = findings(doc, "no-time")
    assert f["kernel"].startswith("vecCopy(") and f["evidence"]["total_ns"] == 0
    assert [g["rule"] for g in doc["findings"] if g["kernel"] == f["kernel"]] == ["no-time"]
    assert not findings(run_json(capsys, str(DATA / "rocprof-compute-mi200")), "no-time")


def test_communication_kernels_are_marked_and_their_share_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The demo trace with its laplacian renamed to an NCCL all-reduce kernel: that kernel is
    marked as communication and holds more than 20% of the kernel time (the finding's
    evidence equals the file's own sums); the other kernels are not marked."""
    from tests.test_compare import TRACE, rewrite, totals

    nccl = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"

    def rename(r: dict[str, str]) -> dict[str, str]:
        if "laplacian" in r["KernelName"]:
            r["KernelName"] = nccl
        return r

    trace = rewrite(TRACE, tmp_path / "results.csv", rename)
    doc = run_json(capsys, str(trace))
    marked = {k["name"]: k["communication"] for k in doc["kernels"]}
    assert marked.pop(nccl) is True and not any(marked.values())
    sums = totals(trace)
    (f,) = findings(doc, "communication-share")
    assert f["evidence"]["communication_s"] == pytest.approx(sums[nccl] / 1e9, rel=1e-12)
    assert f["evidence"]["kernel_s"] == pytest.approx(sum(sums.values()) / 1e9, rel=1e-12)
    assert not findings(run_json(capsys, str(TRACE)), "communication-share")
