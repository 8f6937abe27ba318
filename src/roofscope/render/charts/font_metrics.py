"""The advance widths of the charts' font (Liberation Sans Regular, Arial's metrics), in ems:
read from the font's ``hmtx`` table (2048 units per em) for printable ASCII and the few other
characters the charts write. Text is measured from them to place labels apart; a character
not listed counts as a full em, so that a label is never measured narrower than it is."""

from __future__ import annotations

ASCENT, DESCENT = 0.905, 0.212  # of the font's hhea table, in ems

_GROUPS = (
    ("'", 0.191),
    ("ijl", 0.222),
    ("|", 0.26),
    (" !,./:;I[\\]ft·", 0.278),
    ("()-`r", 0.333),
    ("{}", 0.334),
    ('"', 0.355),
    ("*", 0.389),
    ("°", 0.4),
    ("^", 0.469),
    ("Jcksvxyz", 0.5),
    ("#$0123456789?L_abdeghnopqu", 0.556),
    ("µ", 0.576),
    ("+<=>~\u00d7\u2212", 0.584),  # and the multiplication and minus signs
    ("FTZ", 0.611),
    ("&ABEKPSVXY", 0.667),
    ("CDHNRUw", 0.722),
    ("GOQ", 0.778),
    ("Mm", 0.833),
    ("%", 0.889),
    ("W", 0.944),
    ("…—→", 1.0),
    ("@", 1.015),
)
EM: dict[str, float] = {ch: w for chars, w in _GROUPS for ch in chars}


def advance(text: str, size: float) -> float:
    """The width of ``text`` set at ``size`` px, in px."""
    return size * sum(EM.get(ch, 1.0) for ch in text)
