from __future__ import annotations

import io
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TypeVar

import pytest

from roofscope.cli.app import main
from roofscope.model.profile import Profile

DATA = Path(__file__).parent / "data"
DEMO = Path(__file__).parents[1] / "src" / "roofscope" / "data" / "demo" / "finite-difference"
SHARED_CORPUS = Path(__file__).parents[2] / "shared" / "corpus"


# the modules that share tests/corpus_pass.py's one pass over the corpus (cached per process)
CORPUS_PASS = {"test_api_corpus", "test_verdicts_corpus", "test_library_advice", "test_categories"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``make test`` (pytest-xdist, ``--dist loadgroup``) a module's tests run on one
    worker, so what a module computes once and caches (pages opened in a browser, the corpus
    pass) is computed once, not once per worker; the corpus-pass modules share one."""
    for item in items:
        module = item.nodeid.split("::")[0]
        group = "corpus" if Path(module).stem in CORPUS_PASS else module
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _terminal_of_120_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The text reports wrap at the terminal's width: every test sees the 120 columns of a
    terminal-less run (a test that wants another width sets ``COLUMNS`` itself), whatever
    terminal or pytest-xdist worker runs it."""
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("LINES", raising=False)


SUMMARY = DATA / "summary" / "kernels.csv"  # the roofline issue's example
SUMMARY_WORK = [
    "--work", "vector_add=1.0e9:8.0e8",
    "--work", "mat_mul=2.6e10:6.0e8",
    "--work", "layer_norm=1.8e9:2.4e8",
    "--work", "softmax=4.0e9:6.4e8",
]  # fmt: skip
PEAKS = ["--peak-flops", "22.6e12", "--peak-bw", "1.6e12"]
# the model's counter values by name (its counters table keeps the id of each name), for SQL
NAMED_COUNTERS = (
    "(SELECT row_id, counter, value FROM counters JOIN counter_names USING (counter_id))"
)


def insert_counters(profile: Profile, rows: Sequence[tuple[int, str, float | None]]) -> None:
    """Insert counter values given as (row id, counter name, value) into ``profile``."""
    ids = profile.counter_ids(counter for _, counter, _ in rows)
    profile.con.executemany(
        "INSERT INTO counters VALUES (?, ?, ?)", [(r, ids[c], v) for r, c, v in rows]
    )


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """``roofscope analyze ARGS --json``; asserts exit 0 and returns the parsed document."""
    code = main(["analyze", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


T = TypeVar("T")
R = TypeVar("R")


def on_every_core(function: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``function`` over ``items`` in worker processes, one per core, in order: for the tests
    that analyse every corpus profile (``function`` must be a module-level function)."""
    with ProcessPoolExecutor(os.cpu_count() or 1, mp_context=get_context("spawn")) as pool:
        return list(pool.map(function, items))


def analyze_doc(args: Sequence[str]) -> dict[str, Any]:
    """``roofscope analyze ARGS --json`` in this process, parsed (for ``on_every_core``)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["analyze", *args, "--json"])
    assert code == 0, (args, err.getvalue())
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def union(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Intervals merged where they touch or overlap, in order: plain Python, the tests'
    independent check of busy and idle time."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def kernels_by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k["name"]: k for k in doc["kernels"]}


def rocpd_table(con: sqlite3.Connection, view: str) -> str:
    """The uuid-suffixed table of a rocpd database behind ``view`` (``kernel_dispatch`` ->
    ``rocpd_kernel_dispatch_<uuid>``)."""
    (name,) = con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?", [f"rocpd_{view}_%"]
    ).fetchone()
    return str(name)


def plain_html(page: str) -> str:
    """An HTML report with its number cells' markup undone (``class="n"``, the no-break space
    between a number and its unit), for tests that look for a row's words."""
    return page.replace(' class="n"', "").replace("&nbsp;", " ")
