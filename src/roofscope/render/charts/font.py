"""The one font family of every chart, declared on each SVG's root.

Liberation Sans is the sans-serif font that vl-convert (the PNG rasteriser) bundles and
resolves ``sans-serif`` to, so a PNG is drawn in it on every machine, whatever fonts the
system has. It has Arial's metrics, as has Arimo, so a browser that shows the SVG or the
HTML report with any of the families listed lays the text out to the same widths.
"""

from __future__ import annotations

FONT_FAMILY = "'Liberation Sans', Arimo, Arial, Helvetica, sans-serif"
SVG_FONT = f'font-family="{FONT_FAMILY}"'
