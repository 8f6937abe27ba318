"""The catalogue's source table (data/gpus/): sources, consistency, and the generated file.

The values themselves are checked by hand, device by device, in test_gpu_table_*.py and
test_devices.py; here every cell is checked for what it cites and for agreeing with its
architecture's rates, and the packaged catalogue for being what the generator writes.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from roofscope.cli.app import main

ROOT = Path(__file__).parents[1]
DATA = ROOT / "data" / "gpus"
GENERATOR = ROOT / "tools" / "gen_devices.py"

# Hosts of documents their vendor publishes.
VENDOR_HOSTS = {
    "AMD": (
        "amd.com",
        "github.com/ROCm",
        "github.com/GPUOpen",
        "gpuopen.com",
        "gitlab.freedesktop.org/mesa/drm",
        "llvm.org/docs/AMDGPU",
    ),
    "NVIDIA": ("nvidia.com", "github.com/NVIDIA", "nvidia.github.io"),
}
# Blogs, forums, resellers, press and third-party databases: never a vendor document. (A
# vendor's own technical blog, rocm.blogs.amd.com or developer.nvidia.com/blog, is the
# vendor's publication, checked by host above; a forum on a vendor's host is not.)
NOT_VENDOR = re.compile(
    r"blog|forum|reddit|medium\.com|wikipedia|techpowerup|anandtech|tomshardware|notebookcheck"
    r"|heise|llmperf|spicedreamphone|hblas|videocardz|wccftech|servethehome|newegg|amazon\."
    r"|ebay|shop|store|stas00|ml-engineering|huggingface|gist\.github",
    re.IGNORECASE,
)
FORUM = re.compile(r"forum|community|reddit", re.IGNORECASE)
_GDDR = "NVIDIA's GeForce product page gives memory type and bus width, not the data rate"
# Values no vendor document states, each with why; any other secondary citation fails.
SECONDARY_ALLOWED: dict[tuple[str, str], str] = {
    ("h200-sxm", "compute_units"): "NVIDIA's H200 datasheet gives no SM count (ncu's record)",
    ("h200-sxm", "clock_mhz"): "NVIDIA's H200 datasheet gives no clock (ncu's record)",
    ("h200-sxm", "l2_mb"): "NVIDIA's H200 datasheet gives no L2 size (ncu's record)",
    ("b200", "compute_units"): "NVIDIA's B200 documents give no SM count (a device query)",
    **{
        ("h800-sxm", f): "NVIDIA's H800 datasheet could not be read (sec-h800-philisun)"
        for f in (
            "family",
            "compute_units",
            "memory_gb",
            "memory_type",
            "bus_width_bits",
            "hbm",
            "fp64-vector",
            "fp64-matrix",
            "fp32-vector",
            "tf32-matrix",
            "fp16-matrix",
            "bf16-matrix",
            "fp8-matrix",
            "int8-matrix",
        )
    },
    ("h200-sxm", "bus_width_bits"): "NVIDIA's H200 datasheet gives no bus width (ncu's record)",
    ("h800-pcie", "family"): "NVIDIA's H800 datasheet could not be read (sec-h800-philisun)",
    **{
        ("h20", f): "NVIDIA publishes no H20 datasheet (sec-h20-zangshuxian)"
        for f in (
            "family",
            "compute_units",
            "memory_gb",
            "memory_type",
            "hbm",
            "fp64-vector",
            "fp32-vector",
            "tf32-matrix",
            "fp16-matrix",
            "int8-matrix",
        )
    },
    **{
        ("mi308x", f): "AMD publishes no MI308X document (sec-mi308x-rocminfo)"
        for f in ("arch", "family", "compute_units", "memory_gb")
    },
    **{
        (key, "hbm"): _GDDR
        for key in (
            "rtx3060-12gb",
            "rtx3070ti",
            "rtx3080ti",
            "rtx3090ti",
            "rtx4060",
            "rtx4060ti",
            "rtx4070",
            "rtx4070-super",
            "rtx4070ti",
            "rtx4070ti-super",
            "rtx4080-super",
            "rtx5060",
            "rtx5060ti-16gb",
            "rtx5070",
            "rtx5070ti",
        )
    },
}


def on_vendor_host(url: str) -> bool:
    return any(h in url for hosts in VENDOR_HOSTS.values() for h in hosts)


def rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def value_files() -> list[Path]:
    return [
        p
        for p in sorted(DATA.glob("*.csv"))
        if not p.name.endswith(".sources.csv") and p.name != "archs.csv"
    ]


def sources() -> dict[str, dict[str, str]]:
    out = {}
    for path in sorted(DATA.glob("*.sources.csv")):
        for r in rows(path.name):
            out[r["id"]] = r
    return out


def cells() -> dict[str, dict[str, dict[str, str]]]:
    """device -> field -> row."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for path in value_files():
        for r in rows(path.name):
            out.setdefault(r["device"], {})[r["field"]] = r
    return out


def arch_rates() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for r in rows("archs.csv"):
        out.setdefault(r["arch"], {})[r["field"]] = r["value"]
    return out


def test_generator_reproduces_the_packaged_catalogue(tmp_path: Path) -> None:
    out = tmp_path / "devices.toml"
    cmd = [sys.executable, str(GENERATOR), "--data", str(DATA), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    packaged = resources.files("roofscope").joinpath("data/devices.toml").read_bytes()
    assert out.read_bytes() == packaged, "run: python tools/gen_devices.py"
    packaged_json = resources.files("roofscope").joinpath("data/devices.json").read_bytes()
    assert out.with_suffix(".json").read_bytes() == packaged_json, "run: tools/gen_devices.py"


def test_the_json_roofscope_reads_is_the_toml() -> None:
    """roofscope reads devices.json (2 ms) for devices.toml (110 ms with tomllib)."""
    data = resources.files("roofscope") / "data"
    toml = tomllib.loads(data.joinpath("devices.toml").read_text("utf-8"))
    assert json.loads(data.joinpath("devices.json").read_text("utf-8")) == toml
    assert len(toml["device"]) >= 80 and len(toml["arch"]) >= 20


def test_devices_json_lists_at_least_80_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["devices", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["devices"]
    assert len(listed) >= 80
    assert len({d["key"] for d in listed}) == len(listed)
    vendors = {d["vendor"] for d in listed}
    assert vendors == {"AMD", "NVIDIA"}
    for d in listed:
        assert d["units"]["called"] == ("SMs" if d["vendor"] == "NVIDIA" else "CUs"), d["key"]
        assert bool(d["ceilings"]) == (d["key"] not in NO_PEAKS), d["key"]
        assert all(c["source"] for c in d["ceilings"]), d["key"]


def test_every_vendor_source_is_published_by_its_vendor() -> None:
    for sid, s in sources().items():
        if s["kind"] == "secondary":
            assert s["note"].strip(), f"{sid}: a secondary source says why no vendor one serves"
            continue
        hosts = VENDOR_HOSTS[s["publisher"]]
        assert any(h in s["url"] for h in hosts), f"{sid}: {s['url']} is not {s['publisher']}'s"
        assert not FORUM.search(s["url"]), f"{sid}: {s['url']} is a forum, no vendor document"


def test_no_value_cites_a_blog_forum_or_reseller() -> None:
    """A secondary source only for a value no vendor document states (SECONDARY_ALLOWED)."""
    known = sources()
    cited_secondary = []
    for device, fields in cells().items():
        for field, r in fields.items():
            s = known[r["source"]]
            third_party = not on_vendor_host(s["url"]) and NOT_VENDOR.search(s["url"] + s["title"])
            if s["kind"] == "secondary" or third_party:
                cited_secondary.append((device, field))
    unexplained = [c for c in cited_secondary if c not in SECONDARY_ALLOWED]
    assert unexplained == []


def test_fp32_vector_follows_units_rate_and_clock() -> None:
    """fp32-vector = units x FP32 FLOP/clk/unit (archs.csv) x clock, within 1 %, for every
    part that states all four; a vendor figure off its own derivation fails here."""
    rates, checked, off = arch_rates(), 0, []
    for device, f in cells().items():
        needed = ("arch", "compute_units", "clock_mhz", "fp32-vector")
        if not all(k in f for k in needed) or "fp32-vector" not in rates.get(
            f["arch"]["value"], {}
        ):
            continue
        per_clock = float(rates[f["arch"]["value"]]["fp32-vector"])
        units, mhz = float(f["compute_units"]["value"]), float(f["clock_mhz"]["value"])
        expected = units * per_clock * mhz * 1e6 / 1e12
        stated = float(f["fp32-vector"]["value"])
        checked += 1
        if abs(stated - expected) > 0.01 * expected:
            off.append(f"{device}: {stated} stated, {expected:.4g} derived")
    assert checked >= 60
    assert off == []


# --- the tables' shape (every group) -------------------------------------------------------------
IDENTITY = ("vendor", "model", "arch", "family", "names")
FIELDS = (  # data/gpus/README.md, in its order
    "vendor", "model", "arch", "family", "names", "partitions", "compute_units", "clock_mhz",
    "memory_gb", "memory_type", "bus_width_bits", "l2_mb", "mall_mb", "wave_size",
    "max_waves_per_cu", "lds_kb_per_cu", "hbm", "l2", "fp64-vector", "fp32-vector",
    "fp64-matrix", "fp32-matrix", "tf32-matrix", "fp16-matrix", "bf16-matrix", "fp8-matrix",
    "int8-matrix",
)  # fmt: skip
# No document of its vendor states these parts' SM counts: no row rather than a guess.
NO_UNIT_COUNT = {"a30", "l4", "h100-nvl", "h200-nvl", "gh200-96gb", "gh200-144gb", "gb200", "b300"}
# Parts no document read states a peak of: named right, their ceilings from the profile.
NO_PEAKS = {"h800-pcie", "a800-sxm4-80gb", "a800-pcie-80gb", "mi308x"}
NO_UNIT_COUNT |= {"h800-pcie", "a800-sxm4-80gb", "a800-pcie-80gb"}
# Names a driver or profiler reports for several parts (a lookup by them is ambiguous).
SHARED_NAMES = {
    "AMD Instinct MI60 / MI50": {"mi50", "mi60"},
    "AMD Instinct MI250X / MI250": {"mi250", "mi250x"},
    "MI200": {"mi210", "mi250", "mi250x"},
}


def test_every_file_has_the_readme_columns() -> None:
    for path in value_files():
        with path.open(encoding="utf-8", newline="") as f:
            assert next(csv.reader(f)) == ["device", "field", "value", "source", "where"], path
    for path in DATA.glob("*.sources.csv"):
        with path.open(encoding="utf-8", newline="") as f:
            assert next(csv.reader(f)) == ["id", "kind", "publisher", "title", "url", "note"]


def test_every_device_has_its_identity_and_unit_count() -> None:
    for key, f in cells().items():
        missing = [x for x in IDENTITY if not f.get(x, {}).get("value")]
        assert not missing, f"{key} lacks {missing}"
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", key), key
        vendor, arch = f["vendor"]["value"], f["arch"]["value"]
        assert re.fullmatch(r"sm_\d+" if vendor == "NVIDIA" else r"gfx[0-9a-f]+", arch), key
        assert ("compute_units" in f) == (key not in NO_UNIT_COUNT), key


def test_each_device_is_one_block_in_readme_order_and_says_where() -> None:
    for path in value_files():
        table = rows(path.name)
        blocks = [
            r["device"]
            for i, r in enumerate(table)
            if i == 0 or table[i - 1]["device"] != r["device"]
        ]
        assert len(blocks) == len(set(blocks)), f"{path.name}: a device is split"
        for key in blocks:
            fields = [r["field"] for r in table if r["device"] == key]
            assert fields == sorted(fields, key=FIELDS.index), f"{key}: fields out of order"
        assert all(r["value"].strip() and r["where"].strip() for r in table), path.name


def test_every_cited_source_exists_once() -> None:
    ids = [r["id"] for p in sorted(DATA.glob("*.sources.csv")) for r in rows(p.name)]
    assert len(ids) == len(set(ids))
    cited = {r["source"] for p in value_files() for r in rows(p.name)}
    assert cited - set(ids) == set()


def test_a_name_is_one_parts_unless_the_driver_shares_it() -> None:
    owners: dict[str, set[str]] = {}
    for key, f in cells().items():
        for name in f["names"]["value"].split(";"):
            owners.setdefault(name, set()).add(key)
    assert {n: k for n, k in owners.items() if len(k) > 1} == SHARED_NAMES


def test_matrix_peaks_since_ampere_say_they_are_dense() -> None:
    """NVIDIA prints sparsity figures since Ampere; each such peak here says it is dense."""
    sparse_era = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120"}
    for key, f in cells().items():
        if f["vendor"]["value"] == "NVIDIA" and f["arch"]["value"] in sparse_era:
            for field in ("tf32-matrix", "fp16-matrix", "bf16-matrix", "fp8-matrix"):
                if field in f and "derived" not in f[field]["where"]:
                    assert "dense" in f[field]["where"].lower(), f"{key} {field}"


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ("x,vendor,AMD,nosuch,", "x.csv:2: source 'nosuch' is in no *.sources.csv"),
        (
            "x,vendor,AMD,s,\nx,model,M,s,\nx,arch,gfx1,s,\nx,family,F,s,\nx,names,N,s,\n"
            "x,fp32-vector,fast,s,",
            "x.csv:7: fp32-vector 'fast' is not a number",
        ),
        ("x,fp33-vector,1,s,", "x.csv:2: unknown field 'fp33-vector' (data/gpus/README.md)"),
        ("x,vendor,AMD,s,", "x.csv:2: device x has no model, arch, family, names"),
    ],
)
def test_a_malformed_table_stops_the_generator_with_one_line(
    tmp_path: Path, row: str, said: str
) -> None:
    (tmp_path / "x.sources.csv").write_text(
        "id,kind,publisher,title,url,note\ns,datasheet,AMD,T,https://www.amd.com/t,\n",
        encoding="utf-8",
    )
    (tmp_path / "x.csv").write_text(f"device,field,value,source,where\n{row}\n", encoding="utf-8")
    out = tmp_path / "devices.toml"
    cmd = [sys.executable, str(GENERATOR), "--data", str(tmp_path), "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (1, f"gen_devices: {said}\n")
    assert not out.exists() and not out.with_suffix(".json").exists()
