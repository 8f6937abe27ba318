"""Verdicts that agree with the evidence (issue 20, points 3 and 4): measured ceilings are
lower bounds, above-roof is said once per kernel, and severity drops where the evidence is
thin (doubted ceilings, short traces, one dispatch, counter-collection runs)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from roofscope.cli.app import main
from tests.conftest import DATA, SHARED_CORPUS, SUMMARY, run_json, union
from tests.test_diagnosis import by_kernel, findings, idle_by_hand

OMNIPERF_MI200 = SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1/mi200"
needs_corpus = pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="needs ../shared/corpus")

# the seed's vector_add: 8 calls, 3.2 ms in all, 1e9 FLOPs; MI210's catalogue HBM is 1.6 TB/s
VECTOR_ADD_S = 3.2e-3
MI210_HBM = 1.6e12


def _vector_add_at(capsys: pytest.CaptureFixture[str], bytes_s: float, *more: str) -> Any:
    """The seed example on the catalogue's MI210 with vector_add moving ``bytes_s``."""
    work = ["--work", f"vector_add=1.0e9:{bytes_s * VECTOR_ADD_S!r}"]
    return run_json(capsys, str(SUMMARY), *work, "--gpu", "mi210", *more)


def _ceilings_file(tmp_path: Path, hbm: float) -> str:
    path = tmp_path / "measured.toml"
    path.write_text(f'[ceilings]\nhbm = {hbm!r}\n"fp32-vector" = 22.6e12\n', encoding="utf-8")
    return str(path)


def test_150_percent_of_a_catalogue_peak_is_above_roof(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """vector_add at 2.4 TB/s (7.68e9 B in 3.2 ms) on MI210's catalogue 1.6 TB/s: 150 %."""
    doc = _vector_add_at(capsys, 1.5 * MI210_HBM)
    (f,) = findings(doc, "above-roof")
    assert (f["kernel"], f["severity"], f["kind"]) == ("vector_add", "high", "validity")
    assert f["evidence"]["efficiency"] == pytest.approx(1.5, rel=1e-12)
    assert f["evidence"]["ceiling_origin"] == "catalogue"
    assert f["summary"].startswith("reaches 150% of its roof (hbm, ")
    (w,) = [w for w in doc["warnings"] if w["code"] == "above-roof"]
    assert w["message"].startswith("1 kernel above the roof (see the above-roof")


def test_a_measured_ceiling_allows_ten_percent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A ceilings file measured 1.5 TB/s; vector_add at 1.05 x that (1.575 TB/s, under the
    catalogue's 1.6) is at the measured roof; at 1.12 x it is above it."""
    measured = _ceilings_file(tmp_path, 1.5e12)
    doc = _vector_add_at(capsys, 1.05 * 1.5e12, "--ceilings", measured)
    assert not findings(doc, "above-roof")
    (f,) = findings(doc, "at-measured-roof")
    assert f["severity"] == "low" and f["evidence"]["efficiency"] == pytest.approx(1.05)
    assert f["evidence"]["efficiency_of_theoretical"] == pytest.approx(1.05 * 1.5 / 1.6)
    assert measured in f["summary"]
    # the caveat says it is at the roof; no memory-near-roof repeats it (once_at_roof)
    assert "vector_add" not in by_kernel(doc, "memory-near-roof")
    doc = _vector_add_at(capsys, 1.12 * 1.5e12, "--ceilings", measured)
    (f,) = findings(doc, "above-roof")
    assert f["severity"] == "high" and "beyond the 10% a measured ceiling allows" in f["summary"]


def test_beyond_the_tolerance_but_under_the_catalogue_peak_is_under_measured(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A ceilings file measured 1.4 TB/s; vector_add at 1.12 x that is 1.568 TB/s, 98 % of
    the MI210's catalogue 1.6: the benchmark under-measured, the hardware was not beaten."""
    measured = _ceilings_file(tmp_path, 1.4e12)
    doc = _vector_add_at(capsys, 1.12 * 1.4e12, "--ceilings", measured)
    assert not findings(doc, "above-roof")
    (f,) = findings(doc, "at-measured-roof")
    assert f["severity"] == "low"
    assert f["evidence"]["efficiency_of_theoretical"] == pytest.approx(1.568 / 1.6)
    assert f["summary"] == (
        f"above the measured roof: 112% of the hbm ceiling a benchmark reached (user: "
        f"{measured}), but 98% of the catalogue's 1.6 TB/s peak: the benchmark under-measured "
        "this roof"
    )


def test_above_the_catalogue_peak_whatever_was_measured(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A ceilings file claims 2.0 TB/s on an MI210 (catalogue 1.6): vector_add at 1.05 x the
    file's value is 2.1 TB/s, 131.25 % of the theoretical peak: above any roof."""
    doc = _vector_add_at(capsys, 1.05 * 2.0e12, "--ceilings", _ceilings_file(tmp_path, 2.0e12))
    (f,) = findings(doc, "above-roof")
    assert f["severity"] == "high"
    assert f["evidence"]["efficiency_of_theoretical"] == pytest.approx(2.1 / 1.6, rel=1e-12)
    assert "131% of the catalogue's theoretical peak" in f["summary"]


@needs_corpus
def test_omniperf_mi200_benchmarks_at_their_measured_roofs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Omniperf's own roofline benchmark on MI200: 93 kernels at 100-107 % of roofline.csv's
    peaks. None is a high above-roof; each is said once, in the findings; the terminal folds
    them into one line with a count, and the warnings do not repeat them."""
    doc = run_json(capsys, str(OMNIPERF_MI200))
    roofs = {k["name"]: k["roofline"] for k in doc["kernels"] if k["roofline"]}
    above = {n for n, r in roofs.items() if (r["efficiency"] or 0) > 1}
    assert len(above) == 93 and max(roofs[n]["efficiency"] for n in above) <= 1.1
    assert not [f for f in findings(doc, "above-roof") if f["severity"] == "high"]
    notes = findings(doc, "at-measured-roof")
    assert sorted(f["kernel"] for f in notes) == sorted(above)
    assert not [w for w in doc["warnings"] if w["code"] in {"above-roof", "at-measured-roof"}]
    assert main(["analyze", str(OMNIPERF_MI200), "--top", "5"]) == 0
    text = capsys.readouterr().out
    folded = [line for line in text.splitlines() if "at-measured-roof ·" in line]
    assert folded == [" 2. [low] at-measured-roof · 93 kernels"] and "+ 90 more" in text
    assert "[above-roof]" not in text


def test_partial_device_lowers_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    """MI350 vcopy: the profile reports 128 CUs, the catalogue's MI350X has 256, sysinfo says
    SPX. Its HBM verdict rests on the catalogue's ceiling, which the report doubts. (Named
    MI355X: MI350X and MI355X share no FP32 vector peak, so without the name no integer
    ceiling derives and vecCopy's integer work gets no verdict at all.)"""
    doc = run_json(capsys, str(DATA / "rocprof-compute-mi350"), "--gpu", "MI355X")
    assert not [f for f in doc["findings"] if f["severity"] == "high"]
    (f,) = findings(doc, "memory-far-below-roof")
    assert f["severity"] == "medium" and "partial-device" in f["evidence"]["severity_lowered"]
    assert "(severity lowered: " in f["summary"]
    (w,) = [w for w in doc["warnings"] if w["code"] == "partial-device"]
    assert "reports 128 CUs" in w["message"] and "has 256" in w["message"]
    assert "compute partition is SPX" in w["message"] and "CPX" not in w["message"]


def test_short_trace_idle_is_lowered(capsys: pytest.CaptureFixture[str]) -> None:
    """MI300A: 3 vecCopy dispatches over 68 µs, idle 72 %: under 1 ms and 10 dispatches."""
    trace = DATA / "rocprofv3-layouts" / "mi300a_ps_file_kernel_trace.csv"
    share, span, dispatches = idle_by_hand(trace)
    assert (span, dispatches) == (68_139, 3) and share >= 0.1
    doc = run_json(capsys, str(trace))
    (f,) = findings(doc, "idle-gaps")
    assert f["gain_share"] == pytest.approx(share, rel=1e-12)
    assert f["severity"] == "medium"  # high by its share, one step lower
    assert f["evidence"]["severity_lowered"].startswith("the trace is short (0.0681 ms")
    assert not [f for f in doc["findings"] if f["severity"] == "high"]


def test_single_dispatch_lowers_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    """MI200 vcopy ran once per kernel in the Omniperf 1 trim: its verdicts are one sample."""
    doc = run_json(capsys, str(DATA / "rocprof-compute-omniperf1-mi200"))
    verdicts = [f for f in doc["findings"] if f["kind"] == "bottleneck"]
    assert verdicts
    for f in verdicts:
        assert f["evidence"]["severity_lowered"] == "it rests on a single dispatch"


@needs_corpus
def test_no_idle_verdict_on_any_rocprof_compute_workload(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every rocprof-compute/Omniperf workload of the corpus: its timestamps come from
    counter passes, so its idle time is the profiler's: a note where it is large, no verdict."""
    workloads = sorted(p.parent for p in SHARED_CORPUS.rglob("pmc_perf.csv"))
    assert len(workloads) >= 10
    noted = 0
    for folder in workloads:
        assert main(["analyze", str(folder), "--json"]) == 0, folder
        doc: dict[str, Any] = json.loads(capsys.readouterr().out)
        assert not findings(doc, "idle-gaps"), folder
        idle = doc["summary"]["idle_share"]
        note = findings(doc, "idle-in-counter-run")
        assert bool(note) == (idle is not None and idle >= 0.2), folder
        noted += len(note)
    assert noted


RESNET = (
    SHARED_CORPUS / "torch/kineto-tb-plugin-samples/resnet50_num_workers_0"
    / "worker0.1623143089861.pt.trace.json.gz"
)  # fmt: skip


@needs_corpus
def test_idle_inside_data_loader_steps_points_at_the_input_pipeline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ResNet-50 with num_workers=0 (kineto's tb_plugin sample): six
    ``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`` steps of 63-73 ms; 286.902
    of the 402.568 ms of GPU idle time fall inside them, 25 µs of which the copy engine ran
    (worked out here from the JSON: the union of Kernel events is busy, the steps clipped to
    the kernels' span, the union of kernels and Memcpy/Memset events within them not idle)."""
    events = [e for e in json.loads(gzip.decompress(RESNET.read_bytes()))["traceEvents"]
              if e.get("ph") == "X"]  # fmt: skip
    kernels = union([(e["ts"], e["ts"] + e["dur"]) for e in events if e["cat"] == "Kernel"])
    first, last = kernels[0][0], kernels[-1][1]
    steps = [(max(e["ts"], first), min(e["ts"] + e["dur"], last)) for e in events
             if "DataLoader" in e["name"]]  # fmt: skip
    assert len(steps) == 6
    idle = last - first - sum(b - a for a, b in kernels)
    waited = sum(max(0, b - a) for a, b in steps) - sum(
        max(0, min(b, kb) - max(a, ka)) for a, b in steps for ka, kb in kernels
    )
    assert (idle, waited) == (402_568, 286_902)  # µs
    work = union([(e["ts"], e["ts"] + e["dur"]) for e in events
                   if e["cat"] in ("Kernel", "Memcpy", "Memset")])  # fmt: skip
    copied = sum(max(0, min(b, kb) - max(a, ka)) for a, b in steps for ka, kb in work) - sum(
        max(0, min(b, kb) - max(a, ka)) for a, b in steps for ka, kb in kernels
    )
    assert copied == 25  # µs
    waited -= copied
    doc = run_json(capsys, str(RESNET))
    (f,) = findings(doc, "idle-gaps")
    assert f["evidence"]["data_loader_idle_s"] == pytest.approx(waited / 1e6, rel=1e-12)
    assert f"{waited / idle:.0%} of the idle time falls inside data-loader steps" in f["summary"]
    assert f["prescription"].startswith("feed the GPU from a faster input pipeline first")
    assert f["prescription"].index("DataLoader") < f["prescription"].index("CUDA graphs")


def test_idle_without_data_loader_steps_keeps_its_prescription(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """HTA's MI250 toy training trace has no data-loader events: the usual prescription."""
    doc = run_json(capsys, str(DATA / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"))
    (f,) = findings(doc, "idle-gaps")
    assert f["prescription"].startswith("keep the GPU fed")
    assert "data_loader_idle_s" not in f["evidence"]
