"""Structure-aware fuzzing of every roofscope reader, and the CLI's error-handling invariant.

Each reader family has real seed files under ``tests/data`` (or the packaged demo).  A
Hypothesis strategy per family picks a seed and applies one mutation suited to its format:
byte-level damage (truncation, flipped or replaced bytes), row-level damage (swapped fields,
duplicated or dropped rows, edited header names), re-encoding (UTF-16, latin-1, BOM, line
endings), hostile numbers (huge, negative, ``nan``, ``inf``, ``None``, thousands
separators, ``8.1097E+14``, ``1e999999999``, number literals no JSON writer emits), JSON
edits for Kineto traces and page-level damage or hostile cell values for SQLite databases.

The invariant, :func:`check`: ``roofscope analyze PATH --json`` either succeeds (exit 0,
stdout is JSON) or refuses cleanly (exit 1, exactly one ``roofscope: error: `` line on
stderr, no traceback).  Anything else is a bug; :func:`check_case` saves the offending input
under :data:`FAILURES` and raises :class:`FuzzFailure`.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import re
import shutil
import signal
import sqlite3
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from roofscope.cli.app import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
DEMO = ROOT / "src" / "roofscope" / "data" / "demo" / "finite-difference"
FAILURES = Path("/tmp/roofscope-fuzz-failures")
TIME_LIMIT_S = 20
ERROR_PREFIX = "roofscope: error: "

Draw = Callable[[st.SearchStrategy[Any]], Any]
Mutator = Callable[[Draw, bytes], bytes]

HOSTILE_VALUES: tuple[str, ...] = (
    "1e308",
    "1e309",
    "99999999999999999999999999999",
    "9223372036854775808",
    "4294967296",
    "1e999999999",
    "-1",
    "-5e12",
    "-0",
    "0",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "None",
    "null",
    "",
    '"1,234,567"',
    "1,234",
    "8.1097E+14",
    "0x10",
    "1_000",
    "  7 ",
)
ODD_NAMES: tuple[str, ...] = ("café_kernel", "Straße<ß>", "naïve∑", "ü", "")


# --------------------------------------------------------------------------- families


@dataclass(frozen=True)
class Family:
    """One reader's seeds and the kind of mutation its format calls for."""

    name: str
    kind: str  # "text", "sqlite", "gzip-json", "json" or "workload"
    seeds: tuple[Path, ...]
    gpu: str = "mi300x"  # passed as --gpu to half the cases: the launch shapes, occupancy and
    # roofline are read only where the GPU is known, and most seeds do not say which it is


@dataclass(frozen=True)
class FuzzCase:
    """A mutated input: ``member`` (inside ``seed`` for workloads) is replaced by ``data``."""

    family: str
    seed: Path
    member: Path
    mutation: str
    data: bytes = field(repr=False)
    gpu: str | None = None  # --gpu for the analysis
    html: bool = False  # whether the analysis also writes the HTML report

    def describe(self) -> str:
        """Family, seed, mutation and GPU, for failure messages."""
        member = "" if self.member == self.seed else f" (member {self.member.name})"
        gpu = f" --gpu {self.gpu}" if self.gpu else ""
        html = " --html" if self.html else ""
        return f"family={self.family} seed={self.seed}{member} mutation={self.mutation}{gpu}{html}"

    def options(self, directory: Path) -> list[str]:
        """The analysis' options beyond ``--json``; a report goes into ``directory``."""
        gpu = ["--gpu", self.gpu] if self.gpu else []
        return gpu + (["--html", str(directory / "report.html")] if self.html else [])


def _files(folder: Path, pattern: str) -> tuple[Path, ...]:
    return tuple(p for p in sorted(folder.glob(pattern)) if p.is_file() and p.suffix != ".md")


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "rocprof-v1",
            "text",
            (
                DATA / "rocprofv1-mi250x" / "laplacian" / "results.csv",
                DATA / "rocprofv1-mi250x" / "laplacian" / "results.stats.csv",
                DEMO / "results.csv",
            ),
        ),
        Family(
            "rocprofv3",
            "text",
            _files(DATA / "rocprofv3-layouts", "*.csv")
            + _files(DATA / "rocprofv3-counters", "*.csv"),
        ),
        Family("rocpd", "sqlite", (DATA / "rocpd-mi250x" / "finite-difference_results.db",)),
        Family("rocprof-compute", "workload", (DATA / "rocprof-compute-mi200",)),
        Family("ncu", "text", _files(DATA / "ncu", "**/*"), "a100-sxm4-80gb"),
        Family("nsys", "text", _files(DATA / "nsys", "*.csv"), "a100-sxm4-80gb"),
        Family("kineto", "gzip-json", _files(DATA / "kineto", "*.json.gz"), "a100-sxm4-80gb"),
        Family("rocprofv3-json", "json", _files(DATA / "rocprofv3-json", "*.json")),
    )
}


# --------------------------------------------------------------------------- line helpers


def _split_lines(raw: bytes) -> tuple[list[bytes], bytes]:
    """Lines without their endings, and the ending the file uses."""
    eol = b"\r\n" if b"\r\n" in raw else b"\n"
    return raw.split(eol), eol


def _pick_line(draw: Draw, lines: list[bytes], *, header: bool = False) -> int:
    if header or len(lines) < 2:
        return 0
    return int(draw(st.integers(1, len(lines) - 1)))


def _edit_field(
    draw: Draw, raw: bytes, new: Callable[[list[bytes], int], bytes], header: bool
) -> bytes:
    """Replace one comma-separated field of one line by ``new(fields, index)``."""
    lines, eol = _split_lines(raw)
    i = _pick_line(draw, lines, header=header)
    fields = lines[i].split(b",")
    j = int(draw(st.integers(0, len(fields) - 1)))
    fields[j] = new(fields, j)
    lines[i] = b",".join(fields)
    return eol.join(lines)


# --------------------------------------------------------------------------- byte mutators


def truncate(draw: Draw, raw: bytes) -> bytes:
    """Cut the file at an arbitrary byte."""
    return raw[: draw(st.integers(0, max(len(raw) - 1, 0)))]


def flip_bytes(draw: Draw, raw: bytes) -> bytes:
    """XOR a few bytes with random non-zero masks."""
    out = bytearray(raw)
    for _ in range(draw(st.integers(1, 8))):
        if out:
            k = draw(st.integers(0, len(out) - 1))
            out[k] ^= draw(st.integers(1, 255))
    return bytes(out)


def replace_bytes(draw: Draw, raw: bytes) -> bytes:
    """Overwrite a few bytes with delimiters, quotes, NULs and invalid UTF-8."""
    out = bytearray(raw)
    for _ in range(draw(st.integers(1, 8))):
        if out:
            k = draw(st.integers(0, len(out) - 1))
            out[k] = draw(st.sampled_from(b',"\n\r\x00\xff\xc3;\t '))
    return bytes(out)


# --------------------------------------------------------------------------- row mutators


def swap_fields(draw: Draw, raw: bytes) -> bytes:
    """Swap two fields of one data row."""
    lines, eol = _split_lines(raw)
    i = _pick_line(draw, lines)
    fields = lines[i].split(b",")
    a = draw(st.integers(0, len(fields) - 1))
    b = draw(st.integers(0, len(fields) - 1))
    fields[a], fields[b] = fields[b], fields[a]
    lines[i] = b",".join(fields)
    return eol.join(lines)


def duplicate_row(draw: Draw, raw: bytes) -> bytes:
    """Repeat one row (the header included) a few times."""
    lines, eol = _split_lines(raw)
    i = draw(st.integers(0, len(lines) - 1))
    lines[i:i] = [lines[i]] * draw(st.integers(1, 3))
    return eol.join(lines)


def drop_row(draw: Draw, raw: bytes) -> bytes:
    """Remove one row (the header included)."""
    lines, eol = _split_lines(raw)
    del lines[draw(st.integers(0, len(lines) - 1))]
    return eol.join(lines)


def edit_header(draw: Draw, raw: bytes) -> bytes:
    """Rename, blank, upper-case or duplicate one header name."""

    def rename(fields: list[bytes], j: int) -> bytes:
        how = draw(st.sampled_from(["suffix", "blank", "upper", "dup", "space"]))
        name = fields[j]
        if how == "suffix":
            return name.rstrip(b'"') + b'_x"' if name.endswith(b'"') else name + b"_x"
        if how == "blank":
            return b""
        if how == "upper":
            return name.upper()
        if how == "space":
            return b" " + name + b" "
        return fields[draw(st.integers(0, len(fields) - 1))]

    return _edit_field(draw, raw, rename, header=True)


def hostile_number(draw: Draw, raw: bytes) -> bytes:
    """Put a huge, negative, non-finite, ``None`` or thousands-separated value in a cell."""
    value = draw(st.sampled_from(HOSTILE_VALUES)).encode()
    return _edit_field(draw, raw, lambda _f, _j: value, header=False)


def hostile_column(draw: Draw, raw: bytes) -> bytes:
    """Put the same hostile value in one column of every data row."""
    value = draw(st.sampled_from(HOSTILE_VALUES)).encode()
    lines, eol = _split_lines(raw)
    j = draw(st.integers(0, max(len(lines[0].split(b",")) - 1, 0)))
    for i in range(1, len(lines)):
        fields = lines[i].split(b",")
        if j < len(fields):
            fields[j] = value
            lines[i] = b",".join(fields)
    return eol.join(lines)


_NUMBER = re.compile(rb'^"?-?\d+(\.\d*)?([eE][-+]?\d+)?"?$')


def hostile_row(draw: Draw, raw: bytes) -> bytes:
    """Put the same hostile value in every number of one row: fields that only mean something
    together (a grid's X, Y and Z; a start and an end) pass their bounds together."""
    value = draw(st.sampled_from(HOSTILE_VALUES)).encode()
    lines, eol = _split_lines(raw)
    i = _pick_line(draw, lines)
    lines[i] = b",".join(value if _NUMBER.match(f) else f for f in lines[i].split(b","))
    return eol.join(lines)


# --------------------------------------------------------------------------- encodings


def _text(raw: bytes) -> str:
    return raw.decode("utf-8-sig", errors="replace")


def to_utf16(draw: Draw, raw: bytes) -> bytes:
    """Re-encode as UTF-16 (with BOM) or UTF-16-LE (without)."""
    return _text(raw).encode(draw(st.sampled_from(["utf-16", "utf-16-le", "utf-16-be"])))


def to_latin1_names(draw: Draw, raw: bytes) -> bytes:
    """Give a row a non-ASCII name and encode the whole file as latin-1 (or cp1252)."""
    name = draw(st.sampled_from(ODD_NAMES)).encode("utf-8")
    edited = _edit_field(draw, raw, lambda _f, _j: name, header=False)
    codec = draw(st.sampled_from(["latin-1", "cp1252"]))
    return _text(edited).encode(codec, errors="replace")


def toggle_bom(draw: Draw, raw: bytes) -> bytes:
    """Add a UTF-8 BOM, or remove one, or add two."""
    bom = b"\xef\xbb\xbf"
    if raw.startswith(bom):
        return raw[len(bom) :]
    return bom * draw(st.integers(1, 2)) + raw


def toggle_eol(draw: Draw, raw: bytes) -> bytes:
    """CRLF to LF, LF to CRLF, or bare CR."""
    if b"\r\n" in raw:
        return raw.replace(b"\r\n", b"\n")
    return raw.replace(b"\n", draw(st.sampled_from([b"\r\n", b"\r"])))


JSON_NUMBERS = re.compile(rb"(?<=[:\[,])\s*-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?=\s*[,\]}])")
EXTREME_LITERALS = (b"1e999999999", b"-1e999999999", b"1e-999999999", b"9" * 40, b"1e400")


def json_number_text(draw: Draw, raw: bytes) -> bytes:
    """Write one number of the JSON text as a literal json.dumps never writes: an exponent of
    a billion, 40 digits, 1e400 (they decode to Decimals and ints of any size)."""
    found = list(JSON_NUMBERS.finditer(raw))
    if not found:
        return raw
    m = found[draw(st.integers(0, len(found) - 1))]
    return raw[: m.start()] + draw(st.sampled_from(EXTREME_LITERALS)) + raw[m.end() :]


TEXT_MUTATORS: dict[str, Mutator] = {
    "truncate": truncate,
    "flip_bytes": flip_bytes,
    "replace_bytes": replace_bytes,
    "swap_fields": swap_fields,
    "duplicate_row": duplicate_row,
    "drop_row": drop_row,
    "edit_header": edit_header,
    "hostile_number": hostile_number,
    "hostile_column": hostile_column,
    "hostile_row": hostile_row,
    "utf16": to_utf16,
    "latin1_names": to_latin1_names,
    "toggle_bom": toggle_bom,
    "toggle_eol": toggle_eol,
    "json_number_text": json_number_text,
}


# --------------------------------------------------------------------------- JSON (Kineto)


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths to every scalar in a JSON document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _leaves(v, (*path, i))
    else:
        yield path


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


JSON_VALUES: tuple[Any, ...] = (
    None,
    float("nan"),
    float("inf"),
    -1,
    -1e18,
    10**30,
    1e308,
    "nan",
    "inf",
    "None",
    "1,234",
    "8.1097E+14",
    "",
    [],
    {},
    True,
    "café∑",
)


def json_value(draw: Draw, doc: Any) -> str:
    """Replace one scalar anywhere in the document with a hostile value."""
    paths = list(_leaves(doc))
    if not paths or paths == [()]:
        return "json_value(no leaves)"
    path = paths[draw(st.integers(0, len(paths) - 1))]
    _parent(doc, path)[path[-1]] = draw(st.sampled_from(JSON_VALUES))
    return "json_value"


def json_drop_key(draw: Draw, doc: Any) -> str:
    """Delete one key of one object."""
    paths = [p for p in _leaves(doc) if p and isinstance(p[-1], str)]
    if paths:
        path = paths[draw(st.integers(0, len(paths) - 1))]
        del _parent(doc, path)[path[-1]]
    return "json_drop_key"


def json_events(draw: Draw, doc: Any) -> str:
    """Duplicate, drop or swap trace events."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list) or not events:
        return "json_events(none)"
    i = draw(st.integers(0, len(events) - 1))
    j = draw(st.integers(0, len(events) - 1))
    how = draw(st.sampled_from(["dup", "drop", "swap", "empty"]))
    if how == "dup":
        events.insert(i, events[i])
    elif how == "drop":
        del events[i]
    elif how == "swap":
        events[i], events[j] = events[j], events[i]
    else:
        events.clear()
    return f"json_events({how})"


JSON_MUTATORS: dict[str, Callable[[Draw, Any], str]] = {
    "json_value": json_value,
    "json_drop_key": json_drop_key,
    "json_events": json_events,
}
JSON_TEXT_MUTATORS = (
    "truncate", "flip_bytes", "replace_bytes", "utf16", "toggle_bom", "json_number_text",
)  # fmt: skip


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def mutate_kineto(draw: Draw, raw: bytes) -> tuple[str, bytes]:
    """A JSON-level, text-level or gzip-level mutation of a ``.json.gz`` trace."""
    layer = draw(st.sampled_from(["json", "text", "gzip"]))
    if layer == "gzip":
        name = draw(st.sampled_from(["truncate", "flip_bytes", "replace_bytes"]))
        return f"gzip:{name}", TEXT_MUTATORS[name](draw, raw)
    text = gzip.decompress(raw)
    if layer == "text":
        name = draw(st.sampled_from(JSON_TEXT_MUTATORS))
        return f"json-text:{name}", _gzip(TEXT_MUTATORS[name](draw, text))
    doc = json.loads(text)
    name = draw(st.sampled_from(sorted(JSON_MUTATORS)))
    label = JSON_MUTATORS[name](draw, doc)
    return label, _gzip(json.dumps(doc).encode())


def mutate_json(draw: Draw, raw: bytes) -> tuple[str, bytes]:
    """A JSON-level or text-level mutation of a plain JSON document (rocprofv3's)."""
    if draw(st.sampled_from(["json", "text"])) == "text":
        name = draw(st.sampled_from(JSON_TEXT_MUTATORS))
        return f"json-text:{name}", TEXT_MUTATORS[name](draw, raw)
    doc = json.loads(raw)
    name = draw(st.sampled_from(["json_value", "json_drop_key"]))
    label = JSON_MUTATORS[name](draw, doc)
    return label, json.dumps(doc).encode()


# --------------------------------------------------------------------------- SQLite (rocpd)


def _page_size(raw: bytes) -> int:
    size = int.from_bytes(raw[16:18], "big") if len(raw) >= 18 else 4096
    return 65536 if size == 1 else max(size, 512)


def sqlite_zero_page(draw: Draw, raw: bytes) -> bytes:
    """Overwrite one whole page with zeros (page 1 included)."""
    size = _page_size(raw)
    page = draw(st.integers(0, max(len(raw) // size - 1, 0)))
    out = bytearray(raw)
    out[page * size : (page + 1) * size] = bytes(min(size, len(raw) - page * size))
    return bytes(out)


def sqlite_flip_middle(draw: Draw, raw: bytes) -> bytes:
    """Flip bytes in the middle of the file, away from the header."""
    out = bytearray(raw)
    lo, hi = len(raw) // 4, 3 * len(raw) // 4
    for _ in range(draw(st.integers(1, 32))):
        out[draw(st.integers(lo, hi))] ^= draw(st.integers(1, 255))
    return bytes(out)


def _sql_edit(raw: bytes, edit: Callable[[sqlite3.Connection], None]) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "x.db"
        db.write_bytes(raw)
        con = sqlite3.connect(db)
        try:
            edit(con)
            con.commit()
        except sqlite3.Error:  # a STRICT or NOT NULL column refused the value: keep the seed
            return raw
        finally:
            con.close()
        return db.read_bytes()


def _tables(raw: bytes) -> list[tuple[str, list[str]]]:
    """Every table and its columns."""
    out: list[tuple[str, list[str]]] = []

    def read(con: sqlite3.Connection) -> None:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for name in sorted(names):
            cols = [r[1] for r in con.execute(f'PRAGMA table_info("{name}")')]
            out.append((name, cols))

    _sql_edit(raw, read)
    return out


SQL_VALUES: tuple[Any, ...] = (
    None, -1, -(2**62), 2**63 - 1, 9.3e18, 1e308, "nan", "inf", "", "x", 1.5, "1e999999999",
)  # fmt: skip


def sqlite_hostile_cell(draw: Draw, raw: bytes) -> bytes:
    """Set one column of one table (all rows or the first) to a hostile value."""
    tables = [(t, c) for t, c in _tables(raw) if c and not t.startswith("sqlite_")]
    table, cols = tables[draw(st.integers(0, len(tables) - 1))]
    col = cols[draw(st.integers(0, len(cols) - 1))]
    value = draw(st.sampled_from(SQL_VALUES))
    first = f' WHERE rowid = (SELECT min(rowid) FROM "{table}")'
    where = draw(st.sampled_from(["", first]))
    sql = f'UPDATE "{table}" SET "{col}" = ?{where}'
    return _sql_edit(raw, lambda con: con.execute(sql, (value,)) and None)


def sqlite_drop(draw: Draw, raw: bytes) -> bytes:
    """Delete every row of a table, or drop it."""
    tables = [t for t, _ in _tables(raw) if not t.startswith("sqlite_")]
    table = tables[draw(st.integers(0, len(tables) - 1))]
    verb = draw(st.sampled_from(["DELETE FROM", "DROP TABLE"]))
    return _sql_edit(raw, lambda con: con.execute(f'{verb} "{table}"') and None)


SQLITE_MUTATORS: dict[str, Mutator] = {
    "truncate": truncate,
    "zero_page": sqlite_zero_page,
    "flip_middle": sqlite_flip_middle,
    "hostile_cell": sqlite_hostile_cell,
    "drop_table": sqlite_drop,
}


# --------------------------------------------------------------------------- strategies


def _mutate(draw: Draw, family: Family, raw: bytes) -> tuple[str, bytes]:
    if family.kind == "gzip-json":
        return mutate_kineto(draw, raw)
    if family.kind == "json":
        return mutate_json(draw, raw)
    table = SQLITE_MUTATORS if family.kind == "sqlite" else TEXT_MUTATORS
    name = draw(st.sampled_from(sorted(table)))
    return name, table[name](draw, raw)


@st.composite
def cases(draw: Draw, family_name: str) -> FuzzCase:
    """A seed of ``family_name`` with one mutation applied."""
    family = FAMILIES[family_name]
    seed: Path = draw(st.sampled_from(family.seeds))
    member = seed
    if family.kind == "workload":
        members = _files(seed, "*")
        member = draw(st.sampled_from(members))
    mutation, data = _mutate(draw, family, member.read_bytes())
    gpu = draw(st.sampled_from((None, family.gpu)))
    html = draw(st.sampled_from((False, False, False, True)))  # a quarter: rendering is slow
    return FuzzCase(family.name, seed, member, mutation, data, gpu, html)


def strategy(family_name: str) -> st.SearchStrategy[FuzzCase]:
    """The Hypothesis strategy of one family (see :data:`FAMILIES`)."""
    return cases(family_name)


def write_case(case: FuzzCase, directory: Path) -> Path:
    """Write the mutated input into ``directory``; returns the path to analyse.

    File names are kept; a workload folder is copied whole (same folder name) and only the
    mutated member is replaced.
    """
    if case.member == case.seed:
        target = directory / case.seed.name
        target.write_bytes(case.data)
        return target
    folder = directory / case.seed.name
    shutil.copytree(case.seed, folder, dirs_exist_ok=True)
    (folder / case.member.relative_to(case.seed)).write_bytes(case.data)
    return folder


# --------------------------------------------------------------------------- the invariant


class FuzzTimeout(BaseException):
    """Raised by SIGALRM; a BaseException so that ``except Exception`` cannot swallow it."""


class FuzzFailure(AssertionError):
    """The invariant did not hold for one input."""


def fuzz(examples: int) -> settings:
    """Fixed-seed settings: the same ``examples`` inputs on every run, no shrinking."""
    return settings(
        derandomize=True,
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _on_alarm(_signum: int, _frame: FrameType | None) -> None:
    raise FuzzTimeout


def run_cli(argv: list[str], limit_s: int) -> tuple[int | None, str, str, str]:
    """Exit code, stdout, stderr and an escaped exception's traceback (or "")."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(limit_s)
    code: int | None = None
    escaped = ""
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("error", RuntimeWarning)  # as pyproject's pytest config does
            code = main(argv)
    except FuzzTimeout:
        escaped = f"timeout after {limit_s} s"
    except BaseException:  # anything escaping main is the finding
        escaped = traceback.format_exc()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue(), escaped


def _judge(code: int | None, stdout: str, stderr: str) -> str:
    if code == 0:
        try:
            json.loads(stdout)
        except ValueError as exc:
            return f"exit 0 but stdout is not JSON ({exc})"
        return ""
    if code != 1:
        return f"exit code {code}; stderr={stderr!r}"
    return judge_error(code, stderr)


def judge_error(code: int, stderr: str) -> str:
    """ "" when ``stderr`` is one ``roofscope: error:`` line, else what it is."""
    lines = stderr.splitlines()
    if len(lines) != 1 or not stderr.endswith("\n"):
        return f"exit {code} but stderr is {len(lines)} lines: {stderr!r}"
    if not lines[0].startswith(ERROR_PREFIX) or "Traceback" in stderr:
        return f"exit {code} but stderr is not a roofscope error: {stderr!r}"
    return ""


def check(path: Path | str, limit_s: int = TIME_LIMIT_S, options: Sequence[str] = ()) -> str:
    """Run ``analyze PATH --json [options]`` in-process; "" when the invariant holds, else the
    problem."""
    code, stdout, stderr, escaped = run_cli(["analyze", str(path), "--json", *options], limit_s)
    if escaped:
        return f"exception escaped main: {escaped.strip()}"
    return _judge(code, stdout, stderr)


def headline(problem: str) -> str:
    """The exception line of a traceback (``XError: ...``), else the problem's first line."""
    lines = [line.strip() for line in problem.strip().splitlines()]
    for line in reversed(lines):
        if re.match(r"^[\w.]*(Error|Exception|Warning|Interrupt|Exit)\b", line):
            return line[:300]
    return lines[0][:300] if lines else ""


def signature(case: FuzzCase, problem: str) -> str:
    """Family, mutation and the problem's headline: one saved input per distinct bug."""
    return f"{case.family}|{case.mutation}|{headline(problem)}"


def save_failure(case: FuzzCase, problem: str) -> Path:
    """Keep the input and a note under :data:`FAILURES`, once per :func:`signature`.

    Returns the saved input's path (the earlier one when this signature was already saved).
    """
    sig = hashlib.sha1(signature(case, problem).encode()).hexdigest()[:12]
    folder = FAILURES / f"{case.family}-{case.mutation.replace(':', '-')}-{sig}"
    target = folder / case.seed.name
    if folder.exists():
        return target
    folder.mkdir(parents=True)
    write_case(case, folder)
    (folder / "FAILURE.txt").write_text(f"{case.describe()}\n{problem}\n")
    return target


def check_case(case: FuzzCase, limit_s: int = TIME_LIMIT_S) -> float:
    """Write, analyse and judge one case; raises :class:`FuzzFailure`. Returns the seconds."""
    with tempfile.TemporaryDirectory(prefix="roofscope-fuzz-") as tmp:
        path = write_case(case, Path(tmp))
        start = time.perf_counter()
        problem = check(path, limit_s, case.options(Path(tmp)))
        elapsed = time.perf_counter() - start
    if problem:
        saved = save_failure(case, problem)
        raise FuzzFailure(f"{case.describe()} saved={saved}\n{problem}")
    return elapsed
