"""Generate a synthetic rocprof v1 ``results.csv`` of N dispatches for benchmarks.

The file has the quoted header with ``DurationNs`` (layout c of formats-amd.md),
at least 250 distinct kernels with long C++ template names that contain commas,
Zipf-like call counts (a few kernels hold most launches, a long tail is rare) and
back-to-back timestamps on one GPU with small gaps, like a real trace.

    python bench/gen_results_csv.py OUT.csv --dispatches 4000000 [--seed 1]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

HEADER = (
    '"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr",'
    '"lds","scr","arch_vgpr","accum_vgpr","sgpr","wave_size","sig","obj",'
    '"DispatchNs","BeginNs","EndNs","CompleteNs","DurationNs"\n'
)

TYPES = ["float", "double", "__half", "hip_bfloat16", "int", "long", "HIP_vector_type<float, 4u>"]
OPS = ["gemm", "reduce", "scan", "transpose", "stencil", "softmax", "layernorm", "attention"]


def kernel_names(count: int, rng: random.Random) -> list[str]:
    """Distinct demangled C++ kernel names, most of them long templates with commas."""
    names: list[str] = []
    for i in range(count):
        op = OPS[i % len(OPS)]
        t1, t2 = rng.choice(TYPES), rng.choice(TYPES)
        tile = 2 ** (4 + i % 5)
        name = (
            f"void ns_{i // len(OPS)}::{op}_kernel<{t1}, {t2}, {tile}, {tile // 2}u, "
            f"ns::Policy<ns::Tile<{tile}, {tile}>, {t1}, true> >"
            f"({t1} const*, {t2}*, int, int, unsigned long, {t1}, ns::Epilogue<{t2}, {i}>, "
            f"ns::detail::Accessor<{t1}, ns::layout::RowMajor, {tile}u>) [clone .kd]"
        )
        names.append(name)
    return names


def zipf_weights(count: int, exponent: float = 1.1) -> list[float]:
    return [1.0 / (rank + 1) ** exponent for rank in range(count)]


def generate(out: Path, dispatches: int, kernels: int = 300, seed: int = 1) -> None:
    rng = random.Random(seed)
    names = kernel_names(kernels, rng)
    weights = zipf_weights(kernels)
    base_ns = {name: rng.randint(2_000, 2_000_000) for name in names}
    t = 1_915_914_098_823_546
    chunk = 50_000
    with out.open("w", encoding="utf-8", newline="") as f:
        f.write(HEADER)
        index = 0
        while index < dispatches:
            n = min(chunk, dispatches - index)
            picks = rng.choices(names, weights=weights, k=n)
            lines = []
            for name in picks:
                dur = max(1, int(base_ns[name] * rng.uniform(0.9, 1.1)))
                dispatch = t - rng.randint(5_000, 50_000)
                begin = t
                end = begin + dur
                lines.append(
                    f'{index},"{name}",8,0,{index},2046349,2046349,134217728,256,0,0,24,0,32,64,'
                    f'"0x0","0x7f28c7c855c0",{dispatch},{begin},{end},{end + 15_000},{dur}\n'
                )
                t = end + rng.randint(0, 4_000)
                index += 1
            f.write("".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--dispatches", type=int, default=4_000_000)
    parser.add_argument("--kernels", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    generate(args.out, args.dispatches, args.kernels, args.seed)


if __name__ == "__main__":
    main()
