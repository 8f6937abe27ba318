"""The benchmarks of :mod:`roofscope.measure.peaks` on PyTorch's ``torch.cuda`` (CUDA on NVIDIA, HIP
on AMD builds): allocation, copies, the triad, matrix products per data type (fp8 through
``torch._scaled_mm``), a compiled FMA chain, and event timing. Imported only when a GPU is
measured."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import msgspec

from roofscope.errors import UsageError
from roofscope.measure.peaks import DeviceInfo, Prepared, Unsupported, _size, _torch
from roofscope.model import words


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:200]


class _Matmul(msgspec.Struct, frozen=True):
    a: Any
    b: Any
    out: Any  # None for fp8, whose result torch._scaled_mm allocates
    tf32: bool
    scale: Any = None  # fp8: the unit scale of both operands
    fast: bool = False  # fp8: the tensor cores' own accumulation (use_fast_accum)


class _Chain(msgspec.Struct, frozen=True):
    fn: Any  # the compiled x -> x*a + b, VECTOR_STEPS times
    x: Any


class TorchBackend:
    """The benchmarks on ``torch.cuda``, which is CUDA on NVIDIA and HIP on AMD builds."""

    def __init__(self) -> None:
        self._t = _torch()
        self._dev: Any = None
        self._index = 0

    def use(self, device: int) -> None:
        count = int(self._t.cuda.device_count())
        if not 0 <= device < count:
            raise UsageError(
                f"--device {device}: PyTorch sees {words.count(count, 'GPU')}; "
                f"give 0 to {count - 1}"
            )
        self._t.cuda.set_device(device)
        self._dev, self._index = self._t.device("cuda", device), device

    def info(self) -> DeviceInfo:
        t = self._t
        props = t.cuda.get_device_properties(self._index)
        hip = getattr(t.version, "hip", None)
        arch = props.gcnArchName if hip else f"sm_{props.major}{props.minor}"
        return DeviceInfo(
            name=str(props.name),
            runtime=f"HIP {hip}" if hip else f"CUDA {t.version.cuda}",
            framework=f"PyTorch {t.__version__}",
            arch=str(arch),
            driver=_driver(self._index, hip=bool(hip)),
            clock_mhz=_clock_mhz(t, self._index),
            compute_units=int(props.multi_processor_count),
            l2_bytes=int(getattr(props, "L2_cache_size", 0)) or None,
            memory_bytes=int(props.total_memory),
        )

    def allocate(self, nbytes: int) -> Any:
        try:
            return self._t.ones(nbytes // 4, dtype=self._t.float32, device=self._dev)
        except self._t.cuda.OutOfMemoryError as e:
            raise Unsupported(f"cannot allocate {_size(nbytes)} ({_first_line(e)})") from None

    def copy(self, dst: Any, src: Any) -> None:
        dst.copy_(src)

    def reread(self, src: Any, window: int, times: int) -> None:
        n = window // 4  # fp32 elements
        shift = (src.numel() - n) // max(times - 1, 1)
        src.as_strided((times, n), (shift, 1)).sum(dim=1)

    def triad(self, a: Any, b: Any, c: Any, scalar: float) -> None:
        self._t.add(b, c, alpha=scalar, out=a)

    def matrices(self, n: int, dtype: str) -> Prepared:
        t = self._t
        if dtype == "fp8":
            return self._fp8(n)
        if dtype == "tf32":
            self._check_tf32()
        kind = {
            "fp64": t.float64,
            "fp32": t.float32,
            "tf32": t.float32,
            "fp16": t.float16,
            "bf16": t.bfloat16,
        }[dtype]
        try:
            a, b = (t.randn(n, n, device=self._dev, dtype=kind) for _ in range(2))
            ops = _Matmul(a, b, t.empty(n, n, device=self._dev, dtype=kind), dtype == "tf32")
            self.matmul(ops)
        except (RuntimeError, TypeError) as e:  # OutOfMemoryError is a RuntimeError
            raise Unsupported(f"torch.matmul on {kind} failed: {_first_line(e)}") from None
        tf32 = {"fp32": ", TF32 off", "tf32": ", TF32 on"}.get(dtype, "")
        return Prepared(ops, f"torch.matmul, {kind}{tf32}")

    def _check_tf32(self) -> None:
        if getattr(self._t.version, "hip", None):
            raise Unsupported("allow_tf32 is a CUDA setting; TF32 is not measured on ROCm")
        major, minor = self._t.cuda.get_device_capability(self._index)
        if major < 8:
            raise Unsupported(
                f"TF32 needs compute capability 8.0 or newer; this is {major}.{minor}"
            )

    def _fp8(self, n: int) -> Prepared:
        t = self._t
        kinds = [getattr(t, k) for k in ("float8_e4m3fn", "float8_e4m3fnuz") if hasattr(t, k)]
        if not kinds or not hasattr(t, "_scaled_mm"):
            raise Unsupported(f"PyTorch {t.__version__} has no float8 matrix product")
        failures = []
        for kind in kinds:  # NVIDIA and gfx950 take e4m3fn, gfx942 e4m3fnuz: the device says
            try:
                a = t.randn(n, n, device=self._dev).to(kind)
                b = t.randn(n, n, device=self._dev).to(kind).t()  # column-major, as required
                one = t.ones((), device=self._dev, dtype=t.float32)
            except (RuntimeError, TypeError, ValueError) as e:
                failures.append(f"{kind}: {_first_line(e)}")
                continue
            for fast in (True, False):  # fast accumulation where this PyTorch has it
                try:
                    ops = _Matmul(a, b, None, False, one, fast)
                    self.matmul(ops)
                    accumulate = ", fast accumulation" if fast else ""
                    note = f"torch._scaled_mm, {kind}, unit scales, bf16 result{accumulate}"
                    return Prepared(ops, note)
                except (RuntimeError, TypeError, ValueError) as e:
                    failures.append(f"{kind}{' fast' if fast else ''}: {_first_line(e)}")
        raise Unsupported("torch._scaled_mm failed: " + "; ".join(failures))

    def matmul(self, operands: Any) -> None:
        t, ops = self._t, operands
        if ops.scale is not None:
            t._scaled_mm(
                ops.a,
                ops.b,
                scale_a=ops.scale,
                scale_b=ops.scale,
                out_dtype=t.bfloat16,
                use_fast_accum=ops.fast,
            )
            return
        held = t.backends.cuda.matmul.allow_tf32
        t.backends.cuda.matmul.allow_tf32 = ops.tf32
        try:
            t.matmul(ops.a, ops.b, out=ops.out)
        finally:
            t.backends.cuda.matmul.allow_tf32 = held

    def vectors(self, elements: int, steps: int, dtype: str) -> Prepared:
        t = self._t
        kind = {"fp32": t.float32, "fp64": t.float64}[dtype]
        try:
            x = t.ones(elements, device=self._dev, dtype=kind)
            fn = t.compile(_fma_chain(steps), fullgraph=True, dynamic=False)
            fn(x)  # compiles now, not in the first warm-up
        except Exception as e:  # torch.compile raises many kinds (no Triton, no compiler)
            raise Unsupported(f"torch.compile of the FMA chain failed: {_first_line(e)}") from None
        return Prepared(_Chain(fn, x), f"{kind}, one kernel from torch.compile")

    def fma(self, operands: Any) -> None:
        operands.fn(operands.x)

    def synchronize(self) -> None:
        self._t.cuda.synchronize()

    def elapsed_s(self, op: Callable[[], None]) -> float:
        cuda = self._t.cuda
        start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        cuda.synchronize()
        start.record()
        op()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1e3  # elapsed_time is in ms


def _fma_chain(steps: int) -> Callable[[Any], Any]:
    """x -> x*a + b, ``steps`` times; a and b keep x near 1 (no overflow, no denormals)."""

    def chain(x: Any) -> Any:
        for _ in range(steps):
            x = x * 0.999 + 0.001
        return x

    return chain


def _clock_mhz(t: Any, index: int) -> int | None:
    """The SM clock now (torch.cuda.clock_rate needs pynvml or amdsmi), or None."""
    try:
        return int(t.cuda.clock_rate(index))
    except Exception:  # not readable: the library is missing or the query is refused
        return None


def _driver(index: int, *, hip: bool) -> str | None:
    """The kernel driver's version from NVML or AMD SMI when their Python packages are here."""
    try:
        if hip:
            smi = importlib.import_module("amdsmi")
            smi.amdsmi_init()
            handle = smi.amdsmi_get_processor_handles()[index]
            return str(smi.amdsmi_get_gpu_driver_info(handle)["driver_version"])
        nvml = importlib.import_module("pynvml")
        nvml.nvmlInit()
        version = nvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # not readable: no package, no permission, another API version
        return None
