"""Per-kernel calls and nanoseconds from HolisticTraceAnalysis, as a reference for roofscope's
Kineto reader (tests/test_kineto.py compares against the JSON this writes).

Run with the Python that has HTA installed (not roofscope's):

    HTA_DISABLE_NS_ROUNDING=1 /tmp/htav/bin/python tools/hta_reference.py \
        /work/shared/corpus/torch tests/data/kineto-hta-reference.json

HTA's kernel breakdown (``TraceAnalysis.get_gpu_kernel_breakdown``) gives per kernel and rank
the ``sum`` and ``mean`` of ``dur`` in microseconds; the count is ``sum / mean``. Kernels are
what HTA calls computation and communication kernels; HTA 0.5.0 classes ``Memcpy …`` and
``Memset …`` events as communication (its NCCL_KERNEL_RE), so they are in the breakdown too,
kept here with their kernel_type (roofscope puts them in ``copies``). Two HTA
behaviours are switched off so that it counts every kernel with its written duration:

- ``HTA_DISABLE_NS_ROUNDING=1``: by default HTA 0.5.0 rounds traces whose ``ts`` column is
  float to whole microseconds (start ceiled, end floored; pytorch/pytorch#122425);
- ``include_last_profiler_step=True``: by default it drops the kernels of the last
  ProfilerStep.

The µs sums are float64 sums of the written ``dur`` values (at most 3 decimals), turned into
ns by ``round(sum * 1000)``; their float error is far below 0.5 ns for these traces.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tarfile
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

# corpus-relative trace (a file, a folder of ranks, or a tar of ranks) -> reference key
TRACES = (
    "param-et-replay-inputs/linear_kineto.json.gz",
    "param-et-replay-inputs/dlrm_kineto.tar.gz",
    "hta-tests-data/trace_filter",
    "hta-tests-data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
)


def staged(corpus: Path, rel: str, into: Path) -> Path:
    """A folder holding only the trace's rank files."""
    src = corpus / rel
    if src.is_dir():
        return src
    into.mkdir()
    if rel.endswith(".tar.gz"):
        with tarfile.open(src) as tar:
            tar.extractall(into, filter="data")
        (inner,) = [p for p in into.iterdir() if p.is_dir()]
        return inner
    shutil.copy(src, into / src.name)
    return into


def breakdown(trace_dir: Path) -> dict[str, dict[str, list[object]]]:
    from hta.trace_analysis import TraceAnalysis

    analysis = TraceAnalysis(trace_dir=str(trace_dir), include_last_profiler_step=True)
    _, per_kernel = analysis.get_gpu_kernel_breakdown(
        visualize=False, duration_ratio=1.0, num_kernels=10**9
    )
    out: dict[str, dict[str, list[object]]] = {}
    for row in per_kernel.to_dict("records"):
        total_us, mean_us = float(row["sum (us)"]), float(row["mean (us)"])
        calls = round(total_us / mean_us) if mean_us else 0
        out.setdefault(str(int(row["rank"])), {})[str(row["name"])] = [
            calls,
            round(total_us * 1000),
            str(row["kernel_type"]),
        ]
    return out


def main(corpus: Path, target: Path) -> None:
    if os.environ.get("HTA_DISABLE_NS_ROUNDING") != "1":
        sys.exit("set HTA_DISABLE_NS_ROUNDING=1 (see the module docstring)")
    traces: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, rel in enumerate(TRACES):
            traces[rel] = breakdown(staged(corpus, rel, Path(tmp) / str(i)))
    doc = {
        "hta_version": version("HolisticTraceAnalysis"),
        "command": "HTA_DISABLE_NS_ROUNDING=1 /tmp/htav/bin/python tools/hta_reference.py "
        "/work/shared/corpus/torch tests/data/kineto-hta-reference.json",
        "api": "TraceAnalysis(trace_dir, include_last_profiler_step=True)"
        ".get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=10**9)",
        "units": "per rank, per kernel name: [calls, total ns, HTA kernel_type]",
        "traces": traces,
    }
    target.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
