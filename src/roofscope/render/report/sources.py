"""Where numbers come from, shown once: each distinct provenance text gets a number and a
short name for the table cell; the whole text is in the cell's tooltip and, once, in the
numbered list of sources beneath the table."""

from __future__ import annotations

import re
from collections.abc import Sequence

from roofscope.catalogue.ceilings import Ceiling
from roofscope.render.escape import escape_text as _e
from roofscope.render.layout import number, words
from roofscope.render.numbers import quantity

SHORT = 48  # characters of a short name at most
_PATH = re.compile(r"\S*/([^\s/]+\.\w+)")
_DOCUMENT = re.compile(r".*?https?://\S+")


def document(text: str) -> str:
    """The document a provenance text cites, without where in it: a catalogue value's
    "AMD datasheet: <title>, <url> (<where>)" is "AMD datasheet: <title>, <url>"; a text
    citing no URL is itself."""
    found = _DOCUMENT.match(text)
    return found.group(0).rstrip(",") if found else text


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
    """Distinct documents cited, numbered in the order they are first cited; each citation's
    whole text (where in the document too) is its cell's tooltip."""

    def __init__(self, prefix: str = "source") -> None:
        self.prefix = prefix
        self.texts: list[str] = []

    def cite(self, text: str) -> str:
        """The table cell's content: the short name, its number, the whole text on hover."""
        cited = document(text)
        if cited not in self.texts:
            self.texts.append(cited)
        n = self.texts.index(cited) + 1
        return (
            f'<span title="{_e(text)}">{_e(short_source(cited))} '
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


def ceiling_table(ceilings: Sequence[Ceiling]) -> str:
    """One row per ceiling; each source cited by a short name and a number, the whole text
    on hover and once in the list beneath."""
    sources = Sources("ceiling-source")
    rows = "".join(
        f"<tr><td>{words(c.name)}</td>{number(quantity(c.value, c.unit_of_value))}"
        f'<td>{_e(c.origin)}</td><td>{_e(c.scope)}</td><td class="src">{sources.cite(c.source)}'
        "</td></tr>"
        for c in ceilings
    )
    return (
        '<table id="ceilings"><tr><th>Ceiling</th><th>Value</th><th>Origin</th><th>Scope</th>'
        f'<th class="src">Source</th></tr>{rows}</table>'
        + sources.listing("Sources of the ceilings")
    )
