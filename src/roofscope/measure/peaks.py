"""Peaks: measure the ceilings a GPU achieves (written as a ``--ceilings`` file by
:mod:`roofscope.measure.peaks_file`).

Every benchmark runs ``warmups`` runs that are thrown away, then ``repeats`` runs, each timed
by a pair of device events around it (after a synchronize), and keeps the median time; the
value is the work counted below divided by that median (SI units: B/s, FLOP/s).

- ``hbm-copy``: a device-to-device copy of 1 GiB (``dst.copy_(src)``). Counted: 2 x bytes
  (each byte is read once and written once).
- ``hbm-triad``: ``a = b + s*c`` over three 1 GiB fp32 arrays (``torch.add(b, c, alpha=s,
  out=a)``). Counted: 3 x bytes of one array (two read, one written). The ``hbm`` ceiling is
  the higher of copy and triad.
- ``l2-copy``: copies of a buffer a quarter of the L2 (source and destination then fill half
  of it), 64 back to back per timed run. Counted: 2 x bytes per copy. The gaps between the
  copies' launches are timed too, so this is a lower bound. Skipped when the L2 size is not
  readable.
- ``l2-read``: 64 windows of a quarter of the L2 each, shifted evenly over a buffer of half
  the L2, each summed by one reduction kernel (one launch, so no launch gaps; on an H200 the
  copies, each a few microseconds, reach less than HBM). The windows differ so that a block,
  which sums its slice of several windows, reads each address once and the L1 cannot serve
  them: with one window repeated (stride 0), ncu showed 87 % L1 hits. Counted: 64 x bytes of
  a window. The ``l2``
  ceiling is the higher of copy and read, and a cache level measured below ``hbm`` is not
  written (see :mod:`roofscope.measure.peaks_file`).
- ``DTYPE-matrix`` (fp64, fp32, tf32, fp16, bf16, fp8): an 8192 x 8192 x 8192 matrix product
  (on an H200, 16384 ran 4-11 % slower: the GPU holds its power limit longer). Counted:
  2*M*N*K FLOPs. fp32 runs with TF32 off and tf32 with it on
  (``torch.backends.cuda.matmul.allow_tf32``); fp8 is ``torch._scaled_mm`` on float8 e4m3
  operands with unit scales and a bf16 result, with fast accumulation where PyTorch offers it
  (the tensor cores' own accumulator, as fp8 training runs; the rate NVIDIA's peak is quoted
  at). A data type the device or PyTorch cannot
  multiply is skipped with the reason.
- ``DTYPE-vector`` (fp32, fp64): 2^26 elements, each through a chain of 512 dependent
  ``x = x*a + b`` fused into one kernel by ``torch.compile``. Counted: 2 FLOPs per step
  (one multiply and one add, whether or not the compiler emits them as one FMA), i.e.
  2 * elements * steps; the kernel moves 2 x elements x itemsize bytes, far below the work.

The arithmetic is pure and tested without a GPU; the measurement goes through a
:class:`Backend`, of which :class:`roofscope.measure.peaks_torch.TorchBackend` (``torch.cuda``: CUDA
and ROCm builds) is the real one.
"""

from __future__ import annotations

import importlib
import math
import statistics
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal, Protocol

import msgspec

from roofscope.errors import UsageError
from roofscope.model import words

Kind = Literal["compute", "memory"]

HBM_BYTES = 1 << 30
TRIAD_SCALAR = 3.0
L2_COPIES = 64
L2_READS = 64
MATRIX_N = 8192
MATRIX_DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")
VECTOR_ELEMENTS = 1 << 26
VECTOR_STEPS = 512
VECTOR_DTYPES = ("fp32", "fp64")


# --- the arithmetic ------------------------------------------------------------------------


def timed_runs(all_runs_s: Sequence[float], warmups: int) -> tuple[float, ...]:
    """The runs that count: all but the first ``warmups``."""
    if len(all_runs_s) <= warmups:
        raise ValueError(f"{len(all_runs_s)} runs leave none after {warmups} warm-ups")
    return tuple(all_runs_s[warmups:])


def rate(work: float, runs_s: Sequence[float]) -> float:
    """``work`` (bytes or FLOPs) per second of the median run."""
    median_s = statistics.median(runs_s)
    if not median_s > 0:
        raise ValueError(f"median run of {median_s} s is not a positive time")
    return work / median_s


def copy_bandwidth(nbytes: int, runs_s: Sequence[float]) -> float:
    """B/s of a copy of ``nbytes``: every byte read and written."""
    return rate(2 * nbytes, runs_s)


def triad_bandwidth(nbytes: int, runs_s: Sequence[float]) -> float:
    """B/s of ``a = b + s*c`` with arrays of ``nbytes`` each: two read, one written."""
    return rate(3 * nbytes, runs_s)


def matmul_flops(m: int, n: int, k: int, runs_s: Sequence[float]) -> float:
    """FLOP/s of an (M x K) by (K x N) product: one multiply and one add per M*N*K."""
    return rate(2 * m * n * k, runs_s)


def fma_flops(elements: int, steps: int, runs_s: Sequence[float]) -> float:
    """FLOP/s of ``steps`` multiply-adds on each of ``elements``: 2 FLOPs each."""
    return rate(2 * elements * steps, runs_s)


# --- results -------------------------------------------------------------------------------


class Measurement(msgspec.Struct, frozen=True):
    name: str  # the benchmark: "hbm-copy", "hbm-triad", "l2-copy", "bf16-matrix", ...
    kind: Kind
    value: float  # B/s (memory) or FLOP/s (compute), at the median run
    repeats: int
    runs_s: tuple[float, ...]  # the timed runs, warm-ups left out
    method: str
    dtype: str | None = None  # compute: one of DTYPES
    unit: str | None = None  # compute: "vector" | "matrix"
    level: str | None = None  # memory: one of LEVELS

    def __post_init__(self) -> None:
        if not (self.value > 0 and math.isfinite(self.value)):
            raise ValueError(f"{self.name}: {self.value} is not a positive finite rate")

    @property
    def ceiling(self) -> str:
        """The ``[ceilings]`` key this is a peak of: ``hbm``, ``bf16-matrix``, ..."""
        return str(self.level) if self.kind == "memory" else f"{self.dtype}-{self.unit}"


class Skipped(msgspec.Struct, frozen=True):
    name: str  # the benchmark, as in Measurement
    reason: str  # one line: why it did not run


class Unsupported(Exception):
    """Raised by a backend for a benchmark this device or PyTorch cannot run."""


class DeviceInfo(msgspec.Struct, frozen=True):
    name: str  # as the runtime reports it, e.g. "NVIDIA H200"
    runtime: str  # "CUDA 12.4", "HIP 6.2.41133"
    framework: str  # "PyTorch 2.5.1"
    arch: str | None = None  # "sm_90", "gfx942:sramecc+:xnack-"
    driver: str | None = None  # None when not readable
    clock_mhz: int | None = None  # SM/shader clock when info() was called, if readable
    compute_units: int | None = None  # SMs or CUs the runtime shows for this device
    l2_bytes: int | None = None
    memory_bytes: int | None = None


class Prepared(msgspec.Struct, frozen=True):
    operands: Any  # whatever the backend needs to run the benchmark again
    note: str  # how it runs, for the method text: "torch.matmul, float16"


# --- the backend ---------------------------------------------------------------------------


class Backend(Protocol):
    def use(self, device: int) -> None: ...
    def info(self) -> DeviceInfo: ...
    def allocate(self, nbytes: int) -> Any: ...  # fp32 elements, nbytes a multiple of 4
    def copy(self, dst: Any, src: Any) -> None: ...
    def reread(self, src: Any, window: int, times: int) -> None: ...  # times windows, 1 kernel
    def triad(self, a: Any, b: Any, c: Any, scalar: float) -> None: ...
    def matrices(self, n: int, dtype: str) -> Prepared: ...  # raises Unsupported
    def matmul(self, operands: Any) -> None: ...
    def vectors(self, elements: int, steps: int, dtype: str) -> Prepared: ...  # Unsupported
    def fma(self, operands: Any) -> None: ...
    def synchronize(self) -> None: ...
    def elapsed_s(self, op: Callable[[], None]) -> float: ...  # one run, timed by events


# --- the measurement -----------------------------------------------------------------------


class _Timing(msgspec.Struct, frozen=True):
    warmups: int
    repeats: int


def measure(
    backend: Backend, *, device: int = 0, warmups: int = 3, repeats: int = 10
) -> list[Measurement | Skipped]:
    """Every benchmark on ``device``, in order: memory, then matrix, then vector compute."""
    if warmups < 0:
        raise UsageError(f"--warmups {warmups}: give 0 or more")
    if repeats < 1:
        raise UsageError(f"--repeats {repeats}: give 1 or more")
    backend.use(device)
    info = backend.info()
    timing = _Timing(warmups, repeats)
    benchmarks: list[tuple[str, Callable[[], Measurement | Skipped]]] = [
        ("hbm-copy", partial(_hbm_copy, backend, timing)),
        ("hbm-triad", partial(_hbm_triad, backend, timing)),
        ("l2-copy", partial(_l2_copy, backend, timing, info.l2_bytes)),
        ("l2-read", partial(_l2_read, backend, timing, info.l2_bytes)),
        *((f"{d}-matrix", partial(_matrix, backend, timing, d)) for d in MATRIX_DTYPES),
        *((f"{d}-vector", partial(_vector, backend, timing, d)) for d in VECTOR_DTYPES),
    ]
    return [_guarded(name, run) for name, run in benchmarks]


def _guarded(name: str, run: Callable[[], Measurement | Skipped]) -> Measurement | Skipped:
    """The benchmark's result, or why the backend could not run it."""
    try:
        return run()
    except Unsupported as e:
        return Skipped(name, str(e))


def _runs(backend: Backend, op: Callable[[], None], timing: _Timing) -> tuple[float, ...]:
    backend.synchronize()
    times = [backend.elapsed_s(op) for _ in range(timing.warmups + timing.repeats)]
    return timed_runs(times, timing.warmups)


def _memory(
    name: str, level: str, value: float, runs: tuple[float, ...], method: str
) -> Measurement:
    return Measurement(name, "memory", value, len(runs), runs, method, level=level)


def _hbm_copy(backend: Backend, timing: _Timing) -> Measurement:
    src, dst = backend.allocate(HBM_BYTES), backend.allocate(HBM_BYTES)
    runs = _runs(backend, lambda: backend.copy(dst, src), timing)
    method = f"device-to-device copy of {_size(HBM_BYTES)}; counts 2 x bytes (read + write)"
    return _memory("hbm-copy", "hbm", copy_bandwidth(HBM_BYTES, runs), runs, method)


def _hbm_triad(backend: Backend, timing: _Timing) -> Measurement:
    a, b, c = (backend.allocate(HBM_BYTES) for _ in range(3))
    runs = _runs(backend, lambda: backend.triad(a, b, c, TRIAD_SCALAR), timing)
    method = (
        f"triad a = b + {words.plain(TRIAD_SCALAR)}*c over three {_size(HBM_BYTES)} fp32 arrays; "
        "counts 3 x bytes of one array (2 read, 1 written)"
    )
    return _memory("hbm-triad", "hbm", triad_bandwidth(HBM_BYTES, runs), runs, method)


_NO_L2 = "the L2 size is unknown (not in the device properties)"


def _quarter(l2_bytes: int) -> int:
    """A quarter of the L2, in whole 256-byte lines."""
    return l2_bytes // 4 // 256 * 256


def _l2_copy(backend: Backend, timing: _Timing, l2_bytes: int | None) -> Measurement | Skipped:
    if not l2_bytes:
        return Skipped("l2-copy", _NO_L2)
    nbytes = _quarter(l2_bytes)
    src, dst = backend.allocate(nbytes), backend.allocate(nbytes)

    def op() -> None:
        for _ in range(L2_COPIES):
            backend.copy(dst, src)

    runs = _runs(backend, op, timing)
    method = (
        f"{L2_COPIES} back-to-back copies of {_size(nbytes)} (a quarter of the "
        f"{_size(l2_bytes)} L2) per run; counts 2 x bytes per copy; launch gaps included, "
        "so a lower bound"
    )
    return _memory("l2-copy", "l2", copy_bandwidth(nbytes * L2_COPIES, runs), runs, method)


def _l2_read(backend: Backend, timing: _Timing, l2_bytes: int | None) -> Measurement | Skipped:
    if not l2_bytes:
        return Skipped("l2-read", _NO_L2)
    nbytes = _quarter(l2_bytes)
    src = backend.allocate(2 * nbytes)
    runs = _runs(backend, lambda: backend.reread(src, nbytes, L2_READS), timing)
    method = (
        f"one reduction kernel summing {L2_READS} windows of {_size(nbytes)} (a quarter of the "
        f"{_size(l2_bytes)} L2) shifted over {_size(2 * nbytes)}; counts {L2_READS} x bytes"
    )
    return _memory("l2-read", "l2", rate(nbytes * L2_READS, runs), runs, method)


def _matrix(backend: Backend, timing: _Timing, dtype: str) -> Measurement:
    name = f"{dtype}-matrix"
    prepared = backend.matrices(MATRIX_N, dtype)  # raises Unsupported
    runs = _runs(backend, lambda: backend.matmul(prepared.operands), timing)
    n = MATRIX_N
    method = f"{n}x{n}x{n} matrix product ({prepared.note}); counts 2*M*N*K FLOPs"
    value = matmul_flops(n, n, n, runs)
    return Measurement(name, "compute", value, len(runs), runs, method, dtype=dtype, unit="matrix")


def _vector(backend: Backend, timing: _Timing, dtype: str) -> Measurement:
    name = f"{dtype}-vector"
    prepared = backend.vectors(VECTOR_ELEMENTS, VECTOR_STEPS, dtype)  # raises Unsupported
    runs = _runs(backend, lambda: backend.fma(prepared.operands), timing)
    method = (
        f"{VECTOR_ELEMENTS} elements x {VECTOR_STEPS} dependent x = x*a + b ({prepared.note}); "
        "counts 2 FLOPs per step"
    )
    value = fma_flops(VECTOR_ELEMENTS, VECTOR_STEPS, runs)
    return Measurement(name, "compute", value, len(runs), runs, method, dtype=dtype, unit="vector")


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{words.sig(nbytes / scale, 6)} {unit}"
    return f"{nbytes} B"


# --- PyTorch -------------------------------------------------------------------------------


def no_gpu_reason() -> str | None:
    """Why ``roofscope peaks`` cannot measure here, in one line; None when it can."""
    try:
        torch = _torch()
    except ImportError:
        return "PyTorch is not installed: pip install torch (a CUDA or ROCm build)"
    if not torch.cuda.is_available():
        return "no GPU visible to PyTorch (torch.cuda.is_available() is False)"
    return None


def _torch() -> Any:
    """PyTorch, imported only when a GPU is to be measured."""
    return importlib.import_module("torch")
