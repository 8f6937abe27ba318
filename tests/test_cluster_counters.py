"""Counter sums per kernel in the cluster summary, and the roofline made from them
(roofscope.cluster.counters, roofscope.cluster.roof).

Real counter profiles are cut into ranks (by dispatch), each rank reduced alone and the
partials merged in random orders. The sums are checked against the files' own values summed
here with the csv module; the roofline against ``analyze --json`` of the same files, which
computes the work per dispatch from rows (``analysis.work.counters.counter_work``) rather
than from sums.
"""

from __future__ import annotations

import csv
import random
from collections import defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofscope.cluster.partial import Partial, merge, reduce_run, summary
from roofscope.render.cluster_text import render_cluster_text
from tests.conftest import DATA, run_json
from tests.test_cluster_partial import runs_of, shuffled_merge
from tests.test_compare import TRACE

V3 = DATA / "rocprofv3-counters"
FETCH = V3 / "gfx1151_fetch_counter_collection.csv"  # 34 dispatches, FETCH_SIZE, timestamps
STALL = V3 / "gfx1151_stall_counter_collection.csv"  # 10 dispatches x 10 counters
PMC = DATA / "rocprofv1-mi250x" / "laplacian" / "data_movement.csv"  # rocprof v1 pmc, no times
MI200 = DATA / "rocprof-compute-mi200"  # pmc_perf.csv: FLOP and byte counters, roofline.csv
Rows = list[list[str]]


def read_rows(path: Path) -> tuple[list[str], Rows]:
    with path.open(newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    return header, rows


def dispatch_groups(header: list[str], rows: Rows, key: str) -> list[Rows]:
    """The rows grouped by dispatch (``key`` column), in file order."""
    groups: dict[str, Rows] = {}
    for row in rows:
        groups.setdefault(row[header.index(key)], []).append(row)
    return list(groups.values())


def split(path: Path, key: str, root: Path, cuts: list[int], keep: tuple[str, ...] = ()) -> Path:
    """``path`` cut by dispatch at ``cuts`` into ``root/rankN/`` (same file name), with the
    files ``keep`` of its folder copied beside each part."""
    header, rows = read_rows(path)
    groups = dispatch_groups(header, rows, key)
    bounds = sorted({0, *(c % len(groups) for c in cuts), len(groups)})
    for i, (a, b) in enumerate(pairwise(bounds)):
        folder = root / f"rank{i}"
        folder.mkdir(parents=True)
        with (folder / path.name).open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([header, *(r for g in groups[a:b] for r in g)])
        for name in keep:
            (folder / name).write_bytes((path.parent / name).read_bytes())
    return root


def merge_runs(runs: list[list[str]]) -> Partial:
    return merge(reduce_run(run) for run in runs)


def merged_in_random_order(root: Path, seed: int) -> tuple[Partial, Partial]:
    parts = [reduce_run(run) for run in runs_of(root)]
    rng = random.Random(seed)
    return shuffled_merge(parts, rng), shuffled_merge(parts, rng)


# -- the sums against the files' own values -------------------------------------------------


def long_sums(path: Path) -> dict[tuple[str, str], tuple[float, float, int]]:
    """rocprofv3's long counter_collection.csv, summed here: per (kernel name as written,
    counter) the values, the values per ns of each dispatch with a duration, the dispatches."""
    header, rows = read_rows(path)
    col = {name: i for i, name in enumerate(header)}
    out: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for r in rows:
        s = out[(r[col["Kernel_Name"]], r[col["Counter_Name"]])]
        value = float(r[col["Counter_Value"]])
        dur = int(r[col["End_Timestamp"]]) - int(r[col["Start_Timestamp"]])
        s[0] += value
        s[1] += value / dur if dur > 0 else 0.0
        s[2] += 1
    return {k: (v[0], v[1], int(v[2])) for k, v in out.items()}


def wide_sums(path: Path, counters: list[str]) -> dict[tuple[str, str], tuple[float, float, int]]:
    """rocprof v1's pmc CSV (one column per counter, no timestamps), summed here."""
    header, rows = read_rows(path)
    out: dict[tuple[str, str], tuple[float, float, int]] = {}
    for r in rows:
        for c in counters:
            key = (r[header.index("KernelName")], c)
            total, rates, n = out.get(key, (0.0, 0.0, 0))
            out[key] = (total + float(r[header.index(c)]), rates, n + 1)
    return out


def by_raw_name(p: Partial) -> dict[tuple[str, str], tuple[float, float, int]]:
    """The merged sums keyed as the file writes the kernel (its raw name)."""
    out = {}
    for kernel, k in p.counters.kernels.items():
        (raw,) = p.kernels[kernel].raw_names
        for name, c in k.counters.items():
            out[(raw, name)] = (c.total, c.rate_total, c.dispatches)
    return out


def assert_sums(got: dict[Any, tuple[float, float, int]], want: dict[Any, Any]) -> None:
    assert got.keys() == want.keys()
    for key, (total, rates, n) in want.items():
        assert got[key][0] == total  # exact: these values are integers or multiples of 1/64
        assert got[key][2] == n
        assert got[key][1] == pytest.approx(rates, rel=1e-12, abs=0)


CUTS = st.lists(st.integers(1, 10**6), min_size=1, max_size=4, unique=True)


@settings(max_examples=6, deadline=None)
@given(cuts=CUTS, seed=st.integers(0, 2**32 - 1), which=st.sampled_from([FETCH, STALL]))
def test_rocprofv3_sums_over_random_splits(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], seed: int, which: Path
) -> None:
    root = split(which, "Dispatch_Id", tmp_path_factory.mktemp("job"), cuts)
    one, two = merged_in_random_order(root, seed)
    want = long_sums(which)
    assert_sums(by_raw_name(one), want)
    assert_sums(by_raw_name(two), want)  # another order: sums exact, rates to rounding
    header, rows = read_rows(which)
    per_dispatch = dispatch_groups(header, rows, "Dispatch_Id")
    assert sum(k.dispatches for k in one.counters.kernels.values()) == len(per_dispatch)


def test_integral_counters_stay_integers() -> None:
    """A kernel's counter whose values the file writes as whole numbers (``3564.000000``) is
    summed as an int, exact in any order; one with fractions (``65.338646``) as a float."""
    header, rows = read_rows(STALL)
    kernel, name = header.index("Kernel_Name"), header.index("Counter_Name")
    integral: dict[tuple[str, str], bool] = {}
    for r in rows:
        whole = float(r[header.index("Counter_Value")]).is_integer()
        integral[(r[kernel], r[name])] = integral.get((r[kernel], r[name]), True) and whole
    assert set(integral.values()) == {True, False}  # both kinds in this file
    part = reduce_run([str(STALL)])
    for k, c in {key: v[0] for key, v in by_raw_name(part).items()}.items():
        assert type(c) is (int if integral[k] else float), k


@settings(max_examples=4, deadline=None)
@given(cuts=CUTS, seed=st.integers(0, 2**32 - 1))
def test_rocprof_v1_pmc_sums_over_random_splits(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], seed: int
) -> None:
    root = split(PMC, "Index", tmp_path_factory.mktemp("job"), cuts)
    one, _ = merged_in_random_order(root, seed)
    header, _rows = read_rows(PMC)
    counters = header[header.index("obj") + 1 :]
    assert_sums(by_raw_name(one), wide_sums(PMC, counters))
    lap = one.counters.kernels["laplacian_kernel"]
    assert (lap.dispatches, lap.timed, lap.time_ns) == (1001, 0, 0)  # no timestamps


# -- the roofline against analyze --json ---------------------------------------------------


def close(got: Any, want: Any) -> None:
    """Equal, floats within rel 1e-12 (sums taken in another order), recursively."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for k in want:
            close(got[k], want[k])
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            close(g, w)
    elif isinstance(want, float) and not isinstance(got, bool) and got is not None:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300)
    else:
        assert got == want


ROOF_KEYS = (
    "work_source", "flops", "iops", "flops_by_ceiling", "bytes", "ai", "achieved_flops_s",
    "achieved_bytes_s", "attainable_flops_s", "efficiency", "bound", "ceiling",
    "limiting_level", "placed_by", "above_roof", "missing_ceiling",
)  # fmt: skip


def assert_roofline_matches(doc: dict[str, Any], got: dict[str, Any]) -> None:
    want = {k["name"]: k["roofline"] for k in doc["kernels"] if k["roofline"]}
    have = {k["name"]: k for k in got["roofline"]["kernels"]}
    assert list(have) == list(want)  # the same kernels, in the hotspots order
    for name, w in want.items():
        close({k: have[name][k] for k in ROOF_KEYS}, {k: w[k] for k in ROOF_KEYS})
        if w["dispatch_mean_rates_per_s"]:
            close(have[name]["dispatch_mean_rates_per_s"], w["dispatch_mean_rates_per_s"])
    device = got["roofline"]["device"]
    assert (device["name"], device["key"]) == (doc["device"]["name"], doc["device"]["key"])
    assert device["problem"] == doc["device"]["problem"]
    assert got["roofline"]["main_ceiling"] == doc["device"]["main_ceiling"]
    values = {c["name"]: c["value"] for c in doc["device"]["ceilings"]}
    assert {c["name"]: c["value"] for c in got["roofline"]["ceilings"]} == values


VECCOPY = "vecCopy(double*, double*, double*, int, int)"
OP2 = DATA / "rocprof-compute-omniperf2-mi300a"  # 3 kernels with FLOPs, catalogue ceilings
SPLITS = [  # file, its dispatch column, files kept beside, kernels on the roofline, with a bound
    (FETCH, "Dispatch_Id", (), 17, 0),  # bytes only, GPU unknown: no ceiling
    (STALL, "Dispatch_Id", (), 0, 0),  # no counter that gives work: no roofline row
    (PMC, "Index", (), 4, 0),  # no timestamps: no rate
    (MI200 / "pmc_perf.csv", "Dispatch_ID", ("roofline.csv", "sysinfo.csv"), 1, 1),  # IOPs
    (OP2 / "pmc_perf.csv", "Dispatch_ID", ("sysinfo.csv",), 3, 3),
    (DATA / "rocprof-compute-mi350" / "pmc_perf.csv", "Dispatch_ID", ("sysinfo.csv",), 1, 1),
]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(
    ("path", "key", "keep", "placed", "bound"), SPLITS, ids=lambda v: getattr(v, "name", "")
)
def test_roofline_equals_analyze_over_random_splits(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    path: Path,
    key: str,
    keep: tuple[str, ...],
    placed: int,
    bound: int,
    seed: int,
) -> None:
    rng = random.Random(seed)
    root = split(path, key, tmp_path / "job", rng.sample(range(1, 10**6), 3), keep)
    doc = run_json(capsys, str(root))
    one, two = merged_in_random_order(root, seed)
    got = summary(one)
    assert_roofline_matches(doc, got)
    kernels = got["roofline"]["kernels"]
    assert (len(kernels), sum(k["bound"] is not None for k in kernels)) == (placed, bound)
    close(summary(two)["roofline"], summary(one)["roofline"])  # another order: to rounding


# -- the text view -------------------------------------------------------------------------


def roof_doc(kernels: list[dict[str, Any]]) -> dict[str, Any]:
    device = {"name": "Instinct MI300A", "detected_from": "profile: MI300A_A1", "problem": None}
    return {
        "runs": {"read": [["a"], ["b"]]},
        "kernels": [],
        "roofline": {"device": device, "kernels": kernels},
    }


def test_text_shows_the_roofline_rows_only_when_present() -> None:
    memory = {
        "name": "stream_triad", "ai": {"hbm": 0.125, "l2": 0.5}, "achieved_flops_s": 4.25e11,
        "achieved_bytes_s": {"hbm": 3.4e12}, "efficiency": 0.8125, "bound": "memory",
        "limiting_level": "hbm", "placed_by": "flops", "above_roof": False,
    }  # fmt: skip
    unknown = {
        "name": "copy_bytes", "ai": {}, "achieved_flops_s": None,
        "achieved_bytes_s": {"hbm": 2.5e12}, "efficiency": None, "bound": None,
        "limiting_level": None, "placed_by": "bandwidth", "above_roof": False,
    }  # fmt: skip
    text = render_cluster_text(roof_doc([memory, unknown]), width=100)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    assert "Roofline · Instinct MI300A (profile: MI300A_A1)" in lines
    assert "Kernel AI [FLOP/B] Achieved Eff. Bound" in lines
    assert "stream_triad 0.125 425 GFLOP/s 81.2% memory (hbm)" in lines
    assert "copy_bytes - 2.5 TB/s - -" in lines
    narrow = [
        " ".join(line.split())
        for line in render_cluster_text(roof_doc([memory]), width=56).splitlines()
    ]
    assert "Kernel AI [FLOP/B] Eff. Bound" in narrow  # the achieved rate goes first
    assert "Roofline" not in render_cluster_text(roof_doc([]), width=100)
    assert "Roofline" not in render_cluster_text({"kernels": []}, width=100)


def test_runs_on_different_gpus_get_no_ceilings() -> None:
    """An MI200 run and an MI350 run are not ranks of one job: no device is chosen, the
    kernels keep their counter work (bytes, intensity) without attainable or bound."""
    mi350 = DATA / "rocprof-compute-mi350"
    got = summary(merge_runs([[str(MI200)], [str(mi350)]]))["roofline"]
    assert got["device"]["name"] is None and got["ceilings"] == []
    assert got["device"]["problem"] == (
        "no roofline: the runs name different GPUs (Instinct MI210 or Instinct MI250, "
        "Instinct MI350X)"
    )
    assert [(k["name"], k["bound"]) for k in got["kernels"]] == [(VECCOPY, None)]  # one name
    # gfx90a counts HBM traffic with TCC_EA_*, gfx950 with TCC_EA0_*: a counter that not every
    # dispatch carries is left out (as analysis.counters.dispatch_counters does), so no hbm
    (k,) = got["kernels"]
    assert set(k["ai"]) == {"l2", "vl1d"} and k["efficiency"] is None


# -- the user's device and ceilings ---------------------------------------------------------

USER_ROOFS = [  # file, its dispatch column, files kept beside, options, kernels given a bound
    # gfx1151 is not in the catalogue: --peak-bw gives it an hbm ceiling; its 17 kernels count
    # hbm-read bytes only, which no hbm ceiling places (analyze's own rule), so no bound
    (FETCH, "Dispatch_Id", (), ("--peak-bw", "1.6e12"), 0),
    # MI300A's runs, placed on the MI300X instead: its catalogue ceilings, not the MI300A's
    (OP2 / "pmc_perf.csv", "Dispatch_ID", ("sysinfo.csv",), ("--gpu", "mi300x"), 3),
    (OP2 / "pmc_perf.csv", "Dispatch_ID", ("sysinfo.csv",), ("--peak-flops", "1e14"), 3),
]


@pytest.mark.parametrize(
    ("path", "key", "keep", "options", "bound"), USER_ROOFS, ids=lambda v: getattr(v, "name", "")
)
def test_gpu_and_ceilings_options_place_the_cluster_roofline_as_analyze(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    path: Path,
    key: str,
    keep: tuple[str, ...],
    options: tuple[str, ...],
    bound: int,
) -> None:
    """``--gpu``, ``--peak-flops``, ``--peak-bw`` with ``--scheduler``: the roofline that
    ``analyze`` draws with the same options from the rows."""
    root = split(path, key, tmp_path / "job", [7, 19], keep)
    doc = run_json(capsys, str(root), *options)
    got = run_json(capsys, str(root), "--scheduler", "local", "--jobs", "1", *options)
    assert_roofline_matches(doc, got)
    assert sum(k["bound"] is not None for k in got["roofline"]["kernels"]) == bound
    option, value = options
    ceilings = {c["source"]: c["value"] for c in got["roofline"]["ceilings"]}
    if option == "--gpu":
        assert got["roofline"]["device"]["name"] == "Instinct MI300X"
        assert got["roofline"]["device"]["detected_from"] == "--gpu"
    else:  # the user's own value, as given
        assert ceilings[f"user: {option}"] == float(value)


def test_cluster_summary_api_takes_the_gpu_and_ceilings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``roofscope.cluster_summary(..., gpu=, peak_flops=)``: the command's roofline."""
    import roofscope

    root = split(OP2 / "pmc_perf.csv", "Dispatch_ID", tmp_path / "job", [5], ("sysinfo.csv",))
    options = ("--gpu", "mi300x", "--peak-flops", "1e14")
    want = run_json(capsys, str(root), "--scheduler", "local", "--jobs", "1", *options)
    got = roofscope.cluster_summary(root, scheduler="local", jobs=1, gpu="mi300x", peak_flops=1e14)
    assert got.to_dict()["roofline"] == want["roofline"]
    ceilings = {c["source"]: c["value"] for c in want["roofline"]["ceilings"]}
    assert ceilings["user: --peak-flops"] == 1e14
    # the options checked as roofscope.analyze checks them (api/run.py options_of)
    for bad, message in (({"jobs": 0}, "jobs=0: expected"), ({"peak_bw": -1.0}, "peak_bw=-1.0")):
        with pytest.raises(roofscope.UsageError, match=message):
            roofscope.cluster_summary(root, scheduler="local", **bad)


# -- the charts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "key", "keep"), [s[:3] for s in SPLITS], ids=lambda v: getattr(v, "name", "")
)
def test_svg_charts_equal_analyzes_byte_for_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path, key: str, keep: tuple[str, ...]
) -> None:
    """``--scheduler local --svg DIR``: the kernel-time chart and the roofline plot that
    ``analyze --svg`` draws from the rows, byte for byte (OP2's warm-up-dominates kernel set
    aside from the roofline's axes by both); no timeline chart (its lanes need each
    dispatch's kernel)."""
    root = split(path, key, tmp_path / "job", [5, 11], keep)
    one, many = tmp_path / "one", tmp_path / "many"
    run_json(capsys, str(root), "--svg", str(one))
    run_json(capsys, str(root), "--scheduler", "local", "--jobs", "1", "--svg", str(many))
    assert sorted(p.name for p in many.iterdir()) == ["hotspots.svg", "roofline.svg"]
    for name in ("hotspots.svg", "roofline.svg"):
        assert (many / name).read_bytes() == (one / name).read_bytes()
    if path.parent == OP2:
        drawn = (many / "roofline.svg").read_text(encoding="utf-8")
        assert (drawn.count('class="point"'), drawn.count('class="point clipped"')) == (2, 1)


def test_work_rules_over_the_launch_shapes_as_analyze(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--work`` with ``--scheduler``: each rule evaluated over the launch shapes the partials
    counted. Eight ranks of the demo's laplacian trace (1,001 laplacian dispatches each, grid
    134,217,728), rank 3's grid halved: two shapes, as analyze sees them in the rows."""
    root = tmp_path / "job"
    header, rows = read_rows(TRACE)
    grid = header.index("grd")
    for r in range(8):
        (root / f"rank{r}").mkdir(parents=True)
        with (root / f"rank{r}" / "results.csv").open("w", newline="", encoding="utf-8") as f:
            out = [list(row) for row in rows]
            for row in out:
                if r == 3 and "laplacian" in row[1]:
                    row[grid] = str(int(row[grid]) // 2)
            csv.writer(f).writerows([header, *out])
    work = tmp_path / "work.toml"
    work.write_text(
        '[[kernel]]\nmatch = "laplacian"\nflops = "9 * grid_size"\nbytes = "16 * grid_size"\n\n'
        '[[kernel]]\nmatch = "test_function"\nper = "total"\nflops = "1e9"\nbytes = "2e9"\n',
        encoding="utf-8",
    )
    options = ("--work", str(work), "--peak-flops", "1e14", "--peak-bw", "1.6e12")
    doc = run_json(capsys, str(root), *options)
    got = run_json(capsys, str(root), "--scheduler", "local", "--jobs", "1", *options)
    assert_roofline_matches(doc, got)
    kernels = {k["name"]: k for k in got["roofline"]["kernels"]}
    lap = next(k for name, k in kernels.items() if name.startswith("void laplacian_kernel"))
    grids = 7 * 1001 * 134_217_728 + 1001 * 67_108_864  # by hand from the file: one grid
    assert lap["flops"] == 9 * grids and lap["bytes"] == {"hbm": 16 * grids}
    assert lap["work_source"] == f"{work} [[kernel]] #1"
    test = next(k for name, k in kernels.items() if name.startswith("void test_function"))
    assert (test["flops"], test["bytes"]) == (1e9, {"hbm": 2e9})  # per = "total": as given


def test_a_counter_run_beside_a_trace_is_named_not_left_out_silently(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Two ranks of the laplacian trace, each with its rocprof --pmc pass beside it: analyze
    places the four kernels with the pass's counters scaled onto the trace; the cluster summary
    does not reduce counter runs, and says so once per run in a warning."""
    folder = PMC.parent
    for r in range(2):
        (tmp_path / f"rank{r}").mkdir()
        for name in ("results.csv", PMC.name):
            (tmp_path / f"rank{r}" / name).write_bytes((folder / name).read_bytes())
    doc = run_json(capsys, str(tmp_path))
    sources = {k["roofline"]["work_source"] for k in doc["kernels"] if k["roofline"]}
    assert sources == {"counters (counter run)"} and len(doc["kernels"]) == 4
    got = run_json(capsys, str(tmp_path), "--scheduler", "local", "--jobs", "1")
    assert got["roofline"]["kernels"] == []
    warned = {w["code"]: w for w in got["warnings"]}["counter-run-left-out"]
    assert warned["count"] == 2 and "analyze a run without --scheduler" in warned["message"]
