"""The one escape for untrusted text (kernel names, paths) in HTML and SVG: its own module so
that the text report's source list needs no chart module."""

from __future__ import annotations

from html import escape


def escape_text(text: object) -> str:
    """Untrusted text (kernel names) made safe inside HTML and SVG, attributes included."""
    return escape(str(text), quote=True)
