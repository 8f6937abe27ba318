"""compare: matching, speedups with their spread, attribution and the CI gate."""

from __future__ import annotations

import csv
import json
import random
from importlib import resources
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from roofscope.cli.app import main
from roofscope.model.names import normalise
from roofscope.verify.quality import RUN_MIXING
from tests.conftest import DATA, DEMO, SHARED_CORPUS

TRACE = DEMO / "results.csv"


SCHEMA = json.loads(
    (resources.files("roofscope") / "schema" / "compare-v1.schema.json").read_text("utf-8")
)


def compare_json(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> dict[str, Any]:
    """``roofscope compare ARGS --json``, checked against the shipped schema."""
    got = main(["compare", *args, "--json"])
    out, err = capsys.readouterr()
    assert got == code, err
    doc: dict[str, Any] = json.loads(out)
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    return doc


def rewrite(src: Path, dst: Path, edit: Any) -> Path:
    """A copy of a rocprof v1 trace with each row passed through ``edit`` (None drops it)."""
    with src.open(newline="") as f:
        rows = list(csv.DictReader(f))
        header = list(rows[0].keys())
    kept = [r for r in (edit(dict(r)) for r in rows) if r is not None]
    dst.parent.mkdir(parents=True, exist_ok=True)
    with dst.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, quoting=csv.QUOTE_ALL)
        w.writeheader()
        w.writerows(kept)
    return dst


def scale(factors: dict[str, float]) -> Any:
    def edit(r: dict[str, str]) -> dict[str, str]:
        f = next((v for k, v in factors.items() if k in r["KernelName"]), 1.0)
        begin, end = int(r["BeginNs"]), int(r["EndNs"])
        r["EndNs"] = str(begin + round((end - begin) * f))
        r["DurationNs"] = str(int(r["EndNs"]) - begin)
        return r

    return edit


def totals(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            k = normalise(r["KernelName"])
            out[k] = out.get(k, 0) + int(r["EndNs"]) - int(r["BeginNs"])
    return out


SELF_PREFIXES = ("rocprof-compute-m", "rocprof-compute-o", "rocprofv3-", "summary", "omniperf")
SELF = [DEMO, *(p for p in sorted(DATA.iterdir()) if p.name.startswith(SELF_PREFIXES))]


def analyze_warnings(capsys: pytest.CaptureFixture[str], path: Path) -> list[tuple[str, Any]]:
    """(code, kernel, message) of what ``analyze --json`` warns about one profile: its
    warnings, then its validity findings (skips a folder that analyze does not read)."""
    if main(["analyze", str(path), "--json"]) != 0:
        capsys.readouterr()
        pytest.skip(f"{path.name} is not a profile roofscope reads as a whole")
    doc = json.loads(capsys.readouterr().out)
    return [(w["code"], None, w["message"]) for w in doc["warnings"]] + [
        (f["rule"], f["kernel"], f["summary"]) for f in doc["findings"] if f["kind"] == "validity"
    ]


def assert_gate_of_self_compare(doc: dict[str, Any], warned: list[tuple[str, Any]]) -> None:
    """A profile against itself: both sides carry what analyze warns about it, and the gate
    passes unless that says the profile mixes runs or clocks (then it fails on both sides,
    and for no other reason: every check is 1x)."""
    for side in ("baseline", "candidate"):
        got = [(w["code"], w["kernel"], w["message"]) for w in doc["warnings"] if w["side"] == side]
        assert got == warned
    mixing = [w for w in warned if w[0] in RUN_MIXING]
    assert doc["gate"]["passed"] == (not mixing)
    assert [(w["side"], w["code"]) for w in doc["gate"]["blocked_by"]] == [
        (side, w[0]) for side in ("baseline", "candidate") for w in mixing
    ]
    assert len(doc["gate"]["reasons"]) == 2 * len(mixing)
    assert not any(c["failed"] for c in doc["gate"]["checks"])


@pytest.mark.parametrize("folder", SELF, ids=lambda p: p.name)
def test_a_profile_against_itself(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    """rocprofv3-counters and rocprofv3-layouts hold files of several runs side by side
    (clocks-apart): against themselves they now fail the gate (they passed before, a
    comparison of several runs added up as one)."""
    warned = analyze_warnings(capsys, folder)
    mixing = any(w[0] in RUN_MIXING for w in warned)
    doc = compare_json(
        capsys, str(folder), str(folder), "--fail-if-slower", "0", "--fail-if-kernel-slower", "0",
        code=3 if mixing else 0,
    )  # fmt: skip
    assert doc["added"] == [] and doc["removed"] == []
    assert doc["kernels"] and all(k["matched_by"] == "name" for k in doc["kernels"])
    assert all(k["speedup"] == 1.0 for k in doc["kernels"] if k["total_s"][0] > 0)
    assert_gate_of_self_compare(doc, warned)


def test_scaled_kernels(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """laplacian 1.5x slower, test_function 4x faster, check_kernel 2x slower (0.04 % of the
    time: below --min-share, so the gate does not look at it)."""
    factors = {"laplacian_kernel": 1.5, "test_function_kernel": 0.25, "check_kernel": 2.0}
    new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale(factors))
    base_t, new_t = totals(TRACE), totals(new)
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    doc = compare_json(
        capsys, str(TRACE), str(new), "--fail-if-kernel-slower", "10", "--min-share", "0.01",
        "--junit", str(junit), "--markdown", str(md), code=3,
    )  # fmt: skip
    kernels = {k["base_name"]: k for k in doc["kernels"]}
    delta = sum(new_t.values()) - sum(base_t.values())
    for name, t in base_t.items():
        k = kernels[name]
        assert k["speedup"] == pytest.approx(t / new_t[name], rel=1e-12)
        assert k["attribution"] == pytest.approx((new_t[name] - t) / delta, rel=1e-9)
    assert sum(k["attribution"] for k in doc["kernels"]) == pytest.approx(1.0)
    e = doc["end_to_end"]
    assert e["speedup"] == pytest.approx(sum(base_t.values()) / sum(new_t.values()), rel=1e-12)
    lap = next(k for k in kernels if "laplacian" in k)
    assert kernels[lap]["interval"]["beyond_noise"] and kernels[lap]["interval"]["high"] < 1
    failed = [c["name"] for c in doc["gate"]["checks"] if c["failed"]]
    assert failed == [lap]
    checked = {c["name"] for c in doc["gate"]["checks"]}
    assert not any("check_kernel" in n for n in checked)  # 2x slower but below --min-share
    suite = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert suite.get("failures") == "1" and cases[lap].find("failure") is not None
    assert md.read_text(encoding="utf-8").startswith("### roofscope compare: FAIL")


def test_renamed_and_missing_kernels(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The candidate's laplacian_kernel<double> became laplacian_kernel<float> (same launch
    shape), its names lost rocprof's [clone .kd], and check_kernel is gone."""

    def edit(r: dict[str, str]) -> dict[str, str] | None:
        if "check_kernel" in r["KernelName"]:
            return None
        name = r["KernelName"].replace(" [clone .kd]", "")
        r["KernelName"] = name.replace("laplacian_kernel<double>", "laplacian_kernel<float>")
        return r

    new = rewrite(TRACE, tmp_path / "new" / "results.csv", edit)
    doc = compare_json(capsys, str(TRACE), str(new))
    similar = [k for k in doc["kernels"] if k["matched_by"] == "similarity"]
    assert [(k["base_name"], k["new_name"]) for k in similar] == [
        (
            "void laplacian_kernel<double>(double*, double const*, int, int, int, double, "
            "double, double, double)",
            "void laplacian_kernel<float>(double*, double const*, int, int, int, double, "
            "double, double, double)",
        )
    ]
    assert 0.9 < similar[0]["score"] < 1
    (check,) = [k for k in totals(TRACE) if "check_kernel" in k]
    assert doc["removed"] == [check]
    assert doc["added"] == []
    removed = next(k for k in doc["kernels"] if k["matched_by"] == "removed")
    assert removed["delta_s"] < 0 and removed["total_s"][1] == 0


VCOPY = SHARED_CORPUS / "amd/rocprof-compute-vcopy-2025"


@pytest.mark.skipif(not VCOPY.is_dir(), reason="needs ../shared/corpus")
def test_vcopy_from_mi200_to_mi300x(capsys: pytest.CaptureFixture[str]) -> None:
    doc = compare_json(capsys, str(VCOPY / "MI200"), str(VCOPY / "MI300X_A1_rocpd"))
    (k,) = [k for k in doc["kernels"] if k["base_name"].startswith("vecCopy(")]
    assert k["matched_by"] == "name"
    assert k["speedup"] == pytest.approx(k["total_s"][0] / k["total_s"][1])
    roof = k["roofline"]
    assert roof["level"] == "hbm" and None not in roof["efficiency"]
    assert roof["achieved_bytes_s"][0] != roof["achieved_bytes_s"][1]


def test_resampled_runs_are_within_noise(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Two 'runs': the candidate's laplacian durations are a resample (with replacement) of
    the baseline's own. A 0.1 % threshold is crossed by chance, never beyond noise."""
    with TRACE.open(newline="") as f:
        lap = [int(r["EndNs"]) - int(r["BeginNs"]) for r in csv.DictReader(f)
               if "laplacian" in r["KernelName"]]  # fmt: skip
    rng = random.Random(7)
    drawn = iter([rng.choice(lap) for _ in lap])

    def edit(r: dict[str, str]) -> dict[str, str]:
        if "laplacian" in r["KernelName"]:
            r["EndNs"] = str(int(r["BeginNs"]) + next(drawn))
        return r

    new = rewrite(TRACE, tmp_path / "new" / "results.csv", edit)
    doc = compare_json(capsys, str(TRACE), str(new), "--fail-if-kernel-slower", "0.001")
    k = next(k for k in doc["kernels"] if "laplacian" in k["base_name"])
    assert k["speedup"] != 1.0 and not k["interval"]["beyond_noise"]
    assert doc["gate"]["passed"]


CORPUS_DIRS = (
    sorted(
        [*(SHARED_CORPUS / "amd").glob("*/"), *(SHARED_CORPUS / "amd").glob("rocprof-compute-*/*/")]
    )
    if SHARED_CORPUS.is_dir()
    else []
)


@pytest.mark.parametrize("folder", CORPUS_DIRS, ids=lambda p: p.name)
def test_corpus_profile_against_itself(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    warned = analyze_warnings(capsys, folder)
    mixing = any(w[0] in RUN_MIXING for w in warned)
    doc = compare_json(capsys, str(folder), str(folder), "--fail-if-slower", "0",
                       "--fail-if-kernel-slower", "0", code=3 if mixing else 0)  # fmt: skip
    assert doc["added"] == [] and doc["removed"] == []
    assert all(k["speedup"] in (1.0, None) for k in doc["kernels"])
    assert_gate_of_self_compare(doc, warned)


def test_rocprof_v1_against_rocprofv3(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The demo's rocprof v1 trace written again as a rocprofv3 kernel_trace.csv (2025-08
    layout, names without [clone .kd]): every kernel matches by name, 1.00x."""
    header = (
        '"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
        '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size",'
        '"Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X",'
        '"Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"'
    )
    lines = [header]
    with TRACE.open(newline="") as f:
        for i, r in enumerate(csv.DictReader(f)):
            name = r["KernelName"].replace(" [clone .kd]", "")
            lines.append(
                f'"KERNEL_DISPATCH","Agent {r["gpu-id"]}",1,1,{r["tid"]},{i + 1},1,"{name}",'
                f"{i + 1},{r['BeginNs']},{r['EndNs']},{r['lds']},{r['scr']},{r['arch_vgpr']},"
                f"{r['accum_vgpr']},{r['sgpr']},{r['wgr']},1,1,{r['grd']},1,1"
            )
    v3 = tmp_path / "42" / "42_kernel_trace.csv"
    v3.parent.mkdir()
    v3.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = compare_json(capsys, str(TRACE), str(v3))
    assert doc["added"] == [] and doc["removed"] == []
    assert len(doc["kernels"]) == 4
    assert all(k["matched_by"] == "name" and k["speedup"] == 1.0 for k in doc["kernels"])


def test_terminal_view_and_closed_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    new = rewrite(TRACE, tmp_path / "new" / "results.csv", scale({"laplacian_kernel": 0.5}))
    assert main(["compare", str(TRACE), str(new)]) == 0
    out = capsys.readouterr().out
    assert f"baseline {TRACE} (1 run) vs {new} (1 run)" in " ".join(out.split())
    # 2.6086 s of laplacian halved + 2.2 ms of the others = 1.3065 s
    # the 95 % interval as its two ends (1.998x to 1.999x), never "2.00 ± 0.00x"
    assert "End to end: kernel time 2.61 s -> 1.31 s: 2.00x faster [2.00, 2.00]" in out
    # no threshold given: no verdict (never a green PASS for a gate nobody set)
    assert "Gate: no gate set" in out and "PASS" not in out
    doc = compare_json(capsys, str(TRACE), str(new))
    doc["kernels"][0]["surprise"] = 1
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))


def test_several_runs_a_side(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two runs a side: speedup of the mean totals, interval bootstrapped over runs."""
    runs = {
        "b1": 1.0, "b2": 1.02, "n1": 0.5, "n2": 0.52,  # laplacian_kernel's scale per run
    }  # fmt: skip
    paths = {
        k: rewrite(TRACE, tmp_path / k / "results.csv", scale({"laplacian_kernel": f}))
        for k, f in runs.items()
    }
    doc = compare_json(
        capsys, str(paths["b1"]), str(paths["n1"]),
        "--base-run", str(paths["b2"]), "--new-run", str(paths["n2"]),
    )  # fmt: skip
    assert (doc["base"]["runs"], doc["new"]["runs"]) == (2, 2)
    lap = next(k for k in doc["kernels"] if "laplacian" in k["base_name"])
    t = {k: totals(p) for k, p in paths.items()}
    name = lap["base_name"]
    expected = (t["b1"][name] + t["b2"][name]) / (t["n1"][name] + t["n2"][name])
    assert lap["speedup"] == pytest.approx(expected, rel=1e-12)
    assert lap["interval"]["method"] == "bootstrap over runs" and lap["interval"]["beyond_noise"]
    assert doc["end_to_end"]["interval"]["method"] == "bootstrap over runs"


@pytest.mark.parametrize("option", ["--junit", "--markdown"])
def test_gate_files_are_written_whole_and_never_overwritten(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str
) -> None:
    """The CI files follow every output's rules: an existing one only with --force, an
    unwritable path one error line (was a traceback), written through a temporary file."""
    target = tmp_path / "gate.out"
    target.write_text("old", encoding="utf-8")
    args = ["compare", str(TRACE), str(TRACE), option, str(target)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err == (
        f"roofscope: error: {target}: exists; pass --force to overwrite it, or another path\n"
    )
    assert target.read_text(encoding="utf-8") == "old"
    assert main([*args, "--force"]) == 0
    written = target.read_text(encoding="utf-8")
    # no threshold given: the Markdown says so rather than PASS
    heading = "### roofscope compare: no gate set"
    assert written.startswith("<?xml" if option == "--junit" else heading)
    assert [p.name for p in tmp_path.iterdir()] == ["gate.out"]  # no temporary file left
    missing = tmp_path / "no-such-dir" / "gate.out"
    capsys.readouterr()
    assert main(["compare", str(TRACE), str(TRACE), option, str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"roofscope: error: {missing}: cannot be written (No such file or directory); "
        "pass a writable path\n"
    )
