"""The HTML report of a profile with many kernels, and of a long trace: file size and time
to render in Chromium and Firefox.

    python bench/html_bench.py [--kernels 2000] [--dispatches 1000000] [--chromium PATH]

Writes a summary CSV of N distinct kernels with work for each (so every kernel is a point on
the roofline), makes the report with `roofscope analyze --html`, and loads it in headless
Chromium (Playwright) and Firefox ESR (WebDriver BiDi, tests/firefox.py; skipped when absent),
timing from navigation to the load event plus one forced layout. Then a rocprof v1 trace of
``--dispatches`` dispatches (bench/gen_results_csv.py), whose timeline is drawn from bins.
Issue 22's target: under 5 MB and under 2 s.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--dispatches", type=int, default=1_000_000,
                        help="dispatches of the timeline case (0: skip it)")  # fmt: skip
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    slowest, size = 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        html, made = _summary_report(folder, args.kernels)
        size = html.stat().st_size / 2**20
        rendered, in_firefox, points = _render(html, args.chromium, "#roofline circle.point")
        print(f"{args.kernels} kernels: report {size:.2f} MiB, made in {made:.2f} s, "
              f"rendered in {rendered:.2f} s (Chromium), {points} roofline points")  # fmt: skip
        if in_firefox is not None:
            print(f"  rendered in {in_firefox:.2f} s (Firefox)")
        slowest = max(rendered, in_firefox or 0.0)
        if args.dispatches:
            html, made = _trace_report(folder, args.dispatches)
            rendered, in_firefox, rects = _render(html, args.chromium, "#timeline rect")
            print(f"{args.dispatches:,} dispatches: report "
                  f"{html.stat().st_size / 2**20:.2f} MiB, made in {made:.2f} s, rendered in "
                  f"{rendered:.2f} s (Chromium), {rects} timeline rectangles")  # fmt: skip
            if in_firefox is not None:
                print(f"  rendered in {in_firefox:.2f} s (Firefox)")
            slowest = max(slowest, rendered, in_firefox or 0.0)
    print(f"- size < 5 MB: {'PASS' if size < 5 else 'FAIL'}; render < 2 s: "
          f"{'PASS' if slowest < 2 else 'FAIL'}")  # fmt: skip
    return 0


def _summary_report(folder: Path, kernels: int) -> tuple[Path, float]:
    """A summary CSV of ``kernels`` kernels with work, and its report; seconds to make it."""
    rng = random.Random(1)
    lines = ["Name,Count,TotalTimeNs,AverageTimeNs"]
    for i in range(kernels):
        calls = rng.randint(1, 500)
        mean = rng.randint(1_000, 2_000_000)
        name = f'"void ns::kernel_{i}<float, {i % 7}>(float*, int)"'
        lines.append(f"{name},{calls},{calls * mean},{mean}")
    (folder / "kernels.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "work.toml").write_text(
        '[[kernel]]\nmatch = "kernel_"\nper = "call"\nflops = 4.0e9\nbytes = 1.0e9\n',
        encoding="utf-8",
    )
    return _report(folder / "kernels.csv", folder / "report.html",
                   "--work", str(folder / "work.toml"), "--gpu", "mi250x")  # fmt: skip


def _trace_report(folder: Path, dispatches: int) -> tuple[Path, float]:
    """A rocprof v1 trace of ``dispatches`` (bench/gen_results_csv.py) and its report."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gen_results_csv import generate

    trace = folder / "results.csv"
    generate(trace, dispatches)
    return _report(trace, folder / "trace.html", "--gpu", "mi250x")


def _report(profile: Path, html: Path, *options: str) -> tuple[Path, float]:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "roofscope", "analyze", str(profile), *options, "--html", str(html)],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return html, time.perf_counter() - start


def _render(html: Path, chromium: str, count: str) -> tuple[float, float | None, int]:
    """Seconds to render in Chromium and in Firefox (None without it), and how many
    elements ``count`` selects."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        start = time.perf_counter()
        page.goto(html.as_uri(), wait_until="load")
        page.evaluate("document.body.getBoundingClientRect().height")
        rendered = time.perf_counter() - start
        found = page.locator(count).count()
        browser.close()
    return rendered, _firefox_seconds(html), found


def _firefox_seconds(html: Path) -> float | None:
    """Navigation to the load event plus one forced layout in Firefox, or None without it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests import firefox

    if firefox.missing() is not None:
        print(f"  Firefox skipped: {firefox.missing()}")
        return None
    with firefox.firefox() as page:
        start = time.perf_counter()
        page.open(html)
        page.evaluate("document.body.getBoundingClientRect().height")
        return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
