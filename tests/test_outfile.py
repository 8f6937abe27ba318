"""Outputs are written whole or not at all: a SIGKILL in the middle of writing leaves the old
file (or none), never a partial one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from roofscope.errors import UsageError
from roofscope.outfile import produce_atomically, write_atomically
from tests.conftest import DEMO

ROOT = Path(__file__).resolve().parents[1]

# writes half of the new content into the temporary file, says so, and waits to be killed
HALF_WRITTEN = """\
import sys, time
from pathlib import Path
from roofscope.outfile import produce_atomically

def fill(temp):
    with temp.open("w") as f:
        f.write("NEW" * 100000)
        f.flush()
        print("half", flush=True)
        time.sleep(60)

produce_atomically(Path(sys.argv[1]), fill, force=True)
"""


def test_killed_while_writing_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("OLD", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-c", HALF_WRITTEN, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "half\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert target.read_text(encoding="utf-8") == "OLD"


def test_killed_while_writing_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    proc = subprocess.Popen(
        [sys.executable, "-c", HALF_WRITTEN, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "half\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not target.exists()


def test_analyze_html_killed_at_any_moment(tmp_path: Path) -> None:
    """``roofscope analyze DEMO --html`` killed after 0.2 .. 2.0 s: each time the report is
    the old one or the whole new one (it ends with the closing tag)."""
    target = tmp_path / "r.html"
    target.write_text("OLD", encoding="utf-8")
    cmd = [sys.executable, "-m", "roofscope", "analyze", str(DEMO), "--html", str(target)]
    for delay in (0.2, 0.5, 0.8, 1.1, 1.4, 2.0):
        proc = subprocess.Popen([*cmd, "--force"], cwd=ROOT, stdout=subprocess.DEVNULL)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        text = target.read_text(encoding="utf-8")
        assert text == "OLD" or text.rstrip().endswith("</html>"), delay


def test_existing_file_needs_force(tmp_path: Path) -> None:
    target = tmp_path / "x.json"
    target.write_text("keep", encoding="utf-8")
    with pytest.raises(UsageError, match="exists; pass --force"):
        write_atomically(target, "new")
    write_atomically(target, "new", force=True)
    assert target.read_text(encoding="utf-8") == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]  # no temporary file left


def test_a_failing_writer_leaves_nothing(tmp_path: Path) -> None:
    def fail(temp: Path) -> None:
        temp.write_text("half", encoding="utf-8")
        raise OSError(28, "No space left on device")

    with pytest.raises(UsageError, match="cannot be written"):
        produce_atomically(tmp_path / "x.png", fail)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot be written"):
        write_atomically(tmp_path / "missing" / "x.html", "text")
