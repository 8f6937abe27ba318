"""One run, counted once (issue 36, point 5): ncu pages of the same launches are one run,
kernel summaries of several configurations are separate runs with a warning, and a failed or
empty export beside a good one is named and left out.

Numbers come from the files themselves, parsed here with the csv module: the launches of
the real H200 ncu details page, the Duration and rules of llm-perf-opt's RTX 5090 exports,
the Total Time column of llm-perf-opt's nsys cuda_gpu_kern_sum reports. A raw page is written
from the details page's own launches (no public repository holds both pages of one run).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from roofscope.errors import EmptyInput, InputError
from roofscope.model.schema import Role
from roofscope.readers.load import load, run_paths
from tests.conftest import DATA, SHARED_CORPUS

H200 = DATA / "ncu" / "roofscope-profile-h200" / "ncu.csv"
GEMV = DATA / "ncu" / "llm-perf-opt-rtx5090" / "kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3"
NSYS = DATA / "nsys"
NCU_V2 = SHARED_CORPUS / "nvidia" / "llm-perf-opt-rtx5090" / "ncu-v2"
# llm-perf-opt's outputs/2025-10-30/05-21-26/ncu/raw.csv (MIT, commit b7c1bf11), whole: ncu
# refused the section filter and wrote its messages, no CSV
FAILED_NCU = DATA / "ncu-failed" / "llm-perf-opt" / "raw.csv"

Launch = tuple[int, int, str]  # process id, launch id, kernel name


def details_rows(path: Path) -> list[dict[str, str]]:
    lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.startswith('"')]
    rows = list(csv.reader(lines))
    return [dict(zip(rows[0], r, strict=False)) for r in rows[1:] if r[:2] != rows[0][:2]]


def h200_launches() -> dict[Launch, float]:
    """Each launch of the H200 details page and its gpu__time_duration.sum in ns."""
    out = {}
    for row in details_rows(H200):
        if row["Metric Name"] == "gpu__time_duration.sum":
            assert row["Metric Unit"] == "ns"
            key = (int(row["Process ID"]), int(row["ID"]), row["Kernel Name"])
            out[key] = float(row["Metric Value"].replace(",", ""))
    return out


def raw_page(path: Path, durations: dict[Launch, float], unit: str = "nsecond") -> Path:
    """An ncu --page raw CSV of these launches: identity columns, a unit row, the duration
    (in ``unit``, from ns) and one metric the details page lacks (sm__inst_executed.sum)."""
    scale = {"nsecond": 1.0, "usecond": 1e-3}[unit]
    ident = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context"]
    ident += ["Stream", "Block Size", "Grid Size", "Device", "CC"]
    header = [*ident, "gpu__time_duration.sum", "sm__inst_executed.sum"]
    lines = [header, [""] * len(ident) + [unit, "inst"]]
    for k, ((pid, launch, name), ns) in enumerate(durations.items()):
        value = f"{ns * scale:.3g}" if unit == "usecond" else f"{ns:,.0f}"
        row = [str(launch), str(pid), "python3.12", "127.0.0.1", name, "1", "7"]
        lines.append([*row, "(1, 1, 1)", "(1, 1, 1)", "0", "9.0", value, str(1000 + k)])
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(lines)
    return path


def counter(profile_path: list[str], name: str) -> list[float]:
    profile = load(profile_path)
    return [
        v
        for (v,) in profile.con.execute(
            """SELECT c.value FROM counters c JOIN counter_names n USING (counter_id)
            JOIN dispatches d ON d.rowid = c.row_id WHERE n.counter = ? ORDER BY d.rowid""",
            [name],
        ).fetchall()
    ]


def codes(paths: list[str]) -> list[str]:
    return [w.code for w in load(paths).warnings]


# -- ncu: the details and raw pages of one run ----------------------------------------------


def test_details_and_raw_page_of_one_run_count_its_launches_once(tmp_path: Path) -> None:
    """The H200 run's 10 launches, exported as details and raw pages: 10 dispatches, not 20,
    their time the details page's durations, no mixed-runs; the raw page's own metric is put
    on the launches."""
    durations = h200_launches()
    assert len(durations) == 10
    details = shutil.copy(H200, tmp_path / "details.csv")
    raw = raw_page(tmp_path / "raw.csv", durations)
    profile = load([str(tmp_path)])
    assert profile.count("dispatches") == 10
    assert [(f.path, f.role) for f in profile.inputs] == [
        (str(details), Role.DISPATCHES),
        (str(raw), Role.SAME_LAUNCHES),
    ]
    ((total,),) = profile.con.execute("SELECT sum(end_ns - start_ns) FROM dispatches").fetchall()
    assert total == sum(durations.values())
    assert "mixed-runs" not in [w.code for w in profile.warnings]
    assert profile.runs.read == (str(details),) and not profile.runs.separate
    assert counter([str(tmp_path)], "sm__inst_executed.sum") == [1000.0 + k for k in range(10)]


def test_raw_page_read_first_takes_the_details_page_onto_it(tmp_path: Path) -> None:
    """Named so that the raw page is read first: the details page's metrics go onto its
    launches (the device attributes that name the GPU among them)."""
    shutil.copy(H200, tmp_path / "b_details.csv")
    raw_page(tmp_path / "a_raw.csv", h200_launches())
    profile = load([str(tmp_path)])
    assert profile.count("dispatches") == 10
    assert [f.role for f in profile.inputs] == [Role.DISPATCHES, Role.SAME_LAUNCHES]
    names = counter([str(tmp_path)], "device__attribute_multiprocessor_count")
    assert names == [132.0] * 10  # H200: 132 SMs, as the details page says


def test_pages_of_one_run_are_read_in_one_process(tmp_path: Path) -> None:
    """Two pages that may hold the same launches are one unit of reading: never split over
    worker processes, where neither would see the other."""
    shutil.copy(H200, tmp_path / "details.csv")
    raw_page(tmp_path / "raw.csv", h200_launches())
    assert run_paths([str(tmp_path)]) == [[str(tmp_path)]]


def test_durations_rounded_to_three_digits_are_the_same_launches(tmp_path: Path) -> None:
    """A page printing the durations in µs to 3 significant digits (11,840 ns as 11.8)."""
    shutil.copy(H200, tmp_path / "details.csv")
    raw_page(tmp_path / "raw.csv", h200_launches(), unit="usecond")
    assert load([str(tmp_path)]).count("dispatches") == 10


@pytest.mark.parametrize("change", ["duration", "launch id", "one launch fewer"])
def test_other_launches_are_another_run(tmp_path: Path, change: str) -> None:
    """Launches that differ in duration (beyond rounding), id or number are another run:
    both are read, with the mixed-runs warning naming them."""
    durations = h200_launches()
    first = next(iter(durations))
    if change == "duration":
        durations[first] *= 1.5
    elif change == "launch id":
        durations[(first[0], 99, first[2])] = durations.pop(first)
    else:
        del durations[first]
    details = shutil.copy(H200, tmp_path / "details.csv")
    raw = raw_page(tmp_path / "raw.csv", durations)
    profile = load([str(tmp_path)])
    assert profile.count("dispatches") == 10 + len(durations)
    mixed = [w for w in profile.warnings if w.code == "mixed-runs"]
    assert len(mixed) == 1 and mixed[0].message.endswith(f"{details}, {raw}")


def test_section_export_of_the_gemv_joins_its_details_page() -> None:
    """llm-perf-opt's cuBLAS GEMV: ncu.details.csv and ncu.section_SpeedOfLight_RooflineChart
    .csv export the same launch (pid 1740670, ID 0). One dispatch of the details page's
    Duration (6.75 us); the chart's body-item metrics on it; each rule of the two files
    once; no ncu-no-duration (the chart page alone has none)."""
    details = details_rows(GEMV / "ncu.details.csv")
    chart = details_rows(GEMV / "ncu.section_SpeedOfLight_RooflineChart.csv")
    profile = load([str(GEMV)])
    assert [f.role for f in profile.inputs] == [Role.DISPATCHES, Role.SAME_LAUNCHES]
    duration = next(r for r in details if r["Metric Name"] == "Duration")
    assert (duration["Metric Unit"], duration["Metric Value"]) == ("us", "6.75")
    assert profile.con.execute("SELECT end_ns - start_ns FROM dispatches").fetchall() == [(6750,)]
    rules = {(r["Section Name"], r["Rule Name"]) for r in [*details, *chart] if r["Rule Name"]}
    held = profile.con.execute("SELECT section, rule FROM producer_rules").fetchall()
    assert sorted(held) == sorted(rules)
    fp = next(
        r
        for r in chart
        if r["Body Item Label"] == "Single Precision Roofline"
        and r["Metric Name"] == "SM Frequency"
    )
    assert (fp["Metric Unit"], fp["Metric Value"]) == ("Ghz", "2.15")
    chart_key = "GPU Speed Of Light Roofline Chart/Single Precision Roofline/SM Frequency"
    assert counter([str(GEMV)], chart_key) == [pytest.approx(2.15e9)]
    assert not {"ncu-no-duration", "mixed-runs"} & {w.code for w in profile.warnings}


@pytest.mark.skipif(not NCU_V2.is_dir(), reason="shared corpus not present")
def test_every_export_of_each_corpus_kernel_is_one_launch() -> None:
    """Each llm-perf-opt ncu-v2 kernel folder holds seven CSVs of its one launch (details,
    metrics, five sections): one dispatch, six same-launches inputs."""
    for folder in sorted(NCU_V2.iterdir()):
        profile = load([str(folder)])
        assert profile.count("dispatches") == 1, folder
        roles = [f.role for f in profile.inputs]
        assert roles == [Role.DISPATCHES] + [Role.SAME_LAUNCHES] * 6, folder


# -- several configurations of one experiment -----------------------------------------------


def kern_sum_total_ns(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as f:
        return sum(int(row["Total Time (ns)"]) for row in csv.DictReader(f))


def stages(tmp_path: Path) -> list[Path]:
    """llm-perf-opt's per-stage layout: <stage>/summary_cuda_gpu_kern_sum.csv."""
    out = []
    for stage in ("decode", "projector"):
        (tmp_path / stage).mkdir()
        target = tmp_path / stage / "summary_cuda_gpu_kern_sum.csv"
        out.append(Path(shutil.copy(NSYS / f"{stage}_cuda_gpu_kern_sum.csv", target)))
    return out


def test_kernel_summaries_of_several_configurations_are_separate_runs(tmp_path: Path) -> None:
    """The decode and projector stages of one DeepSeek-OCR experiment (two nsys stats
    reports): read as two runs with the mixed-runs warning naming both, not summed
    silently; the kernel time is still the two reports' Total Time together."""
    decode, projector = stages(tmp_path)
    profile = load([str(tmp_path)])
    assert profile.runs.read == (str(decode), str(projector)) and profile.runs.separate
    mixed = [w for w in profile.warnings if w.code == "mixed-runs"]
    assert len(mixed) == 1 and mixed[0].message.endswith(f"{decode}, {projector}")
    ((total,),) = profile.con.execute("SELECT sum(total_ns) FROM kernel_summary").fetchall()
    assert total == kern_sum_total_ns(decode) + kern_sum_total_ns(projector)


def test_kernel_summaries_of_numbered_ranks_are_one_job(tmp_path: Path) -> None:
    for rank, stage in enumerate(("decode", "projector")):
        (tmp_path / f"rank{rank}").mkdir()
        shutil.copy(NSYS / f"{stage}_cuda_gpu_kern_sum.csv", tmp_path / f"rank{rank}" / "k.csv")
    profile = load([str(tmp_path)])
    assert profile.runs.job == "their paths differ only in a rank number or process id"
    assert "mixed-runs" not in [w.code for w in profile.warnings]


def test_one_kernel_summary_is_one_run() -> None:
    path = NSYS / "decode_cuda_gpu_kern_sum.csv"
    profile = load([str(path)])
    assert profile.runs.read == (str(path),) and not profile.runs.separate
    assert profile.warnings == []


# -- a failed or empty export beside a good one ---------------------------------------------


def test_failed_ncu_export_beside_a_good_page_is_named(tmp_path: Path) -> None:
    """llm-perf-opt's failed ncu export (==ERROR== lines only) beside a good details page:
    the page is read (its 10 launches), the failed file named in an empty-export warning."""
    shutil.copy(H200, tmp_path / "details.csv")
    failed = shutil.copy(FAILED_NCU, tmp_path / "raw.csv")
    profile = load([str(tmp_path)])
    assert profile.count("dispatches") == 10
    (warning,) = [w for w in profile.warnings if w.code == "empty-export"]
    first = FAILED_NCU.read_text(encoding="utf-8").splitlines()[0]
    assert warning.message == (
        f"{failed}:1: holds no ncu CSV, only ncu messages: {first!r}; left out, the other "
        "files are read (fix what ncu reports and re-run it (no kernels were profiled))"
    )


def test_failed_ncu_export_alone_is_the_error() -> None:
    with pytest.raises(
        EmptyInput, match="holds no ncu CSV, only ncu messages: \"==ERROR== Option '--section"
    ):
        load([str(FAILED_NCU)])


def test_prof_lines_only_beside_a_good_page(tmp_path: Path) -> None:
    """An ncu log of ==PROF== lines (the kernel filter matched nothing), from the H200 page's
    own banner lines."""
    shutil.copy(H200, tmp_path / "details.csv")
    prof = [x for x in H200.read_text(encoding="utf-8").splitlines() if x.startswith("==PROF==")]
    (tmp_path / "nothing.csv").write_text("\n".join(prof) + "\n", encoding="utf-8")
    assert codes([str(tmp_path)]) == ["empty-export"]


def test_nsys_report_of_a_header_alone_beside_a_good_one(tmp_path: Path) -> None:
    decode, projector = stages(tmp_path)
    header = projector.read_text(encoding="utf-8").splitlines()[0]
    projector.write_text(header + "\n", encoding="utf-8")
    profile = load([str(tmp_path)])
    assert profile.runs.read == (str(decode),)
    ((total,),) = profile.con.execute("SELECT sum(total_ns) FROM kernel_summary").fetchall()
    assert total == kern_sum_total_ns(decode)
    (warning,) = profile.warnings
    assert (warning.code, warning.message) == (
        "empty-export",
        f"{projector}: has no rows; left out, the other files are read (check that the "
        "profiled program ran)",
    )


def test_nsys_skipped_message_beside_a_good_report(tmp_path: Path) -> None:
    """nsys stats' stdout when the capture holds no kernels (its words, as the Nsight
    Systems 2025.3 report scripts print them), saved as the stage's CSV."""
    _, projector = stages(tmp_path)
    message = f"SKIPPED: {tmp_path}/r.sqlite does not contain CUDA kernel data."
    projector.write_text(
        f"\nProcessing [{tmp_path}/r.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]..."
        f"\n{message}\n",
        encoding="utf-8",
    )
    profile = load([str(tmp_path)])
    assert [w.code for w in profile.warnings] == ["empty-export"]
    assert f"holds nsys's message and no kernel summary: {message!r}" in profile.warnings[0].message
    with pytest.raises(EmptyInput, match="re-run nsys profile with --trace=cuda"):
        load([str(projector)])


@pytest.mark.parametrize(
    ("content", "kind"), [(b"", "empty"), (b"\x00\x9f\x92\x96" * 64, "binary")]
)
def test_empty_or_binary_file_beside_a_good_one_is_named(
    tmp_path: Path, content: bytes, kind: str
) -> None:
    decode, projector = stages(tmp_path)
    projector.write_bytes(content)
    profile = load([str(tmp_path)])
    assert profile.runs.read == (str(decode),)
    assert [(w.code, w.message) for w in profile.warnings] == [
        (
            "empty-export",
            f"{projector}: is {kind}, no profiler output; left out, the other files are read "
            "(re-run the profiler for it, or delete it)",
        )
    ]


def test_empty_input_crosses_processes_as_itself() -> None:
    import pickle

    error = EmptyInput("a.csv", "has no rows", "re-run", line=3)
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is EmptyInput and str(back) == str(error) == "a.csv:3: has no rows; re-run"
    assert isinstance(back, InputError)
