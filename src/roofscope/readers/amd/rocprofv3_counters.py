"""rocprofv3 ``counter_collection.csv`` (docs/formats/rocprofv3.md, "Folders and passes",
"counter_collection.csv").

``counter_collection.csv`` is LONG (one row per counter per dispatch) in four header layouts.
The rows of one dispatch become one row of ``dispatches`` (times where the layout has them),
its shape a launch, its counters ``counters`` rows; a counter written on several rows of one
dispatch is SUMMED, as rocprofv3 itself sums instances, so the value is the dispatch's total
either way.

Such a file is a counter run when a kernel trace is read with it (the planner decides, see
:mod:`roofscope.readers.plan`); otherwise it gives the dispatches. Of the ``pass_N/`` or
``pmc_N/`` folders of one run, the lowest gives the dispatches (or the counter run), and every
other pass puts its counters on them, matched by kernel and occurrence in launch order (a
``counter-pass``). A pass that saw a different number of dispatches of some kernel cannot be
matched: it stays a counter run of its own, with a warning naming its folder.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from roofscope.errors import InputError
from roofscope.model import words
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.amd.rocprofv3_agent_info import agent_info_beside, pid_from_name
from roofscope.readers.io.csv_layout import header_name
from roofscope.readers.io.csvload import register_names
from roofscope.readers.io.dispatch_csv import report_rows
from roofscope.readers.io.duck_sql import ident, read_csv
from roofscope.readers.registry import Reader
from roofscope.readers.runs import pass_of
from roofscope.readers.sniff import Head

# file column -> model column; every one is a whole number
_INTS = {
    "Dispatch_Id": "dispatch_id",
    "Queue_Id": "queue",
    "Process_Id": "process",
    "Thread_Id": "tid",
    "Grid_Size": "grid_size",
    "Workgroup_Size": "workgroup_size",
    "LDS_Block_Size": "lds_bytes",
    "Scratch_Size": "scratch_bytes",
    "VGPR_Count": "arch_vgpr",
    "Accum_VGPR_Count": "accum_vgpr",
    "SGPR_Count": "sgpr",
    "Start_Timestamp": "start_ns",
    "End_Timestamp": "end_ns",
}
_KEY = ("dispatch_id", "raw", "device", *[m for m in _INTS.values() if m != "dispatch_id"])
_SHAPE = (
    "tid, queue, grid_size, workgroup_size, lds_bytes, scratch_bytes, arch_vgpr, accum_vgpr, sgpr"
)
_NEEDED = ("Dispatch_Id", "Kernel_Name", "Counter_Name", "Counter_Value")
_AGENT = "TRY_CAST(regexp_extract(\"Agent_Id\", '(\\d+)\\s*$', 1) AS INTEGER)"
_WHY = {
    "CAST": "a field that is not a number",
    "MISSING COLUMNS": "too few fields",
    "TOO MANY COLUMNS": "too many fields",
    "UNQUOTED VALUE": "a stray quote",
    "INVALID ENCODING": "bytes that are not UTF-8",
}
_ids = itertools.count()


def _scan(path: Path, header: list[str], tag: str) -> str:
    types = {c: "BIGINT" if c in _INTS else "VARCHAR" for c in header}
    types["Counter_Value"] = "DOUBLE"
    return read_csv(path, types.items(), rejects=tag)


def _header(path: Path, head: Head) -> list[str]:
    header = [header_name(h, i) for i, h in enumerate(head.fields())]
    missing = [c for c in _NEEDED if c not in header]
    if missing:
        raise InputError(
            str(path),
            f"is a rocprofv3 counter_collection.csv without {', '.join(missing)} (expected "
            "one row per counter per dispatch: Dispatch_Id, ..., Kernel_Name, ..., "
            "Counter_Name, Counter_Value)",
            "pass the file as rocprofv3 wrote it, header line included",
            line=1,
        )
    return header


def load_counter_collection(
    profile: Profile, path: Path, head: Head, *, fmt: str, role: Role
) -> int:
    """Read the file into ``dispatches``, ``launches`` and ``counters``; its dispatch count."""
    header = _header(path, head)
    tag = f"cc{next(_ids)}"
    try:
        _stage(profile, path, header, tag)
        first = _first_pass(profile, path) if role == Role.COUNTER_RUN else None
        if first is not None and _join_pass(profile, path, tag, first):
            rows = profile.count(f"{tag}_d")
            role = Role.COUNTER_PASS
        else:
            rows = _insert(profile, path, tag, pid_from_name(path))
        _report_rejects(profile, path, tag)
    finally:
        for table in ("rows", "k", "d", "errors", "scans"):
            profile.con.execute(f"DROP TABLE IF EXISTS {tag}_{table}")
    profile.add_input(str(path), fmt, rows, role)
    return rows


def _stage(profile: Profile, path: Path, header: list[str], tag: str) -> None:
    """``<tag>_k``: the file's rows with the model's names and ``k``, the dispatch's index."""
    given = {model: ident(col) for col, model in _INTS.items() if col in header}
    given["device"] = _AGENT if "Agent_Id" in header else "NULL::BIGINT"
    fields = ", ".join(f"{given.get(m, 'NULL::BIGINT')} AS {m}" for m in _KEY if m != "raw")
    con = profile.con
    con.execute(
        f"""CREATE TEMP TABLE {tag}_rows AS SELECT {fields}, "Kernel_Name" AS raw,
        "Counter_Name" AS counter, "Counter_Value" AS value FROM {_scan(path, header, tag)}"""
    )
    key = ", ".join(_KEY)
    con.execute(
        f"""CREATE TEMP TABLE {tag}_k AS
        SELECT dense_rank() OVER (ORDER BY first_row) - 1 AS k, * EXCLUDE (first_row)
        FROM (SELECT *, min(rowid) OVER (PARTITION BY {key}) AS first_row FROM {tag}_rows
              WHERE dispatch_id IS NOT NULL AND raw IS NOT NULL)"""
    )
    con.execute(f"CREATE TEMP TABLE {tag}_d AS SELECT DISTINCT k, {key} FROM {tag}_k")


def _insert(profile: Profile, path: Path, tag: str, pid: int | None) -> int:
    con = profile.con
    source, first = profile.begin_input(), profile.count("dispatches")
    register_names(profile, path, f"{tag}_d")
    con.execute(
        f"""INSERT INTO dispatches (source, name_id, pid, device, dispatch_id, start_ns, end_ns)
        SELECT {source}, n.name_id, {"d.process" if pid is None else pid}, d.device,
        d.dispatch_id, d.start_ns, d.end_ns
        FROM {tag}_d d JOIN names n ON n.raw_name = d.raw ORDER BY d.k"""
    )
    profile.insert_counters(
        f"""SELECT {first} + k AS row_id, counter, sum(value) AS value FROM {tag}_k
        WHERE counter IS NOT NULL AND value IS NOT NULL GROUP BY k, counter ORDER BY 1, 2""",
        _counters(profile, tag),
    )
    con.execute(
        f"""INSERT INTO launches (source, name_id, {_SHAPE}, dispatches)
        SELECT {source}, n.name_id, {_SHAPE}, count(*)
        FROM {tag}_d d JOIN names n ON n.raw_name = d.raw GROUP BY ALL"""
    )
    return profile.count("dispatches") - first


def _pass_folder(path: Path) -> Path:
    """The ``pass_N``/``pmc_N`` folder that ``path`` is in."""
    found = pass_of(path)
    return next((p for p in path.parents if found and p.parent == found[0]), path.parent)


def _first_pass(profile: Profile, path: Path) -> int | None:
    """The counter file read from the lowest other pass folder of the same run (``run/pass_1/…``
    for ``run/pass_3/…``) whose dispatches this pass joins: the one at the same place in its
    folder (same pid and name), else the only one there; None when there is none (or several
    processes, none named alike)."""
    mine = pass_of(path)
    if mine is None:
        return None
    found: list[tuple[int, int, Path]] = []
    for source in profile.sources(Role.DISPATCHES, Role.COUNTER_RUN):
        theirs = Path(profile.inputs[source].path)
        where = pass_of(theirs) if profile.inputs[source].format == CounterCollection.name else None
        if where is not None and where[0] == mine[0] and where[1] != mine[1]:
            found.append((where[1], source, theirs.relative_to(_pass_folder(theirs))))
    lowest = [(source, rel) for n, source, rel in found if n == min(f[0] for f in found)]
    alike = [source for source, rel in lowest if rel == path.relative_to(_pass_folder(path))]
    return alike[0] if alike else lowest[0][0] if len(lowest) == 1 else None


def _join_pass(profile: Profile, path: Path, tag: str, first: int) -> bool:
    """Put this pass's counters on the first pass's dispatches, matched by kernel and
    occurrence: the n-th dispatch of a kernel (in launch order, by the pass's own restarting
    dispatch ids) is its n-th in the other pass, each pass being a run of the same program.
    A counter the first pass has keeps the first pass's value. False, with a warning naming
    the pass folder and nothing added, when the passes did not see as many dispatches of
    every kernel."""
    con = profile.con
    register_names(profile, path, f"{tag}_d")
    mine = f"""SELECT d.k, n.kernel,
        row_number() OVER (PARTITION BY n.kernel ORDER BY d.dispatch_id, d.k) AS i
        FROM {tag}_d d JOIN names n ON n.raw_name = d.raw"""
    theirs = f"""SELECT d.rowid AS row_id, n.kernel,
        row_number() OVER (PARTITION BY n.kernel ORDER BY d.dispatch_id, d.rowid) AS i
        FROM dispatches d JOIN names n USING (name_id) WHERE d.source = {first}"""
    counts = "SELECT kernel, count(*) AS c FROM ({}) GROUP BY kernel"
    differ = con.execute(
        f"""SELECT kernel, coalesce(a.c, 0), coalesce(b.c, 0), count(*) OVER ()
        FROM ({counts.format(mine)}) a FULL JOIN ({counts.format(theirs)}) b USING (kernel)
        WHERE a.c IS DISTINCT FROM b.c ORDER BY kernel LIMIT 1"""
    ).fetchall()
    if differ:
        _warn_unmatched(profile, path, Path(profile.inputs[first].path), differ[0])
        return False
    profile.insert_counters(
        f"""SELECT t.row_id, r.counter, sum(r.value) AS value
        FROM ({mine}) m JOIN ({theirs}) t USING (kernel, i) JOIN {tag}_k r ON r.k = m.k
        WHERE r.counter IS NOT NULL AND r.value IS NOT NULL
        AND r.counter NOT IN (SELECT n.counter FROM counters c
            JOIN counter_names n USING (counter_id) WHERE c.row_id = t.row_id)
        GROUP BY t.row_id, r.counter ORDER BY 1, 2""",
        _counters(profile, tag),
    )
    return True


def _counters(profile: Profile, tag: str) -> list[str]:
    """The counter names of the file staged as ``tag``."""
    found = profile.con.execute(f"SELECT DISTINCT counter FROM {tag}_k WHERE counter IS NOT NULL")
    return sorted(str(r[0]) for r in found.fetchall())


def _warn_unmatched(
    profile: Profile, path: Path, first: Path, differ: tuple[str, int, int, int]
) -> None:
    kernel, here, there, kernels = differ
    profile.warn(
        "pass-mismatch",
        f"{path}: pass folder {_pass_folder(path)} saw other dispatches than the first pass "
        f"{_pass_folder(first)} ({words.count(kernels, 'kernel')} "
        f"{words.plural(kernels, 'differs', 'differ')}; {str(kernel)[:60]!r}: {here} here, "
        f"{there} there), so its counters cannot be matched to the first pass's dispatches by "
        "kernel and occurrence: they are kept apart as a counter run (compared by kernel "
        "name only); re-run the passes on the same input, or analyse that pass alone",
    )


def _report_rejects(profile: Profile, path: Path, tag: str) -> None:
    rows = profile.con.execute(
        f"SELECT line, string_agg(DISTINCT error_type::VARCHAR, ', ') FROM {tag}_errors "
        "GROUP BY line ORDER BY line"
    ).fetchall()
    report_rows(profile, path, [(int(n), _WHY.get(str(why), str(why).lower())) for n, why in rows])


class CounterCollection(Reader):
    name = "rocprofv3-counters"
    description = (
        "rocprofv3 counter_collection.csv (counters per dispatch, all four header layouts; "
        "a counter run when a kernel trace is read too)"
    )
    producer = "rocprofv3"
    priority = 60

    def detect(self, head: Head) -> bool:
        fields = [f.strip() for f in head.fields()[:3]]
        return fields == ["Correlation_Id", "Dispatch_Id", "Agent_Id"]

    def role(self, head: Head) -> Role:
        return Role.COUNTER_COLLECTION

    def timed(self, head: Head) -> bool:
        return {"Start_Timestamp", "End_Timestamp"} <= {f.strip() for f in head.fields()}

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        load_counter_collection(profile, path, head, fmt=self.name, role=role)
        profile.set_run(RunInfo(producer=self.producer))
        agent_info_beside(profile, path)
