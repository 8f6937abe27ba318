"""The HTML report of a profile with many kernels: file size and time to render in Chromium
and Firefox.

    python bench/html_bench.py [--kernels 2000] [--chromium /usr/bin/chromium]

Writes a summary CSV of N distinct kernels with work for each (so every kernel is a point on
the roofline), makes the report with `roofscope analyze --html`, and loads it in headless
Chromium (Playwright) and Firefox ESR (WebDriver BiDi, tests/firefox.py; skipped when absent),
timing from navigation to the load event plus one forced layout. Issue target: under 5 MB and
under 5 s.
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
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines = ["Name,Count,TotalTimeNs,AverageTimeNs"]
        for i in range(args.kernels):
            calls = rng.randint(1, 500)
            mean = rng.randint(1_000, 2_000_000)
            name = f'"void ns::kernel_{i}<float, {i % 7}>(float*, int)"'
            lines.append(f"{name},{calls},{calls * mean},{mean}")
        (folder / "kernels.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / "work.toml").write_text(
            '[[kernel]]\nmatch = "kernel_"\nper = "call"\nflops = 4.0e9\nbytes = 1.0e9\n',
            encoding="utf-8",
        )
        html = folder / "report.html"
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "roofscope", "analyze", str(folder / "kernels.csv"),
             "--work", str(folder / "work.toml"), "--gpu", "mi250x", "--html", str(html)],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        made = time.perf_counter() - start
        size = html.stat().st_size / 2**20
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(html.as_uri(), wait_until="load")
            page.evaluate("document.body.getBoundingClientRect().height")
            rendered = time.perf_counter() - start
            points = page.locator("#roofline circle.point").count()
            browser.close()
        in_firefox = _firefox_seconds(html)
    print(f"{args.kernels} kernels: report {size:.2f} MiB, made in {made:.2f} s, "
          f"rendered in {rendered:.2f} s (Chromium), {points} roofline points")  # fmt: skip
    if in_firefox is not None:
        print(f"  rendered in {in_firefox:.2f} s (Firefox)")
    slowest = max(rendered, in_firefox or 0.0)
    print(f"- size < 5 MB: {'PASS' if size < 5 else 'FAIL'}; render < 5 s: "
          f"{'PASS' if slowest < 5 else 'FAIL'}")  # fmt: skip
    return 0


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
