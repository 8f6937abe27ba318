"""The model's schema in one place: its tables, their columns, and the roles of its inputs.

Only ``readers/`` (which fill the tables) and ``model/`` (whose accessors read them) name a
table in SQL; every other stage is handed DuckDB relations by :mod:`roofscope.model.access`.
"""

from __future__ import annotations

from enum import StrEnum


class Table(StrEnum):
    """The model's tables (see :mod:`roofscope.model.profile` for what each holds)."""

    NAMES = "names"
    DISPATCHES = "dispatches"
    LAUNCHES = "launches"
    COUNTERS = "counters"
    COUNTER_NAMES = "counter_names"
    KERNEL_SUMMARY = "kernel_summary"
    ACTIVITY_SUMMARY = "activity_summary"
    COPIES = "copies"
    PRODUCER_RULES = "producer_rules"
    HOST_RANGES = "host_ranges"
    GRAPH_LAUNCHES = "graph_launches"
    OPERATORS = "operators"
    OP_LAUNCHES = "op_launches"
    KERNEL_ANNOTATIONS = "kernel_annotations"
    USER_RANGES = "user_ranges"
    RANGE_LAUNCHES = "range_launches"
    GRAPH_KERNEL_OPS = "graph_kernel_ops"


# Few, narrow columns keep millions of dispatches small; the row's id is DuckDB's rowid.
DISPATCH_COLUMNS: dict[str, str] = {
    "source": "SMALLINT",
    "name_id": "INTEGER",
    "pid": "BIGINT",
    "device": "INTEGER",
    "dispatch_id": "BIGINT",
    "start_ns": "BIGINT",
    "end_ns": "BIGINT",
    "raw_overflow": "VARCHAR",  # a name first seen after the sampled rows, until it has an id
}

# A timed row's duration (a dispatch's, a copy's, a host range's), in SQL over its
# ``start_ns`` and ``end_ns``, and the rows whose duration counts: both times known and the
# end not before the start. A row with an unknown time is no backwards one: NOT_BACKWARDS
# keeps it where only backwards rows are dropped (a call without a duration still counts).
DURATION = "(end_ns - start_ns)"
VALID_DURATION = "end_ns >= start_ns"
NOT_BACKWARDS = f"(end_ns IS NULL OR start_ns IS NULL OR {VALID_DURATION})"
POSITIVE_DURATION = "end_ns > start_ns"  # what a rate can be divided by

# How a dispatch was launched (host thread, queue, stream, shape); kept in ``launches``, one
# row per distinct combination of a kernel, with its dispatch count.
LAUNCH_COLUMNS: dict[str, str] = {
    "tid": "BIGINT",
    "queue": "BIGINT",
    "stream": "BIGINT",
    "grid_size": "BIGINT",
    "workgroup_size": "BIGINT",
    "lds_bytes": "BIGINT",
    "scratch_bytes": "BIGINT",
    "arch_vgpr": "BIGINT",
    "accum_vgpr": "BIGINT",
    "sgpr": "BIGINT",
    "wave_size": "BIGINT",
}

SUMMARY_COLUMNS: dict[str, str] = {
    "source": "INTEGER",
    "name_id": "INTEGER",
    "calls": "BIGINT",
    "total_ns": "DOUBLE",
    "mean_ns": "DOUBLE",
    "min_ns": "DOUBLE",
    "max_ns": "DOUBLE",
    "std_ns": "DOUBLE",
    "median_ns": "DOUBLE",  # where the summary gives it (nsys cuda_gpu_kern_sum's Med)
    "pid": "BIGINT",
}


def _columns(spec: dict[str, str]) -> str:
    return ", ".join(f"{c} {t}" for c, t in spec.items())


DDL = f"""
CREATE TABLE {Table.NAMES} (name_id INTEGER PRIMARY KEY, raw_name VARCHAR UNIQUE, kernel VARCHAR);
CREATE TABLE {Table.DISPATCHES} ({_columns(DISPATCH_COLUMNS)});
CREATE TABLE {Table.LAUNCHES} (source SMALLINT, name_id INTEGER, {_columns(LAUNCH_COLUMNS)},
    dispatches BIGINT);
CREATE TABLE {Table.COUNTERS} (row_id BIGINT, counter_id INTEGER, value DOUBLE);
CREATE TABLE {Table.COUNTER_NAMES} (counter_id INTEGER, counter VARCHAR);
CREATE TABLE {Table.KERNEL_SUMMARY} ({_columns(SUMMARY_COLUMNS)});
CREATE TABLE {Table.ACTIVITY_SUMMARY} (source INTEGER, kind VARCHAR, name VARCHAR, calls BIGINT,
    total_ns DOUBLE);
CREATE TABLE {Table.COPIES} (source INTEGER, pid BIGINT, direction VARCHAR, src_agent VARCHAR,
    dst_agent VARCHAR, start_ns BIGINT, end_ns BIGINT);
CREATE TABLE {Table.PRODUCER_RULES} (row_id BIGINT, section VARCHAR, rule VARCHAR, kind VARCHAR,
    text VARCHAR, speedup_kind VARCHAR, speedup_pct DOUBLE);
CREATE TABLE {Table.HOST_RANGES} (source INTEGER, kind VARCHAR, name VARCHAR, start_ns BIGINT,
    end_ns BIGINT);
CREATE TABLE {Table.GRAPH_LAUNCHES} (source INTEGER, correlation BIGINT, start_ns BIGINT,
    end_ns BIGINT);
CREATE TABLE {Table.OPERATORS} (source INTEGER, op_id BIGINT, parent BIGINT, name VARCHAR,
    start_ns BIGINT, end_ns BIGINT, dims VARCHAR, types VARCHAR, concrete VARCHAR,
    flops DOUBLE, bytes DOUBLE);
CREATE TABLE {Table.OP_LAUNCHES} (source INTEGER, correlation BIGINT, start_ns BIGINT,
    op_id BIGINT);
CREATE TABLE {Table.KERNEL_ANNOTATIONS} (source INTEGER, correlation BIGINT, start_ns BIGINT,
    flops DOUBLE, bytes DOUBLE);
CREATE TABLE {Table.USER_RANGES} (source INTEGER, range_id BIGINT, name VARCHAR,
    start_ns BIGINT, end_ns BIGINT);
CREATE TABLE {Table.RANGE_LAUNCHES} (source INTEGER, range_id BIGINT, correlation BIGINT);
CREATE TABLE {Table.GRAPH_KERNEL_OPS} (source INTEGER, row_id BIGINT, op_id BIGINT);
"""


class Role(StrEnum):
    """What an input file gave the profile (:attr:`InputFile.role`), and what a reader offers
    the run planner (readers/load.py), which turns an offer into one of the input roles.

    The values are the strings the JSON report's ``inputs[].role`` carries."""

    # -- input roles: what was read, and whether it is counted -------------------------------
    DISPATCHES = "dispatches"  # the launches every analysis counts
    KERNEL_SUMMARY = "kernel-summary"  # per-kernel totals, when no dispatch source was read
    API_SUMMARY = "api-summary"  # API call totals (hip_stats, nsys cuda_api_sum, ...)
    COPY_SUMMARY = "copy-summary"  # memory copy totals (copy_stats, memory_copy_stats)
    DOMAIN_SUMMARY = "domain-summary"  # rocprofv3 domain_stats
    COPIES = "copies"  # memory copies with their times
    CROSS_CHECK = "cross-check"  # a kernel summary beside the dispatches, compared with them
    COUNTER_RUN = "counter-run"  # dispatches of a run that collected counters, not counted
    COUNTER_PASS = "counter-pass"  # a later counter pass joined onto the first one's rows
    PASS_REPEAT = "pass-repeat"  # a later pass's trace or stats, repeating the first's
    # another export of dispatches read from an earlier file (ncu's details and raw pages of
    # one run): what it adds is put on those dispatches, which count once
    SAME_LAUNCHES = "same-launches"
    METADATA = "metadata"  # describes the run (agents, sysinfo, roofline), no dispatches
    # what the host did (API call traces, NVTX ranges): host_ranges, never kernel time
    HOST_CALLS = "host-calls"
    # a dispatch file's barrier packets (rocprof v1): ``dispatches`` rows under their own
    # source id, never kernel time (readers/io/barriers.py); counted beside a DISPATCHES file
    BARRIERS = "barriers"
    COUNTER_RUN_BARRIERS = "counter-run-barriers"
    PASS_REPEAT_BARRIERS = "pass-repeat-barriers"
    # -- offers: what a reader says a file gives, before the planner decides ------------------
    ACTIVITY = "activity"  # API, copy or domain totals: read as ``<kind>-summary``
    WORKLOAD = "workload"  # a folder read as one run (rocprof-compute); read as DISPATCHES
    # rocprofv3 counter_collection.csv: DISPATCHES or COUNTER_RUN, as the planner decides
    COUNTER_COLLECTION = "counter-collection"


_SUMMARY_OF = {"api": Role.API_SUMMARY, "copy": Role.COPY_SUMMARY, "domain": Role.DOMAIN_SUMMARY}
_BARRIERS_OF = {
    Role.DISPATCHES: Role.BARRIERS,
    Role.COUNTER_RUN: Role.COUNTER_RUN_BARRIERS,
    Role.PASS_REPEAT: Role.PASS_REPEAT_BARRIERS,
}


def summary_role(kind: str) -> Role:
    """The role of an activity summary of ``kind`` ('api', 'copy' or 'domain')."""
    return _SUMMARY_OF[kind]


def barriers_role(role: Role) -> Role:
    """The role of the barrier packets of a dispatch file read in ``role``."""
    return _BARRIERS_OF[role]
