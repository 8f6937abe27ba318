"""Deterministic fuzzing of every reader: a mutated profile is analysed or refused cleanly.

Each test draws a fixed set of mutated inputs (``derandomize=True``) from one family of
:mod:`tests.fuzz_inputs` and asserts the CLI invariant: exit 0 with JSON on stdout, or exit 1
with exactly one ``roofscope: error: `` line on stderr.  Shrinking is off to bound the run
time; a failing input is saved under ``/tmp/roofscope-fuzz-failures``.  Longer, randomised
campaigns live in ``bench/fuzz_campaign.py``.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given

from tests.fuzz_inputs import DATA, FuzzCase, check, check_case, fuzz, strategy

KNOWN_BUG = "src bug found by fuzzing, see the fuzzing report; remove once fixed"


@fuzz(30)
@given(case=strategy("rocprof-v1"))
def test_fuzz_rocprof_v1(case: FuzzCase) -> None:
    check_case(case)


@fuzz(30)
@given(case=strategy("rocprofv3"))
def test_fuzz_rocprofv3(case: FuzzCase) -> None:
    check_case(case)


@fuzz(15)
@given(case=strategy("rocpd"))
def test_fuzz_rocpd(case: FuzzCase) -> None:
    check_case(case)


@fuzz(12)
@given(case=strategy("rocprof-compute"))
def test_fuzz_rocprof_compute(case: FuzzCase) -> None:
    check_case(case)


@fuzz(30)
@given(case=strategy("ncu"))
def test_fuzz_ncu(case: FuzzCase) -> None:
    check_case(case)


@fuzz(30)
@given(case=strategy("nsys"))
def test_fuzz_nsys(case: FuzzCase) -> None:
    check_case(case)


@fuzz(30)
@given(case=strategy("kineto"))
def test_fuzz_kineto(case: FuzzCase) -> None:
    check_case(case)


@fuzz(30)
@given(case=strategy("rocprofv3-json"))
def test_fuzz_rocprofv3_json(case: FuzzCase) -> None:
    check_case(case)


def test_invariant_accepts_a_clean_seed() -> None:
    assert check(DATA / "nsys" / "host_cuda_gpu_trace.csv") == ""


def test_invariant_accepts_a_clean_refusal(tmp_path: Path) -> None:
    assert check(tmp_path / "nope.csv") == ""
