"""The two ways a capture can hold no kernel, told apart (issue 19).

*No kernel ran*: the profiler traced the GPU (its kernel table or file is there and empty, or
it recorded API calls or copies, none of them a kernel launch) and the captured range launched
none. The user
must widen the range, not switch tracing on. *The profiler did not record kernels*: kernel
tracing was off, and the remedy is to switch it on. Both are an empty profile: an
:class:`~roofscope.errors.InputError` (exit 1), as a header-only trace is.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

from roofscope.errors import InputError
from roofscope.model.words import count

# the nsys export's tables that CUDA tracing writes, and what else a capture may hold
NSYS_CUDA_TABLES = {
    "CUPTI_ACTIVITY_KIND_RUNTIME": "CUDA API calls",
    "CUPTI_ACTIVITY_KIND_MEMCPY": "memcpys",
    "CUPTI_ACTIVITY_KIND_MEMSET": "memsets",
}
NSYS_OTHER_TABLES = {"NVTX_EVENTS": "NVTX events", "OSRT_API": "OS runtime calls"}
NSYS_WIDEN = (
    "widen the capture to where the program launches kernels (nsys profile --delay, "
    "--duration, or the --capture-range cudaProfilerApi/nvtx range it waited for)"
)
HEADER_ONLY_REMEDY = (
    "check that the profiled program launches kernels in the profiled range (a kernel filter "
    "or range that selects none records none)"
)
KINETO_WIDEN = (
    "profile steps where the model runs on the GPU (torch.profiler's schedule: wait, warmup "
    "and active steps, and prof.step() called once per step)"
)


def held(counts: Iterable[tuple[int, str]]) -> str:
    """``12 CUDA API calls, 3 memcpys`` from (count, plural noun); zero counts left out."""
    parts = [f"{n:,} {noun if n != 1 else _one(noun)}" for n, noun in counts if n]
    return ", ".join(parts) or "no other activity"


def _one(noun: str) -> str:
    """The singular of the plural nouns above: ``copies`` -> ``copy``, ``memcpys/memsets``
    -> ``memcpy/memset``."""
    *head, last = noun.split(" ")
    one = "/".join(
        p[:-3] + "y" if p.endswith("ies") else p.removesuffix("s") for p in last.split("/")
    )
    return " ".join([*head, one])


def no_kernel_ran(path: str, what: str, remedy: str, *, line: int | None = None) -> InputError:
    """The error for a capture that traced kernels and holds none; ``what`` is what it held."""
    return InputError(
        path,
        f"no kernel ran in the captured range: the profiler traced kernels and recorded none "
        f"(the capture holds {what})",
        remedy,
        line=line,
    )


def kernels_not_recorded(path: str, evidence: str, remedy: str) -> InputError:
    """The error for a capture whose own records say kernels ran, and that holds none."""
    return InputError(
        path,
        f"has no kernel records, though {evidence}: kernels ran and the profiler did not "
        "record them",
        remedy,
    )


def nsys_held(con: sqlite3.Connection, present: set[str]) -> str:
    """What an nsys export without kernels holds: its CUDA API calls, copies, NVTX events."""
    tables = {**NSYS_CUDA_TABLES, **NSYS_OTHER_TABLES}
    counts = []
    for table, noun in tables.items():
        if table in present:
            ((n,),) = con.execute(f'SELECT count(*) FROM "{table}"').fetchall()
            counts.append((int(n), noun))
    return held(counts)


def nsys_launches(con: sqlite3.Connection, present: set[str]) -> int:
    """The kernel launches among an nsys export's CUDA API calls (0 without the tables)."""
    if not {"CUPTI_ACTIVITY_KIND_RUNTIME", "StringIds"} <= present:
        return 0
    like = launch_sql("s.value")
    ((n,),) = con.execute(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
        f"ON s.id = r.nameId WHERE {like}"
    ).fetchall()
    return int(n)


NSYS_LOST = (
    "re-run nsys profile with --trace=cuda, and look in its diagnostics for dropped CUPTI "
    "records (a capture stopped before the buffers were flushed: --cuda-flush-interval)"
)


ROCPD_WIDEN = (
    "profile a range in which the program launches kernels (rocprofv3 --collection-period, "
    "or the roctx range or --kernel-include-regex that selected none)"
)
# kernel launches among API calls (cudaLaunchKernel, cuLaunchKernelEx, hipLaunchKernel,
# hipExtModuleLaunchKernel, cudaLaunchCooperativeKernel, cudaGraphLaunch, ...)
LAUNCHES = ("LaunchKernel", "GraphLaunch", "ModuleLaunch", "LaunchCooperative", "ExtLaunch")


_LAUNCH = re.compile("|".join(map(re.escape, LAUNCHES)))


def is_launch(name: str) -> bool:
    """Whether an API call of this name launches kernels (one of LAUNCHES is in it)."""
    return _LAUNCH.search(name) is not None


def launch_sql(column: str) -> str:
    """:func:`is_launch` as a SQL condition on ``column``."""
    return " OR ".join(f"{column} LIKE '%{k}%'" for k in LAUNCHES)


_ROCPD_LAUNCH = launch_sql("name")


def rocpd_no_kernels(con: sqlite3.Connection, path: str) -> InputError:
    """A rocpd database whose kernels view is empty: no kernel ran when its API trace holds no
    launch; the kernels were not recorded when it does, or when nothing else was recorded."""
    views = {str(n) for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}
    launches, calls = 0, 0
    if "regions" in views:
        ((launches, calls),) = con.execute(
            f"SELECT count(*) FILTER (WHERE {_ROCPD_LAUNCH}), count(*) FROM regions"
        ).fetchall()
    if launches:
        return InputError(
            path,
            f"has no kernel dispatches, though its API trace holds "
            f"{count(launches, 'kernel launch')}: rocprofv3 did not record kernels",
            "re-run rocprofv3 with --kernel-trace (or --pmc) so that dispatches are recorded",
        )
    counts = [(int(calls), "API calls")]
    for view, noun in (("memory_copies", "memory copies"), ("memory_allocations", "allocations")):
        if view in views:
            ((n,),) = con.execute(f"SELECT count(*) FROM {view}").fetchall()
            counts.append((int(n), noun))
    if not any(n for n, _ in counts):
        return InputError(
            path,
            "has no kernel dispatches in its kernels view, nor any other activity",
            "re-run rocprofv3 with --kernel-trace (or --pmc) so that dispatches are recorded",
        )
    return no_kernel_ran(path, held(counts), ROCPD_WIDEN)


ROCPROF_WIDEN = (
    "profile a range in which the program launches kernels (rocprof --trace-start, or the "
    "roctx range or kernel filter of the input file that selected none)"
)


def api_no_kernels(path: str, calls: dict[str, int], copies: int, remedy: str) -> InputError:
    """A trace with API calls (name -> count) and copies but no kernel: not recorded when a
    call launches kernels, else no kernel ran."""
    launches = sum(n for name, n in calls.items() if is_launch(name))
    if launches:
        return InputError(
            path,
            f"holds no kernel events, though its API trace holds "
            f"{count(launches, 'kernel launch')}: the profiler did not record kernels",
            "re-run rocprof with --hsa-trace (or --hip-trace) so that kernels are recorded",
        )
    what = held([(sum(calls.values()), "API calls"), (copies, "copies")])
    return no_kernel_ran(path, what, remedy)
