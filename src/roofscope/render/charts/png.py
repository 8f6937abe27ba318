"""PNG images of the charts: the same SVG, rasterised at twice its size without a browser.

vl-convert-python (a self-contained wheel around the resvg renderer) draws the SVG; its
bundled Liberation Sans is the charts' font (``render.charts.font``), so the image is the same on
every machine.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from roofscope.errors import UsageError

SCALE = 2  # pixels per SVG unit: sharp on a slide and on a high-density screen


def png_bytes(svg: str, *, scale: float = SCALE) -> bytes:
    """The PNG file of one SVG document, ``scale`` times its width and height."""
    try:
        import vl_convert  # a large native library: loaded only when a PNG is asked for
    except ImportError:
        raise UsageError("--png needs vl-convert-python: pip install vl-convert-python") from None
    data: bytes = vl_convert.svg_to_png(_on_white(svg), scale=scale)
    return data


def _on_white(svg: str) -> str:
    """The chart inside an SVG of its size with a white background: a transparent PNG would
    lose its black text on a dark slide."""
    root = ET.fromstring(svg)
    size = f'width="{root.get("width")}" height="{root.get("height")}"'
    return f'<svg xmlns="http://www.w3.org/2000/svg" {size}><rect {size} fill="#fff"/>{svg}</svg>'
