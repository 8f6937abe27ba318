"""Terminal tables whose numbers are never cut: names are.

Every column but the name sizes to its widest cell (or header), at every width. Where the
console is too narrow for them and ``NAME_MIN`` characters of name, the columns named in
``drop`` are left out, in that order (a bar, a cumulative share: what another column already
says); the name column takes whatever is left and ends in an ellipsis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rich import box
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

NAME_MIN = 16
# between two columns: a box divider and one space of padding on each side (SIMPLE_HEAD,
# no outer edge, no edge padding)
GAP = 3

Justify = Literal["left", "right"]


def fitted_table(
    headers: Sequence[str],
    rows: Sequence[tuple[Sequence[str], str | None]],
    *,
    width: int,
    name: int,
    drop: Sequence[int] = (),
    left: Sequence[int] = (),
) -> Table:
    """``rows``: (cells, style). ``name``: the index of the name column; ``left``: columns
    justified left (all others right)."""
    widths = [
        max(cell_len(c) for c in [h, *(r[i] for r, _ in rows)]) for i, h in enumerate(headers)
    ]
    shown = list(range(len(headers)))
    for i in drop:
        if _room(widths, shown, name, width) >= min(NAME_MIN, widths[name]):
            break
        shown.remove(i)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=True)
    for i in shown:
        justify: Justify = "left" if i in left or i == name else "right"
        if i == name:
            table.add_column(Text(headers[i]), ratio=1, overflow="ellipsis", no_wrap=True)
        else:
            table.add_column(Text(headers[i]), justify=justify, no_wrap=True, width=widths[i])
    for cells, style in rows:
        table.add_row(*(Text(cells[i]) for i in shown), style=style)
    return table


def _room(widths: list[int], shown: list[int], name: int, width: int) -> int:
    """What the name column gets of ``width`` beside the other shown columns."""
    return width - sum(widths[i] for i in shown if i != name) - GAP * (len(shown) - 1)
