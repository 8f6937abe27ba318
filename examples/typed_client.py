"""A small script over roofscope's typed API: mypy --strict checks it (tests/test_examples.py).

python examples/typed_client.py [PROFILE]
"""

from __future__ import annotations

import sys
from importlib import resources

import roofscope
from roofscope import Report, Verdict


def hottest(report: Report, share: float = 0.01) -> list[tuple[str, float]]:
    """(name, seconds) of the kernels that hold at least ``share`` of the kernel time."""
    return [(k.name, (k.total_ns or 0) / 1e9) for k in report.kernels if (k.share or 0) >= share]


def gate(base: str, new: str) -> bool:
    verdict: Verdict = roofscope.compare(base, new).gate(fail_if_slower=5)
    return verdict.passed


def main(argv: list[str]) -> int:
    demo = resources.files("roofscope") / "data" / "demo"
    path = argv[0] if argv else str(demo / "openmp-collapse-mi300a")
    try:
        report = roofscope.analyze(path)
    except roofscope.RoofscopeError as exc:  # InputError, UsageError: one line each
        print(f"error: {exc}", file=sys.stderr)
        return 1
    s = report.summary
    print(f"{s.kernels} kernels, {s.dispatches} dispatches")
    for name, seconds in hottest(report):
        print(f"{seconds * 1e3:10.3f} ms  {name}")
    for f in report.findings[:3]:
        print(f"[{f.severity}] {f.summary}")
    print("gate:", "pass" if gate(path, path) else "fail")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
