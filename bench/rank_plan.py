"""The kernel mix of a generated many-rank job: which kernels, how often, how long, when.

Every number a generated file holds is decided here, with numpy's seeded generator, so a test
can check a reader against these arrays instead of against roofscope's own output.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

ZIPF_EXPONENT = 1.1  # call counts: kernel i (0-based) gets a share proportional to 1/(i+1)^1.1
MEAN_RANGE_NS = (2_000, 3_000_000)  # each kernel's mean duration, log-uniform in this range
SPREAD_SIGMA = 0.25  # each dispatch: its kernel's mean times a log-normal factor (sigma 0.25)
GAP_RANGE_NS = (1_000, 20_000)  # idle time before each dispatch, uniform

_DTYPES = ("float", "c10::Half", "c10::BFloat16", "double")
_FUNCTORS = ("CUDAFunctor_add", "MulFunctor", "GeluCUDAKernelImpl", "sigmoid_kernel_cuda")
_FUNCTORS += ("AbsFunctor", "FillFunctor", "silu_kernel", "div_true_kernel_cuda")
# per family, the template arguments that tell its kernels apart (the shortest bounds
# the number of distinct kernels: _DISTINCT)
_GEMM = list(product((64, 128, 256), (32, 64, 128, 256), (16, 32, 64), ("SB", "HHS", "BBS")))
_ELEMENTWISE = list(product(_FUNCTORS, _DTYPES, (2, 3, 4)))
_REDUCE = list(product((128, 256, 512), (1, 2, 4), _DTYPES, ("MeanOps", "NormTwoOps")))
_NCCL = list(
    product(("AllReduce", "AllGather", "ReduceScatter"), ("f32", "bf16", "f16", "f64", "i32"))
)
_NCCL = [(c, t, a) for (c, t), a in product(_NCCL, ("RING_LL", "RING_LL128", "TREE_LL"))]
_NCCL += [(c, t, a.replace("LL", "SIMPLE")) for c, t, a in _NCCL]
_CONV = list(
    product(("fwd", "bwd", "wrw"), ("nhwc", "nchw"), ("fp32", "fp16", "bf16"), (32, 64, 128, 256))
)
_BLIT = ("copyBuffer", "copyBufferAligned", "fillBufferAligned", "copyBufferRect", "fillImage")
_DISTINCT = len(_BLIT) + 5 * min(map(len, (_GEMM, _ELEMENTWISE, _REDUCE, _NCCL, _CONV)))


@dataclass(frozen=True)
class Catalogue:
    names: tuple[str, ...]
    mean_ns: np.ndarray  # float64 per kernel
    grid: np.ndarray  # int64 work-items per kernel (x; y = z = 1)
    block: np.ndarray  # int64 work-group size per kernel


@dataclass(frozen=True)
class RankPlan:
    kernel: np.ndarray  # int64 kernel index per dispatch, in launch order
    start_ns: np.ndarray  # int64
    end_ns: np.ndarray  # int64
    grid: np.ndarray
    block: np.ndarray

    def totals(self, kernels: int) -> tuple[np.ndarray, np.ndarray]:
        """Calls and total ns per kernel index (int64, exact)."""
        calls = np.bincount(self.kernel, minlength=kernels).astype(np.int64)
        total = np.zeros(kernels, dtype=np.int64)
        np.add.at(total, self.kernel, self.end_ns - self.start_ns)
        return calls, total


def _family(i: int) -> str:
    """The i-th kernel name: the families of a training or HPC job, in turn; the few ROCclr
    blit kernels first."""
    if i < len(_BLIT):
        return f"__amd_rocclr_{_BLIT[i]}"
    n = (i - len(_BLIT)) // 5
    family = (i - len(_BLIT)) % 5
    if family == 0:
        m, t, d, dt = _GEMM[n % len(_GEMM)]
        return f"Cijk_Ailk_Bljk_{dt}_BH_MT{m}x{t}x{d}_MI32x32x8x1_SN_1LDSB1_GRVW2_WG32_8_1"
    if family == 1:
        f, d, arity = _ELEMENTWISE[n % len(_ELEMENTWISE)]
        array = f"at::detail::Array<char*, {arity}>"
        return (
            f"void at::native::vectorized_elementwise_kernel<4, at::native::{f}<{d}>, {array} >"
            f"(int, at::native::{f}<{d}>, {array})"
        )
    if family == 2:
        b, vt, d, op = _REDUCE[n % len(_REDUCE)]
        ops = f"at::native::{op}<{d}, float, float, float>"
        red = f"at::native::ReduceOp<{d}, {ops}, unsigned int, {d}, 4>"
        return f"void at::native::reduce_kernel<{b}, {vt}, {red} >({red})"
    if family == 3:
        c, t, a = _NCCL[n % len(_NCCL)]
        return f"ncclDevKernel_{c}_Sum_{t}_{a}(ncclDevKernelArgsStorage<4096ul>)"
    way, layout, t, tile = _CONV[n % len(_CONV)]
    return f"igemm_{way}_gtcx_{layout}_{t}_bx0_ex1_bt{tile}x128x32_wt32x32x8_ws1x1_wv2x2"


def kernel_catalogue(kernels: int, seed: int) -> Catalogue:
    rng = np.random.default_rng([seed, 0])
    lo, hi = np.log(MEAN_RANGE_NS[0]), np.log(MEAN_RANGE_NS[1])
    mean = np.exp(rng.uniform(lo, hi, kernels))
    block = 64 << rng.integers(0, 5, kernels)  # 64 .. 1024
    grid = block * rng.integers(1, 1 << 14, kernels)
    names = tuple(_family(i) for i in range(kernels))
    if len(set(names)) != kernels:
        raise ValueError(f"{kernels} kernels: the name families give at most {_DISTINCT}")
    return Catalogue(names, mean, grid, block)


def call_counts(dispatches: int, kernels: int) -> np.ndarray:
    """Zipf shares of ``dispatches`` over ``kernels``, rounded by largest remainder so the
    counts sum to ``dispatches`` exactly (a kernel may get 0 calls on a small rank)."""
    weight = 1.0 / np.arange(1, kernels + 1) ** ZIPF_EXPONENT
    exact = dispatches * weight / weight.sum()
    counts = np.floor(exact).astype(np.int64)
    short = dispatches - int(counts.sum())
    counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts


def rank_plan(
    cat: Catalogue, dispatches: int, rank: int, seed: int, *, slow: float, quantum_ns: int
) -> RankPlan:
    """One rank's dispatches: kernels in random order, durations and gaps rounded to
    ``quantum_ns`` (1 for rocpd's integer ns, 1000 for Kineto's integer us), ``slow`` times
    as long on a straggler, back to back on one queue."""
    rng = np.random.default_rng([seed, 1, rank])
    kernel = rng.permutation(
        np.repeat(np.arange(len(cat.names)), call_counts(dispatches, len(cat.names)))
    )
    factor = rng.lognormal(0.0, SPREAD_SIGMA, dispatches) * slow
    dur = np.maximum(quantum_ns, np.round(cat.mean_ns[kernel] * factor / quantum_ns) * quantum_ns)
    gap = rng.integers(GAP_RANGE_NS[0] // quantum_ns, GAP_RANGE_NS[1] // quantum_ns + 1, dispatches)
    dur, gap = dur.astype(np.int64), gap.astype(np.int64) * quantum_ns
    t0 = 1_915_914_098_849_000 + rank * 137_000  # the ranks start within a few ms of each other
    start = t0 + np.cumsum(gap) + np.concatenate(([0], np.cumsum(dur)[:-1]))
    return RankPlan(kernel.astype(np.int64), start, start + dur, cat.grid, cat.block)
