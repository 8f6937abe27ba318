"""``roofscope.analyze(path)`` on every corpus profile and demo: its ``to_dict()`` is the CLI's
``analyze --json`` document (the committed digests of tests/data/json-digests.json, which
tests/test_json_unchanged.py holds the CLI to), it refuses what the CLI refuses with the same
line, and its ``to_pandas()`` has the document's kernels: name, calls and total_s.

And the one engine (issue 37): each profile is also read with ``scheduler="local", jobs=2``
(its runs on two worker processes, as ``analyze --scheduler local --jobs 2``); that report is
the same document but for its ``engine`` section, and the same text but for its ``engine:``
line.

Two analyses per profile, in worker processes (tests/corpus_pass.py, shared with the other
corpus-wide tests)."""

from __future__ import annotations

import json

from tests.conftest import SHARED_CORPUS
from tests.corpus_pass import corpus
from tests.test_json_unchanged import DIGESTS


def test_every_profile_as_the_cli() -> None:
    """Also the check that every corpus profile reads as before (tests/test_json_unchanged.py
    holds the demos through the command); tests/corpus_pass.py checks each up."""
    committed = json.loads(DIGESTS.read_text(encoding="utf-8"))
    results = corpus()
    assert [r.key for r in results if committed[r.key] != r.digest] == []
    assert [r.bad for r in results if r.bad] == []
    assert len(results) == len(committed) or not SHARED_CORPUS.is_dir()
