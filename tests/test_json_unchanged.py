"""The JSON of every corpus profile and of the demo equals the committed digests
(tests/data/json-digests.json, written by tools/json_snapshot.py).

Here the demo profiles go through the command (``analyze --json``, its bytes); every corpus
profile is held to its digest by tests/test_api_corpus.py, through ``Report.to_dict()``, the
same document (``render.report.json``), so that the suite analyses each profile once, not twice.

A refactor must keep them. A change meant to change what roofscope reports rewrites them
(``python tools/json_snapshot.py tests/data/json-digests.json``) and says which profiles moved
and why in its commit message."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

from tests.conftest import SHARED_CORPUS

ROOT = Path(__file__).resolve().parents[1]
DIGESTS = ROOT / "tests" / "data" / "json-digests.json"


def _tool() -> ModuleType:
    """tools/json_snapshot.py, importable by name so that its worker processes find it."""
    if str(ROOT / "tools") not in sys.path:
        sys.path.insert(0, str(ROOT / "tools"))
    return importlib.import_module("json_snapshot")


def test_every_profile_reads_as_before() -> None:
    committed = json.loads(DIGESTS.read_text(encoding="utf-8"))
    tool = _tool()
    demos = {k: v for k, v in committed.items() if k.startswith("demo:")}
    now = {
        tool.key(p, SHARED_CORPUS): tool.analysed(p, SHARED_CORPUS)[0]
        for p in sorted(tool.DEMO.iterdir())
    }
    assert len(demos) >= 2 and now == demos
