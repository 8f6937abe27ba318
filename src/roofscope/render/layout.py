"""Pieces of the HTML page's layout: figures side by side (stacked on a narrow window, by the
page's ``.dual`` style) and table text that wraps between words only."""

from __future__ import annotations

import re
from html import escape


def side_by_side(*figures: str) -> str:
    """The non-empty ``figures`` (markup) in one row that wraps when the window is narrow."""
    inner = "".join(f"<figure>{f}</figure>" for f in figures if f)
    return f'<div class="dual">{inner}</div>'


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
