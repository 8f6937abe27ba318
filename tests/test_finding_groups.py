"""Findings a person reads in order (issue 38, point 11): one entry per cause, with the
kernels it covers, ranked by the cause's whole gain; findings[] keeps one entry per kernel.
The expected groups are computed here from the JSON's own findings[]."""

from __future__ import annotations

import json
import re
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from roofscope.analysis.metrics.value import MetricValue
from roofscope.cli.app import main
from roofscope.render.report.metrics_text import peer_note, peer_once
from tests.conftest import SHARED_CORPUS, run_json

OMNIPERF_MI200 = SHARED_CORPUS / "amd/omniperf-v1-2022/Axes1/mi200"
RTX5090 = SHARED_CORPUS / "nvidia/llm-perf-opt-rtx5090"
needs_corpus = pytest.mark.skipif(not OMNIPERF_MI200.is_dir(), reason="needs ../shared/corpus")
SEVERITIES = ["high", "medium", "low"]


def expected_groups(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """findings[] folded by (kind, rule, prescription) for kernels, each whole-program one
    alone; kernels by gain (ties in order); groups by validity, summed gain, severity, place."""
    slots: dict[object, list[int]] = {}
    for i, f in enumerate(findings):
        key = (f["kind"], f["rule"], f["prescription"]) if f["kernel"] is not None else i
        slots.setdefault(key, []).append(i)
    groups = []
    for members in slots.values():
        order = sorted(members, key=lambda i: (-(findings[i]["gain_share"] or 0.0), i))
        gains = [
            findings[i]["gain_share"] for i in members if findings[i]["gain_share"] is not None
        ]
        first = findings[members[0]]
        groups.append({
            "rule": first["rule"], "kind": first["kind"], "prescription": first["prescription"],
            "severity": min((findings[i]["severity"] for i in members), key=SEVERITIES.index),
            "kernels": [findings[i]["kernel"] for i in order if findings[i]["kernel"]],
            "findings": order, "gain_share": sum(gains) if gains else None,
        })  # fmt: skip
    groups.sort(key=lambda g: (g["kind"] != "validity", -(g["gain_share"] or 0.0),
                               SEVERITIES.index(g["severity"]), min(g["findings"])))  # fmt: skip
    return groups


def _copies(doc: dict[str, Any]) -> Counter[str]:
    """How many findings[] entries each rule has: the copies a reader saw before grouping."""
    return Counter(f["rule"] for f in doc["findings"])


def _check_groups(doc: dict[str, Any]) -> list[dict[str, Any]]:
    schema = resources.files("roofscope").joinpath("schema/report-v1.schema.json").read_text()
    jsonschema.Draft202012Validator(json.loads(schema)).validate(doc)
    want = expected_groups(doc["findings"])
    got = doc["findings_grouped"]
    keys = ["rule", "kind", "prescription", "severity", "kernels", "findings"]
    assert [{k: g[k] for k in keys} for g in got] == [{k: g[k] for k in keys} for g in want]
    for g, w in zip(got, want, strict=True):
        assert (
            g["gain_share"] == pytest.approx(w["gain_share"], abs=0, rel=1e-12)
            if w["gain_share"] is not None
            else g["gain_share"] is None
        )
        if g["gain_share"] is not None and g["gain_share"] < 1:
            assert g["program_speedup_bound"] == pytest.approx(1 / (1 - g["gain_share"]))
    # every finding is in exactly one group: findings[] is kept whole
    assert sorted(i for g in got for i in g["findings"]) == list(range(len(doc["findings"])))
    return want


@needs_corpus
def test_omniperf_mi200_one_entry_per_cause(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Omniperf's roofline benchmark on MI200: 373 findings, 167 of them single-dispatch, 93
    at-measured-roof, 85 low-l2-hit-rate; read as one entry per cause."""
    doc = run_json(capsys, str(OMNIPERF_MI200))
    copies = _copies(doc)
    assert len(doc["findings"]) == sum(copies.values())
    assert copies.most_common(3) == [("single-dispatch", 167), ("at-measured-roof", 93),
                                     ("low-l2-hit-rate", 85)]  # fmt: skip
    want = _check_groups(doc)
    by_rule = Counter(g["rule"] for g in want)
    assert by_rule["single-dispatch"] == 1 and by_rule["at-measured-roof"] == 1
    single = next(g for g in want if g["rule"] == "single-dispatch")
    assert len(single["kernels"]) == 167
    assert len(want) < len(doc["findings"]) / 10
    near = next(g for g in want if g["rule"] == "compute-near-roof")
    near_gains = [f["gain_share"] for f in doc["findings"] if f["rule"] == "compute-near-roof"]
    assert near["gain_share"] == pytest.approx(sum(near_gains))
    _check_text_and_html(capsys, OMNIPERF_MI200, want, tmp_path)


@needs_corpus
def test_rtx5090_counters_missing_said_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Nsight Compute on an RTX 5090 (LLM inference): 21 counters-missing findings, one per
    kernel without counters, one sentence: one entry naming the 21 kernels, said once."""
    doc = run_json(capsys, str(RTX5090))
    assert _copies(doc)["counters-missing"] == 21
    want = _check_groups(doc)
    (missing,) = [g for g in want if g["rule"] == "counters-missing"]
    assert len(missing["kernels"]) == 21
    _check_text_and_html(capsys, RTX5090, want, tmp_path)


def _check_text_and_html(
    capsys: pytest.CaptureFixture[str], path: Path, want: list[dict[str, Any]], tmp: Path
) -> None:
    """The terminal numbers one entry per group in the JSON's order; a group of more than 3
    kernels names 3 and counts the rest; the HTML table has one row per group."""
    assert main(["analyze", str(path), "--top", "1000"]) == 0
    text = capsys.readouterr().out.split("Findings (validity first", 1)[1]
    heads = re.findall(r"^ *(\d+)\. \[(\w+)\] ([a-z0-9-]+) · (.*)$", text, re.M)
    assert [(int(n), s, r) for n, s, r, _ in heads] == [
        (i, g["severity"], g["rule"]) for i, g in enumerate(want, start=1)
    ]
    for (_, _, _, who), g in zip(heads, want, strict=True):
        if len(g["kernels"]) > 1:
            assert who == f"{len(g['kernels'])} kernels"
    more = [int(n) for n in re.findall(r"^      \+ (\d+) more \(see --json\)$", text, re.M)]
    assert more == [len(g["kernels"]) - 3 for g in want if len(g["kernels"]) > 3]
    html = tmp / "report.html"
    assert main(["analyze", str(path), "--html", str(html)]) == 0
    page = html.read_text(encoding="utf-8")
    table = page.split('<table id="findings">', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr") == 1 + len(want)
    folded = re.findall(r"<summary>\+(\d+) more</summary>", table)
    assert [int(n) for n in folded] == [
        len(g["kernels"]) - 3 for g in want if len(g["kernels"]) > 3
    ]


def _metric(value: float, note: str | None = None, peer: str | None = None) -> MetricValue:
    return MetricValue("waves", "ratio", value, value, None, None, None, 1, 0, False, "test",
                       note, peer)  # fmt: skip


def test_peer_note_that_restates_the_value_is_not_shown() -> None:
    """A note whose other value reads as this one (2,560 waves both ways) says nothing new."""
    same = {"W": _metric(2560.0, "why", "W (other)"), "W (other)": _metric(2560.4)}
    assert peer_note("W", same) is None
    differ = {"W": _metric(2560.0, "why", "W (other)"), "W (other)": _metric(457.0)}
    assert peer_note("W", differ) == "why, which gives 457 waves"


def test_peer_note_explained_once_then_only_the_value() -> None:
    said: set[str] = set()
    first = {"W": _metric(2560.0, "why", "W (other)"), "W (other)": _metric(457.0)}
    second = {"W": _metric(1000.0, "why", "W (other)"), "W (other)": _metric(300.0)}
    assert peer_once("W", first, said) == "why, which gives 457 waves"
    assert peer_once("W", second, said) == "W (other) 300 waves (why it differs: above)"
