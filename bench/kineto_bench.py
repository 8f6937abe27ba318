"""A large PyTorch profiler (Kineto) trace: roofscope against HolisticTraceAnalysis and a plain
``json.load`` loop.

    python bench/kineto_bench.py [--events 3000000] [--hta-python PYTHON] [--repeat 1]
                                 [--out RESULTS.json] [--names 40] [--whole-us]
                                 [--write-only TRACE[.gz]]

Issue 41's 1 M-kernel trace (10 names x 100,000 kernels, integer µs, gzipped):
``--events 5000000 --names 10 --whole-us --write-only /tmp/k1m.pt.trace.json.gz``.

Writes a Kineto trace of ``--events`` events (2023+ layout: cpu_op, cuda_runtime launch, ac2g
flow start and finish, and the kernel on its stream, i.e. five events per kernel launch, 40
distinct kernels on 4 streams, timestamps in µs with three decimals relative to
baseTimeNanoseconds, about 1 GB of JSON for 3 M events), then runs, taking turns:

- ``roofscope``: ``roofscope analyze TRACE --json`` (the full check-up);
- ``hta``: HolisticTraceAnalysis' ``get_gpu_kernel_breakdown()`` on the same file (needs a
  Python with HTA installed: ``--hta-python``; skipped without one);
- ``json-load``: ``json.load`` of the whole file and a loop summing ``dur`` per kernel name.

Reports wall seconds, the largest process's peak RSS and the process tree's peak RSS, with
the ratios to HTA and to the file size. Issue targets: faster than HTA, peak RSS under 2x
the file size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from measure import take_turns  # noqa: E402

BASE_NS = 1_711_964_646_000_000_000
JSON_CODE = """\
import json, sys
with open(sys.argv[1]) as f:
    doc = json.load(f)
totals = {}
for e in doc["traceEvents"]:
    if e.get("cat") == "kernel":
        t = totals.setdefault(e["name"], [0, 0.0])
        t[0] += 1
        t[1] += e["dur"]
print(len(totals))
"""
HTA_CODE = """\
import sys
from hta.trace_analysis import TraceAnalysis
analyzer = TraceAnalysis(trace_dir=sys.argv[1])
kernel_type, kernels = analyzer.get_gpu_kernel_breakdown(visualize=False)
print(len(kernels))
"""


def write_trace(
    path: Path, events: int, seed: int = 1, *, names: int = 40, whole_us: bool = False
) -> int:
    """Write the trace, streaming; returns the number of kernel launches. ``names`` distinct
    kernels; ``whole_us``: every ``ts`` and ``dur`` an integer (µs), as in issue 41's table."""
    rng = random.Random(seed)
    kinds = names
    names = [
        f"void at::native::vectorized_elementwise_kernel<4, at::native::Functor{i}<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3>)"
        for i in range(kinds)
    ]
    means = [rng.uniform(3, 400) for _ in names]  # µs
    launches = events // 5
    ts = 4_458_676_522_690.655  # µs after baseTimeNanoseconds, as newer Kineto writes them
    digits = 0 if whole_us else 3
    ts = round(ts, digits)
    gpu = {s: ts for s in (7, 13, 20, 27)}
    opened = gzip.open(path, "wt", 1) if path.suffix == ".gz" else path.open("w")  # noqa: SIM115
    with opened as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 ')
        f.write('80GB HBM3", "computeMajor": 9, "computeMinor": 0, "numSms": 132, ')
        f.write('"warpSize": 32}], "distributedInfo": {"backend": "nccl", "rank": 0, ')
        f.write(f'"world_size": 1}}, "baseTimeNanoseconds": {BASE_NS}, "traceEvents": [\n')
        for i in range(launches):
            k = rng.randrange(len(names))
            stream = (7, 13, 20, 27)[i % 4]
            dur = round(rng.expovariate(1 / means[k]), digits) + 1
            corr = 100_000 + i
            start = max(gpu[stream], ts + 5) + round(rng.uniform(0, 2), digits)
            gpu[stream] = start + dur
            sep = "" if i == 0 else ",\n"
            f.write(
                f'{sep}{{"ph": "X", "cat": "cpu_op", "name": "aten::op{k}", "pid": 4242, '
                f'"tid": 4242, "ts": {ts:.{digits}f}, "dur": {6.125 if digits else 6}, '
                f'"args": {{"External id": {corr}, '
                f'"Record function id": 0, "Sequence number": {i}, "Fwd thread id": 1, '
                f'"Ev Idx": {5 * i}, "Input Dims": [[64, 1024], [1024, 1024], []], '
                f'"Input type": ["float", "float", "Scalar"], "Input Strides": [[1024, 1], '
                f'[1024, 1], []], "Concrete Inputs": ["", "", "1"]}}}},\n'
                f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, '
                f'"tid": 4242, "ts": {ts + 1:.{digits}f}, "dur": {4.5 if digits else 4}, '
                f'"args": {{"correlation": {corr}}}}},\n'
                f'{{"ph": "s", "id": {corr}, "pid": 4242, "tid": 4242, "ts": {ts + 1:.{digits}f}, '
                f'"cat": "ac2g", "name": "ac2g"}},\n'
                f'{{"ph": "f", "id": {corr}, "pid": 0, "tid": {stream}, "ts": {start:.{digits}f}, '
                f'"cat": "ac2g", "name": "ac2g", "bp": "e"}},\n'
                f'{{"ph": "X", "cat": "kernel", "name": "{names[k]}", "pid": 0, '
                f'"tid": {stream}, "ts": {start:.{digits}f}, "dur": {dur:.{digits}f}, "args": {{'
                f'"queued": 0, "device": 0, "context": 1, "stream": {stream}, '
                f'"correlation": {corr}, "registers per thread": 32, "shared memory": 0, '
                f'"grid": [{64 + k}, 1, 1], "block": [128, 1, 1], "blocks per SM": 0.484848, '
                f'"warps per SM": 1.939394, "est. achieved occupancy %": 3}}}}'
            )
            ts += 7.25 if digits else 7
        f.write('\n], "traceName": "bench.pt.trace.json"}\n')
    return launches


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--hta-python", default=None, help="a Python with HTA installed")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--names", type=int, default=40, help="distinct kernel names")
    parser.add_argument("--whole-us", action="store_true", help="integer-µs ts and dur")
    parser.add_argument(
        "--write-only", type=Path, default=None, help="write the trace here (.gz: gzipped), stop"
    )
    args = parser.parse_args()
    if args.write_only:
        write_trace(args.write_only, args.events, names=args.names, whole_us=args.whole_us)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "trace"
        folder.mkdir()
        trace = folder / "rank-0.pt.trace.json"
        launches = write_trace(trace, args.events, names=args.names, whole_us=args.whole_us)
        size_mb = trace.stat().st_size / 2**20
        print(f"{trace.name}: {args.events:,} events, {launches:,} kernels, {size_mb:.0f} MiB")
        contenders = {
            "roofscope": [args.python, "-m", "roofscope", "analyze", str(trace), "--json"],
            "json-load": [args.python, "-c", JSON_CODE, str(trace)],
        }
        if args.hta_python:
            contenders["hta"] = [args.hta_python, "-c", HTA_CODE, str(folder)]
        runs = take_turns(contenders, args.repeat)
    median = {n: statistics.median(r.wall_s for r in rs) for n, rs in runs.items()}
    print(f"{'contender':<12}{'wall s':>10}{'peak RSS MB':>13}{'tree RSS MB':>13}")
    for name, rs in runs.items():
        rss, tree = max(r.peak_rss_mb for r in rs), max(r.tree_rss_mb for r in rs)
        print(f"{name:<12}{median[name]:>10.2f}{rss:>13.0f}{tree:>13.0f}")
    rss = max(r.tree_rss_mb for r in runs["roofscope"])
    print(f"roofscope peak RSS / file size: {rss / size_mb:.2f}x (target < 2)")
    for other in ("hta", "json-load"):
        if other in median:
            print(f"roofscope / {other}: {median['roofscope'] / median[other]:.2f}x the time")
    if args.out:
        doc = {n: [asdict(r) for r in rs] for n, rs in runs.items()}
        doc["file_mb"] = size_mb  # type: ignore[assignment]
        args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r.exit_code == 0 for rs in runs.values() for r in rs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
