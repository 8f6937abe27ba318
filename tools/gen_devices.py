"""Write roofscope's GPU catalogue (src/roofscope/data/devices.toml) from data/gpus/.

    python tools/gen_devices.py [--data data/gpus] [-o src/roofscope/data/devices.toml]

Beside the TOML (what a reviewer reads) it writes the same document as JSON
(``devices.json``), which roofscope reads: json parses it in 2 ms, tomllib in 110 ms.

``data/gpus/README.md`` describes the tables: one row per value of one GPU (or one
architecture), each citing a document of a ``*.sources.csv`` file. Every value written here
carries the text of that source and where in it the value is. MI250/MI250X rows are whole
modules of 2 GCDs; their ceilings are also written per GCD (half the module), since ROCm
shows each GCD as a device. MI300/MI350 parts get compute ceilings per XCD (one XCD is a
device in CPX mode; the peaks scale with its CUs), but no memory ceiling: an XCD's share of
the HBM depends on the memory partition (NPS) and no AMD document states it. A malformed
table stops the generator with one line naming the file, the row and what is wrong.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tomllib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO / "data" / "gpus"
DEFAULT_OUT = REPO / "src" / "roofscope" / "data" / "devices.toml"

TEXT = ("vendor", "model", "arch", "family", "names", "partitions", "memory_type")
INTS = ("compute_units", "clock_mhz", "bus_width_bits", "wave_size", "max_waves_per_cu")
FLOATS = ("memory_gb", "l2_mb", "mall_mb", "lds_kb_per_cu")
MEMORY = ("hbm", "l2")  # GB/s
DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
COMPUTE = tuple(f"{d}-{u}" for d in DTYPES for u in ("vector", "matrix"))  # TFLOP/s, TOPS
REQUIRED = ("vendor", "model", "arch", "family", "names")
KINDS = ("datasheet", "whitepaper", "product-page", "documentation", "vendor-code", "secondary")
VENDORS = ("AMD", "NVIDIA")
# archs.csv: rates per unit per clock (FLOP/clk/unit) and what the unit is
ARCH_TEXT = ("vendor", "family", "unit")
GCD_PREFIX = "derived: module value / 2 GCDs; "
XCD_PREFIX = "derived: device value / {count} XCDs (peaks scale with the CUs: one XCD, CPX mode); "


class TableError(ValueError):
    """One line: the file, the row and what is wrong."""


@dataclass(frozen=True)
class Source:
    id: str
    kind: str
    publisher: str
    title: str
    url: str
    note: str

    def text(self, where: str) -> str:
        head = f"{self.publisher} {self.kind}" if self.kind != "secondary" else "secondary"
        said = f"{head}: {self.title}, {self.url}"
        said += f" ({where})" if where else ""
        return said + (f"; {self.note}" if self.kind == "secondary" else "")


@dataclass(frozen=True)
class Cell:
    value: str
    source: str  # the full text: document and where
    line: str  # file:line, for errors
    document: str = ""  # the cited document's title


def _rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as f:
        return [(i + 2, row) for i, row in enumerate(csv.DictReader(f))]


def read_sources(data: Path) -> dict[str, Source]:
    out: dict[str, Source] = {}
    for path in sorted(data.glob("*.sources.csv")):
        for line, r in _rows(path):
            where = f"{path.name}:{line}"
            s = Source(**{k: (r.get(k) or "").strip() for k in Source.__dataclass_fields__})
            if s.id in out and out[s.id] != s:
                raise TableError(f"{where}: source id {s.id!r} is another document elsewhere")
            if s.kind not in KINDS:
                raise TableError(f"{where}: kind {s.kind!r}; expected one of {', '.join(KINDS)}")
            if s.kind == "secondary" and not s.note:
                raise TableError(f"{where}: a secondary source needs a note saying why")
            if s.kind != "secondary" and s.publisher not in VENDORS:
                raise TableError(
                    f"{where}: publisher {s.publisher!r} of a {s.kind}; expected AMD or NVIDIA"
                )
            if not s.title or not s.url:
                raise TableError(f"{where}: source {s.id!r} needs a title and a url")
            out[s.id] = s
    return out


def read_cells(
    path: Path, key_column: str, sources: dict[str, Source], sourceless: tuple[str, ...] = ()
) -> dict[str, dict[str, Cell]]:
    """key -> field -> cell, in the file's order; ``sourceless`` fields may cite nothing."""
    out: dict[str, dict[str, Cell]] = {}
    for line, r in _rows(path):
        where = f"{path.name}:{line}"
        key, field = (r.get(key_column) or "").strip(), (r.get("field") or "").strip()
        source = sources.get((r.get("source") or "").strip())
        if not key or not field:
            raise TableError(f"{where}: needs a {key_column} and a field")
        if source is None and field not in sourceless:
            raise TableError(f"{where}: source {r.get('source')!r} is in no *.sources.csv")
        cells = out.setdefault(key, {})
        if field in cells:
            raise TableError(f"{where}: {key} {field} is given twice")
        value = (r.get("value") or "").strip()
        text = source.text((r.get("where") or "").strip()) if source else ""
        cells[field] = Cell(value, text, where, source.title if source else "")
    return out


def _number(cell: Cell, field: str, integral: bool) -> int | float:
    try:
        number = float(cell.value)
    except ValueError:
        raise TableError(f"{cell.line}: {field} {cell.value!r} is not a number") from None
    if number <= 0 or (integral and number != int(number)):
        kind = "a positive whole number" if integral else "a positive number"
        raise TableError(f"{cell.line}: {field} {cell.value!r}; expected {kind}")
    return int(number) if integral else number


def device_entry(key: str, cells: dict[str, Cell]) -> dict[str, object]:
    for field in cells:
        if field not in (*TEXT, *INTS, *FLOATS, *MEMORY, *COMPUTE):
            raise TableError(f"{cells[field].line}: unknown field {field!r} (data/gpus/README.md)")
    missing = [f for f in REQUIRED if f not in cells]
    if missing:
        first = next(iter(cells.values())).line
        raise TableError(f"{first}: device {key} has no {', '.join(missing)}")
    e: dict[str, object] = {"key": key}
    for field in ("vendor", "model", "arch", "family"):
        e[field] = cells[field].value
    e["names"] = [n.strip() for n in cells["names"].value.split(";") if n.strip()]
    for field in (*INTS, *FLOATS, "memory_type"):
        if field in cells:
            cell = cells[field]
            e[field] = cell.value if field == "memory_type" else _number(cell, field, field in INTS)
    e["sources"] = {
        f: c.source for f, c in cells.items() if f in (*INTS, *FLOATS, "memory_type", "arch")
    }
    if "partitions" in cells:
        e["partitions"] = _partitions(cells["partitions"])
    e["ceilings"] = _ceilings(cells, e.get("partitions"))
    return e


def _partitions(cell: Cell) -> dict[str, object]:
    kind, _, count = cell.value.partition(":")
    if kind not in ("gcd", "xcd") or not count.isdigit():
        raise TableError(f"{cell.line}: partitions {cell.value!r}; expected gcd:N or xcd:N")
    return {"kind": kind, "count": int(count), "source": cell.source}


def _ceilings(cells: dict[str, Cell], partitions: object) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for name in (*COMPUTE, *MEMORY):
        if name in cells:
            out.append(_ceiling(name, cells[name], "device"))
    if not isinstance(partitions, dict):
        return out
    kind, count = str(partitions["kind"]), int(partitions["count"])
    for c in list(out):
        if kind == "xcd" and c["kind"] == "memory":
            continue  # one XCD's share of the HBM depends on the memory partition: unstated
        part = dict(c, scope=kind, value=float(c["value"]) / count)  # type: ignore[arg-type]
        prefix = GCD_PREFIX if kind == "gcd" else XCD_PREFIX.format(count=count)
        part["source"] = prefix + str(c["source"])
        out.append(part)
    return out


def _ceiling(name: str, cell: Cell, scope: str) -> dict[str, object]:
    _number(cell, name, integral=False)  # checked; scaled exactly below (19.5 -> 1.95e13)
    if name in MEMORY:
        value = float(Decimal(cell.value) * 10**9)
        c: dict[str, object] = {"kind": "memory", "level": name, "value": value}
    else:
        dtype, unit = name.split("-")
        value = float(Decimal(cell.value) * 10**12)
        c = {"kind": "compute", "dtype": dtype, "unit": unit, "value": value}
    c.update(scope=scope, source=cell.source)
    return c


def arch_entry(arch: str, cells: dict[str, Cell]) -> dict[str, object]:
    e: dict[str, object] = {"arch": arch}
    for field in ARCH_TEXT:
        if field not in cells:
            raise TableError(f"{next(iter(cells.values())).line}: arch {arch} has no {field}")
        e[field] = cells[field].value
    rates = {f: c for f, c in cells.items() if f not in ARCH_TEXT}
    for field, cell in rates.items():
        if field not in COMPUTE:
            raise TableError(f"{cell.line}: unknown arch field {field!r} (data/gpus/README.md)")
    e["per_clock"] = {f: _number(c, f, integral=False) for f, c in rates.items()}
    e["documents"] = {f: c.document for f, c in rates.items()}
    e["sources"] = {f: c.source for f, c in rates.items()}
    return e


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


def _pairs(table: object) -> list[str]:
    assert isinstance(table, dict)
    return [
        f'"{k}" = {_toml_value(v)}' if "-" in k else f"{k} = {_toml_value(v)}"
        for k, v in table.items()
    ]


def render(devices: list[dict[str, object]], archs: list[dict[str, object]]) -> str:
    lines = [
        "# roofscope GPU catalogue. Generated by tools/gen_devices.py from data/gpus/;",
        "# do not edit by hand. Ceilings in FLOP/s, OP/s (int8) or B/s; every value's source",
        "# names the document that states it and where, or the derivation that gives it.",
    ]
    for e in devices:
        plain = {k: v for k, v in e.items() if k not in ("sources", "partitions", "ceilings")}
        lines += ["", "[[device]]", *_pairs(plain), "", "[device.sources]", *_pairs(e["sources"])]
        if "partitions" in e:
            lines += ["", "[device.partitions]", *_pairs(e["partitions"])]
        for c in e["ceilings"]:  # type: ignore[attr-defined]
            lines += ["", "[[device.ceilings]]", *_pairs(c)]
    for a in archs:
        plain = {k: v for k, v in a.items() if k not in ("per_clock", "documents", "sources")}
        lines += ["", "[[arch]]", *_pairs(plain)]
        for table in ("per_clock", "documents", "sources"):
            lines += ["", f"[arch.{table}]", *_pairs(a[table])]
    return "\n".join(lines) + "\n"


def generate(data: Path) -> str:
    sources = read_sources(data)
    devices: list[dict[str, object]] = []
    seen: dict[str, str] = {}
    for path in sorted(data.glob("*.csv")):
        if path.name.endswith(".sources.csv") or path.name == "archs.csv":
            continue
        for key, cells in read_cells(path, "device", sources).items():
            if key in seen:
                raise TableError(f"{path.name}: device {key} is also in {seen[key]}")
            seen[key] = path.name
            devices.append(device_entry(key, cells))
    archs_csv = data / "archs.csv"
    archs = read_cells(archs_csv, "arch", sources, ARCH_TEXT) if archs_csv.is_file() else {}
    return render(devices, [arch_entry(a, cells) for a, cells in archs.items()])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    try:
        text = generate(args.data)
    except TableError as e:
        print(f"gen_devices: {e}", file=sys.stderr)
        return 1
    args.out.write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(as_json(text), encoding="utf-8")
    return 0


def as_json(toml_text: str) -> str:
    """The catalogue as JSON: the document tomllib reads from ``toml_text``, one value a line."""
    return json.dumps(tomllib.loads(toml_text), ensure_ascii=False, indent=0) + "\n"


if __name__ == "__main__":
    sys.exit(main())
