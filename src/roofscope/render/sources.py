"""Where numbers come from, shown once: each distinct provenance text gets a number and a
short name for the table cell; the whole text is in the cell's tooltip and, once, in the
numbered list of sources beneath the table."""

from __future__ import annotations

import re
from collections.abc import Iterable

from roofscope.render.charts import escape_text as _e

SHORT = 48  # characters of a short name at most
_PATH = re.compile(r"\S*/([^\s/]+\.\w+)")


def short_source(text: str) -> str:
    """The first clause of a provenance text, paths cut to their file name, stopped before a
    ``: [list]`` or a second ``: ``, and at most SHORT characters (cut at a word)."""
    clause = _PATH.sub(r"\1", text.split("; ")[0])
    clause = clause.split(": [")[0]  # a catalogue row's list of what it supports
    head, sep, rest = clause.partition(": ")
    clause = head + sep + rest.split(": ")[0]
    if len(clause) <= SHORT:
        return clause
    return clause[: SHORT - 1].rsplit(" ", 1)[0] + "…"


class Sources:
    """Distinct provenance texts, numbered in the order they are first cited."""

    def __init__(self, prefix: str = "source") -> None:
        self.prefix = prefix
        self.texts: list[str] = []

    def cite(self, text: str) -> str:
        """The table cell's content: the short name, its number, the whole text on hover."""
        if text not in self.texts:
            self.texts.append(text)
        n = self.texts.index(text) + 1
        return (
            f'<span title="{_e(text)}">{_e(short_source(text))} '
            f'<a href="#{self.prefix}-{n}">[{n}]</a></span>'
        )

    def listing(self, title: str = "Sources") -> str:
        """The numbered list of every text cited, each once."""
        if not self.texts:
            return ""
        items = "".join(
            f'<li id="{self.prefix}-{n}">{_e(text)}</li>' for n, text in enumerate(self.texts, 1)
        )
        return (
            f'<p class="muted">{_e(title)}</p><ol class="sources" id="{self.prefix}s">{items}</ol>'
        )


def cite_all(texts: Iterable[str], prefix: str = "source") -> tuple[list[str], str]:
    """The cells of ``texts`` in order and the list beneath them."""
    sources = Sources(prefix)
    cells = [sources.cite(t) for t in texts]
    return cells, sources.listing()
