"""A ``reduce_run`` that Dask workers unpickle cheaply (this module imports little): it leaves
a mark naming its worker's pid, then waits, so that a test can kill a worker mid-run."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from roofscope.cluster.partial import Partial, reduce_run


@dataclass
class SlowReduce:
    marks: str
    delay_s: float

    def __call__(self, paths: list[str], fmt: str | None = None) -> Partial:
        Path(self.marks, f"{os.getpid()}.{time.monotonic_ns()}").touch()
        time.sleep(self.delay_s)
        return reduce_run(paths, fmt)
