"""``pip install .`` alone (no dev extras, no Playwright, no browser) is enough for ``--png``.

One slow test: it makes a fresh virtual environment and installs the project into it, reusing
pip's cache (about 40 s with a warm cache on the 2-core dev machine). It needs a package index
(CI has PyPI); where pip cannot reach one it is skipped with pip's reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_png import ARTIFACTS, OMNIPERF_MI200, png_size, svg_size

ROOT = Path(__file__).parents[1]
UNREACHABLE = (
    "connection error", "NewConnectionError", "ConnectTimeout", "Max retries exceeded",
    "Network is unreachable", "Temporary failure in name resolution", "ProxyError",
)  # fmt: skip


def _run(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True)


def _index_unreachable(env: dict[str, str]) -> str | None:
    """pip's line (``-vv`` shows it) on the index it could not reach, where it found no release
    for that reason."""
    probe = [sys.executable, "-m", "pip", "-vv", "index", "versions", "vl-convert-python"]
    done = _run(*probe, "--retries", "0", "--timeout", "15", env=env)
    if done.returncode == 0:
        return None
    said = (done.stdout + done.stderr).splitlines()
    return next((line for line in said if any(w in line for w in UNREACHABLE)), None)


def _copy_project(dest: Path) -> None:
    """What ``pip install .`` reads: pyproject.toml, README.md and src/, without build debris."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(ROOT / "src", dest / "src", ignore=junk)


def test_png_from_a_plain_pip_install(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    why = _index_unreachable(env)
    if why:
        pytest.skip(f"pip cannot reach a package index: {why}")
    venv = tmp_path / "venv"
    made = _run(sys.executable, "-m", "venv", venv, env=env)
    assert made.returncode == 0, made.stderr
    project = tmp_path / "project"
    project.mkdir()
    _copy_project(project)
    pip = _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", project, env=env)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    no_browser = _run(venv / "bin" / "python", "-c", "import playwright", env=env)
    assert "No module named 'playwright'" in no_browser.stderr
    bare = {**env, "PATH": str(venv / "bin")}  # no chromium on the PATH
    bare.pop("ROOFSCOPE_CHROMIUM", None)
    pngs, svgs = tmp_path / "png", tmp_path / "svg"
    cli = [venv / "bin" / "roofscope", "analyze", OMNIPERF_MI200, "--png", pngs, "--svg", svgs]
    done = _run(*cli, env=bare)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in pngs.iterdir()) == [
        "hotspots.png", "roofline.png", "timeline.png"
    ]  # fmt: skip
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for png in sorted(pngs.iterdir()):
        data = png.read_bytes()
        (ARTIFACTS / f"fresh-venv-{png.name}").write_bytes(data)
        width, height = svg_size((svgs / png.with_suffix(".svg").name).read_text())
        assert png_size(data) == (2 * width, 2 * height), png.name
