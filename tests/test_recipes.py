"""The recipes of docs/ARCHITECTURE.md, followed from outside roofscope: a reader of a
made-up format (once as text, once as SQLite), a diagnosis rule and an output, each added
through its registry alone (``readers.registry.add``, ``diagnosis.registry.add``,
``render.registry.add``), then ``analyze``.

The made-up "tinyprof" profile has three dispatches on device 0:
``scale`` 1000-1400 ns and 1700-2300 ns, ``add`` 1500-1600 ns. By hand: kernel time
400 + 600 + 100 = 1100 ns; ``scale`` 1000 ns in 2 calls (share 1000/1100 = 0.909), ``add``
100 ns in 1 call; wall 2300 - 1000 = 1300 ns, idle 200 ns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import roofscope
from roofscope.diagnosis import registry as rules
from roofscope.diagnosis.evidence import KernelView
from roofscope.diagnosis.findings import Finding
from roofscope.errors import InputError, UsageError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers import registry as readers
from roofscope.readers.io.batches import column, name_ids, registered
from roofscope.readers.load import load
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head
from roofscope.render import registry as outputs
from roofscope.report import Report
from tests.conftest import DATA, kernels_by_name, run_json

ROWS = [("scale", 0, 1000, 1400), ("add", 0, 1500, 1600), ("scale", 0, 1700, 2300)]
MAGIC = "#tinyprof v1"
TABLE = "tiny_dispatches"


def _insert(profile: Profile, path: Path, fmt: str, rows: list[tuple[str, int, int, int]]) -> None:
    """The dispatches of a tinyprof file into the model, under a new source."""
    source = profile.begin_input()  # the id the input added below gets
    arrays = {
        "name_id": name_ids(profile, [r[0] for r in rows]),
        "device": column([r[1] for r in rows], "int"),
        "dispatch_id": column(list(range(len(rows))), "int"),
        "start_ns": column([r[2] for r in rows], "int"),
        "end_ns": column([r[3] for r in rows], "int"),
    }
    with registered(profile, "tiny_rows", arrays) as duck:
        duck.execute(
            f"""INSERT INTO dispatches (source, name_id, device, dispatch_id, start_ns, end_ns)
            SELECT {source}, name_id, device, dispatch_id, start_ns, end_ns FROM tiny_rows"""
        )
    profile.add_input(str(path), fmt, len(rows), Role.DISPATCHES)
    profile.set_run(RunInfo(producer="tinyprof"))


class TinyText(Reader):
    """Recipe 1, text: ``#tinyprof v1``, then ``kernel,device,start_ns,end_ns`` rows."""

    name = "tinyprof-csv"
    description = "tinyprof text output (a made-up format of the recipe test)"
    producer = "tinyprof"

    def detect(self, head: Head) -> bool:
        return head.first_line == MAGIC

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        lines = path.read_text(encoding="utf-8").splitlines()[2:]
        rows = [(k, int(d), int(s), int(e)) for k, d, s, e in (x.split(",") for x in lines)]
        _insert(profile, path, self.name, rows)


class TinySqlite(Reader):
    """Recipe 1, SQLite: a database with a ``tiny_dispatches`` table."""

    name = "tinyprof-sqlite"
    description = "tinyprof SQLite database (a made-up format of the recipe test)"
    producer = "tinyprof"
    kinds = ("sqlite",)

    def detect(self, head: Head) -> bool:
        with sqlite3.connect(f"file:{head.path}?mode=ro", uri=True) as con:
            found = con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,))
            return found.fetchone() is not None

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
            rows = con.execute(f"SELECT kernel, device, start_ns, end_ns FROM {TABLE}").fetchall()
        _insert(profile, path, self.name, rows)


DOMINANT = 0.5


def dominant_kernel(k: KernelView) -> Finding | None:
    """Recipe 2: one kernel holding at least half of all kernel time."""
    share = k.stats.share
    if share is None or share < DOMINANT:
        return None
    return Finding(
        "dominant-kernel",
        k.stats.name,
        "bottleneck",
        "medium",
        f"{k.stats.name} takes {share:.0%} of the kernel time",
        "start with this kernel: the others cannot save more than the rest",
        evidence={"share": share},
        thresholds={"share": DOMINANT},
    )


@pytest.fixture
def added(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two readers and the rule registered for one test, the registries restored after."""
    monkeypatch.setattr(readers, "ADDED", readers.ADDED)
    monkeypatch.setattr(rules, "RULES", rules.RULES)
    readers.add(TinyText(), TinySqlite())
    rules.add(kernel=[dominant_kernel])


def write_text(folder: Path) -> Path:
    path = folder / "kernels.csv"
    body = "\n".join(",".join(map(str, r)) for r in ROWS)
    path.write_text(f"{MAGIC}\nkernel,device,start_ns,end_ns\n{body}\n", encoding="utf-8")
    return path


def write_sqlite(folder: Path) -> Path:
    path = folder / "kernels.db"
    with sqlite3.connect(path) as con:
        con.execute(f"CREATE TABLE {TABLE} (kernel TEXT, device INT, start_ns INT, end_ns INT)")
        con.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?)", ROWS)
    con.close()
    return path


@pytest.mark.usefixtures("added")
@pytest.mark.parametrize("write", [write_text, write_sqlite])
@pytest.mark.parametrize("as_folder", [False, True])
def test_an_added_reader_and_rule_analyse(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    write: Callable[[Path], Path],
    as_folder: bool,
) -> None:
    path = write(tmp_path)
    doc = run_json(capsys, str(tmp_path if as_folder else path))
    assert [(f["path"], f["format"], f["role"]) for f in doc["inputs"]] == [
        (str(path), "tinyprof-csv" if path.suffix == ".csv" else "tinyprof-sqlite", "dispatches")
    ]
    kernels = kernels_by_name(doc)
    assert doc["summary"]["kernel_time_s"] == pytest.approx(1100e-9)
    assert doc["summary"]["wall_s"] == pytest.approx(1300e-9)
    assert (kernels["scale"]["calls"], kernels["add"]["calls"]) == (2, 1)
    assert kernels["scale"]["total_s"] == pytest.approx(1000e-9)
    assert kernels["scale"]["share"] == pytest.approx(1000 / 1100)
    mine = [f for f in doc["findings"] if f["rule"] == "dominant-kernel"]
    assert [(f["kernel"], f["evidence"]["share"]) for f in mine] == [
        ("scale", pytest.approx(1000 / 1100))
    ]


def test_without_registration_neither_is_known(tmp_path: Path) -> None:
    """The same files before the recipe: no reader knows them (the recipe is what adds it),
    and the SQLite one is refused as the built-in SQLite readers explain it."""
    with pytest.raises(InputError, match="is not a recognised profiler file"):
        load([str(write_text(tmp_path))])
    with pytest.raises(InputError, match="is an SQLite database without rocpd's views"):
        load([str(write_sqlite(tmp_path))])


@pytest.mark.usefixtures("added")
def test_added_readers_are_listed_and_named_once() -> None:
    names = [r.name for r in readers.readers()]
    assert names[-2:] == ["tinyprof-csv", "tinyprof-sqlite"]
    assert readers.by_name("tinyprof-sqlite").kinds == ("sqlite",)
    with pytest.raises(ValueError, match="registered already"):
        readers.add(TinyText())
    assert rules.RULES.kernel[-1] is dominant_kernel
    assert len(set(names)) == len(names)


def test_the_registry_table_says_what_each_reader_is_asked() -> None:
    """Detection skips the modules whose readers cannot be asked about a file (a gzipped
    trace: every reader but Kineto's) from what BUILT_IN says of them: each line's kinds
    and compressed flag must be its class's own."""
    from importlib import import_module

    for module, name, kinds, compressed in readers.BUILT_IN:
        reader = getattr(import_module(f"roofscope.readers.{module}"), name)
        assert (reader.kinds, reader.compressed) == (kinds, compressed), name


def test_the_json_object_readers_are_asked_about_json_objects_only() -> None:
    """Detection does not import the modules of OBJECT_ONLY for a text that is no JSON object:
    each of their readers must refuse every such file of the test data (CSVs, logs, rocprof
    v1's JSON lines), and detect the JSON objects among them that are theirs."""
    from importlib import import_module

    from roofscope.readers.sniff import read_head

    heads = [read_head(p) for p in sorted(DATA.rglob("*")) if p.is_file()]
    texts = [h for h in heads if h.kind == "text"]
    objects = [h for h in texts if h.text.lstrip().startswith("{")]
    others = [h for h in texts if not h.text.lstrip().startswith("{")]
    assert len(objects) >= 10 and len(others) >= 100
    for module, name, _, _ in readers.BUILT_IN:
        if module in readers.OBJECT_ONLY:
            reader = getattr(import_module(f"roofscope.readers.{module}"), name)()
            assert [h.path for h in others if reader.detect(h)] == []
            assert any(reader.detect(h) for h in objects), name


# -- recipe 3: an output, added from outside roofscope ------------------------------------------


@dataclass(frozen=True)
class KernelsCsv:
    """Recipe 3: the kernel table as CSV (name, calls, total ns), a report's output."""

    name: str = "kernels-csv"
    suffix: str = ".csv"

    def render(self, result: Report) -> str:
        rows = [f"{k.name},{k.calls},{k.total_ns:.0f}" for k in result.hotspots.kernels]
        return "kernel,calls,total_ns\n" + "".join(f"{r}\n" for r in rows)


def test_an_added_output_renders_the_check_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The tinyprof file's kernels by hand: scale 2 calls, 400 + 600 ns; add 1 call, 100 ns."""
    monkeypatch.setattr(outputs, "ADDED", {})
    monkeypatch.setattr(readers, "ADDED", readers.ADDED)
    readers.add(TinyText())
    outputs.add("report", KernelsCsv())
    report = roofscope.analyze(write_text(tmp_path))
    rendered = outputs.renderer("report", "kernels-csv").render(report.checkup)
    assert rendered == "kernel,calls,total_ns\nscale,2,1000\nadd,1,100\n"
    with pytest.raises(UsageError, match="a report renderer named 'kernels-csv' exists"):
        outputs.add("report", KernelsCsv())
    with pytest.raises(UsageError, match="a report renderer named 'html' exists"):
        outputs.add("report", KernelsCsv(name="html"))
