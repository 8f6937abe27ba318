"""A longer, randomised fuzzing campaign over every reader family and the command line.

    python bench/fuzz_campaign.py --minutes 10 [--family NAME] [--batch-seconds 60]

``--family options`` draws command lines of analyze and compare with hostile option values
and output paths (:mod:`tests.test_fuzz_options`) instead of mutated profiles.

Each family runs for ``--minutes``, split into batches; every batch is a fresh subprocess
(``--worker``) that draws random inputs from :mod:`tests.fuzz_inputs` and checks the CLI
invariant without shrinking.  The parent reaps each batch with ``os.wait4`` to read that
child's peak RSS, and prints per family: inputs tried, failures, slowest input, peak RSS.
Failing inputs are saved under ``/tmp/roofscope-fuzz-failures`` (one per distinct bug).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@dataclass
class Tally:
    """What one family's batches found."""

    tried: int = 0
    failures: list[str] = field(default_factory=list)
    slowest_s: float = 0.0
    peak_rss_mb: float = 0.0

    def add(self, batch: dict[str, Any], rss_mb: float) -> None:
        self.tried += int(batch["tried"])
        self.failures += [f for f in batch["failures"] if f not in self.failures]
        self.slowest_s = max(self.slowest_s, float(batch["slowest_s"]))
        self.peak_rss_mb = max(self.peak_rss_mb, rss_mb)


# --------------------------------------------------------------------------- worker


def run_worker(family: str, seconds: float, report: Path) -> None:
    """Draw random cases of ``family`` for ``seconds``; write a JSON summary to ``report``."""
    from hypothesis import HealthCheck, Phase, given, settings

    deadline = time.monotonic() + seconds
    state: dict[str, Any] = {"tried": 0, "failures": [], "slowest_s": 0.0}
    cases, check = _options() if family == OPTIONS else _inputs(family)

    @settings(
        max_examples=10**6,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases)
    def one(case: Any) -> None:
        if time.monotonic() > deadline:
            raise _Done
        state["tried"] += 1
        start = time.perf_counter()
        problem = check(case)
        state["slowest_s"] = max(state["slowest_s"], time.perf_counter() - start)
        if problem and problem not in state["failures"]:
            state["failures"].append(problem)

    with contextlib.suppress(_Done):
        one()
    report.write_text(json.dumps(state))


OPTIONS = "options"  # the command line's options (tests/test_fuzz_options.py), not a reader


def _inputs(family: str) -> tuple[Any, Callable[[Any], str]]:
    """Mutated profiles of one reader family, and their check ("" when it holds)."""
    from tests.fuzz_inputs import FuzzCase, FuzzFailure, check_case, headline, strategy

    def check(case: FuzzCase) -> str:
        try:
            check_case(case)
        except FuzzFailure as exc:
            text = str(exc)
            return f"{text.splitlines()[0]} :: {headline(text.split(chr(10), 1)[-1])}"
        return ""

    return strategy(family), check


def _options() -> tuple[Any, Callable[[Any], str]]:
    """Command lines of analyze and compare with hostile options, and their check."""
    from hypothesis import strategies as st
    from tests.fuzz_inputs import headline
    from tests.test_fuzz_options import check_line, command_lines

    def check(case: tuple[str, list[tuple[str, str]]]) -> str:
        try:
            check_line(*case)
        except AssertionError as exc:
            return f"{case} :: {headline(str(exc))}"
        return ""

    lines = st.sampled_from(("analyze", "compare")).flatmap(
        lambda c: command_lines(c).map(lambda o: (c, o))
    )
    return lines, check


class _Done(BaseException):
    """Ends a worker's Hypothesis loop when its time is up."""


# --------------------------------------------------------------------------- parent


def run_batch(family: str, seconds: float) -> tuple[dict[str, Any], float]:
    """One worker subprocess; its summary and its peak RSS in MB (from ``os.wait4``)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, __file__, "--worker", "--family", family]
        cmd += ["--seconds", str(seconds), "--report", str(report)]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
        killer = threading.Timer(seconds + 120, lambda: os.kill(proc.pid, signal.SIGKILL))
        killer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        rss_mb = usage.ru_maxrss / 1024  # KiB on Linux
        if report.exists():
            return json.loads(report.read_text()), rss_mb
        crash = f"family={family} worker died with exit {proc.returncode} (crash or hang)"
        return {"tried": 0, "failures": [crash], "slowest_s": seconds}, rss_mb


def campaign(family: str, minutes: float, batch_seconds: float) -> Tally:
    """Batches of ``family`` until ``minutes`` are spent."""
    tally = Tally()
    end = time.monotonic() + minutes * 60
    while (left := end - time.monotonic()) > 1:
        batch, rss = run_batch(family, min(batch_seconds, left))
        tally.add(batch, rss)
    return tally


def print_tally(family: str, tally: Tally) -> None:
    print(
        f"{family:16} tried={tally.tried:6d} failures={len(tally.failures):3d} "
        f"slowest={tally.slowest_s:6.2f}s peak_rss={tally.peak_rss_mb:7.1f}MB",
        flush=True,
    )
    for line in tally.failures:
        print(f"    {line}", flush=True)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="per family")
    parser.add_argument("--family", help="only this family (default: all)")
    parser.add_argument("--batch-seconds", type=float, default=60.0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=60.0, help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.worker:
        run_worker(args.family, args.seconds, args.report)
        return 0
    from tests.fuzz_inputs import FAMILIES

    known = [*FAMILIES, OPTIONS]
    families = [args.family] if args.family else known
    unknown = [f for f in families if f not in known]
    if unknown:
        print(f"unknown family {unknown[0]}; choose from {', '.join(known)}", file=sys.stderr)
        return 2
    found = 0
    for family in families:
        tally = campaign(family, args.minutes, args.batch_seconds)
        print_tally(family, tally)
        found += len(tally.failures)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
