"""A wide rocprof-compute counter workload: about 300 dispatches of a batched GEMM on MI300X,
with rocprof-compute's full MI300X counter set, one column per counter, as rocprofv3 writes
``pmc_perf.csv`` in its csv mode (the MI350 vcopy workload's layout).

    python bench/gen_counter_workload.py OUT_FOLDER [--dispatches 301]

The counters are the 2,009 distinct ``Counter_Name`` values of the MI300X vcopy workload that
rocprof-compute 3.2.0 recorded through rocpd (corpus
amd/rocprof-compute-vcopy-2025/MI300X_A1_rocpd: 1,792 of them per-channel ``TCC_*[n]``), so the
table is as wide as a real MI300X run: 2,009 counters and 15 dispatch columns. Each dispatch's
counters are that vcopy dispatch's values times a whole factor of its kernel (ratios between
counters stay those of the real run); its duration is the vcopy duration times the same
factor. ``sysinfo.csv`` is the real one; ``profiling_config.yaml`` says csv output.
"""

from __future__ import annotations

import argparse
import csv
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

VCOPY = Path("/work/shared/corpus/amd/rocprof-compute-vcopy-2025/MI300X_A1_rocpd")
HEAD = (
    *("Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup"),
    *("Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR", "Wave_Size", "Kernel_Name"),
    *("Correlation_ID", "Kernel_ID"),
)
# (kernel name, factor on the vcopy dispatch's counters and duration, share of dispatches)
KERNELS = (
    ("Cijk_Alik_Bljk_HHS_BH_MT256x256x64_MI32x32x8x1_SN_GRVW8_K1_batched", 37, 5),
    ("Cijk_Alik_Bljk_HHS_BH_MT128x128x64_MI32x32x8x1_SN_GRVW8_K1_batched", 11, 8),
    ("Cijk_Ailk_Bljk_HHS_BH_MT128x64x32_MI16x16x16x1_SN_GRVW4_K1_batched", 6, 6),
    ("void at::native::elementwise_kernel<128, 4>(int, at::native::add_functor)", 2, 9),
    ("void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)", 3, 3),
)


@dataclass(frozen=True)
class Vcopy:
    """One dispatch of the real run: its launch columns, duration and counters in order."""

    launch: dict[str, str]
    duration_ns: int
    counters: dict[str, float]


def read_vcopy(folder: Path = VCOPY) -> Vcopy:
    """The first dispatch of the rocpd workload's long-format ``pmc_perf.csv``."""
    counters: dict[str, float] = {}
    launch: dict[str, str] = {}
    with (folder / "pmc_perf.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            if row["Dispatch_ID"] != "1":
                continue
            launch = launch or row
            counters.setdefault(row["Counter_Name"], float(row["Counter_Value"]))
    duration = int(launch["End_Timestamp"]) - int(launch["Start_Timestamp"])
    return Vcopy(launch, duration, counters)


def schedule(dispatches: int) -> Iterator[int]:
    """Kernel index of each dispatch: the shares repeated in a fixed interleaved order."""
    order = [k for k, (_, _, share) in enumerate(KERNELS) for _ in range(share)]
    for i in range(dispatches):
        yield order[(i * 7) % len(order)]


def rows(vcopy: Vcopy, dispatches: int) -> Iterator[list[object]]:
    start = int(vcopy.launch["Start_Timestamp"])
    for i, k in enumerate(schedule(dispatches)):
        name, factor, _ = KERNELS[k]
        end = start + vcopy.duration_ns * factor
        fixed = [i, *(vcopy.launch[c] for c in HEAD[1:9]), 64, name, i, k + 1]
        values = [_number(v * factor) for v in vcopy.counters.values()]
        yield [*fixed, start, end, *values]
        start = end + 2_000


def _number(value: float) -> object:
    return int(value) if value == int(value) else value


def write(out: Path, dispatches: int, vcopy_folder: Path = VCOPY) -> int:
    """Write the workload into ``out``; returns the number of columns of pmc_perf.csv."""
    vcopy = read_vcopy(vcopy_folder)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(vcopy_folder / "sysinfo.csv", out / "sysinfo.csv")
    config = (vcopy_folder / "profiling_config.yaml").read_text()
    config = config.replace("format_rocprof_output: rocpd", "format_rocprof_output: csv")
    (out / "profiling_config.yaml").write_text(config)
    header = [*HEAD, "Start_Timestamp", "End_Timestamp", *vcopy.counters]
    with (out / "pmc_perf.csv").open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows(vcopy, dispatches))
    return len(header)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--dispatches", type=int, default=301)
    parser.add_argument("--vcopy", type=Path, default=VCOPY)
    args = parser.parse_args()
    columns = write(args.out, args.dispatches, args.vcopy)
    print(f"{args.out}/pmc_perf.csv: {args.dispatches} dispatches, {columns} columns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
