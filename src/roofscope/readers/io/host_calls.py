"""What a host-side call or range means for the GPU's idle time, by its name: the one place
every reader that fills ``host_ranges`` (Kineto, Nsight Systems CSV and SQLite, rocprofv3,
rocpd) asks.

- :data:`SYNC`: runtime/driver calls that hold the host until the device has done (device,
  stream, event and context synchronisations; the copies without ``Async``) -> kind "sync".
- :data:`COMPILE_CALL`: runtime/driver calls that compile or load device code (module loads,
  which JIT the PTX/code object they are given; NVRTC/HIPRTC compiles; linker runs) and
  :data:`COMPILE_RANGE`: NVTX/annotation ranges a compiler names itself (nvFuser, TorchDynamo/
  Inductor) -> kind "compile". Execution ranges (XLA's ``TSL:XlaModule``, ``Torch-Compiled
  Region``) are not compilation.
- :data:`LAUNCH`: kernel launch calls; :data:`DEVICE_SYNC`: the device/stream/context
  synchronisations a program may place after each launch (``diagnosis/sync_per_launch.py``).

Names may carry a version suffix (``cuLaunchKernel_v7000`` in some exports, ``_v2`` driver
entry points): the patterns accept ``_v<digits>`` at the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from roofscope.model.profile import Profile
from roofscope.readers.io.batches import HOST_RANGE_COLUMNS, fits, insert_rows

SYNC_KIND = "sync"
COMPILE_KIND = "compile"
LOADER_KIND = "data-loader"

_V = r"(?:_v\d+)?$"

# copies without Async hold the host until done (cudaMemcpy, hipMemcpyWithStream,
# cuMemcpyDtoH_v2): while the host waits in one it launches nothing
SYNC = re.compile(
    r"^(?:cuda|hip|cu)(?:(?:Device|Stream|Event|Ctx)Synchronize"
    r"|Memcpy(?:WithStream|2D|3D|Peer|ToSymbol|FromSymbol|[DHA]to[DHA])?)" + _V
)

# synchronisations of the whole device or a stream: the ones a launch-then-wait loop uses
DEVICE_SYNC = re.compile(r"^(?:cuda|hip|cu)(?:Device|Stream|Ctx)Synchronize" + _V)

# kernel launches of the runtime and driver APIs (not graph launches: a graph replays many)
LAUNCH = re.compile(
    r"^(?:(?:cuda|hip)(?:LaunchKernel(?:ExC|Ex)?|LaunchCooperativeKernel(?:MultiDevice)?"
    r"|ModuleLaunchKernel|ExtModuleLaunchKernel|HccModuleLaunchKernel|ExtLaunchKernel"
    r"|ModuleLaunchCooperativeKernel)"
    r"|cu(?:LaunchKernel(?:Ex)?|LaunchCooperativeKernel))" + _V
)

# device code built or loaded while the program runs: cuModuleLoad (JITs PTX), cuModuleLoadData,
# cuModuleLoadDataEx, cuModuleLoadFatBinary, cuLibraryLoadData, hipModuleLoad*, the NVRTC/HIPRTC
# compiles and the JIT linkers
COMPILE_CALL = re.compile(
    r"^(?:cu|hip)Module(?:Load|LoadData|LoadDataEx|LoadFatBinary)"
    + _V
    + r"|^cuLibraryLoad(?:Data|FromFile)"
    + _V
    + r"|^(?:nvrtc|hiprtc)CompileProgram$"
    + r"|^(?:cu|hiprtc)LinkComplete"
    + _V
)

# ranges a JIT compiler opens around its own compilation: nvFuser (CompiledKernel::compile,
# FusionExecutor::compileFusion, KernelExecutor::compile, FusionKernelRuntime::compileFusion
# Parallel), TorchDynamo/Inductor's timed phases (torch._dynamo..., _compile.compile_inner,
# compile_fx*, fx_codegen_and_compile, async_compile.wait, OutputGraph.call_user_compiler)
COMPILE_RANGE = re.compile(
    r"CompiledKernel::compile|FusionExecutor::compileFusion|KernelExecutor::compile\b"
    r"|FusionKernelRuntime::compileFusionParallel"
    r"|^torch\._dynamo|^_compile\.compile_inner|^compile_fx|^fx_codegen_and_compile"
    r"|^async_compile\.wait|^OutputGraph\.call_user_compiler"
)


def call_kind(name: str) -> str | None:
    """The host_ranges kind of a runtime/driver call by its name; None for any other call."""
    if SYNC.match(name):
        return SYNC_KIND
    if COMPILE_CALL.match(name):
        return COMPILE_KIND
    return None


def range_kind(name: str) -> str | None:
    """The host_ranges kind of an NVTX/annotation range by its name ("compile" or None)."""
    return COMPILE_KIND if COMPILE_RANGE.search(name) else None


AFTER_LAUNCH_KIND = "sync-after-launch"
# calls that only read the runtime's error state: an error-checking macro puts one between a
# launch and its synchronisation, which still directly follows the launch
_QUERY = re.compile(r"^(?:cuda|hip)(?:GetLastError|PeekAtLastError)" + _V)


def is_query(name: str) -> bool:
    """Whether a call only reads the runtime's error state (skipped between a launch and
    the synchronisation after it)."""
    return _QUERY.match(name) is not None


Call = tuple[int, int, int, str]  # (thread id, start_ns, end_ns, name)


def syncs_after_launch(calls: Iterable[Call]) -> list[tuple[int, int, str]]:
    """The device/stream synchronisations (start_ns, end_ns, name) that are the next runtime
    call after a kernel launch on the same thread (error queries between them skipped)."""
    last: dict[int, str] = {}  # per thread, the last call that was not an error query
    found: list[tuple[int, int, str]] = []
    for tid, start, end, name in sorted(calls, key=lambda c: (c[0], c[1])):
        if is_query(name):
            continue
        if DEVICE_SYNC.match(name) and LAUNCH.match(last.get(tid, "")):
            found.append((start, end, name))
        last[tid] = name
    return found


def insert_ranges(
    profile: Profile, source: int, ranges: Iterable[tuple[str, str, int, int]]
) -> int:
    """Host ranges (kind, name, start_ns, end_ns) under ``source``; how many were kept (a time
    past 64 bits is left out)."""
    rows = [(source, k, n[:200], a, b) for k, n, a, b in ranges if fits(a) and fits(b)]
    insert_rows(profile, "host_ranges", HOST_RANGE_COLUMNS, rows)
    return len(rows)


def call_ranges(calls: Sequence[Call]) -> list[tuple[str, str, int, int]]:
    """The host ranges (kind, name, start_ns, end_ns) of an API trace's calls: its blocking
    calls ("sync"), its compiles and module loads ("compile"), and the synchronisations that
    directly follow a launch (AFTER_LAUNCH_KIND)."""
    ranges = [(k, n, a, b) for _, a, b, n in calls if (k := call_kind(n)) is not None]
    after = syncs_after_launch(calls)
    return ranges + [(AFTER_LAUNCH_KIND, n, a, b) for a, b, n in after]


def per_name(calls: Sequence[Call]) -> list[tuple[str, int, float]]:
    """The calls per name (name, calls, total_ns), as an "api" activity summary holds them."""
    counts: dict[str, list[int]] = {}
    for _, start, end, name in calls:
        seen = counts.setdefault(name, [0, 0])
        seen[0] += 1
        seen[1] += end - start
    return [(n, c, float(t)) for n, (c, t) in sorted(counts.items())]
