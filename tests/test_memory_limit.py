"""``--memory-limit`` (``memory_limit=``): the profile's DuckDB database held within a size,
what is beyond it spilled to a temporary folder of its own, the report the same; a value
that is no size, one below 64 MiB, and a check-up that does not fit even spilling, each
one line (docs/bad-inputs.md, row 139)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import roofscope
from roofscope.checkup import engine
from roofscope.checkup.options import Spelling, size_bytes
from roofscope.errors import UsageError
from roofscope.model.profile import close_spilled
from roofscope.readers.load import load
from tests.conftest import DATA
from tests.test_bad_inputs import error_line, run

KINETO = DATA / "kineto" / "inference_rank_1.json.gz"
V1 = DATA / "rocprofv1-mi250x" / "laplacian"


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("500MB", 500 * 1000**2),
        ("2GiB", 2 * 1024**3),
        ("1.5 gb", 1_500_000_000),
        ("64MiB", 64 * 1024**2),
        ("1TB", 1000**4),
        (" 300 kib ", None),  # 307,200 bytes: below 64 MiB
    ],
)
def test_a_size_is_read_as_duckdb_reads_it(text: str, size: int | None) -> None:
    if size is None:
        with pytest.raises(UsageError, match="expected at least 64MiB"):
            size_bytes(text, "--memory-limit", Spelling.CLI)
    else:
        assert size_bytes(text, "--memory-limit", Spelling.CLI) == size


@pytest.mark.parametrize("path", [KINETO, V1], ids=["kineto", "rocprof-v1"])
def test_the_report_is_the_same_within_a_limit(path: Path) -> None:
    free = roofscope.analyze(path).to_json()
    held = roofscope.analyze(path, memory_limit="64MiB").to_json()
    assert held == free


def test_the_database_holds_the_limit_and_spills_to_a_folder_of_its_own() -> None:
    profile = load([str(KINETO)], memory=64 * 1024**2)
    ((limit, spill),) = profile.con.execute(
        "SELECT current_setting('memory_limit'), current_setting('temp_directory')"
    ).fetchall()
    assert limit == "64.0 MiB"
    folder = Path(spill).parent
    assert folder.name.startswith("roofscope-") and folder.is_dir()
    assert not Path(".tmp").exists()  # DuckDB's default spill folder, in the working directory
    close_spilled()
    assert not folder.exists()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("12parsecs", "--memory-limit '12parsecs': expected a size such as 500MB or 2GiB"),
        ("10MB", "--memory-limit '10MB': expected at least 64MiB"),
        ("", "--memory-limit '': expected a size such as 500MB or 2GiB"),
    ],
)
def test_a_bad_limit_is_one_line(capsys: pytest.CaptureFixture[str], value: str, said: str) -> None:
    code, out, err = run(capsys, "analyze", str(KINETO), "--memory-limit", value)
    assert (code, out) == (2, "")
    assert error_line(err).startswith(said)


def test_a_bad_limit_in_python_is_spelt_as_python() -> None:
    with pytest.raises(UsageError, match=r"^memory_limit='1 parsec': expected a size"):
        roofscope.analyze(KINETO, memory_limit="1 parsec")


def test_a_check_up_that_does_not_fit_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate 2.0 MiB")

    monkeypatch.setattr(engine, "analyse", out_of_memory)
    code, out, err = run(capsys, "analyze", str(KINETO), "--memory-limit", "100MiB")
    assert (code, out) == (2, "")
    assert error_line(err) == (
        f"--memory-limit: {KINETO} needs more than 100 MiB of memory even with what DuckDB "
        "can spill to disk; raise the limit"
    )


def test_without_a_limit_duckdbs_own_error_is_not_reworded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise duckdb.OutOfMemoryException("Out of Memory Error")

    monkeypatch.setattr(engine, "analyse", out_of_memory)
    with pytest.raises(duckdb.OutOfMemoryException):
        roofscope.analyze(KINETO)


def test_compare_holds_each_side_within_the_limit() -> None:
    free = roofscope.compare(KINETO, KINETO).to_json()
    held = roofscope.compare(KINETO, KINETO, memory_limit="64MiB").to_json()
    assert held == free


def test_a_compare_side_that_does_not_fit_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise duckdb.OutOfMemoryException("Out of Memory Error")

    monkeypatch.setattr(engine, "analyse", out_of_memory)
    with pytest.raises(UsageError) as raised:
        roofscope.compare(KINETO, KINETO, memory_limit="100MiB")
    assert str(raised.value) == (
        f"memory_limit=: {KINETO} needs more than 100 MiB of memory even with what DuckDB can "
        "spill to disk; raise the limit"
    )
