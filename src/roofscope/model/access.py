"""Typed accessors: what the analyses read of a profile, as relations (SQL text).

Analyses never name a table: they are handed relations (the selected dispatches and summary
rows come from :mod:`roofscope.model.selection`) and may run SQL over them with
:func:`query` (``query(profile, relation, "SELECT ... FROM d")``, constants as parameters)
or filter and aggregate them (:class:`roofscope.model.relation.Relation`).
"""

from __future__ import annotations

from collections.abc import Sequence

from roofscope.model.duck import duckdb
from roofscope.model.profile import Profile
from roofscope.model.relation import Relation, among, constant
from roofscope.model.schema import Table
from roofscope.model.selection import DISPATCH_FIELDS

__all__ = ["Relation"]


def names(profile: Profile) -> Relation:
    """``name_id, raw_name, kernel`` (the normalised name) of every raw kernel name."""
    return profile.view(Table.NAMES, "name_id, raw_name, kernel")


def named(profile: Profile, relation: Relation) -> Relation:
    """``relation`` (which has a ``name_id``) with its ``raw_name`` and ``kernel``."""
    return relation.join(names(profile), "name_id")


def filled(profile: Profile) -> frozenset[Table]:
    """The tables that hold a row, asked in one statement once per profile (until its next
    input): an analysis whose table is empty skips its statements, each about a millisecond
    of a small trace's check-up."""
    return profile.derived(("filled",), lambda: _filled(profile))


def _filled(profile: Profile) -> frozenset[Table]:
    # a row of each table, named (1.2 ms; a row of EXISTS subqueries took 2.8 ms)
    held = " UNION ALL ".join(f"(SELECT '{t}' FROM {t} LIMIT 1)" for t in Table)
    return frozenset(Table(t) for (t,) in profile.con.execute(held).fetchall())


def has_dispatches(profile: Profile) -> bool:
    return Table.DISPATCHES in filled(profile)


def has_summaries(profile: Profile) -> bool:
    """Whether a kernel summary row was read (a producer's own per-kernel totals)."""
    return Table.KERNEL_SUMMARY in filled(profile)


def has_activity(profile: Profile) -> bool:
    """Whether an API, copy, domain or barrier summary row was read."""
    return Table.ACTIVITY_SUMMARY in filled(profile)


def has_copies(profile: Profile) -> bool:
    return Table.COPIES in filled(profile)


def has_producer_rules(profile: Profile) -> bool:
    return Table.PRODUCER_RULES in filled(profile)


def has_op_launches(profile: Profile) -> bool:
    """Whether a launch was read with the host operators around it (a PyTorch trace)."""
    return Table.OP_LAUNCHES in filled(profile)


def has_range_launches(profile: Profile) -> bool:
    """Whether a launch was read inside a user range."""
    return Table.RANGE_LAUNCHES in filled(profile)


def has_counters(profile: Profile) -> bool:
    """Whether any dispatch carries counter values (asked once per profile)."""
    return Table.COUNTERS in filled(profile)


def counter_values(profile: Profile) -> Relation:
    """``row_id, counter_id, value``: the counter values of every dispatch row (``row_id``
    is the dispatch relation's ``row_id``), each counter as its id, which
    :func:`counter_names` names; join them to a dispatch relation to select."""
    return profile.view(Table.COUNTERS, "row_id, counter_id, value")


def counter_names(profile: Profile) -> Relation:
    """``counter_id, counter``: the name of each counter id."""
    return profile.view(Table.COUNTER_NAMES, "counter_id, counter")


def host_range_kinds(profile: Profile) -> frozenset[str]:
    """The kinds of the ``host_ranges`` rows (asked once per profile, as :func:`filled`)."""
    return profile.derived(("host_range_kinds",), lambda: _host_range_kinds(profile))


def _host_range_kinds(profile: Profile) -> frozenset[str]:
    if Table.HOST_RANGES not in filled(profile):
        return frozenset()
    rows = profile.con.execute(f"SELECT DISTINCT kind FROM {Table.HOST_RANGES}").fetchall()
    return frozenset(str(kind) for (kind,) in rows if kind is not None)


def host_ranges(profile: Profile, kind: str) -> Relation:
    """``source, kind, name, start_ns, end_ns`` of the host ranges of ``kind``
    (``data-loader``)."""
    rel = profile.view(Table.HOST_RANGES, "source, kind, name, start_ns, end_ns")
    kept = ("host_ranges", kind)
    return profile.kept(kept, lambda: rel.filter(f"kind = {constant(kind)}"))


def graph_launches(profile: Profile) -> Relation:
    """``source, correlation, start_ns, end_ns, kernels``: each CUDA/HIP graph launch (a
    runtime call that replays a captured graph) and the dispatches of its input that carry
    its correlation id, which a profiler that lost the graph's kernels leaves at 0."""
    rel = profile.view(Table.GRAPH_LAUNCHES, "source, correlation, start_ns, end_ns")
    mine = all_dispatches(profile).aggregate(
        "source AS k_source, dispatch_id AS k_id, count(*) AS kernels", "source, dispatch_id"
    )
    return profile.kept(
        ("graph_launches",),
        lambda: rel.join(mine, "source = k_source AND correlation = k_id", how="LEFT").project(
            "source, correlation, start_ns, end_ns, coalesce(kernels, 0) AS kernels"
        ),
    )


def has_graph_launches(profile: Profile) -> bool:
    """Whether the trace holds a graph launch: asked before :func:`graph_launches`, whose
    count of each input's dispatches by id DuckDB builds even when there is none."""
    return Table.GRAPH_LAUNCHES in filled(profile)


def graph_replayed(profile: Profile, relation: Relation) -> Relation:
    """The rows of ``relation`` (dispatches, with ``source`` and ``dispatch_id``) that a graph
    launch replayed: those carrying a graph launch's correlation id in its input."""
    keys = profile.view(Table.GRAPH_LAUNCHES, "source AS g_source, correlation AS g_id")
    return relation.join(keys.distinct(), "source = g_source AND dispatch_id = g_id", how="SEMI")


def operators(profile: Profile) -> Relation:
    """``source, op_id, parent, name, start_ns, end_ns, dims, types, concrete, flops,
    bytes``: every host operator call around a launch (``parent``: the one around it), with
    its recorded inputs (Python's text of the lists) and a compiler's annotated work."""
    return profile.view(Table.OPERATORS, "*")


def op_launches(profile: Profile) -> Relation:
    """``source, correlation, start_ns, op_id``: every kernel or graph launch of the host and
    the innermost operator around it (None: none)."""
    return profile.view(Table.OP_LAUNCHES, "*")


def graph_kernel_ops(profile: Profile) -> Relation:
    """``source, row_id, op_id``: a graph-replayed dispatch (its row id) matched to a launch
    of the graph's capture, and the captured operator around that launch (``--graph-capture``)."""
    return profile.view(Table.GRAPH_KERNEL_OPS, "*")


def user_ranges(profile: Profile) -> Relation:
    """``source, range_id, name, start_ns, end_ns``: the user's named ranges around launches."""
    return profile.view(Table.USER_RANGES, "*")


def range_launches(profile: Profile) -> Relation:
    """``source, range_id, correlation``: each launch and each user range around it."""
    return profile.view(Table.RANGE_LAUNCHES, "*")


def kernel_annotations(profile: Profile) -> Relation:
    """``source, correlation, flops, bytes``: work written on the kernel events themselves."""
    return profile.view(Table.KERNEL_ANNOTATIONS, "*")


def launches(profile: Profile, sources: Sequence[int] | None = None) -> Relation:
    """How kernels were launched (``source, name_id``, the launch columns and the number of
    ``dispatches`` of each combination), of ``sources`` or of all inputs."""
    rel = profile.launches()
    if sources is None:
        return rel
    return profile.kept(("launches", tuple(sources)), lambda: rel.filter(among("source", sources)))


def copies(profile: Profile) -> Relation:
    """``source, pid, direction, src_agent, dst_agent, start_ns, end_ns`` of every copy."""
    return profile.view(Table.COPIES, "*")


def activity(profile: Profile) -> Relation:
    """``source, kind, name, calls, total_ns``: API, copy, domain and barrier summaries."""
    return profile.view(Table.ACTIVITY_SUMMARY, "*")


def producer_rules(profile: Profile) -> Relation:
    """``row_id, section, rule, kind, text, speedup_kind, speedup_pct``: the profiler's own
    analysis per dispatch row (Nsight Compute rules)."""
    return profile.view(Table.PRODUCER_RULES, "*")


def all_summaries(profile: Profile) -> Relation:
    """Every kernel summary row, cross-checks included (``source`` says which input)."""
    return profile.view(Table.KERNEL_SUMMARY, "*")


def all_dispatches(profile: Profile) -> Relation:
    """Every dispatch row of every input, barrier packets and counter runs included, with
    its ``row_id``; analyses that check the inputs themselves start here."""
    return profile.view(Table.DISPATCHES, DISPATCH_FIELDS)


def is_empty(profile: Profile, relation: Relation) -> bool:
    """Whether ``relation`` has no row."""
    return not query(profile, relation, "SELECT 1 FROM d LIMIT 1").fetchall()


def query(
    profile: Profile,
    relation: Relation,
    sql: str,
    params: Sequence[object] = (),
    **more: Relation,
) -> duckdb.DuckDBPyConnection:
    """Run ``sql`` (a SELECT) over ``relation``, which it names ``d`` (and over ``more``,
    named by their keywords) with ``params`` for its ``$1``, ``$2``, ...; fetch its rows at
    once (``fetchall``, ``fetchnumpy``).

    The relations' text becomes common table expressions of one statement (measured 0.8 ms
    a query against 2.9 ms for DuckDB's ``relation.query()``, which bound a view first, on an
    analysis that runs some fifty of them). They are NOT MATERIALIZED: DuckDB materialises
    a CTE named more than once, every column of it, where the statement reads a few (the
    operator view's ``ops``: 170 MiB of the 1 M-kernel trace's peak, for no row it kept)."""
    tables = {"d": relation, **more}
    ctes = ", ".join(f"{name} AS NOT MATERIALIZED ({rel.sql})" for name, rel in tables.items())
    return profile.con.execute(f"WITH {ctes} {sql}", list(params))


def count(profile: Profile, relation: Relation) -> int:
    """The number of rows of ``relation``."""
    ((n,),) = query(profile, relation, "SELECT count(*) FROM d").fetchall()
    return int(n)
