"""The roofline's verdicts and the device choice are typed between stages and worded only by
the renderers, in the strings the reports have always shown: the enums' values are the JSON
schema's, and the device choice reads as before in the JSON, the text and the HTML."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

import pytest

from roofscope.analysis.device import DeviceSource
from roofscope.analysis.roofline import Bound, PlacedBy
from roofscope.catalogue import from_attributes
from roofscope.readers.load import load
from roofscope.render.report.html import render_html
from roofscope.render.report.json import to_dict
from roofscope.render.report.text import render_text
from roofscope.report import RooflineOptions, analyse
from tests.conftest import DATA

SCHEMA = Path(__file__).parents[1] / "src" / "roofscope" / "schema"


def _roofline_enum(schema: str, field: str) -> list[Any]:
    doc = json.loads((SCHEMA / schema).read_text(encoding="utf-8"))
    values: list[Any] = doc["$defs"]["roofline"]["properties"][field]["enum"]
    return values


def test_bound_is_the_schemas_bound() -> None:
    assert _roofline_enum("report-v1.schema.json", "bound") == [*Bound, None]
    assert [b.value for b in Bound] == ["memory", "compute"]


def test_placed_by_is_the_schemas_placed_by() -> None:
    assert _roofline_enum("report-v1.schema.json", "placed_by") == list(PlacedBy)
    assert [p.value for p in PlacedBy] == ["flops", "iops", "bandwidth", "none"]


def test_the_compare_schemas_bound_is_bound_too() -> None:
    doc = json.loads((SCHEMA / "compare-v1.schema.json").read_text(encoding="utf-8"))
    found = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(bound := node.get("bound"), dict):  # one side's, or both sides'
                found.append(bound["items"]["enum"] if "items" in bound else bound["enum"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    assert found and all(f == [*Bound, None] for f in found)


def test_the_device_sources_begin_what_detected_from_says() -> None:
    """``--gpu``, ``profile: ...``, ``derived from the profile's device attributes: ...``."""
    assert [s.value for s in DeviceSource] == ["--gpu", "profile", from_attributes.PREFIX]
    assert from_attributes.PREFIX == "derived from the profile's device attributes"


# (input, --gpu, the JSON's detected_from, the text's title, the text's roofline heading): the
# words worked out from each file's facts
CHOICES = [
    # rocprof-compute's sysinfo.csv names the series MI200 and gfx90a, with 104 CUs: an MI210
    # and one MI250 GCD both have 104, and the same peaks
    (
        "rocprof-compute-mi200",
        None,
        "profile: MI200 / gfx90a with 104 CUs; the ceilings its candidates share",
        "roofscope 0.1.0 · omniperf · MI200 · gfx90a",
        "Roofline · Instinct MI210 or Instinct MI250 (gfx90a, profile: MI200 / gfx90a with 104 "
        "CUs; the ceilings its candidates share)",
    ),
    # ncu's device__attribute_display_name is NVIDIA H200, one catalogue part
    (
        "ncu/roofscope-profile-h200",
        None,
        "profile: NVIDIA H200",
        "roofscope 0.1.0 · ncu · NVIDIA H200 · sm_90",
        "Roofline · H200 SXM (sm_90, profile: NVIDIA H200)",
    ),
    # ... and --gpu h200 names two parts, which share only their bandwidth
    (
        "ncu/roofscope-profile-h200",
        "h200",
        "--gpu h200: the ceilings H200 NVL, H200 SXM share",
        "roofscope 0.1.0 · ncu · h200 (--gpu: 2 parts, the ceilings they share; the profile "
        "says NVIDIA H200 · sm_90)",
        "Roofline · H200 NVL or H200 SXM (sm_90, --gpu h200: the ceilings H200 NVL, H200 SXM "
        "share)",
    ),
    # Kineto's deviceProperties: "AMD Radeon Graphics", no arch, 104 compute units (no arch
    # to call them CUs by): the AMD parts of 104 are an MI210 and one MI250 GCD
    (
        "kineto/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        None,
        "profile: AMD Radeon Graphics with 104 compute units; the ceilings its candidates share",
        "roofscope 0.1.0 · pytorch-profiler · Instinct MI210 or Instinct MI250 (the profile "
        "says AMD Radeon Graphics)",
        "Roofline · Instinct MI210 or Instinct MI250 (gfx90a, profile: AMD Radeon Graphics with "
        "104 compute units; the ceilings its candidates share)",
    ),
]


@pytest.mark.parametrize(("path", "gpu", "said", "title", "heading"), CHOICES)
def test_the_device_choice_reads_as_before(
    path: str, gpu: str | None, said: str, title: str, heading: str
) -> None:
    report = analyse(load([str(DATA / path)]), roof=RooflineOptions(gpu=gpu))
    assert to_dict(report)["device"]["detected_from"] == said
    lines = render_text(report, width=1000).splitlines()
    assert lines[0] == title
    assert heading in lines
    assert f"detected from {escape(said)}</p>" in render_html(report)
