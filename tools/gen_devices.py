"""Write roofscope's GPU catalogue (src/roofscope/data/devices.toml) from the research CSV.

    python tools/gen_devices.py [--csv gpu_specs_research.csv] [-o devices.toml]

The CSV (``shared/data/gpu_specs_research.csv``, documented in ``shared/docs/gpu-specs.md``)
has one row per product, values in TFLOP/s, TOPS, GB/s, MHz, and a ``sources`` column of
``[tags] text`` groups. Every value written here carries the group that states it:

* a tag that writes the value itself (``1.228 TB/s``, ``INT8 184.6``, ``132 SMs``) wins;
* then a tag that names the field (``FP32 vec``, ``bandwidth``, ``clock``, ``LDS``);
* then a generic ``peaks`` tag (compute only; a ``dense`` one first for matrix peaks).

A group whose tags write a *different* value for the field is never its source; when
several groups write the value, all are named. Ties and gaps the rule cannot settle are
decided in ``OVERRIDES`` below, by hand, with the reason; the generator stops on any value
left undecided. Blank cells
stay absent. MI250/MI250X rows are whole modules of 2 GCDs; their ceilings are also
written per GCD (half the row), since ROCm shows each GCD as a device.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CSV = REPO.parent / "shared" / "data" / "gpu_specs_research.csv"
DEFAULT_OUT = REPO / "src" / "roofscope" / "data" / "devices.toml"
PREFIX = "gpu_specs_research.csv: "

# --- what each CSV row is called ------------------------------------------------------------
# Names a profiler or driver reports, with where they come from:
#   amdgpu.ids   libdrm data/amdgpu.ids (X11Libre/drm @fd15acdb): rocminfo "Marketing Name"
#   gpu_model    rocprof-compute/Omniperf gpu_model and workload folder names
#                (ROCm/rocm-systems projects/rocprofiler-compute/src/utils/mi_gpu_spec.yaml
#                @05119a7f; shared/corpus sysinfo.csv files; Omniperf 1.x writes lower case)
#   nvidia       NVIDIA/open-gpu-kernel-modules README.md "Compatible GPUs" product names
#                (what nvidia-smi and cudaGetDeviceProperties report)
#   corpus       shared/corpus traces (Tesla V100 names from PyTorch/Kineto traces)
# A name shared by several products ("AMD Instinct MI250X / MI250", "MI200", "MI300",
# "MI350") is listed under each of them: a lookup by it is ambiguous, never a guess.
# Matching ignores case and whitespace, so "mi100" and "MI100" are one name.


@dataclass(frozen=True)
class RowSpec:
    key: str
    names: tuple[str, ...]


ROWS: dict[str, RowSpec] = {
    "Instinct MI50 (32GB)": RowSpec(
        "mi50", ("AMD Instinct MI60 / MI50", "AMD Instinct MI50", "Instinct MI50", "MI50")
    ),
    "Instinct MI60": RowSpec(
        "mi60", ("AMD Instinct MI60 / MI50", "AMD Instinct MI60", "Instinct MI60", "MI60")
    ),
    # gfx908 is MI100 alone (ROCm gpu-arch-specs table), so the arch names it too.
    "Instinct MI100": RowSpec("mi100", ("AMD Instinct MI100", "Instinct MI100", "MI100", "gfx908")),
    "Instinct MI210": RowSpec("mi210", ("AMD Instinct MI210", "Instinct MI210", "MI210", "MI200")),
    "Instinct MI250 (OAM, 2 GCDs)": RowSpec(
        "mi250",
        ("AMD Instinct MI250X / MI250", "AMD Instinct MI250", "Instinct MI250", "MI250", "MI200"),
    ),
    "Instinct MI250X (OAM, 2 GCDs)": RowSpec(
        "mi250x",
        (
            "AMD Instinct MI250X",
            "AMD Instinct MI250X / MI250",
            "Instinct MI250X",
            "MI250X",
            "MI200",
        ),
    ),
    "Instinct MI300A (APU)": RowSpec(
        "mi300a",
        ("AMD Instinct MI300A", "Instinct MI300A", "MI300A", "MI300A_A1", "MI300A_A0", "MI300"),
    ),
    "Instinct MI300X": RowSpec(
        "mi300x",
        (
            "AMD Instinct MI300X",
            "AMD Instinct MI300X VF",
            "Instinct MI300X",
            "MI300X",
            "MI300X_A1",
            "MI300X_A0",
            "MI300",
        ),
    ),
    "Instinct MI325X": RowSpec(
        "mi325x", ("AMD Instinct MI325X", "Instinct MI325X", "MI325X", "MI300")
    ),
    # rocprof-compute's gpu_model "MI350" is MI350X (chip 30112) but its gpu_series is also
    # "MI350" for MI355X machines: shared, so ambiguous on purpose.
    "Instinct MI350X": RowSpec(
        "mi350x", ("AMD Instinct MI350X", "Instinct MI350X", "MI350X", "MI350")
    ),
    "Instinct MI355X": RowSpec(
        "mi355x", ("AMD Instinct MI355X", "Instinct MI355X", "MI355X", "MI355", "MI350")
    ),
    "Radeon RX 7900 XTX": RowSpec("rx7900xtx", ("AMD Radeon RX 7900 XTX", "RX 7900 XTX")),
    "Radeon PRO W7900": RowSpec(
        "w7900", ("AMD Radeon Pro W7900", "AMD Radeon Pro W7900 Dual Slot", "W7900")
    ),
    "Tesla V100 SXM2 (16/32 GB)": RowSpec(
        "v100-sxm2", ("Tesla V100-SXM2-32GB", "Tesla V100-SXM2-16GB", "V100 SXM2")
    ),
    "A100 SXM4 40GB": RowSpec("a100-sxm4-40gb", ("NVIDIA A100-SXM4-40GB",)),
    "A100 SXM4 80GB": RowSpec("a100-sxm4-80gb", ("NVIDIA A100-SXM4-80GB",)),
    "A100 PCIe 40GB": RowSpec("a100-pcie-40gb", ("NVIDIA A100-PCIE-40GB",)),
    "A100 PCIe 80GB": RowSpec("a100-pcie-80gb", ("NVIDIA A100 80GB PCIe",)),
    "H100 SXM5 80GB": RowSpec("h100-sxm", ("NVIDIA H100 80GB HBM3", "H100 SXM")),
    "H100 PCIe 80GB": RowSpec("h100-pcie", ("NVIDIA H100 PCIe",)),
    "H200 SXM 141GB": RowSpec("h200", ("NVIDIA H200",)),
    "B200 (HGX/DGX B200 SXM, 180GB)": RowSpec("b200", ("NVIDIA B200",)),
    "L40S": RowSpec("l40s", ("NVIDIA L40S",)),
    "GeForce RTX 4090": RowSpec("rtx4090", ("NVIDIA GeForce RTX 4090", "RTX 4090")),
}

# --- partitions ROCm shows as devices -------------------------------------------------------
# (kind, count, source); a source "[tag]" means that group of the row's sources column.
GCD_NOTE = "notes: whole-OAM values, 2 GCDs; each GCD is a separate ROCm device"
PARTITIONS: dict[str, tuple[str, int, str]] = {
    "Instinct MI250 (OAM, 2 GCDs)": ("gcd", 2, PREFIX + "Instinct MI250 " + GCD_NOTE),
    "Instinct MI250X (OAM, 2 GCDs)": ("gcd", 2, PREFIX + "Instinct MI250X " + GCD_NOTE),
    "Instinct MI300A (APU)": ("xcd", 6, "[partitions]"),
    "Instinct MI300X": (
        "xcd",
        8,
        "gpu-specs.md §5.1: MI300X compute partitions SPX/DPX/QPX/CPX = 8/4/2/1 XCDs per "
        "device (ROCm/rocm-systems projects/rocprofiler-compute/src/utils/mi_gpu_spec.yaml "
        "@05119a7f)",
    ),
}
SPLIT_SCOPE = "gcd"  # ceilings are written per partition for this kind only

# --- hand decisions -------------------------------------------------------------------------
# (row model, field) -> tags naming the group(s) that state the value (several: joined), or
# a full source text. Each says why the rule above could not decide.
OVERRIDES: dict[tuple[str, str], tuple[str, ...]] = {
    # Two copies of AMD's table give the same generic "peaks"; notes: hblas-bench is the one
    # read for the values, AnandTech's copy agrees.
    ("Instinct MI210", "compute:*"): ("[peaks]", "[same peaks]"),
    # Memory size no tag writes: the product is named by it (and the upb page is titled
    # "NVIDIA A100 40GB with NVLINK").
    ("A100 SXM4 40GB", "memory_gb"): ("[peaks w/ and w/o sparsity]",),
    ("A100 PCIe 40GB", "memory_gb"): ("product name: A100 PCIe 40GB",),
    ("H100 PCIe 80GB", "memory_gb"): ("product name: H100 PCIe 80GB",),
    # The group's text, not its tags, gives "L2 7050 GB/s" (GTC21 S33322 via elvispolimi).
    ("A100 PCIe 40GB", "memory:l2"): ("[hbm2 1555 gb/s]",),
    # FP64 (vector and tensor) and FP32 have no sparse variant: the datasheet copy states
    # them as they are; the "dense peaks" group is ml-engineering's halved tensor table.
    ("H100 SXM5 80GB", "compute:fp64:*"): ("[peaks(sparse)]",),
    ("H100 SXM5 80GB", "compute:fp32:*"): ("[peaks(sparse)]",),
    ("H100 PCIe 80GB", "compute:fp64:*"): ("[peaks(sparse)]",),
    ("H100 PCIe 80GB", "compute:fp32:*"): ("[peaks(sparse)]",),
    # No source writes FP16 165: the gist's figure is BF16, and the notes give FP16 with
    # FP32 accumulate the BF16 rate (third-party "330" is FP16 accumulate).
    ("GeForce RTX 4090", "compute:fp16:matrix"): (
        "[bf16 165 dense]",
        "CSV notes: FP16 with FP32 accumulate runs at this BF16 rate (330 is FP16 accumulate)",
    ),
}

# --- fields ---------------------------------------------------------------------------------
NUM = r"\d+(?:\.\d+)?"
ONE = Decimal(1)
TB_GB = {"tb/s": Decimal(1000), "gb/s": ONE}
DTYPE_RE = re.compile(r"\b(fp64|fp32|tf32|fp16|bf16|fp8|int8)\b")
IGNORED_TAG = re.compile(
    r"rate|/clk|/cycle|formula|measured|\bmaf\b|mamf|disagreement|cross-check|notes?\b"
    r"|datatypes|^sparsity( note)?$|rocprof|empirical|per-cu|per-sm|partitions|\bfp6\b|mem clock"
)


Written = tuple[Decimal, Decimal]  # a number as the tag writes it, and its scale to CSV units


@dataclass(frozen=True)
class Field:
    name: str  # device attribute, or ceiling "kind:dtype:unit" / "memory:level"
    column: str
    keyword: Callable[[str], bool]  # the tag names this field
    literals: Callable[[str], list[Written] | None]  # values the tag writes


def _numbers(text: str, scale: Decimal = Decimal(1)) -> list[Written]:
    return [(Decimal(x), scale) for x in re.findall(NUM, text)]


def _with_unit(pattern: str, scale: dict[str, Decimal]) -> Callable[[str], list[Written] | None]:
    """Literal values ``<n>[/<n>...] <unit>`` in a tag, scaled to the CSV's unit."""
    rx = re.compile(rf"({NUM}(?:/{NUM})*)\s*{pattern}")

    def literals(tag: str) -> list[Written] | None:
        found = [w for m in rx.finditer(tag) for w in _numbers(m.group(1), scale[m.group(2)])]
        return found or None

    return literals


def _none(tag: str) -> list[Written] | None:
    return None


def _compute(dtype: str, unit: str) -> Field:
    def names(tag: str) -> bool:
        return dtype in DTYPE_RE.findall(tag) and _unit_fits(tag, unit)

    def literals(tag: str) -> list[Written] | None:
        if names(tag):
            return _numbers(DTYPE_RE.sub("", tag)) or None
        bare = re.fullmatch(rf"({NUM}(?:/{NUM})*)\s*tf", tag)
        return _numbers(bare.group(1)) if bare and not DTYPE_RE.search(tag) else None

    column = f"{dtype}_{unit}_TFLOPS"
    if unit == "matrix" and dtype not in ("fp64", "fp32"):
        column = f"{dtype}_matrix_dense_{'TOPS' if dtype == 'int8' else 'TFLOPS'}"
    return Field(f"compute:{dtype}:{unit}", column, names, literals)


def _unit_fits(tag: str, unit: str) -> bool:
    matrix = "matrix" in tag or "tensor" in tag
    vector = re.search(r"\bvec(tor)?\b", tag) is not None
    if matrix == vector:
        return True
    return matrix if unit == "matrix" else vector


def _is_dram_tag(tag: str) -> bool:
    return not re.search(r"\bl[12]\b|\bic\b|infinity", tag)


def _dram_literals(tag: str) -> list[Written] | None:
    return _with_unit(r"(tb/s|gb/s)", TB_GB)(tag) if _is_dram_tag(tag) else None


def _l2_bw_literals(tag: str) -> list[Written] | None:
    if not re.search(r"\bl2\b", tag):
        return None
    return _with_unit(r"(tb/s|gb/s)", TB_GB)(tag)


FIELDS: tuple[Field, ...] = (
    Field(
        "compute_units",
        "compute_units_or_SMs",
        lambda t: t in ("cus", "sms"),
        _with_unit(r"(sms?)\b", {"sm": ONE, "sms": ONE}),
    ),
    Field("wave_size", "wave_or_warp_size", lambda t: t in ("wave", "warps"), _none),
    Field(
        "max_waves_per_cu",
        "max_waves_or_warps_per_CU_or_SM",
        lambda t: t in ("max waves", "warps"),
        _none,
    ),
    Field(
        "lds_kb_per_cu",
        "lds_or_shared_mem_per_CU_or_SM_KB",
        lambda t: t == "lds" or "smem" in t,
        _with_unit(r"(kb) smem", {"kb": ONE}),
    ),
    Field(
        "l2_mb",
        "l2_cache_MB",
        lambda t: t == "l2",
        _with_unit(r"(mb|mib|kb) l2", {"mb": ONE, "mib": ONE, "kb": ONE / 1024}),
    ),
    Field(
        "clock_mhz",
        "peak_engine_clock_MHz",
        lambda t: "clock" in t,
        _with_unit(r"(mhz|ghz)", {"mhz": ONE, "ghz": Decimal(1000)}),
    ),
    Field(
        "memory_gb",
        "memory_size_GB",
        lambda t: t == "vram",
        _with_unit(r"(gb)\b(?!/)", {"gb": ONE}),
    ),
    *(
        _compute(d, u)
        for d, u in (
            ("fp64", "vector"),
            ("fp64", "matrix"),
            ("fp32", "vector"),
            ("fp32", "matrix"),
            ("tf32", "matrix"),
            ("fp16", "matrix"),
            ("bf16", "matrix"),
            ("fp8", "matrix"),
            ("int8", "matrix"),
        )
    ),
    Field(
        "memory:hbm",
        "memory_bandwidth_GBps",
        lambda t: "bandwidth" in t and _is_dram_tag(t),
        _dram_literals,
    ),
    Field("memory:l2", "l2_bandwidth_GBps", lambda t: t == "l2 bandwidth", _l2_bw_literals),
    Field("memory:lds", "lds_bandwidth_GBps", lambda t: t == "lds bandwidth", _none),
)
DEVICE_FIELDS: tuple[str, ...] = (
    "compute_units",
    "wave_size",
    "max_waves_per_cu",
    "lds_kb_per_cu",
    "l2_mb",
)
DEVICE_FIELDS += ("clock_mhz", "memory_gb")
INT_FIELDS = ("compute_units", "wave_size", "max_waves_per_cu", "lds_kb_per_cu", "clock_mhz")
WRITES = 3.0  # score of a group that writes the value itself
SI_SCALE = {"TFLOPS": Decimal(10) ** 12, "TOPS": Decimal(10) ** 12, "GBps": Decimal(10) ** 9}


# --- the sources column ---------------------------------------------------------------------
@dataclass(frozen=True)
class Group:
    tags: tuple[str, ...]  # lower case, stripped
    text: str  # "[tags] source text", as written


def parse_sources(cell: str) -> list[Group]:
    """Split ``[a, b] text; [c] text; more text`` into groups at each ``; [``."""
    groups = []
    for part in re.split(r";\s*(?=\[)", cell.strip()):
        m = re.match(r"\[([^\]]*)\]\s*(.*)", part, re.S)
        if not m:
            raise ValueError(f"sources: {part[:60]!r} does not start with [tags]")
        tags = tuple(t.strip().lower() for t in m.group(1).split(","))
        groups.append(Group(tags, part.strip()))
    return groups


def _writes(written: Written, value: Decimal) -> bool:
    """The tag's number is the value, or the value rounded to the digits the tag shows;
    a one-digit number ("8 TB/s") counts only when exact."""
    number, scale = written
    if number * scale == value:
        return True
    digits = number.as_tuple()
    half_ulp = Decimal(5).scaleb(int(digits.exponent) - 1) * scale
    return len(digits.digits) >= 2 and abs(number * scale - value) <= half_ulp


def score(field: Field, group: Group, value: Decimal) -> float:
    """How directly the group states the value: 3 writes it, 2 names the field, 1 generic."""
    best, wrote_other = 0.0, False
    for tag in group.tags:
        if IGNORED_TAG.search(tag):
            continue
        written = field.literals(tag)
        if written is not None:
            if any(_writes(w, value) for w in written):
                return WRITES
            wrote_other = True
        elif field.keyword(tag):
            best = max(best, 2.0 + (0.5 if _explicit_unit(field, tag) else 0.0))
        elif field.name.startswith("compute:") and "peaks" in tag and not DTYPE_RE.search(tag):
            best = max(best, 1.0 + _density_bonus(field, tag))
    return -1.0 if wrote_other and best == 0.0 else best


def _explicit_unit(field: Field, tag: str) -> bool:
    return field.name.startswith("compute:") and (
        "matrix" in tag or "tensor" in tag or re.search(r"\bvec", tag) is not None
    )


def _density_bonus(field: Field, tag: str) -> float:
    """Matrix peaks: a dense table beats a sparse one (dense = sparse / 2 is arithmetic)."""
    if not field.name.endswith(":matrix"):
        return 0.0
    if "dense" in tag:
        return 0.5
    return -0.5 if "sparse" in tag else 0.0


def source_of(model: str, field: Field, groups: list[Group], value: Decimal) -> str:
    decided = [v for (m, f), v in OVERRIDES.items() if m == model and fnmatch(field.name, f)]
    if len(decided) > 1:
        raise LookupError(f"{model} / {field.name}: {len(decided)} OVERRIDES entries")
    if decided:
        return _decided(model, field, groups, decided[0])
    scored = [(score(field, g, value), g) for g in groups]
    top = max((s for s, _ in scored), default=0.0)
    winners = [g for s, g in scored if s == top and s > 0]
    if len(winners) == 1 or (winners and top == WRITES):  # every group writing it is a source
        return PREFIX + " + ".join(g.text for g in winners)
    found = [g.text[:70] for g in winners] or "no group"
    raise LookupError(f"{model} / {field.name} = {value}: {found}; add an OVERRIDES entry")


def _decided(model: str, field: Field, groups: list[Group], decided: Iterable[str]) -> str:
    texts = []
    for choice in decided:
        if not choice.startswith("["):
            texts.append(choice)
            continue
        tag = choice.strip("[]").lower()
        hits = [g.text for g in groups if tag in g.tags]
        if len(hits) != 1:
            raise LookupError(f"{model} / {field.name}: override {choice!r} fits {len(hits)}")
        texts.append(hits[0])
    return PREFIX + " + ".join(texts)


# --- rows to devices ------------------------------------------------------------------------
def _si(cell: str, column: str) -> Decimal:
    return Decimal(cell) * SI_SCALE[column.rsplit("_", 1)[1]]


def device_entry(row: dict[str, str]) -> dict[str, object]:
    model = row["model"]
    spec = ROWS[model]
    groups = parse_sources(row["sources"])
    entry: dict[str, object] = {
        "key": spec.key,
        "vendor": row["vendor"],
        "model": model,
        "arch": row["arch"],
        "family": row["architecture_family"],
        "names": _names(model, spec),
    }
    sources: dict[str, str] = {}
    for f in FIELDS:
        if f.name in DEVICE_FIELDS and row[f.column]:
            entry[f.name] = _number(row[f.column], f.name in INT_FIELDS)
            sources[f.name] = source_of(model, f, groups, Decimal(row[f.column]))
    entry["sources"] = sources
    if model in PARTITIONS:
        entry["partitions"] = _partitions(model, groups, int(row["compute_units_or_SMs"]))
    entry["ceilings"] = _ceilings(model, row, groups)
    return entry


def _names(model: str, spec: RowSpec) -> list[str]:
    normed = [_norm(n) for n in spec.names]
    if len(set(normed)) != len(normed):
        raise ValueError(f"{model}: names repeat (case and spaces are ignored)")
    return list(spec.names)


def _norm(name: str) -> str:
    return "".join(name.split()).lower()


def _number(cell: str, integral: bool) -> int | float:
    d = Decimal(cell)
    if integral:
        if d != d.to_integral_value():
            raise ValueError(f"{cell!r} is not a whole number")
        return int(d)
    return float(d)


def _partitions(model: str, groups: list[Group], compute_units: int) -> dict[str, object]:
    kind, count, source = PARTITIONS[model]
    if compute_units % count:
        raise ValueError(f"{model}: {compute_units} CUs do not split into {count} {kind}s")
    if source.startswith("["):
        source = _decided(model, FIELDS[0], groups, (source,))
    return {"kind": kind, "count": count, "source": source}


def _ceilings(model: str, row: dict[str, str], groups: list[Group]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    split = PARTITIONS.get(model, ("", 1, ""))
    for f in FIELDS:
        if f.name in DEVICE_FIELDS or not row[f.column]:
            continue
        value = _si(row[f.column], f.column)
        if value <= 0:
            raise ValueError(f"{model} / {f.column}: {row[f.column]!r} is not a positive peak")
        source = source_of(model, f, groups, Decimal(row[f.column]))
        out.append(_ceiling(f, float(value), "device", source))
        if split[0] == SPLIT_SCOPE:
            derived = f"derived: module value / {split[1]} GCDs; {source}"
            out.append(_ceiling(f, float(value / split[1]), SPLIT_SCOPE, derived))
    return out


def _ceiling(field: Field, value: float, scope: str, source: str) -> dict[str, object]:
    kind, *what = field.name.split(":")
    c: dict[str, object] = {"kind": kind}
    if kind == "compute":
        c["dtype"], c["unit"] = what
    else:
        c["level"] = what[0]
    c.update(value=value, scope=scope, source=source)
    return c


# --- TOML -----------------------------------------------------------------------------------
def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        raise TypeError("no booleans in the catalogue")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _toml_pairs(table: dict[str, object]) -> list[str]:
    return [f"{k} = {_toml_value(v)}" for k, v in table.items()]


def render(entries: list[dict[str, object]], csv_digest: str) -> str:
    lines = [
        "# roofscope GPU catalogue. Generated by tools/gen_devices.py; do not edit by hand.",
        f"# From gpu_specs_research.csv, sha256 {csv_digest}.",
        "# One [[device]] per CSV row. Ceilings in FLOP/s, OP/s (int8) or B/s; each value's",
        "# source is the group of the CSV's sources column that states it.",
    ]
    for e in entries:
        plain = {k: v for k, v in e.items() if k not in ("sources", "partitions", "ceilings")}
        lines += ["", "[[device]]", *_toml_pairs(plain)]
        lines += ["", "[device.sources]", *_toml_pairs(e["sources"])]  # type: ignore[arg-type]
        if "partitions" in e:
            lines += ["", "[device.partitions]", *_toml_pairs(e["partitions"])]  # type: ignore[arg-type]
        for c in e["ceilings"]:  # type: ignore[attr-defined]
            lines += ["", "[[device.ceilings]]", *_toml_pairs(c)]
    return "\n".join(lines) + "\n"


def generate(csv_path: Path) -> str:
    raw = csv_path.read_bytes()
    rows = list(csv.DictReader(raw.decode("utf-8").splitlines()))
    missing = {r["model"] for r in rows} ^ set(ROWS)
    if missing:
        raise LookupError(f"rows and ROWS differ: {sorted(missing)}")
    keys = [_norm(ROWS[r["model"]].key) for r in rows]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate device keys")
    for spec in ROWS.values():
        taken = {_norm(n) for n in spec.names} & (set(keys) - {_norm(spec.key)})
        if taken:
            raise ValueError(f"{spec.key}: names {sorted(taken)} are other devices' keys")
    return render([device_entry(r) for r in rows], hashlib.sha256(raw).hexdigest())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    try:
        text = generate(args.csv)
    except (LookupError, ValueError, OSError) as e:
        print(f"gen_devices: {e}", file=sys.stderr)
        return 1
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
