"""bench/floors.py: issue 41's floors count what the bench wrote."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.floors import kineto_floor
from bench.kineto_bench import write_trace


@pytest.mark.parametrize("name", ["t.pt.trace.json", "t.pt.trace.json.gz"])
@pytest.mark.parametrize("whole_us", [False, True])
def test_kineto_floor_counts_the_kernels_written(tmp_path: Path, name: str, whole_us: bool) -> None:
    path = tmp_path / name
    launches = write_trace(path, 5_000, names=10, whole_us=whole_us)  # 5 events a launch
    assert launches == 1_000
    assert kineto_floor(path) == launches
