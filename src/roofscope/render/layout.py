"""Pieces of the HTML page's layout: figures one under the other at the page's full width
(a roofline's labels readable), table text that wraps
between words only, number cells that never wrap (a unit stays beside its number), and a
kernel's name elided in its cell with a button that copies it whole."""

from __future__ import annotations

import re
from html import escape


def stacked(*figures: str) -> str:
    """The non-empty ``figures`` one under the other, each as wide as the page: a chart
    whose labels must be read (the roofline) gets the whole width."""
    inner = "".join(f"<figure>{f}</figure>" for f in figures if f)
    return f'<div class="stack">{inner}</div>'


def number(text: str) -> str:
    """A table cell of a number and its unit (``0.185 %``, ``52.3 µs``, ``20.3 TFLOP/s``):
    right-aligned and never wrapped, the unit joined to its number by a no-break space."""
    return f'<td class="n">{kept(text)}</td>'


def kept(text: str) -> str:
    """``text`` escaped, its spaces no-break ones: one piece a line never splits."""
    return escape(text).replace(" ", "&nbsp;")


def elided(short: str) -> str:
    """A name shown in one line of its cell, cut with an ellipsis where the cell is narrower."""
    return f'<span class="nm">{escape(short)}</span>'


def copy_button(full: str) -> str:
    """A button that copies ``full`` (the page's script, from its ``data-copy`` text)."""
    return (
        f'<button type="button" class="copy" data-copy="{escape(full)}" '
        'title="copy the full name">copy</button>'
    )


# a browser may break a line after punctuation inside a word (a hyphen, and in Chromium
# even ``>(``): a word holding any is kept whole by a nowrap span; plain words need none
BREAKS = re.compile(r"[^\w]")


def words(text: str) -> str:
    """Text for a table's first column: it may wrap between words, never inside one (a
    hyphen, as in ``fp64-vector``, is no place to break)."""
    return " ".join(
        f'<span class="w">{escape(w)}</span>' if BREAKS.search(w) else escape(w)
        for w in text.split(" ")
        if w
    )
