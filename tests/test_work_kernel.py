"""Which kernel of an operator call did its work (analysis/ops/link.py): the longest one it
launched, passing over those that only move data (copies, fills, layout transposes) while the
call has another. MIOpen's convolutions on MI300X launch transposes around the convolution
kernel, and in a real ResNet step (tests/data/kineto/resnet_act_ckpt_mi300x_step15.json.gz,
AMD-AGI/TraceLens, MIT) some of them outlast it: the FLOPs are the convolution kernel's."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import roofscope
from tests.conftest import DATA

RESNET = DATA / "kineto" / "resnet_act_ckpt_mi300x_step15.json.gz"
TRANSPOSE = re.compile(r"^(?:batched_)?transpose_")


def conv_flops(args: dict[str, Any]) -> int:
    """2·N·Cout·Hout·Wout·(Cin/groups)·KH·KW of an aten::miopen_convolution call, from its
    recorded inputs (input, weight, bias, padding, stride, dilation, groups, ...)."""
    (n, _, h, w), (cout, cin_g, kh, kw) = args["Input Dims"][:2]
    pad, stride, dil = (json.loads(t) for t in args["Concrete Inputs"][3:6])
    ho = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    assert args["Input Dims"][2] == []  # no bias in this trace
    return 2 * n * cout * ho * wo * cin_g * kh * kw


def rooflines(path: Path) -> dict[tuple[str, ...], dict[str, Any]]:
    """Each kernel's roofline (empty without one), by its raw names (the trace's)."""
    doc = json.loads(roofscope.analyze(path).to_json())
    return {tuple(k["raw_names"]): k.get("roofline") or {} for k in doc["kernels"]}


def test_a_transpose_is_never_given_the_convolution_s_work() -> None:
    kernels = rooflines(RESNET)
    moved = [raw for raw in kernels if all(TRANSPOSE.match(n) for n in raw)]
    assert len(moved) == 8  # MIOpen's transposes ran in this step
    assert all(not kernels[raw].get("flops") for raw in moved), moved


def test_the_convolutions_work_is_on_the_kernels_that_computed() -> None:
    """The FLOPs of the 39 convolution calls, from their recorded inputs, are all on the
    kernels those calls launched that are no transpose (MIOpen's implicit GEMMs, CK's grouped
    convolutions, Tensile GEMMs for the 1x1 ones), found in the trace by each call's
    thread and time and each launch's correlation id."""
    with gzip.open(RESNET) as f:
        events = json.load(f)["traceEvents"]
    convs = [e for e in events if e.get("name") == "aten::miopen_convolution"]
    launched = {
        e["args"]["correlation"]: (e["tid"], e["ts"])
        for e in events
        if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    computing = {
        e["name"]
        for e in events
        if e.get("cat") == "kernel"
        and not TRANSPOSE.match(e["name"])
        and any(_inside(launched.get(e["args"]["correlation"]), c) for c in convs)
    }
    kernels = rooflines(RESNET)
    on = sum(r.get("flops") or 0 for raw, r in kernels.items() if computing.intersection(raw))
    assert len(convs) == 39
    assert on == sum(conv_flops(c["args"]) for c in convs) == 70_182_174_720


def _inside(launch: tuple[int, float] | None, call: dict[str, Any]) -> bool:
    return (
        launch is not None
        and launch[0] == call["tid"]
        and (call["ts"] <= launch[1] <= call["ts"] + call["dur"])
    )
