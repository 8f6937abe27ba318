"""Terminal tables whose numbers are never cut: names are shortened.

Every column but the name sizes to its widest cell (or header), at every width. Where the
console is too narrow for them and ``NAME_MIN`` characters of name, the columns named in
``drop`` are left out, in that order (a bar, a cumulative share: what another column already
says); the name column takes whatever is left. Kernel names (:class:`NameCell`) are shortened
together by :func:`roofscope.render.names.short_names` to that width, so the rows stay
distinct; within :func:`roofscope.render.names.full_names` they are whole and wrap in their
column (between words, a word longer than the column folded), never cut.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Sequence
from typing import Literal

import msgspec
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from roofscope.render.name_fit import wrap
from roofscope.render.names import short_names, shortened_to, showing_full

NAME_MIN = 36
MIN_WIDTH = 60
# between two columns: a box divider and one space of padding on each side (SIMPLE_HEAD,
# no outer edge, no edge padding)
GAP = 3

Justify = Literal["left", "right"]
Overflow = Literal["fold", "ellipsis"]


class NameCell(msgspec.Struct, frozen=True):
    """A cell of kernel names (two: a matched pair, shown ``a → b``) after a ``mark``."""

    names: tuple[str, ...]
    mark: str = ""


Cell = str | NameCell


def fitted_table(
    headers: Sequence[str],
    rows: Sequence[tuple[Sequence[Cell], str | None]],
    *,
    width: int,
    name: int,
    drop: Sequence[int] = (),
    left: Sequence[int] = (),
) -> Table:
    """``rows``: (cells, style). ``name``: the index of the name column; ``left``: columns
    justified left (all others right)."""
    natural = _names(rows, name, None)
    widths = [
        max(cell_len(c) for c in [h, *(_text(r[i], natural[j]) for j, (r, _) in enumerate(rows))])
        for i, h in enumerate(headers)
    ]
    shown = list(range(len(headers)))
    for i in drop:
        if _room(widths, shown, name, width) >= min(NAME_MIN, widths[name]):
            break
        shown.remove(i)
    full, room = showing_full(), max(1, _room(widths, shown, name, width))
    names = _wrapped(rows, name, room) if full else _names(rows, name, room)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=True)
    for i in shown:
        justify: Justify = "left" if i in left or i == name else "right"
        if i == name:
            overflow: Overflow = "fold" if full else "ellipsis"
            table.add_column(Text(headers[i]), ratio=1, overflow=overflow, no_wrap=not full)
        else:
            table.add_column(Text(headers[i]), justify=justify, no_wrap=True, width=widths[i])
    for j, (cells, style) in enumerate(rows):
        table.add_row(*(Text(_text(cells[i], names[j])) for i in shown), style=style)
    return table


def _names(
    rows: Sequence[tuple[Sequence[Cell], str | None]], name: int, room: int | None
) -> list[str]:
    """The name column's text per row: kernel names shortened together to ``room`` (a pair
    ``a → b`` to half of it each), so that two rows read alike only where their names are."""
    cells = [r[name] for r, _ in rows]
    every = sorted({n for c in cells if isinstance(c, NameCell) for n in c.names})
    marks = max((cell_len(c.mark) for c in cells if isinstance(c, NameCell)), default=0)
    one = None if room is None else max(1, room - marks)
    pairs = any(isinstance(c, NameCell) and len(c.names) > 1 for c in cells)
    half = None if one is None or not pairs else max(1, (one - 3) // 2)
    whole, in_room, in_half = shortened_to(every, [None, one, half])
    short = [whole, in_room if one is not None else {}, in_half if half is not None else {}]
    return [_cell_text(c, short, room) for c in cells]


def _wrapped(rows: Sequence[tuple[Sequence[Cell], str | None]], name: int, room: int) -> list[str]:
    """The name column's text per row, each name whole (:func:`~roofscope.render.names.
    full_names`) in lines of ``room`` characters, the lines after the first under the name."""
    out = []
    for cells, _ in rows:
        c = cells[name]
        if isinstance(c, str):
            out.append(c)
            continue
        pad = cell_len(c.mark)
        lines = wrap(" → ".join(short_names(list(c.names))), max(1, room - pad))
        out.append(c.mark + ("\n" + " " * pad).join(lines))
    return out


def _cell_text(c: Cell, short: list[dict[str, str]], room: int | None) -> str:
    """``short``: the names as they are, in the room, in half the room."""
    if isinstance(c, str):
        return c if room is None or cell_len(c) <= room else c[: max(0, room - 1)] + "…"
    whole = c.mark + " → ".join(short[0][n] for n in c.names)
    if room is None or (cell_len(whole) <= room and len(c.names) > 1):
        return whole
    return c.mark + " → ".join(short[len(c.names)][n] for n in c.names)


def _text(c: Cell, name_text: str) -> str:
    return name_text if isinstance(c, NameCell) else c


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` where set), at least ``MIN_WIDTH``."""
    import shutil

    return max(MIN_WIDTH, shutil.get_terminal_size((120, 40)).columns)


def text_console(buf: io.StringIO, width: int | None, color: bool | None) -> Console:
    """A console writing plain text into ``buf`` at ``width`` (the terminal's when None),
    colour only when asked: what every text report prints with."""
    return Console(
        file=buf,
        width=width or terminal_width(),
        force_terminal=bool(color),
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,
    )


def _room(widths: list[int], shown: list[int], name: int, width: int) -> int:
    """What the name column gets of ``width`` beside the other shown columns."""
    return width - sum(widths[i] for i in shown if i != name) - GAP * (len(shown) - 1)


# a number and the word after it stay on one line (``9.21 TB/s``)
_GLUE = re.compile(r"(?<=\d) (?=[^\s\d(\[·→-])")


def wrapped(
    console: Console, text: str, indent: str, hanging: str | None = None, style: str = ""
) -> None:
    """``text`` whole, wrapped at the console's width between words: a word longer than a
    line (a URL, a kernel name) stands on its own line, never cut; a number stays on the line
    of the word after it (``9.21 TB/s``)."""
    lines = textwrap.wrap(
        _GLUE.sub("\u00a0", text),
        width=console.width,
        initial_indent=indent,
        subsequent_indent=indent if hanging is None else hanging,
        break_long_words=False,
        break_on_hyphens=False,
    )
    for line in lines:
        line = line.replace("\u00a0", " ")
        console.print(Text(line, style=style), no_wrap=True, overflow="ignore", crop=False)


def titled_table(
    console: Console,
    title: str,
    table: Table,
    notes: Sequence[str] = (),
    *,
    style: str = "bold",
) -> None:
    """A section of the terminal view: its title (wrapped), its table, and its notes under
    it, dim and indented."""
    wrapped(console, title, "", "  ", style=style)
    console.print(table)
    for line in notes:
        wrapped(console, line, "  ", "    ", style="dim")
