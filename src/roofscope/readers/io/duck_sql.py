"""SQL text for DuckDB: quoted identifiers and string literals, and the one ``read_csv`` call
every CSV reader scans a file with (each column named and typed by the reader, nothing sniffed).

Column names come from the files' headers, so they are quoted like any other text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path


def ident(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def product(terms: Sequence[str]) -> str:
    """The product of the BIGINT expressions ``terms``; NULL (unknown) where it would pass
    2^63, which DuckDB's BIGINT multiplication raises as an error naming neither line nor field.
    The test is in DOUBLE, so below 9.2e18 the exact product is computed, and only there."""
    exact = " * ".join(terms)
    return f"CASE WHEN abs({' * '.join(f'{t}::DOUBLE' for t in terms)}) < 9.2e18 THEN {exact} END"


def read_csv(
    path: Path,
    columns: Iterable[tuple[str, str]],
    *,
    header: bool = True,
    skip: int = 0,
    nulls: tuple[str, ...] = ("None", ""),
    rejects: str | None = None,
    strict: bool = False,
) -> str:
    """A ``read_csv`` table function over ``path`` with the given (name, DuckDB type) columns.

    Rows that do not parse are skipped, or, with ``rejects`` (a tag), stored in the tables
    ``<tag>_errors`` and ``<tag>_scans`` for the reader to name the first bad line, or, when
    ``strict``, raise an error (the scan without the bookkeeping, some 10 % faster).
    """
    spec = ", ".join(f"{literal(name)}: {literal(kind)}" for name, kind in columns)
    opts = [
        f"header={'true' if header else 'false'}",
        *([f"skip={skip}"] if skip else []),
        f"columns={{{spec}}}",
        "delim=','",
        "quote='\"'",
        "escape='\"'",
        f"nullstr=[{', '.join(literal(n) for n in nulls)}]",
        "auto_detect=false",
    ]
    if rejects:
        opts += [
            "store_rejects=true",
            f"rejects_table={literal(rejects + '_errors')}",
            f"rejects_scan={literal(rejects + '_scans')}",
        ]
    elif not strict:
        opts.append("ignore_errors=true")
    return f"read_csv({literal(str(path))}, {', '.join(opts)})"
