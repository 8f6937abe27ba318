"""PNG images of the charts, rasterised by headless Chromium from the same SVG.

Needs Playwright (``pip install playwright``) and a Chromium (Debian's ``chromium``, or the
path in $ROOFSCOPE_CHROMIUM); without them ``--png`` says so in one line.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from roofscope.errors import UsageError
from roofscope.outfile import make_folder, produce_atomically


def _shoot(svg: Any, temp: Path) -> None:
    svg.screenshot(path=str(temp), type="png")  # the temporary name does not end in .png


def write_pngs(
    charts: Mapping[str, str], folder: Path, *, force: bool, keep: Collection[str] = ()
) -> list[Path]:
    """One ``NAME.png`` per chart, at the SVG's own size (device scale 1)."""
    chromium = os.environ.get("ROOFSCOPE_CHROMIUM") or shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise UsageError("--png needs Playwright: pip install playwright") from None
    if not chromium:
        raise UsageError(
            "--png needs Chromium: apt-get install chromium, or set ROOFSCOPE_CHROMIUM"
        )
    make_folder(folder)
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(device_scale_factor=1)
        for name, svg in charts.items():
            path = folder / f"{name}.png"
            page.set_content(f'<html><body style="margin:0;background:#fff">{svg}</body></html>')
            shoot = partial(_shoot, page.locator("svg").first)
            produce_atomically(path, shoot, force=force, keep=keep)
            written.append(path)
        browser.close()
    return written
