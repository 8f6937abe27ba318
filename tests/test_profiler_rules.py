"""Nsight Compute's own rules lead the findings of their kernel (diagnosis/profiler.py).

Every expectation is read from the raw CSV row of the rule (the csv module, not roofscope's
reader): its name, kind, estimated speedup and type as written, and its whole text, which
must appear whole, wrapped between words, at 80 and 120 columns, in JSON and in HTML.
"""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path
from typing import Any

import pytest

from roofscope.diagnosis.findings import Finding
from roofscope.diagnosis.libraries import ADVICE
from roofscope.diagnosis.profiler import ProfilerRule, lead_with_profiler
from roofscope.model.libraries import Library
from roofscope.readers.load import load
from roofscope.render.report.html import render_html
from roofscope.render.report.json import to_dict
from roofscope.render.report.text import render_text
from roofscope.report import Report, analyse
from tests.conftest import DATA, SHARED_CORPUS

NCU = DATA / "ncu"
GEMV = NCU / "llm-perf-opt-rtx5090" / "kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
SUPERBENCH = NCU / "superbench-cublaslt-ncu" / "cublaslt_ncu.log"
CONV2D = NCU / "leleucas-opanalysis-a100" / "conv2d_result.csv"
# roofscope's occupancy-limited prescription for a launch that allows under 50 % (rules.py)
FEWER_REGISTERS = "use fewer registers per thread (launch bounds, less unrolling)"
# the GEMV and the cuBLASLt kernel here are library kernels: the call's advice, never the
# kernel source's (issue 38, point 7)
LIBRARY_GEMM = ADVICE[Library.GEMM]


def raw_rules(path: Path) -> list[dict[str, str]]:
    """The rule rows of a details CSV as the csv module reads them (from the "ID" header)."""
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = csv.DictReader(lines[start:])
    return [r for r in rows if r.get("Rule Name") and r["Kernel Name"] != "Kernel Name"]


def raw_rule(path: Path, name: str) -> dict[str, str]:
    found = [r for r in raw_rules(path) if r["Rule Name"] == name]
    speedups = [float(r.get("Estimated Speedup") or 0) for r in found]
    return found[speedups.index(max(speedups))]  # the row of the largest estimate


def report_of(path: Path) -> Report:
    return analyse(load([str(path)]))


def kernel_block(text: str, kernel_rule: str) -> list[str]:
    """The first finding whose header names ``kernel_rule``: its header line, then its
    indented lines (the kernel name may wrap below the header, unindented)."""
    lines = text.splitlines()
    start = next(
        i for i, line in enumerate(lines) if re.match(rf" *\d+\. \[\w+\] {kernel_rule} ", line)
    )
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(r" *\d+\. \[", lines[i])), len(lines)
    )
    body = next(i for i in range(start, end) if lines[i].startswith("      "))
    return lines[start : start + 1] + lines[body:end]  # the header, less its kernel name's lines


def words(text: str) -> str:
    return " ".join(text.split())


def first_bottleneck(report: Report, kernel: str) -> Finding:
    return next(f for f in report.findings if f.kernel == kernel and f.kind == "bottleneck")


@pytest.mark.parametrize("width", [80, 120])
def test_opt_rule_with_global_speedup_leads_whole(width: int) -> None:
    """llm-perf-opt's cuBLAS GEMV on the RTX 5090: ncu 2025.1 rates TheoreticalOccupancy OPT,
    80.34 % global; roofscope's occupancy finding folds into it and keeps its remedy (ncu's
    text names the limiter, registers, but no remedy)."""
    row = raw_rule(GEMV / "ncu.details.csv", "TheoreticalOccupancy")
    assert (row["Rule Type"], row["Estimated Speedup Type"]) == ("OPT", "global")
    report = report_of(GEMV)
    (kernel,) = [k.name for k in report.hotspots.kernels]
    lead = first_bottleneck(report, kernel)
    assert lead.rule == "ncu-theoretical-occupancy"
    assert lead.gain_share == pytest.approx(float(row["Estimated Speedup"]) / 100)  # share 1
    assert lead.severity == "high"
    assert "occupancy-limited" not in [f.rule for f in report.findings]  # folded, not twice
    text = render_text(report, width=width)
    block = kernel_block(text, lead.rule)
    head = (
        f"Nsight Compute {row['Section Name']}/{row['Rule Name']} ({row['Rule Type']}, "
        f"estimated speedup {row['Estimated Speedup']}%, {row['Estimated Speedup Type']}):"
    )
    body = [line.strip() for line in block[1:]]
    assert body[0].startswith(head) or words(" ".join(body)).startswith(words(head))
    assert words(f"{head} {row['Rule Description']}") in words(" ".join(body))
    assert all(len(line) <= width or " " not in line.strip() for line in block[1:])
    assert any(line.startswith("roofscope: ") for line in body)
    assert words(f"→ {LIBRARY_GEMM}") in words(" ".join(body))
    assert "register" not in words(" ".join(body[1:])).split("→")[-1]


def test_opt_rule_in_json_and_html() -> None:
    row = raw_rule(GEMV / "ncu.details.csv", "TheoreticalOccupancy")
    report = report_of(GEMV)
    doc: dict[str, Any] = to_dict(report)
    (kernel,) = doc["kernels"]
    first = next(f for f in doc["findings"] if f["kind"] == "bottleneck")
    assert first["rule"] == "ncu-theoretical-occupancy"
    assert row["Rule Description"] in first["summary"]  # the text as written, not normalised
    ev = first["evidence"]
    assert (ev["section"], ev["rule"], ev["rule_kind"]) == (
        "Occupancy",
        "TheoreticalOccupancy",
        "OPT",
    )
    assert ev["speedup_kind"] == row["Estimated Speedup Type"]
    assert ev["speedup_pct"] == float(row["Estimated Speedup"])
    assert first["prescription"] == LIBRARY_GEMM
    assert ev["roofscope_rule"] == "occupancy-limited"
    texts = [r["text"] for r in kernel["profiler_rules"]]
    assert sorted(texts) == sorted(
        r["Rule Description"] for r in raw_rules(GEMV / "ncu.details.csv")
    )
    page = render_html(report)
    assert html.escape(row["Rule Description"], quote=True) in page


def test_inf_rule_is_no_finding_but_shown_whole() -> None:
    """SOLFPRoofline (INF) informs: kept in the metrics view whole, never a finding."""
    row = raw_rule(GEMV / "ncu.details.csv", "SOLFPRoofline")
    assert row["Rule Type"] == "INF"
    report = report_of(GEMV)
    assert not [f for f in report.findings if f.rule == "ncu-solfp-roofline"]
    text = render_text(report, width=80)
    metrics = text[text.index("Metrics of the hot kernels") : text.index("Findings (validity")]
    assert words(row["Rule Description"]) in words(metrics)
    assert all(len(line) <= 80 or " " not in line.strip() for line in metrics.splitlines()[3:])
    page = render_html(report)
    notes = page[page.index('<ul id="profiler-notes">') :]
    assert html.escape(row["Rule Description"], quote=True) in notes[: notes.index("</ul>")]


def test_global_estimates_rank_and_local_ones_do_not() -> None:
    """superbench's cuBLASLt kernel (ncu --set full, B200): LaunchConfiguration 50 % global
    leads (gain 1.0 x 0.50); WorkloadImbalance's four rows give one finding, its largest
    global estimate; TheoreticalOccupancy's 81.25 % is local (hardware efficiency, not
    runtime): no gain of its own."""
    report = report_of(SUPERBENCH)
    (kernel,) = [k.name for k in report.hotspots.kernels]
    mine = [f for f in report.findings if f.kernel == kernel and f.kind == "bottleneck"]
    launch = raw_rule(SUPERBENCH, "LaunchConfiguration")
    imbalance = raw_rule(SUPERBENCH, "WorkloadImbalance")
    occupancy = raw_rule(SUPERBENCH, "TheoreticalOccupancy")
    assert mine[0].rule == "ncu-launch-configuration"
    assert mine[0].gain_share == pytest.approx(float(launch["Estimated Speedup"]) / 100)
    assert [f.rule for f in mine].count("ncu-workload-imbalance") == 1
    found = next(f for f in mine if f.rule == "ncu-workload-imbalance")
    assert found.evidence["speedup_pct"] == float(imbalance["Estimated Speedup"]) == 14.55
    occ = next(f for f in mine if f.rule == "ncu-theoretical-occupancy")
    assert occupancy["Estimated Speedup Type"] == "local"
    assert occ.gain_share is None
    # roofscope's occupancy-limited folds in: its severity (high from the kernel's share, 1.0,
    # lowered one step: ncu profiled one launch) stands where ncu estimates no runtime gain,
    # and its remedy follows ncu's text
    assert (occ.evidence["roofscope_rule"], occ.severity) == ("occupancy-limited", "medium")
    assert occ.evidence["severity_lowered"] == "it rests on a single dispatch"
    assert occ.prescription == LIBRARY_GEMM
    sol = next(f for f in mine if f.rule == "ncu-sol-bottleneck")  # OPT, no estimate, alone
    assert (sol.gain_share, sol.severity) == (None, "medium")


@pytest.mark.parametrize("width", [80, 120])
def test_wrn_rules_of_ncu_2022_whole_with_their_urls(width: int) -> None:
    """leleucas conv2d (Nsight Compute 2021-2022, A100): hints are WRN without estimates:
    medium (the kernel is all the time), no gain; the URL longer than 80 columns stands whole
    on a line of its own."""
    row = raw_rule(CONV2D, "LaunchConfiguration")
    assert (row["Rule Type"], row.get("Estimated Speedup")) == ("WRN", None)  # no such column
    report = report_of(CONV2D)
    found = next(f for f in report.findings if f.rule == "ncu-launch-configuration")
    assert (found.severity, found.gain_share) == ("medium", None)
    block = kernel_block(render_text(report, width=width), found.rule)
    body = words(" ".join(line.strip() for line in block[1:]))
    assert (
        words(f"Nsight Compute LaunchStats/LaunchConfiguration (WRN): {row['Rule Description']}")
        in body
    )
    url = "(https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#metrics-hw-model)"
    assert url in [w for line in block for w in line.split()]
    assert all(len(line) <= width or " " not in line.strip() for line in block[1:])


def test_remedy_named_by_ncu_drops_roofscope_prescription() -> None:
    """The criterion, on conv2d's real LaunchConfiguration row: its text names the remedy
    (reduce the block size or increase the grid), so roofscope's occupancy-limited finding on
    that kernel folds in as evidence and its prescription is left out; the Occupancy row
    names none, so there roofscope's prescription is kept."""
    rows = [
        ProfilerRule(
            r["Section Name"], r["Rule Name"], r["Rule Type"], r["Rule Description"], None, None
        )
        for r in raw_rules(CONV2D)
    ]
    ours = Finding(
        "occupancy-limited", "k", "bottleneck", "high", "3.1% of the warp slots were occupied",
        "launch enough blocks to fill every SM several times", {"achieved_pct": 3.1}, {},
        0.25, "gain = 0.25",
    )  # fmt: skip
    other = Finding("low-l2-hit-rate", "k", "bottleneck", "medium", "20% hit", "reuse data")
    out = lead_with_profiler([ours, other], {"k": tuple(rows)}, {"k": 1.0})
    assert [f.rule for f in out] == ["ncu-launch-configuration", "ncu-occupancy", "low-l2-hit-rate"]
    assert out[0].prescription == "see Nsight Compute's LaunchStats section for the details"
    assert out[0].evidence["roofscope_summary"] == ours.summary
    assert out[0].evidence["achieved_pct"] == 3.1  # roofscope's numbers stay
    # a WRN row estimates nothing: roofscope's gain, formula and severity stand
    assert (out[0].gain_share, out[0].formula, out[0].severity) == (0.25, "gain = 0.25", "high")
    alone = lead_with_profiler(
        [ours], {"k": tuple(r for r in rows if r.rule == "Occupancy")}, {"k": 1.0}
    )
    assert [f.prescription for f in alone] == [ours.prescription]


def test_corpus_kernels_lead_with_their_opt_rule() -> None:
    """Every llm-perf-opt ncu-v2 kernel of the corpus: the first bottleneck finding is the OPT
    rule of the largest global estimate in its details CSV, with that estimate."""
    root = SHARED_CORPUS / "nvidia" / "llm-perf-opt-rtx5090" / "ncu-v2"
    if not root.is_dir():
        pytest.skip(f"{root} is not beside the project")
    folders = sorted(root.iterdir())
    for folder in folders:
        rows = [
            r
            for r in raw_rules(folder / "ncu.details.csv")
            if r["Estimated Speedup Type"] == "global"
        ]
        best = max(rows, key=lambda r: float(r["Estimated Speedup"]))
        report = report_of(folder)
        (kernel,) = [k.name for k in report.hotspots.kernels]
        lead = first_bottleneck(report, kernel)
        assert lead.evidence["rule"] == best["Rule Name"]
        assert f"estimated speedup {best['Estimated Speedup']}%, global" in lead.summary


def test_hints_without_estimates_follow_the_kernels_time() -> None:
    """leleucas BERT (ncu 2021-2022, A100): every hot kernel has WRN hints and no estimate;
    their findings come kernel by kernel in the order of the kernels' time, largest first,
    each kernel's hints together."""
    path = SHARED_CORPUS / "nvidia" / "leleucas-opanalysis-a100" / "bert_torch_nsight.csv"
    if not path.exists():
        pytest.skip("corpus not present")
    report = report_of(path)
    ncu = [f for f in report.findings if f.rule.startswith("ncu-")]
    assert {f.evidence["rule_kind"] for f in ncu} == {"WRN"}
    order = list(dict.fromkeys(f.kernel for f in ncu))
    by_time = sorted(report.hotspots.kernels, key=lambda k: -(k.total_ns or 0))
    assert order == [k.name for k in by_time if k.name in order]
    kernels = [f.kernel for f in ncu]
    assert kernels == sorted(kernels, key=order.index)  # each kernel's hints together
