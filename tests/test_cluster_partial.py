"""Per-run partial results, merged: the cluster summary against `analyze --json` of the same
inputs, and merging over random splits and orders (roofscope.cluster)."""

from __future__ import annotations

import csv
import gzip
import json
import math
import pickle
import random
import shutil
import sqlite3
from decimal import ROUND_HALF_EVEN, Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ddsketch import DDSketch
from hypothesis import given, settings
from hypothesis import strategies as st

from roofscope.cluster import sketch
from roofscope.cluster.partial import Partial, merge, reduce_run, summary
from roofscope.errors import InputError
from tests.conftest import DATA, SHARED_CORPUS, run_json
from tests.test_compare import TRACE, totals
from tests.test_ranks import ranks, rocpd_ranks, split_trace

ROCPD = DATA / "rocpd-mi250x" / "finite-difference_results.db"
HTA_RANKS = SHARED_CORPUS / "torch" / "hta-tests-data" / "trace_filter"
ALPHA = sketch.RELATIVE_ACCURACY


def runs_of(root: Path) -> list[list[str]]:
    """One run per folder (or file) directly below ``root``, as part B splits a job."""
    return [[str(p)] for p in sorted(root.iterdir())]


def cluster(root: Path) -> dict[str, Any]:
    return summary(merge(reduce_run(run) for run in runs_of(root)))


def ns(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1e9)


def assert_kernels_match(doc: dict[str, Any], got: dict[str, Any]) -> None:
    """Calls, totals, min, max exact; the median within the sketch's error of the exact one
    (exactly equal where the kernel kept its durations)."""
    want = {k["name"]: k for k in doc["kernels"]}
    have = {k["name"]: k for k in got["kernels"]}
    assert list(have) == list(want)  # the same kernels in the same order
    for name, k in want.items():
        h = have[name]
        assert h["calls"] == k["calls"]
        assert h["total_ns"] == ns(k["total_s"])
        assert (h["min_ns"], h["max_ns"]) == (ns(k["min_s"]), ns(k["max_s"]))
        if k["median_s"] is None:  # no timed dispatch (a counter-collection run)
            assert h["median_ns"] is None and h["share"] is None
            continue
        median = k["median_s"] * 1e9
        if h["median_exact"]:
            assert h["median_ns"] == pytest.approx(median, rel=1e-12)
        else:
            assert abs(h["median_ns"] - median) <= ALPHA * median
        if k["share"] is None:  # some kernel has no timed dispatch: no grand total
            assert h["share"] is None and got["total_ns"] is None
        else:
            assert h["share"] == pytest.approx(k["share"], rel=1e-12)


def test_one_rocpd_run_equals_analyze(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(ROCPD))
    got = summary(reduce_run([str(ROCPD)]))
    assert_kernels_match(doc, got)
    assert got["dispatches"] == 1004  # rocprofv3's kernel_dispatch rows of this database
    lap = got["kernels"][0]
    assert lap["calls"] == 1001 and not lap["median_exact"]  # past 1,000: the sketch
    (device,) = got["devices"]["devices"]
    with sqlite3.connect(ROCPD) as con:  # the database's own rows, unioned here
        spans = sorted(con.execute("SELECT start, end FROM kernels").fetchall())
    con.close()
    busy, reach = 0, spans[0][0]
    for start, end in spans:
        busy += max(0, end - max(start, reach))
        reach = max(reach, end)
    assert device["busy_ns"] == busy
    assert (device["first_ns"], device["last_ns"]) == (spans[0][0], reach)
    assert device["span_ns"] == reach - spans[0][0] and device["dispatches"] == len(spans)
    assert got["ranks"] is None and doc["ranks"] is None


ONE_RUN = [
    DATA / "kineto" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    DATA / "rocprofv3-counters",  # a counter-collection run: no timed dispatch
    SHARED_CORPUS / "amd" / "hpctraining-rocprofv1-mi250x" / "seismic-stencils"
    / "xr_stencils_R4_64_64_1",  # results.csv beside its .json, .db and stats
    SHARED_CORPUS / "amd" / "rocprofv3-kernel-trace-mi300a",
    SHARED_CORPUS / "nvidia" / "zisk-zorch-nsys-rtx5090",
]  # fmt: skip


@pytest.mark.parametrize("path", ONE_RUN, ids=lambda p: p.name)
def test_one_run_of_each_producer_equals_analyze(
    capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    if not path.exists():
        pytest.skip("shared corpus not present")
    assert_kernels_match(run_json(capsys, str(path)), summary(reduce_run([str(path)])))


def test_eight_rocprof_v1_ranks_and_their_straggler(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = ranks(tmp_path, slow=1.3)  # the demo trace 8 times; rank 5's laplacian 1.3x
    doc = run_json(capsys, str(root))
    got = cluster(root)
    assert_kernels_match(doc, got)
    single = totals(TRACE)
    lap = next(k for k in single if "laplacian" in k)
    slowed = totals(root / "rank5" / "results.csv")[lap]
    have = {k["name"]: k["total_ns"] for k in got["kernels"]}
    assert have[lap] == 7 * single[lap] + slowed  # summed from the CSVs, not from roofscope
    view, want = got["ranks"], doc["ranks"]
    assert view["ranks"] == want["ranks"] == list(range(8))
    assert view["labels"] == want["labels"]
    (s,) = view["stragglers"]
    assert s["rank"] == 5 == want["stragglers"][0]["rank"]
    assert s["kernels"] == want["stragglers"][0]["kernels"] == [lap]
    assert s["kernel_ns"] == sum(totals(root / "rank5" / "results.csv").values())
    assert [round(t * 1e9) for t in want["kernel_time_s"]] == view["kernel_ns"]


def test_rocpd_ranks_numbered_by_recorded_rank(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = rocpd_ranks(tmp_path / "job", 4, slow_rank=1)  # recorded rank = 3 - i
    doc = run_json(capsys, str(root))
    runs = [[str(p)] for p in sorted(root.rglob("*.db"))]
    got = summary(merge(reduce_run(r) for r in runs))
    assert_kernels_match(doc, got)
    assert got["ranks"]["ranks"] == doc["ranks"]["ranks"] == [0, 1, 2, 3]
    (s,) = got["ranks"]["stragglers"]
    assert s["rank"] == 2 == doc["ranks"]["stragglers"][0]["rank"]  # the 2nd pid: rank 3 - 1


@pytest.mark.skipif(not HTA_RANKS.is_dir(), reason="shared corpus not present")
def test_kineto_ranks_from_hta(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "job"
    root.mkdir()
    for f in HTA_RANKS.glob("*.json.gz"):
        shutil.copy(f, root / f.name)
    doc = run_json(capsys, str(root))
    got = cluster(root)
    assert_kernels_match(doc, got)
    view, want = got["ranks"], doc["ranks"]
    assert view["ranks"] == want["ranks"] == [0, 1]  # Kineto's distributedInfo ranks
    assert view["kernel_ns"] == [round(t * 1e9) for t in want["kernel_time_s"]]
    assert view["stragglers"] == want["stragglers"] == []
    assert got["runs"]["job"] == doc["runs"]["job"]


def test_summary_only_run_is_refused() -> None:
    """A stats file has no dispatches: refused in one line naming it, never an empty run."""
    stats = DATA / "summary" / "kernels.csv"
    with pytest.raises(InputError) as caught:
        reduce_run([str(stats)])
    (line,) = str(caught.value).splitlines()
    assert line.startswith(f"{stats}: holds kernel summaries only (no dispatches)")
    assert "without --scheduler" in line


# -- merging: associative, commutative ------------------------------------------------------


def shuffled_merge(parts: list[Partial], rng: random.Random) -> Partial:
    """The parts merged in a random order and a random grouping."""
    parts = parts[:]
    rng.shuffle(parts)
    while len(parts) > 1:
        i = rng.randrange(len(parts) - 1)
        parts[i : i + 2] = [merge([parts[i], parts[i + 1]])]
    return parts[0]


QS = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)


def kernel_numbers(p: Partial) -> dict[str, tuple[Any, ...]]:
    return {
        name: (
            k.calls, k.timed, k.total_ns, k.sumsq_ns2, k.min_ns, k.max_ns, k.raw_names,
            k.durations.count, tuple(k.durations.quantile(q) for q in QS),
        )
        for name, k in p.kernels.items()
    }  # fmt: skip


@settings(max_examples=8, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 1003), min_size=1, max_size=4, unique=True),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_splits_merged_in_random_orders(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], seed: int
) -> None:
    """The demo trace cut into consecutive files, each reduced alone and merged in a random
    order and grouping: counts, sums, min, max and every sketch quantile equal the whole's."""
    whole = reduce_run([str(TRACE)])
    root = split_trace(tmp_path_factory.mktemp("split"), cuts)
    parts = [reduce_run(run) for run in runs_of(root)]
    rng = random.Random(seed)
    one, two = shuffled_merge(parts, rng), shuffled_merge(parts, rng)
    assert kernel_numbers(one) == kernel_numbers(two) == kernel_numbers(whole)
    assert summary(one) == summary(two)  # devices, ranks, runs too


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(st.integers(0, 10**10), min_size=1, max_size=3000),
    pieces=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_durations_merge_in_any_order(values: list[int], pieces: int, seed: int) -> None:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(len(values) + 1), min(pieces, len(values) + 1)))
    bounds = [0, *cuts, len(values)]
    parts = [sketch.exact(values[a:b]) for a, b in pairwise(bounds)]
    rng.shuffle(parts)
    got = parts[0]
    for p in parts[1:]:
        got = sketch.merged(got, p) if rng.random() < 0.5 else sketch.merged(p, got)
    whole = sketch.exact(values)
    assert got.count == whole.count == len(values)
    assert [got.quantile(q) for q in QS] == [whole.quantile(q) for q in QS]
    if len(values) <= sketch.EXACT_LIMIT:
        assert got.quantile(0.5) == float(np.median(values))


def test_sketch_bins_are_the_librarys() -> None:
    """The bins computed in SQL give the sketch the library builds value by value, and its
    quantiles are within the stated 1 % of the exact value at their rank (5,003 durations
    drawn log-normally over six decades, with zeros)."""
    rng = np.random.default_rng(7)
    values = [int(v) for v in rng.lognormal(12, 2, 5000)] + [0, 0, 1]
    ours = sketch.exact(values)
    theirs = DDSketch(ALPHA)
    for v in values:
        theirs.add(v)
    assert ours.sketch is not None
    exact = np.sort(values)
    for q in QS:
        assert ours.quantile(q) == pytest.approx(theirs.get_quantile_value(q), rel=1e-12)
        at_rank = exact[int(q * (len(values) - 1))]
        assert abs(ours.quantile(q) - at_rank) <= ALPHA * at_rank


def test_partial_pickles_and_empty_merge() -> None:
    part = reduce_run([str(ROCPD)])
    again = pickle.loads(pickle.dumps(part))
    assert kernel_numbers(again) == kernel_numbers(part)
    assert summary(merge([]))["kernels"] == []
    with pytest.raises(ValueError, match="two partials"):
        merge([part, part])


# -- activity, launch shapes and busy bins (cluster/records.py) ------------------------------

V3 = DATA / "rocprofv3-layouts"  # one rocprofv3 run's outputs (gfx90a, rocm-systems samples)
V3_FILES = {
    "kernel_trace.csv": V3 / "2025-08_kernel_trace.csv",
    "memory_copy_trace.csv": V3 / "memory_copy_trace.csv",
    "hip_api_stats.csv": V3 / "hip_api_stats.csv",
    "hip_domain_stats.csv": V3 / "hip_domain_stats.csv",
}
KINETO = sorted((DATA / "kineto").glob("*.json.gz"))


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def split_v3(root: Path, cuts: list[int], rng: random.Random) -> list[Path]:
    """The rocprofv3 run as ranks: the kernel rows cut into consecutive pieces, each copy
    row given to one rank, each stats row to one or two ranks (a name in several ranks)."""
    tables = {name: (path.read_text("utf-8").splitlines(keepends=True)) for name, path in
              V3_FILES.items()}  # fmt: skip
    kernel_rows = tables["kernel_trace.csv"][1:]
    bounds = [0, *sorted(c for c in cuts if c < len(kernel_rows)), len(kernel_rows)]
    pieces = [(a, b) for a, b in pairwise(bounds) if a < b]
    given: dict[int, dict[str, list[str]]] = {i: {} for i in range(len(pieces))}
    for i, (a, b) in enumerate(pieces):
        given[i]["kernel_trace.csv"] = kernel_rows[a:b]
    for name, lines in tables.items():
        if name == "kernel_trace.csv":
            continue
        for row in lines[1:]:
            ranks = {rng.randrange(len(pieces))}
            if name != "memory_copy_trace.csv" and rng.random() < 0.5:
                ranks.add(rng.randrange(len(pieces)))
            for r in ranks:
                given[r].setdefault(name, []).append(row)
    folders = []
    for i, files in given.items():
        folder = root / f"rank{i}"
        folder.mkdir()
        for name, rows in files.items():
            (folder / name).write_text(tables[name][0] + "".join(rows), "utf-8")
        folders.append(folder)
    return folders


def v3_activity(folders: list[Path]) -> dict[tuple[str, str, str], tuple[int, float]]:
    """Per (origin, kind, name): calls and total ns, summed from the files' own columns."""
    out: dict[tuple[str, str, str], tuple[int, float]] = {}

    def add(key: tuple[str, str, str], calls: int, ns: float) -> None:
        c, t = out.get(key, (0, 0.0))
        out[key] = (c + calls, t + ns)

    for folder in folders:
        for kind, name in (("api", "hip_api_stats.csv"), ("domain", "hip_domain_stats.csv")):
            if (folder / name).exists():
                for r in csv_rows(folder / name):
                    add(("summary", kind, r["Name"]), int(r["Calls"]), float(r["TotalDurationNs"]))
        if (folder / "memory_copy_trace.csv").exists():
            for r in csv_rows(folder / "memory_copy_trace.csv"):
                ns_ = int(r["End_Timestamp"]) - int(r["Start_Timestamp"])
                add(("trace", "copy", r["Direction"]), 1, ns_)
    return out


def v3_shapes(folders: list[Path]) -> dict[str, dict[tuple[int | None, ...], int]]:
    """Per kernel: (grid, workgroup, LDS, scratch, VGPR, AGPR, SGPR, wave size) -> dispatches;
    grid and workgroup are the products of X, Y, Z; rocprofv3 writes no wave size."""
    out: dict[str, dict[tuple[int | None, ...], int]] = {}
    for folder in folders:
        for r in csv_rows(folder / "kernel_trace.csv"):
            grid = math.prod(int(r[f"Grid_Size_{a}"]) for a in "XYZ")
            group = math.prod(int(r[f"Workgroup_Size_{a}"]) for a in "XYZ")
            shape = (grid, group, *(int(r[c]) for c in (
                "LDS_Block_Size", "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count"
            )), None)  # fmt: skip
            kernel = out.setdefault(r["Kernel_Name"], {})
            kernel[shape] = kernel.get(shape, 0) + 1
    return out


Intervals = dict[tuple[str, int], list[tuple[int, int]]]


def v3_intervals(folders: list[Path]) -> Intervals:
    out: Intervals = {}
    for folder in folders:
        for r in csv_rows(folder / "kernel_trace.csv"):
            agent = int(r["Agent_Id"].removeprefix("Agent "))
            span = (int(r["Start_Timestamp"]), int(r["End_Timestamp"]))
            out.setdefault((str(folder / "kernel_trace.csv"), agent), []).append(span)
    return out


def binned_by_hand(
    intervals: Intervals,
) -> tuple[int, dict[tuple[str, int], tuple[int, list[int]]]]:
    """The bin width (each device's least power of two fitting its span in 1,024 bins, the
    largest of those) and per device its first bin's start and busy ns per bin: the union of
    its intervals cut at multiples of the width, one interval and one bin at a time."""
    width = 1
    for spans in intervals.values():
        span = max(e for _, e in spans) - min(s for s, _ in spans)
        while span > 1024 * width:
            width *= 2
    out = {}
    for device, spans in intervals.items():
        union: list[list[int]] = []
        for s, e in sorted(spans):
            if union and s <= union[-1][1]:
                union[-1][1] = max(union[-1][1], e)
            else:
                union.append([s, e])
        first = union[0][0] // width
        last = max(union[-1][0], max(e for _, e in union) - 1) // width
        bins = [0] * (last - first + 1)
        for s, e in union:
            for i in range(s // width, (e - 1) // width + 1 if e > s else s // width):
                bins[i - first] += min(e, (i + 1) * width) - max(s, i * width)
        out[device] = (first * width, bins)
    return width, out


def shapes_of(p: Partial) -> dict[str, dict[tuple[int | None, ...], int]]:
    """The partial's shapes per raw name (each kernel here has one raw name)."""
    return {p.kernels[k].raw_names[0]: dict(v) for k, v in p.shapes.items()}


def timeline_of(doc: dict[str, Any]) -> tuple[int, dict[tuple[str, int], tuple[int, list[int]]]]:
    t = doc["timeline"]
    return t["bin_ns"], {
        (d["source"], d["device"]): (d["start_ns"], d["busy_ns"]) for d in t["devices"]
    }


@settings(max_examples=8, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 8), min_size=0, max_size=4, unique=True),
    seed=st.integers(0, 2**32 - 1),
)
def test_v3_records_split_and_merged_in_random_orders(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], seed: int
) -> None:
    """A rocprofv3 run (9 dispatches, 4 copies, 17 API and 1 domain stats rows) split into
    ranks, each reduced alone and merged in random orders: the activity, launch shapes and
    busy bins equal those counted from the ranks' files by hand."""
    rng = random.Random(seed)
    folders = split_v3(tmp_path_factory.mktemp("v3"), cuts, rng)
    parts = [reduce_run([str(f)]) for f in folders]
    one, two = shuffled_merge(parts, rng), shuffled_merge(parts, rng)
    want = v3_activity(folders)
    for p in (one, two):
        assert {k: (a.calls, float(a.total_ns)) for k, a in p.activity.items()} == want
        assert shapes_of(p) == v3_shapes(folders)
        assert timeline_of(summary(p)) == binned_by_hand(v3_intervals(folders))
    assert summary(one) == summary(two)


def test_v3_activity_is_the_checkups(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One run: the summary's activity list is analyze's, in its order; the bins add up to
    the device's busy time."""
    for name, path in V3_FILES.items():
        shutil.copy(path, tmp_path / name)
    doc = run_json(capsys, str(tmp_path))
    got = summary(reduce_run([str(tmp_path)]))
    assert [(a["kind"], a["name"], a["calls"], a["total_ns"] / 1e9) for a in got["activity"]] == [
        (a["kind"], a["name"], a["calls"], a["total_s"]) for a in doc["activity"]
    ]
    (device,) = got["devices"]["devices"]
    (lane,) = got["timeline"]["devices"]
    assert sum(lane["busy_ns"]) == device["busy_ns"] == ns(doc["summary"]["busy_s"])


def kineto_events(path: Path) -> tuple[list[dict[str, Any]], int | None]:
    """The trace's events (times exact, as written) and its devices' warp size: the one all
    the devices it describes have, else 32 on CUDA (every NVIDIA GPU's)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=Decimal)
    sizes = {int(p["warpSize"]) for p in doc.get("deviceProperties") or []}
    cuda = any(str(e.get("name", "")).startswith("cuda") for e in doc["traceEvents"])
    return doc["traceEvents"], sizes.pop() if len(sizes) == 1 else 32 if cuda else None


def kineto_ns(us: Decimal | int) -> int:
    return int((Decimal(us) * 1000).to_integral_value(ROUND_HALF_EVEN))


def kineto_expected(paths: list[Path]) -> tuple[Any, Any, Intervals]:
    """Copies per name, launch shapes per raw kernel name, intervals per (file, device)."""
    copies: dict[tuple[str, str, str], tuple[int, float]] = {}
    shapes: dict[str, dict[tuple[int | None, ...], int]] = {}
    intervals: Intervals = {}
    for path in paths:
        events, warp = kineto_events(path)
        for e in events:
            if e.get("ph") != "X" or "dur" not in e:
                continue
            start, dur = kineto_ns(e["ts"]), kineto_ns(e["dur"])
            if e.get("cat") in ("gpu_memcpy", "gpu_memset"):
                c, t = copies.get(("trace", "copy", e["name"]), (0, 0.0))
                copies[("trace", "copy", e["name"])] = (c + 1, t + dur)
            if e.get("cat") not in ("kernel", "Kernel"):
                continue
            args = e["args"]
            block = math.prod(args["block"]) if "block" in args else None
            grid = math.prod(args["grid"]) * block if block is not None else None
            shape = (grid, block, args.get("shared memory"), None,
                     args.get("registers per thread"), None, None, warp)  # fmt: skip
            kernel = shapes.setdefault(e["name"], {})
            kernel[shape] = kernel.get(shape, 0) + 1
            spans = intervals.setdefault((str(path), int(args["device"])), [])
            spans.append((start, start + dur))
    return copies, shapes, intervals


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_kineto_records_merged_in_random_orders(seed: int) -> None:
    """Three real Kineto traces (ROCm MI250 with runtime records and copies, CUDA A100 with
    launch shapes) as three runs merged in random orders: copies, launch shapes and busy bins
    equal those read from the JSON by hand (times as written, µs to ns exactly)."""
    parts = [reduce_run([str(p)]) for p in KINETO]
    got = shuffled_merge(parts, random.Random(seed))
    copies, shapes, intervals = kineto_expected(KINETO)
    assert {k: (a.calls, float(a.total_ns)) for k, a in got.activity.items()} == copies
    assert {
        raw: dict(v) for k, v in got.shapes.items() for raw in got.kernels[k].raw_names
    } == shapes
    assert timeline_of(summary(got)) == binned_by_hand(intervals)


def test_text_shows_sources_and_activity(tmp_path: Path) -> None:
    """The header counts runs and, where they differ, dispatch sources; one line each for the
    API calls and the copies, the largest three first (figures from the rocprofv3 files)."""
    from roofscope.render.cluster_text import render_cluster_text

    for name, path in V3_FILES.items():
        shutil.copy(path, tmp_path / name)
    doc = summary(reduce_run([str(tmp_path)]))
    lines = render_cluster_text(doc, width=100).splitlines()
    assert lines[0] == "roofscope 0.1.0 · cluster summary · runs read: 1"
    at = lines.index(
        "API calls (not kernel time): hipStreamCreateWithFlags: 4 calls, 262 ms; "
        "hipGetDeviceCount: 1 call,"
    )  # 98 columns: '1 call,' fits in 100 where '1 call(s),' did not
    assert lines[at + 1 : at + 4] == [
        "  32.5 ms; hipHostMalloc: 12 calls, 6.1 ms; … 14 more",
        "Memory copies (not kernel time): MEMORY_COPY_DEVICE_TO_HOST: 2 calls, 177 µs;",
        "  MEMORY_COPY_HOST_TO_DEVICE: 2 calls, 152 µs",
    ]  # 2 copies each: 75,440 + 101,321 ns and 77,040 + 75,361 ns
    # then the findings, as the check-up words them: the copies (4 of them) among them
    assert any(line.endswith("copies-dominate · whole program") for line in lines[at + 4 :])
    doc["runs"]["sources"] = ["a/kernel_trace.csv", "b/kernel_trace.csv"]
    assert (
        render_cluster_text(doc, width=100)
        .splitlines()[0]
        .endswith("runs read: 1 (2 dispatch sources)")
    )
