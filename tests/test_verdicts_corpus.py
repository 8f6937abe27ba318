"""Issue 38 across the corpus, points 2 and 3: no kernel whose grid holds fewer blocks than
the device has SMs (CUs), or that Nsight Compute calls too small to fill the device, is given
memory-access or coalescing advice; no kernel whose busiest measured unit is a compute unit at
BUSY_PCT (60 %) of its peak or more is given memory-access advice. Each corpus profile is
checked up once through ``roofscope.analyze`` (tests/corpus_pass.py, shared with the other
corpus-wide tests)."""

from __future__ import annotations

import pytest

from tests.conftest import SHARED_CORPUS
from tests.corpus_pass import corpus


@pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason="needs ../shared/corpus")
def test_no_memory_advice_for_small_grids_or_busy_compute() -> None:
    results = corpus()
    assert [b for r in results for b in r.advice_wrong] == []
    # the corpus holds both kinds, so the check is not vacuous
    assert sum(r.small for r in results) > 0 and sum(r.busy for r in results) > 0
