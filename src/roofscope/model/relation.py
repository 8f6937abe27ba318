"""A query as SQL text on one connection: what analyses compose and then fetch once.

Each step (:meth:`Relation.filter`, :meth:`~Relation.project`, :meth:`~Relation.aggregate`,
:meth:`~Relation.join`, ...) wraps the text before it as a subquery, so a relation is read
when fetched and stays true while readers add rows. Constants enter the text through
:func:`constant` and :func:`among`, which quote them, never by pasting a value.

DuckDB's own relational API did this before; in duckdb 2.0 it is a Python layer rendering
the same text, whose import cost 37 ms of every command and whose binding of each step
0.3 ms (:mod:`roofscope.model.duck`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from roofscope.model.duck import duckdb

Row = tuple[Any, ...]


class Relation(msgspec.Struct, frozen=True):
    """The rows ``sql`` (one SELECT) gives on ``con``."""

    con: duckdb.DuckDBPyConnection
    sql: str

    @property
    def columns(self) -> list[str]:
        """The names of its columns (asked of DuckDB, no row read)."""
        found = self.con.execute(f"SELECT * FROM ({self.sql}) LIMIT 0").description or []
        return [str(d[0]) for d in found]

    def _over(self, select: str, rest: str = "") -> Relation:
        return Relation(self.con, f"SELECT {select} FROM ({self.sql}){rest}")

    def filter(self, condition: str) -> Relation:
        return self._over("*", f" WHERE {condition}")

    def project(self, fields: str) -> Relation:
        return self._over(fields)

    def aggregate(self, fields: str, groups: str = "ALL") -> Relation:
        """``fields`` (aggregates and some of ``groups``) of each group of ``groups``; by
        default grouped by the fields that are no aggregate (one group if all are)."""
        return self._over(fields, f" GROUP BY {groups}")

    def distinct(self) -> Relation:
        return self._over("DISTINCT *")

    def order(self, keys: str) -> Relation:
        return self._over("*", f" ORDER BY {keys}")

    def limit(self, n: int) -> Relation:
        return self._over("*", f" LIMIT {int(n)}")

    def join(self, other: Relation, on: str, how: str = "INNER") -> Relation:
        """Rows of both joined on ``on``: a column name both have (kept once), else a
        condition on columns each names differently; ``how``: INNER, LEFT or SEMI (the rows
        of this one that have a match, only its columns)."""
        match = f"USING ({on})" if on.isidentifier() else f"ON {on}"
        return self._over("*", f" {how} JOIN ({other.sql}) {match}")

    def fetchall(self) -> list[Row]:
        return self.con.execute(self.sql).fetchall()

    def to_table(self, name: str) -> None:
        """The rows stored as the table ``name``."""
        self.con.execute(f"CREATE TABLE {name} AS {self.sql}")


def constant(value: int | float | str | bool | None) -> str:
    """``value`` as an SQL constant."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(int(value))


def among(column: str, values: Iterable[int | str]) -> str:
    """``column IN (values)`` (false for none)."""
    listed = ", ".join(constant(v if isinstance(v, str) else int(v)) for v in values)
    return f"({column} IN ({listed}))" if listed else "false"
