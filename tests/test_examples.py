"""The examples: ``examples/checkup.ipynb`` runs top to bottom in a Python kernel (nbclient and
ipykernel, from the dev extras) and is committed without outputs; ``examples/typed_client.py``
passes ``mypy --strict`` against the package's annotations."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "checkup.ipynb"
CLIENT = ROOT / "examples" / "typed_client.py"


NOTEBOOK_MODULES = ("nbformat", "nbclient", "ipykernel.kernelspec")  # the dev extras'


def _needed(module: str) -> ModuleType:
    """The module; without it the test is skipped, but in CI (CI=true), where it fails."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the notebook test needs {module} in CI: pip install -e '.[dev]'")
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")


def test_notebook_is_committed_without_outputs() -> None:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def test_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cell runs (an error fails the test); the outputs are what the cells promise."""
    nbformat, nbclient, kernelspec = (_needed(m) for m in NOTEBOOK_MODULES)
    # a kernel spec of this very interpreter, found before any "python3" of the machine's
    kernelspec.install(kernel_name="roofscope-tests", prefix=str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter" / "share" / "jupyter"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # run in an empty folder; roofscope is imported as the tests import it (PYTHONPATH)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run_in = tmp_path / "run"
    run_in.mkdir()
    client = nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="roofscope-tests",
        resources={"metadata": {"path": str(run_in)}},
    )
    client.execute(env=env)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any('id="roofline"' in h and 'id="hotspots"' in h for h in html)  # the report
    assert any('id="waterfall"' in h for h in html)  # the comparison
    last = nb.cells[-1].outputs[0]["data"]["text/plain"]
    assert last == "True"  # the gate passes: the candidate is 20 % faster


def test_typed_client_passes_mypy_strict() -> None:
    pytest.importorskip("mypy")
    env = {**os.environ, "MYPYPATH": str(ROOT / "src")}
    args = ["--strict", "--config-file", str(ROOT / "pyproject.toml"), str(CLIENT)]
    out = subprocess.run([sys.executable, "-m", "mypy", *args], capture_output=True, text=True,
                         env=env, cwd=ROOT)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr


def test_typed_client_runs() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, str(CLIENT)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "3 kernels, 6 dispatches"
