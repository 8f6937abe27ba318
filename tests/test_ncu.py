"""Nsight Compute ``ncu --csv`` files: every corpus file against a separate parse done here.

The independent parse (:func:`hand_launches`) uses the csv module and unit factors written out
by hand; the reader's launches, durations, metric values and rules must equal it. Work
formulas (work/nvidia.py) are checked against sums done by hand from the files' numbers.
Real files copied into tests/data/ncu/ keep the tests running without the shared corpus.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from roofscope.analysis.counters import Counters, evaluate
from roofscope.analysis.metrics.column import Column
from roofscope.analysis.work import nvidia
from roofscope.errors import InputError
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.nvidia import ncu_units
from roofscope.readers.nvidia.ncu_csv import Ncu
from roofscope.readers.nvidia.ncu_units import parse_number, unit_factor
from roofscope.readers.sniff import read_head
from tests.conftest import DATA, NAMED_COUNTERS, SHARED_CORPUS

NCU = DATA / "ncu"
CORPUS = SHARED_CORPUS / "nvidia"
LLM = "llm-perf-opt-rtx5090/kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
SUPERBENCH = NCU / "superbench-cublaslt-ncu" / "cublaslt_ncu.log"
VIRTUAL = NCU / "leleucas-opanalysis-a100" / "nsight_virtual.csv"


def corpus_files() -> list[Path]:
    if not CORPUS.exists():
        return []
    return sorted(
        [
            *CORPUS.glob("leleucas-opanalysis-a100/*.csv"),
            *CORPUS.glob("llm-perf-opt-rtx5090/ncu-v2/*/ncu.*.csv"),
            CORPUS / "superbench-cublaslt-ncu" / "cublaslt_ncu.log",
            *CORPUS.glob("gpu-roofline-profiler-rtx5070/*.csv"),
        ]
    )


def read(path: Path, role: str = Role.DISPATCHES) -> Profile:
    profile = Profile.empty()
    head = read_head(path)
    assert Ncu().detect(head)
    Ncu().read(path, head, profile, role=role)
    return profile


# -- the independent parse ------------------------------------------------------------------

NS = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6}


def hand_rows(path: Path) -> list[dict[str, str]]:
    """The CSV rows as dicts: lines starting with a quote, header rows dropped."""
    text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(lines))
    header = rows[0]
    return [dict(zip(header, r, strict=False)) for r in rows[1:] if r[:2] != header[:2]]


def hand_launches(path: Path) -> list[tuple[int, int, float | None]]:
    """(pid, ID, duration ns) per launch, in file order."""
    order: dict[tuple[int, int], dict[str, tuple[str, str]]] = {}
    for r in hand_rows(path):
        metrics = order.setdefault((int(r["Process ID"]), int(r["ID"])), {})
        if r["Metric Name"]:
            metrics[r["Metric Name"]] = (r["Metric Unit"], r["Metric Value"].replace(",", ""))
    return [(pid, i, hand_duration(m)) for (pid, i), m in order.items()]


def hand_duration(m: dict[str, tuple[str, str]]) -> float | None:
    for name in ("gpu__time_duration.sum", "Duration"):
        if name in m:
            unit, value = m[name]
            return float(value) * NS[unit]
    if "sm__cycles_elapsed.avg" in m and "sm__cycles_elapsed.avg.per_second" in m:
        assert m["sm__cycles_elapsed.avg.per_second"][0] == "cycle/second"
        cycles = float(m["sm__cycles_elapsed.avg"][1])
        return cycles / float(m["sm__cycles_elapsed.avg.per_second"][1]) * 1e9
    return None


def dispatches(profile: Profile) -> list[tuple[int, int, int | None, int | None]]:
    rows = profile.con.execute(
        "SELECT pid, dispatch_id, start_ns, end_ns FROM dispatches ORDER BY rowid"
    ).fetchall()
    return [(int(p), int(i), s, e) for p, i, s, e in rows]


def counters(profile: Profile, dispatch_id: int = 0) -> dict[str, float]:
    rows = profile.con.execute(
        f"""SELECT c.counter, c.value FROM {NAMED_COUNTERS} c
        JOIN dispatches d ON d.rowid = c.row_id
        WHERE d.dispatch_id = ?""",
        [dispatch_id],
    ).fetchall()
    return {str(k): float(v) for k, v in rows}


# -- units ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("unit", "factor"),
    [
        ("", 1.0), ("%", 1.0), ("byte", 1.0), ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte", 1e9),
        ("nsecond", 1e-9), ("ns", 1e-9), ("usecond", 1e-6), ("us", 1e-6), ("msecond", 1e-3),
        ("ms", 1e-3), ("second", 1.0), ("hz", 1.0), ("Khz", 1e3), ("Mhz", 1e6), ("Ghz", 1e9),
        ("cycle/second", 1.0), ("cycle/nsecond", 1e9), ("cycle/usecond", 1e6),
        ("Gbyte/s", 1e9), ("Tbyte/s", 1e12), ("Mbyte/second", 1e6), ("Kbyte/s", 1e3),
        ("byte/block", 1.0), ("Kbyte/block", 1e3), ("inst/cycle", 1.0), ("register/thread", 1.0),
        ("sector", 1.0), ("Msector", 1e6), ("SM", 1.0), ("cluster", 1.0),
    ],
)  # fmt: skip
def test_unit_factor(unit: str, factor: float) -> None:
    assert unit_factor(unit) == pytest.approx(factor, rel=1e-15)


@pytest.mark.parametrize("unit", ["furlong", "Xbyte", "byte/fortnight", "mbyte"])
def test_unknown_unit(unit: str) -> None:
    assert unit_factor(unit) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,024", 1024.0), ("9,495.42", 9495.42), ("12,532,580,352", 12532580352.0),
        ("3995313115.40", 3995313115.40), ("0", 0.0), ("1.234.567,89", 1234567.89),
        ("n/a", None), ("PolicySpread", None), ("", None), ("nan", None), ("inf", None),
    ],
)  # fmt: skip
def test_parse_number(text: str, value: float | None) -> None:
    assert parse_number(text) == value


# -- the corpus -----------------------------------------------------------------------------


@pytest.mark.skipif(not CORPUS.exists(), reason="shared corpus not present")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_launches_and_durations_equal_hand_parse(path: Path) -> None:
    profile = read(path)
    expected = hand_launches(path)
    got = dispatches(profile)
    assert [(p, i) for p, i, _, _ in got] == [(p, i) for p, i, _ in expected]
    clock = 0
    for (_, _, start, end), (_, _, ns) in zip(got, expected, strict=True):
        if ns is None:
            assert start is None and end is None
            continue
        assert (start, end) == (clock, clock + round(ns))
        clock = end
    assert profile.inputs[0].on_timeline is False
    assert profile.inputs[0].rows == len(expected)
    rules = sum(1 for r in hand_rows(path) if r.get("Rule Name"))
    assert profile.count("producer_rules") == rules


@pytest.mark.skipif(not CORPUS.exists(), reason="shared corpus not present")
def test_pooling_header_c_arch_and_rules() -> None:
    profile = read(CORPUS / "leleucas-opanalysis-a100" / "pooling_nsight16.csv")
    assert profile.run.arch == "sm_80"
    assert profile.count("dispatches") == 240


def test_copied_files_equal_the_corpus() -> None:
    if not CORPUS.exists():
        pytest.skip("shared corpus not present")
    for mine in NCU.rglob("*.c*"):
        rel = mine.relative_to(NCU)
        parts = rel.parts
        if parts[0].startswith("roofscope-profile"):
            continue  # written here by roofscope profile, not copied (see PROVENANCE.md)
        if parts[0].startswith("asymgemm-"):
            continue  # copied from its own repository, not the shared corpus (PROVENANCE.md)
        theirs = (
            CORPUS / parts[0] / "ncu-v2" / Path(*parts[1:])
            if parts[0].startswith("llm-perf-opt")
            else CORPUS / rel
        )
        assert mine.read_bytes() == theirs.read_bytes(), rel


# -- values converted by hand ---------------------------------------------------------------


def test_llm_perf_opt_auto_scaled_units() -> None:
    profile = read(NCU / LLM / "ncu.details.csv")
    c = counters(profile)
    assert c["dram__bytes_read.sum"] == pytest.approx(2.33e6)  # "Mbyte","2.33"
    assert c["dram__bytes_write.sum"] == 0.0
    assert c["gpu__time_duration.sum"] == pytest.approx(6.75e-6)  # "us","6.75", in seconds
    assert c["gpc__cycles_elapsed.max"] == 13485.0  # Elapsed Cycles "13,485"
    assert c["sm__cycles_active.avg"] == pytest.approx(9495.42)  # "9,495.42"
    assert c["gpc__cycles_elapsed.avg.per_second"] == pytest.approx(1.99e9)  # "Ghz","1.99"
    # Memory Throughput means two metrics: % in SpeedOfLight, Gbyte/s in Memory Workload
    assert c["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"] == 19.66
    assert c["dram__bytes.sum.per_second"] == pytest.approx(345.14e9)
    assert c["lts__t_sector_hit_rate.pct"] == 27.66
    assert c["sm__warps_active.avg.pct_of_peak_sustained_active"] == 11.32
    assert c["Memory Workload Analysis/L2 Compression Ratio"] == 0.0
    assert "flop_count_sp.sum" not in c  # "n/a"
    assert dispatches(profile) == [(int(hand_rows(NCU / LLM / "ncu.details.csv")[0]["Process ID"]),
                                    0, 0, 6750)]  # fmt: skip
    assert profile.run.arch == "sm_120"


def test_llm_perf_opt_body_item_labels() -> None:
    profile = read(NCU / LLM / "ncu.section_SpeedOfLight_RooflineChart.csv")
    c = counters(profile)
    chart = "GPU Speed Of Light Roofline Chart"
    assert c[f"{chart}/Single Precision Roofline/SM Frequency"] == pytest.approx(2.15e9)
    assert c[f"{chart}/Single Precision Roofline/Theoretical Predicated-On FFMA Operations"] == (
        43520.0
    )
    assert c[f"{chart}/Double Precision Achieved Value/DRAM Bandwidth"] == pytest.approx(345.14e9)
    assert c[f"{chart}/Predicated-On FFMA Thread Instructions Executed Per Cycle"] == 79.06
    assert [w.code for w in profile.warnings] == ["ncu-no-duration"]


def test_superbench_launch_shape_rules_and_hz() -> None:
    profile = read(SUPERBENCH)
    c = counters(profile)
    assert c["gpc__cycles_elapsed.avg.per_second"] == pytest.approx(1239496049.13)  # "hz"
    assert c["gpu__time_duration.sum"] == pytest.approx(406240e-9)
    assert c["launch__registers_per_thread"] == 168.0
    assert "Launch Statistics/Function Cache Configuration" not in c  # CachePreferNone
    launches = profile.launches().fetchall()
    columns = profile.launches().columns
    row = dict(zip(columns, launches[0], strict=True))
    # Grid Size "(9, 32, 1)" x Block Size "(384, 1, 1)"; LDS = static 0 + dynamic 205,696
    assert (row["grid_size"], row["workgroup_size"]) == (9 * 32 * 384, 384)
    assert (row["lds_bytes"], row["arch_vgpr"], row["wave_size"]) == (205696, 168, 32)
    assert row["grid_size"] == c["launch__thread_count"]  # the Threads label: 110592
    assert row["dispatches"] == 1 and row["stream"] == 7
    rules = profile.con.execute(
        "SELECT section, rule, kind, speedup_kind, speedup_pct FROM producer_rules ORDER BY rowid"
    ).fetchall()
    assert rules[0] == ("SpeedOfLight", "SOLBottleneck", "OPT", None, None)
    assert ("Occupancy", "TheoreticalOccupancy", "OPT", "local", 81.25) in rules
    assert [r[4] for r in rules if r[1] == "WorkloadImbalance"] == [5.818, 6.24, 5.818, 14.55]
    assert profile.run.arch == "sm_100"


def test_saxpy_bom_crlf_and_separators() -> None:
    path = NCU / "gpu-roofline-profiler-rtx5070" / "saxpy.csv"
    assert path.read_bytes().startswith(b"\xef\xbb\xbf==PROF==")
    profile = read(path)
    c = counters(profile)
    assert c["dram__bytes_op_read.sum"] == 134221568.0  # "134,221,568"
    assert dispatches(profile)[0][2:] == (0, 292928)  # "ns","292,928"
    name = profile.con.execute("SELECT raw_name FROM names").fetchone()
    assert name == ("unnamed>::saxpy_kernel(float, const float *, float *, int)",)
    # saxpy reads x and y and writes y: 2 FLOPs per element; its grid is (65536) x (256)
    elements = 65536 * 256
    work = evaluate(nvidia.BYTES, as_counters(c))
    assert work["hbm"][0] == 134221568 + 43631104
    assert work["hbm-read"][0] == pytest.approx(elements * 8, rel=1e-3)  # x and y, 4 B each
    assert "fp32-vector" not in evaluate(nvidia.FLOPS, Counters({}))


def test_old_headers_have_no_arch() -> None:
    profile = read(VIRTUAL)
    assert profile.run.arch is None
    assert [(p, i) for p, i, _, _ in dispatches(profile)] == [(91941, 0), (91941, 1)]


def test_nersc_metrics_give_work_by_hand() -> None:
    """nsight_virtual.csv launch 0: the NERSC metric set, every value typed in by hand."""
    c = as_counters(counters(read(VIRTUAL), 0))
    flops = evaluate(nvidia.FLOPS, c)
    assert flops["fp32-vector"][0] == 2 * 65536 + 6144 + 8192  # ffma, fadd, fmul
    assert flops["fp64-vector"][0] == 0 and flops["fp16-vector"][0] == 0
    assert "fp16-matrix" not in flops  # tensor instructions without a known factor on sm_80
    nbytes = evaluate(nvidia.BYTES, c)
    assert (nbytes["hbm"][0], nbytes["l2"][0], nbytes["vl1d"][0]) == (512, 233856, 384)
    assert "hbm-read" not in nbytes


def test_conv2d_rules_and_cycle_time() -> None:
    profile = read(NCU / "leleucas-opanalysis-a100" / "conv2d_result.csv")
    c = counters(profile)
    assert c["sm__cycles_elapsed.avg.per_second"] == pytest.approx(959621505.52)
    end = dispatches(profile)[0][3]
    assert end == round(c["sm__cycles_elapsed.avg"] / 959621505.52 * 1e9)
    kinds = profile.con.execute("SELECT section, kind FROM producer_rules").fetchall()
    assert len(kinds) == 2 and all(k in ("OPT", "WRN", "INF") for _, k in kinds)


# -- work formulas --------------------------------------------------------------------------


def as_counters(values: dict[str, float]) -> Counters:
    return Counters({k: Column([v]) for k, v in values.items()})


def test_fp16_vector_uses_ncu_half_roofline_counting() -> None:
    c = Counters({nvidia.sass(op): Column([v]) for op, v in
                  {"hfma": 10.0, "hadd": 3.0, "hmul": 5.0}.items()})  # fmt: skip
    assert evaluate(nvidia.FLOPS, c)["fp16-vector"][0] == 4 * 10 + 2 * 3 + 2 * 5


def test_tensor_aggregate_is_not_added_to_its_parts() -> None:
    base = "sm__ops_path_tensor_src_fp16"
    parts = {f"{base}_dst_fp16.sum": 100.0, f"{base}_dst_fp32.sum": 20.0}
    both = Counters({k: Column([v]) for k, v in {**parts, f"{base}.sum": 120.0}.items()})
    assert evaluate(nvidia.FLOPS, both)["fp16-matrix"][0] == 120.0
    only_parts = Counters({k: Column([v]) for k, v in parts.items()})
    assert evaluate(nvidia.FLOPS, only_parts)["fp16-matrix"][0] == 120.0
    one_part = Counters({f"{base}_dst_fp32.sum": Column([20.0])})
    assert "fp16-matrix" not in evaluate(nvidia.FLOPS, one_part)
    mixed = Counters({"sm__ops_path_tensor_src_fp16_bf16_tf32_dst_fp32.sum": Column([7.0])})
    assert evaluate(nvidia.FLOPS, mixed) == {}


def test_tensor_instructions_count_only_on_sm70() -> None:
    c = Counters({nvidia.TENSOR_INSTRUCTION: Column([3.0])})
    assert evaluate(nvidia.flops_for("sm_70"), c)["fp16-matrix"][0] == 3 * 512
    assert "fp16-matrix" not in evaluate(nvidia.flops_for("sm_80"), c)
    assert "fp16-matrix" not in evaluate(nvidia.flops_for(None), c)


def test_llm_perf_opt_tensor_counter() -> None:
    c = as_counters(counters(read(NCU / LLM / "ncu.details.csv")))
    flops = evaluate(nvidia.FLOPS, c)
    assert flops["bf16-matrix"][0] == 0.0  # sm__ops_path_tensor_src_bf16_dst_fp32.sum "0"
    nbytes = evaluate(nvidia.BYTES, c)
    assert nbytes["hbm"][0] == pytest.approx(2.33e6)  # read 2.33 Mbyte + write 0 byte


# -- other pages and bad input --------------------------------------------------------------

IDENT = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
IDENT += '"Block Size","Grid Size","Device","CC"'


def write(tmp_path: Path, text: str, name: str = "ncu.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, newline="")
    return path


def test_raw_page(tmp_path: Path) -> None:
    text = (
        "==PROF== Connected to process 250292\n"
        f'{IDENT},"device__attribute_display_name","device__attribute_multiprocessor_count",'
        '"dram__bytes.sum","gpu__time_duration.sum","launch__registers_per_thread"\n'
        '"","","","","","","","","","","","","","Kbyte","us","register/thread"\n'
        '"0","250292","python3.12","127.0.0.1","k1(int)","1","7","(16, 8, 1)","(148, 1, 1)","0",'
        '"10.0","NVIDIA B200","148","1,500","2.5","40"\n'
        '"1","250292","python3.12","127.0.0.1","k2","1","7","(32, 1, 1)","(2, 2, 1)","1",'
        '"10.0","NVIDIA B200","148","3","0.25","16"\n'
    )
    profile = read(write(tmp_path, text))
    assert dispatches(profile) == [(250292, 0, 0, 2500), (250292, 1, 2500, 2750)]
    assert counters(profile, 0)["dram__bytes.sum"] == 1.5e6
    assert profile.run.gpu == "NVIDIA B200" and profile.run.compute_units == 148
    assert profile.run.arch == "sm_100"
    devices = profile.con.execute("SELECT device FROM dispatches ORDER BY rowid").fetchall()
    assert devices == [(0,), (1,)]
    shapes = profile.launches().fetchall()
    assert len(shapes) == 2


SUMMARY_HEADER = (
    '"Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size","Device",'
    '"CC","Invocations","Section Name","Metric Name","Metric Unit","Minimum","Maximum","Average"'
)


def test_summary_page(tmp_path: Path) -> None:
    line = '"76","python3.8","127.0.0.1","{k}","(1024, 1, 1)","(216, 1, 1)","0","8.0","{n}",'
    line += '"Command line profiler metrics","{m}","{u}","{lo}","{hi}","{avg}"\n'
    text = SUMMARY_HEADER + "\n"
    text += line.format(k="kernel_B", n=100, m="gpu__time_active.avg", u="nsecond",
                        lo="90,016.00", hi="95,136.00", avg="93,188.16")  # fmt: skip
    text += line.format(k="kernel_A", n=4, m="gpu__time_duration.sum", u="usecond",
                        lo="1.00", hi="3.00", avg="2.00")  # fmt: skip
    text += line.format(k="kernel_A", n=4, m="dram__bytes.sum", u="Mbyte",
                        lo="1.00", hi="3.00", avg="2.00")  # fmt: skip
    path = write(tmp_path, text)
    assert Ncu().role(read_head(path)) == Role.KERNEL_SUMMARY
    profile = read(path, Role.KERNEL_SUMMARY)
    rows = profile.con.execute(
        """SELECT n.raw_name, s.calls, s.total_ns, s.mean_ns, s.min_ns, s.max_ns, s.pid
        FROM kernel_summary s JOIN names n USING (name_id) ORDER BY n.raw_name"""
    ).fetchall()
    assert rows[0] == ("kernel_A", 4, pytest.approx(8000.0), pytest.approx(2000.0),
                       pytest.approx(1000.0), pytest.approx(3000.0), 76)  # fmt: skip
    assert rows[1][:2] == ("kernel_B", 100)
    assert rows[1][2] == pytest.approx(93188.16 * 100)


def error(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def test_prof_only_file_is_detected_and_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "==PROF== Connected to process 91943 (/usr/bin/python3)\n"
        "==PROF== Target process 91943 terminated before first instrumented API call.\n"
        "==ERROR== The application returned an error code (1).\n"
        "==WARNING== No kernels were profiled.\n",
    )
    message = error(path)
    assert ":3:" in message and "The application returned an error code (1)." in message
    only_prof = write(tmp_path, "==PROF== Disconnected from process 1\n", "p.csv")
    assert "no kernels were profiled" in error(only_prof)


def test_truncated_last_row_is_left_out_with_a_warning(tmp_path: Path) -> None:
    text = SUPERBENCH.read_text()
    cut = text[: text.index('"Occupancy","","","","TheoreticalOccupancy"') + 30]
    profile = read(write(tmp_path, cut))
    assert [w.code for w in profile.warnings] == ["ncu-truncated"]
    assert profile.count("producer_rules") == 3  # the cut rule row is not one


def test_row_cut_short_in_the_middle_is_refused(tmp_path: Path) -> None:
    lines = VIRTUAL.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith('"0"'))
    row = lines[first]
    lines[first] = row[: row.index(',"127.0.0.1"')] + "\n"  # 3 fields
    message = error(write(tmp_path, "".join(lines)))
    assert f":{first + 1}: a row has 3 fields where 12 were expected" in message
    lines[first] = row[:60] + "\n"  # inside a quoted field
    message = error(write(tmp_path, "".join(lines), "open.csv"))
    assert f":{first + 1}: is not valid CSV (a quoted field is not closed" in message


def test_non_integer_id(tmp_path: Path) -> None:
    text = VIRTUAL.read_text().replace('"1","91941"', '"x1","91941"', 1)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith('"x1"'))
    message = error(write(tmp_path, text))
    assert f":{line}:" in message and "ID 'x1' is not an integer" in message


def test_id_past_64_bits(tmp_path: Path) -> None:
    """An ID of 40 digits is no launch id: refused naming the line, not an OverflowError."""
    big = "9" * 40
    text = VIRTUAL.read_text().replace('"0","91941"', f'"{big}","91941"', 1)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith(f'"{big}"'))
    message = error(write(tmp_path, text))
    assert f":{line}: ID '{big}' is not an integer of 64 bits" in message


def test_stream_past_64_bits_is_unknown(tmp_path: Path) -> None:
    """Was 'could not be read as ncu (Python int too large to convert to C long)'."""
    text = VIRTUAL.read_text().replace('"1","7","Command', f'"1","{"9" * 40}","Command')
    profile = read(write(tmp_path, text))
    profile.launches()
    assert profile.con.execute("SELECT DISTINCT stream FROM launches").fetchall() == [(None,)]


def test_duration_beyond_any_kernel(tmp_path: Path) -> None:
    """1e30 s laid end to end overflowed the 64-bit start and end times."""
    old = '"gpu__time_duration.sum","nsecond","7,488"'
    text = VIRTUAL.read_text().replace(old, '"gpu__time_duration.sum","second","1e30"', 1)
    assert error(write(tmp_path, text)) == (
        f"{tmp_path / 'ncu.csv'}: launch 0 of process 91941 ('ampere_sgemm_32x32_sliced1x4_tn') "
        f"lasts a {len(str(10**39))}-digit number of ns, beyond any kernel's time; pass the "
        "report as ncu wrote it"
    )


def test_launch_shapes_past_64_bits_are_unknown() -> None:
    assert ncu_units.product("(4294967296, 4294967296, 1)") is None  # 2^64 blocks
    assert ncu_units.product("(2147483647, 65535, 65535)") == 2147483647 * 65535 * 65535
    assert ncu_units.integer(str(2**63)) is None
    assert ncu_units.integer(str(2**63 - 1)) == 2**63 - 1


def test_header_missing_columns(tmp_path: Path) -> None:
    path = write(tmp_path, '"ID","Process ID","Kernel Name","Metric Name"\n"0","1","k","x"\n')
    assert "lacks columns Section Name, Metric Unit, Metric Value" in error(path)


def test_not_ncu(tmp_path: Path) -> None:
    path = write(tmp_path, '"Name","Calls"\n"k",1\n')
    assert not Ncu().detect(read_head(path))
