"""Typed accessors: what the analyses read of a profile, as DuckDB relations.

Analyses never name a table: they are handed relations (the selected dispatches and summary
rows come from :mod:`roofscope.model.selection`) and may run SQL over them
(``relation.query("d", "SELECT ... FROM d")``) or filter and aggregate them through the
relational API.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
from duckdb import ColumnExpression, ConstantExpression

from roofscope.model.profile import Profile
from roofscope.model.schema import Table
from roofscope.model.selection import among

Relation = duckdb.DuckDBPyRelation


def names(profile: Profile) -> Relation:
    """``name_id, raw_name, kernel`` (the normalised name) of every raw kernel name."""
    return profile.con.table(Table.NAMES).project("name_id, raw_name, kernel")


def named(profile: Profile, relation: Relation) -> Relation:
    """``relation`` (which has a ``name_id``) with its ``raw_name`` and ``kernel``."""
    return relation.join(names(profile), "name_id")


def has_counters(profile: Profile) -> bool:
    """Whether any dispatch carries counter values."""
    return profile.count(Table.COUNTERS) > 0


def counters(profile: Profile) -> Relation:
    """``row_id, counter, value``: the counter values of every dispatch row (``row_id`` is
    the dispatch relation's ``row_id``); join them to a dispatch relation to select."""
    return profile.con.table(Table.COUNTERS).project("row_id, counter, value")


def host_ranges(profile: Profile, kind: str) -> Relation:
    """``source, name, start_ns, end_ns`` of the host ranges of ``kind`` (``data-loader``)."""
    rel = profile.con.table(Table.HOST_RANGES)
    return rel.filter(ColumnExpression("kind") == ConstantExpression(kind)).project(
        "source, name, start_ns, end_ns"
    )


def launches(profile: Profile, sources: Sequence[int] | None = None) -> Relation:
    """How kernels were launched (``source, name_id``, the launch columns and the number of
    ``dispatches`` of each combination), of ``sources`` or of all inputs."""
    rel = profile.launches()
    return rel if sources is None else rel.filter(among("source", sources))


def copies(profile: Profile) -> Relation:
    """``source, pid, direction, src_agent, dst_agent, start_ns, end_ns`` of every copy."""
    return profile.con.table(Table.COPIES)


def activity(profile: Profile) -> Relation:
    """``source, kind, name, calls, total_ns``: API, copy, domain and barrier summaries."""
    return profile.con.table(Table.ACTIVITY_SUMMARY)


def producer_rules(profile: Profile) -> Relation:
    """``row_id, section, rule, kind, text, speedup_kind, speedup_pct``: the profiler's own
    analysis per dispatch row (Nsight Compute rules)."""
    return profile.con.table(Table.PRODUCER_RULES)


def all_summaries(profile: Profile) -> Relation:
    """Every kernel summary row, cross-checks included (``source`` says which input)."""
    return profile.con.table(Table.KERNEL_SUMMARY)


def all_dispatches(profile: Profile) -> Relation:
    """Every dispatch row of every input, barrier packets and counter runs included, with
    its ``row_id``; analyses that check the inputs themselves start here."""
    return profile.con.table(Table.DISPATCHES).project(
        "rowid AS row_id, source, name_id, pid, device, dispatch_id, start_ns, end_ns"
    )


def is_empty(relation: Relation) -> bool:
    return not relation.limit(1).fetchall()


def query(relation: Relation, sql: str, alias: str = "d") -> Relation:
    """``sql`` (a SELECT) run over ``relation``, which it names ``alias``."""
    result = relation.query(alias, sql)
    assert result is not None, "a SELECT gives a relation"
    return result


def count(relation: Relation) -> int:
    """The number of rows of ``relation``."""
    ((n,),) = relation.aggregate("count(*)").fetchall()
    return int(n)
