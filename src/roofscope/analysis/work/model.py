"""What a kernel computed and moved, in total over its calls, and who says so."""

from __future__ import annotations

import msgspec

from roofscope.catalogue.ceilings import is_integer

ALL = -1  # the key of the whole profile's work in counters.counter_work's result


class Work(msgspec.Struct, frozen=True):
    """Totals over all of a kernel's dispatches.

    ``flops`` maps a compute ceiling name (``fp32-vector``, ``fp16-matrix``, ...) to FLOPs
    (IOPs for the integer ones: ``int8-matrix``, ``int32-vector``, ...); None when the input
    cannot tell (no FLOP counters): unknown, never 0.
    ``bytes`` maps a memory level (``hbm``, ``l2``, ``vl1d``, ``lds``) to bytes; levels the
    input does not give are absent. ``rates`` holds, per quantity, the mean over dispatches
    of each dispatch's own rate (how rocprof-compute aggregates), where dispatches are known.
    """

    flops: dict[str, float] | None
    bytes: dict[str, float]
    source: str
    rates: dict[str, float] = msgspec.field(default_factory=dict)
    dispatches: int | None = None  # how many dispatches the counters covered
    time_ns: float | None = None  # their summed duration (counters only)
    # work from operators' shapes covers the dispatches that did an operator's work: the
    # time of those, which its rate is over; None: over all the kernel's dispatches
    rate_time_ns: float | None = None
    # the bytes count each buffer a kernel was given once, whatever part of it the kernel read:
    # an upper bound (Inductor's launchers, a compiler's kernel_num_gb; work/credible.py)
    bytes_bound: bool = False

    def time_weighted(self) -> dict[str, float]:
        """Per second of the covered dispatches' time: total / time (counters only)."""
        if not self.time_ns:
            return {}
        rates = {k: v / self.time_ns * 1e9 for k, v in self.bytes.items()}
        rates.update({k: v / self.time_ns * 1e9 for k, v in (self.flops or {}).items()})
        return rates

    def scaled(self, factor: float, source: str) -> Work:
        """The same work per call over ``factor`` times as many calls."""
        flops = None if self.flops is None else {k: v * factor for k, v in self.flops.items()}
        nbytes = {k: v * factor for k, v in self.bytes.items()}
        return Work(
            flops,
            nbytes,
            source,
            dict(self.rates),
            self.dispatches,
            self.time_ns,
            self.rate_time_ns,
        )

    @property
    def total_flops(self) -> float | None:
        """All floating-point work; None when no floating-point quantity is known (integer
        ops are not FLOPs and are left out)."""
        fp = [v for k, v in (self.flops or {}).items() if not is_integer(k)]
        return sum(fp) if fp else None

    @property
    def total_iops(self) -> float | None:
        """All integer work (IOPs); None when no integer quantity is known."""
        ints = [v for k, v in (self.flops or {}).items() if is_integer(k)]
        return sum(ints) if ints else None

    @property
    def main_ceiling(self) -> str | None:
        """The compute ceiling that applies: the floating-point data type and unit doing
        most of the FLOPs; for a kernel with no floating-point work, the integer one doing
        most of the IOPs. Floating-point work comes first because the integer ops of a
        floating-point kernel are mostly its address arithmetic: on Omniperf's MI200
        workload every ``benchmark_func<float|double|__half2>`` issues the same 1966080
        integer VALU instructions, 7.5 per FMA instruction at the lowest intensity."""
        if not self.flops:
            return None
        fp = {k: v for k, v in self.flops.items() if not is_integer(k) and v > 0}
        ints = {k: v for k, v in self.flops.items() if is_integer(k) and v > 0}
        pool = fp or ints
        if not pool:
            return None
        return max(pool.items(), key=lambda kv: (kv[1], kv[0]))[0]
