"""PNG images of the charts, rasterised without a browser (vl-convert) at twice the SVG's size.

Each PNG written here is also saved into test-artifacts/png/ to be looked at.
"""

from __future__ import annotations

import shutil
import struct
import sys
import zlib
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest

from roofscope.cli.app import main
from roofscope.render.charts.font import SVG_FONT
from roofscope.render.charts.png import png_bytes
from tests.conftest import DATA, SUMMARY, SUMMARY_WORK

ARTIFACTS = Path(__file__).parents[1] / "test-artifacts" / "png"
OMNIPERF_MI200 = DATA / "rocprof-compute-omniperf1-mi200"
SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Helvetica's advance widths (Adobe's AFM, 1/1000 em), which Arial and Liberation Sans share
WIDTHS = {"m": 833, "e": 556, "o": 556, "r": 333, "y": 500, " ": 278, "b": 556, "u": 556}
WIDTHS |= {"n": 556, "d": 556}
ASCENDER, DESCENDER = 0.718, 0.207  # em, from the same AFM


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk, after checking the signature."""
    assert data[:8] == SIGNATURE and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def svg_size(svg: str) -> tuple[int, int]:
    root = ET.fromstring(svg)
    return int(float(root.get("width") or 0)), int(float(root.get("height") or 0))


def pixels(data: bytes) -> np.ndarray:
    """The RGBA pixels (height x width x 4) of an 8-bit RGBA PNG, its rows unfiltered."""
    width, height = png_size(data)
    assert data[24:26] == b"\x08\x06", "8-bit RGBA expected"
    idat, pos = b"", 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        if data[pos + 4 : pos + 8] == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * 4)
    out = np.zeros((height, width * 4), np.uint8)
    prev = np.zeros(width * 4, np.uint8)
    for y in range(height):
        out[y] = prev = _unfilter(int(raw[y, 0]), raw[y, 1:], prev)
    return out.reshape(height, width, 4)


def _unfilter(kind: int, line: np.ndarray, prev: np.ndarray) -> np.ndarray:
    if kind == 0:
        return line
    if kind == 1:  # Sub: a running sum per channel, modulo 256
        return np.cumsum(line.reshape(-1, 4), axis=0, dtype=np.uint8).reshape(-1)
    if kind == 2:
        return line + prev
    row, up = [int(v) for v in line], [int(v) for v in prev]
    for x in range(len(row)):
        a, c = (row[x - 4], up[x - 4]) if x >= 4 else (0, 0)
        if kind == 3:
            row[x] = (row[x] + (a + up[x]) // 2) & 255
        else:  # Paeth
            p = a + up[x] - c
            pa, pb, pc = abs(p - a), abs(p - up[x]), abs(p - c)
            near = a if pa <= pb and pa <= pc else up[x] if pb <= pc else c
            row[x] = (row[x] + near) & 255
    return np.array(row, np.uint8)


def dark(image: np.ndarray) -> np.ndarray:
    """Where a pixel is near black: text (the charts' lines and bars are grey or coloured)."""
    return np.asarray(image[..., :3].max(axis=2) < 80)


def save(name: str, data: bytes) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / name).write_bytes(data)


def test_text_in_the_charts_font_at_twice_the_size() -> None:
    """A label in the charts' font: drawn (an unknown family draws nothing), at 2x, on white,
    as wide as Helvetica's metrics say: 6.669 em at 14 px is 93.4 px, 186.7 px at 2x."""
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" {SVG_FONT}>'
        '<text x="10" y="25" font-size="14">memory bound</text></svg>'
    )
    data = png_bytes(svg)
    save("label.png", data)
    assert png_size(data) == (400, 80)
    image = pixels(data)
    assert image[0, 0].tolist() == [255, 255, 255, 255]  # opaque white, not transparent
    columns = np.flatnonzero(dark(image).any(axis=0))
    advance = sum(WIDTHS[c] for c in "memory bound") / 1000 * 14  # 93.4 px
    assert 2 * 10 <= columns[0] <= 2 * 10 + 4  # the m's left side bearing: under 2 px
    assert 2 * (10 + advance) - 6 <= columns[-1] < 2 * (10 + advance)  # the d's right one
    rows = np.flatnonzero(dark(image).any(axis=1))  # from b's and d's ascender to y's descender
    assert abs(rows[0] - 2 * (25 - ASCENDER * 14)) <= 1.5
    assert abs(rows[-1] - 2 * (25 + DESCENDER * 14)) <= 1.5


def test_every_chart_as_png(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """analyze and compare with --png and --svg: one PNG per SVG, exactly twice its width and
    height, opaque, with text drawn; then the same run without --force refuses to overwrite."""
    pngs, svgs = tmp_path / "png", tmp_path / "svg"
    analyze = ["analyze", str(OMNIPERF_MI200), "--png", str(pngs), "--svg", str(svgs)]
    assert main(analyze) == 0
    compare = ["compare", str(SUMMARY), str(SUMMARY), "--gpu", "mi250x", *SUMMARY_WORK]
    assert main([*compare, "--png", str(pngs), "--svg", str(svgs)]) == 0
    capsys.readouterr()
    charts = ["hotspots", "movement", "roofline", "timeline", "waterfall"]
    assert sorted(p.name for p in pngs.iterdir()) == [f"{c}.png" for c in charts]
    for chart in charts:
        data = (pngs / f"{chart}.png").read_bytes()
        save(f"{chart}.png", data)
        width, height = svg_size((svgs / f"{chart}.svg").read_text())
        assert png_size(data) == (2 * width, 2 * height), chart
        image = pixels(data)
        assert (image[..., 3] == 255).all(), chart
        assert dark(image).sum() > 100, f"{chart}: no text drawn"
    before = {p.name: p.read_bytes() for p in pngs.iterdir()}
    assert main(["analyze", str(OMNIPERF_MI200), "--png", str(pngs)]) == 2
    assert capsys.readouterr().err == (
        f"roofscope: error: {pngs / 'hotspots.png'}: exists; "
        "pass --force to overwrite it, or another path\n"
    )
    assert {p.name: p.read_bytes() for p in pngs.iterdir()} == before


def test_no_browser_needed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--png with no Chromium on PATH and Playwright hidden: the PNGs are written all the same."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("ROOFSCOPE_CHROMIUM", raising=False)
    monkeypatch.setitem(sys.modules, "playwright", None)  # import playwright fails
    assert shutil.which("chromium") is None
    assert main(["analyze", str(OMNIPERF_MI200), "--png", str(tmp_path / "png")]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == [
        "hotspots.png", "roofline.png", "timeline.png"
    ]  # fmt: skip


def test_without_the_rasteriser(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken install (vl-convert missing) gives one line with the remedy, no traceback."""
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import vl_convert fails
    assert main(["analyze", str(OMNIPERF_MI200), "--png", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "roofscope: error: --png needs vl-convert-python: pip install vl-convert-python\n"
    )
    assert list(tmp_path.iterdir()) == []
