"""One process of a rocprofv3 ``results.json`` resolved into the model's tables: its staged
records (:mod:`~roofscope.readers.amd.rocprofv3_json_rows`) joined with its kernel symbols, agents
and counter names (docs/formats/rocprofv3.md, "JSON output").

A record that names a kernel, agent or counter its process does not list is refused: its name
or GPU would be a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from roofscope.errors import InputError
from roofscope.model import words
from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.amd.rocprofv3_json_rows import REMEDY, STAGE, Staged
from roofscope.readers.io.batches import insert_lists

GPU_AGENT = 2  # rocprofiler_agent_type_t: 1 CPU, 2 GPU
_SHAPE = "tid, queue, stream, grid_size, workgroup_size, lds_bytes, scratch_bytes, arch_vgpr, "
_SHAPE += "accum_vgpr, sgpr"


def _bad(path: Path, what: str, why: str) -> InputError:
    return InputError(str(path), f"{what}: {why}", REMEDY)


def _listed(path: Path, key: str, value: Any) -> list[Mapping[str, Any]]:
    """A list of objects (``kernel_symbols`` may also be an object of them by id)."""
    items = list(value.values()) if isinstance(value, dict) else value
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise _bad(path, key, "is not a list of objects")
    return items


def _handle_of(value: Any) -> Any:
    return value.get("handle") if isinstance(value, dict) else None


class Process(msgspec.Struct):
    """What one process's object says besides its records."""

    pid: int | None = None
    symbols: dict[int, tuple[str, Any, Any, Any]] = msgspec.field(default_factory=dict)
    agents: dict[int, Mapping[str, Any]] = msgspec.field(default_factory=dict)
    counters: dict[int, str] = msgspec.field(default_factory=dict)
    operations: list[str] = msgspec.field(default_factory=list)  # MEMORY_COPY operations, by number
    # --kernel-rename: external id -> name
    renames: dict[int, str] = msgspec.field(default_factory=dict)

    def metadata(self, value: Any) -> None:
        pid = value.get("pid") if isinstance(value, dict) else None
        self.pid = pid if isinstance(pid, int) and not isinstance(pid, bool) else None

    def set_agents(self, path: Path, value: Any) -> None:
        for i, agent in enumerate(_listed(path, "agents", value)):
            handle, node = _handle_of(agent.get("id")), agent.get("logical_node_id")
            if not isinstance(handle, int) or not isinstance(node, int):
                raise _bad(path, f"agents[{i}]", "lacks a whole id.handle or logical_node_id")
            self.agents[handle] = agent

    def set_counters(self, path: Path, value: Any) -> None:
        for i, counter in enumerate(_listed(path, "counters", value)):
            handle, name = _handle_of(counter.get("id")), counter.get("name")
            if not isinstance(handle, int) or not isinstance(name, str):
                raise _bad(path, f"counters[{i}]", "lacks a whole id.handle or a name")
            self.counters[handle] = name

    def set_symbols(self, path: Path, value: Any) -> None:
        for i, symbol in enumerate(_listed(path, "kernel_symbols", value)):
            kernel = symbol.get("kernel_id")
            name = symbol.get("formatted_kernel_name") or symbol.get("kernel_name")
            if not isinstance(kernel, int) or not isinstance(name, str):
                raise _bad(path, f"kernel_symbols[{i}]", "lacks a whole kernel_id or a name")
            registers = [
                symbol.get(f) for f in ("arch_vgpr_count", "accum_vgpr_count", "sgpr_count")
            ]
            arch, accum, sgpr = (r if isinstance(r, int) else None for r in registers)
            self.symbols[kernel] = (name, arch, accum, sgpr)

    def set_operations(self, value: Any) -> None:
        for entry in value if isinstance(value, list) else []:
            if isinstance(entry, dict) and entry.get("kind") == "MEMORY_COPY":
                self.operations = [str(o) for o in entry.get("operations") or []]

    def set_renames(self, value: Any) -> None:
        external = value.get("external") if isinstance(value, dict) else None
        for entry in external if isinstance(external, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("key"), int):
                self.renames[entry["key"]] = str(entry.get("value"))

    def gpus(self) -> list[Mapping[str, Any]]:
        return [a for a in self.agents.values() if a.get("type") == GPU_AGENT]


def _table(
    profile: Profile, name: str, columns: Mapping[str, str], rows: list[tuple[Any, ...]]
) -> None:
    """A temp lookup table of ``rows`` (columns: name -> "int" or "text")."""
    sql = {"int": "BIGINT", "text": "VARCHAR"}
    body = ", ".join(f"{c} {sql[k]}" for c, k in columns.items())
    profile.con.execute(f"CREATE TEMP TABLE {STAGE}_{name} ({body})")
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    kinds = {c: (k, v) for (c, k), v in zip(columns.items(), values, strict=True)}
    insert_lists(profile, f"{STAGE}_{name}", kinds)  # type: ignore[arg-type]


def _used(profile: Profile, column: str, where: str) -> set[int]:
    rows = profile.con.execute(f"SELECT DISTINCT {column} FROM {STAGE}_{where}").fetchall()
    return {int(r[0]) for r in rows if r[0] is not None}


def _require(path: Path, used: Iterable[int], known: Mapping[int, Any], what: str) -> None:
    missing = sorted(set(used) - set(known))
    if missing:
        shown = ", ".join(str(m) for m in missing[:3])
        raise _bad(path, f"records name {what} {shown}", f"the file lists no such {what}")


def _lookups(staged: Staged, facts: Process, src: int) -> None:
    """The process's names, agents, counters and copy operations as temp tables."""
    profile, path = staged.profile, staged.path
    kernels = _used(profile, "kernel_id", f"d WHERE src = {src}")
    _require(path, kernels, facts.symbols, "kernel_id")
    agents = _used(profile, "agent", f"d WHERE src = {src}") | _used(profile, "agent", "c")
    _require(
        path,
        agents | _used(profile, "src_agent", "m") | _used(profile, "dst_agent", "m"),
        facts.agents,
        "agent handle",
    )
    counters = _used(profile, "counter", "c")
    _require(path, counters, facts.counters, "counter id")
    renamed = _used(profile, "external", f"d WHERE src = {src}") & set(facts.renames)
    names = [facts.symbols[k][0] for k in kernels] + [facts.renames[e] for e in renamed]
    ids = profile.name_ids(names)
    symbols = [(k, ids[facts.symbols[k][0]], *facts.symbols[k][1:]) for k in kernels]
    columns = dict.fromkeys(("kernel_id", "name_id", "arch_vgpr", "accum_vgpr", "sgpr"), "int")
    _table(profile, "s", columns, symbols)
    _table(
        profile,
        "r",
        {"external": "int", "name_id": "int"},
        [(e, ids[facts.renames[e]]) for e in renamed],
    )
    nodes = [(h, a["logical_node_id"]) for h, a in facts.agents.items()]
    _table(profile, "a", {"handle": "int", "device": "int"}, nodes)
    _table(
        profile,
        "n",
        {"handle": "int", "counter": "text"},
        [(c, facts.counters[c]) for c in counters],
    )
    _table(
        profile, "o", {"operation": "int", "direction": "text"}, list(enumerate(facts.operations))
    )


def _joined(src: int) -> str:
    return f"""SELECT d.*, COALESCE(r.name_id, s.name_id) AS name_id, s.arch_vgpr,
        s.accum_vgpr, s.sgpr, a.device FROM {STAGE}_d d JOIN {STAGE}_s s USING (kernel_id)
        LEFT JOIN {STAGE}_r r USING (external) LEFT JOIN {STAGE}_a a ON a.handle = d.agent
        WHERE d.src = {src}"""


def resolve(staged: Staged, facts: Process, source: int) -> tuple[int, set[int]]:
    """Insert the process's dispatches, launches and counters (its copies wait for
    :func:`insert_copies`); the dispatches inserted and the devices they ran on."""
    staged.flush()
    profile = staged.profile
    src = 0 if profile.count(f"{STAGE}_d WHERE src = 0") else 1
    _lookups(staged, facts, src)
    first, pid = profile.count("dispatches"), "NULL" if facts.pid is None else facts.pid
    joined = _joined(src)
    profile.con.execute(
        f"""INSERT INTO dispatches (source, name_id, pid, device, dispatch_id, start_ns, end_ns)
        SELECT {source}, name_id, {pid}, device, dispatch_id, start_ns, end_ns FROM ({joined})
        ORDER BY k"""
    )
    profile.con.execute(
        f"""INSERT INTO launches (source, name_id, {_SHAPE}, wave_size, dispatches)
        SELECT {source}, name_id, {_SHAPE}, NULL, count(*) FROM ({joined}) GROUP BY ALL"""
    )
    _counters(staged, first, src)
    _copies(profile, pid)
    devices = {
        int(d[0])
        for d in profile.con.execute(
            f"SELECT DISTINCT device FROM ({joined}) WHERE device IS NOT NULL"
        ).fetchall()
    }
    rows = profile.count("dispatches") - first
    for name in ("s", "r", "a", "n", "o"):
        profile.con.execute(f"DROP TABLE {STAGE}_{name}")
    for name in ("d", "c", "m"):
        profile.con.execute(f"DELETE FROM {STAGE}_{name}")
    staged.rows = 0
    return rows, devices


def _counters(staged: Staged, first: int, src: int) -> None:
    """The counter values on the dispatch of the same (dispatch_id, agent)."""
    profile = staged.profile
    numbered = f"""SELECT dispatch_id, agent, row_number() OVER (ORDER BY k) - 1 AS r
        FROM {STAGE}_d WHERE src = {src}"""
    names = [str(r[0]) for r in profile.con.execute(f"SELECT counter FROM {STAGE}_n").fetchall()]
    profile.insert_counters(
        f"""SELECT {first} + d.r AS row_id, n.counter, sum(c.value) AS value
        FROM ({numbered}) d JOIN {STAGE}_c c USING (dispatch_id, agent)
        JOIN {STAGE}_n n ON n.handle = c.counter GROUP BY ALL ORDER BY 1, 2""",
        sorted(names),
    )
    orphans = profile.count(
        f"""{STAGE}_c c WHERE NOT EXISTS (SELECT 1 FROM ({numbered}) d
        WHERE d.dispatch_id = c.dispatch_id AND d.agent = c.agent)"""
    )
    if orphans:
        profile.warn(
            "json-orphan-counters",
            f"{staged.path}: {words.count(orphans, 'counter value')} "
            f"{words.plural(orphans, 'names', 'name')} a dispatch that "
            "buffer_records.kernel_dispatch lacks; "
            f"{words.plural(orphans, 'it is', 'they are')} left out",
            orphans,
        )


def _copies(profile: Profile, pid: object) -> None:
    agent = "'Agent ' || {0}.device"
    profile.con.execute(
        f"""INSERT INTO {STAGE}_f SELECT {pid},
        COALESCE(o.direction, 'MEMORY_COPY operation ' || m.operation),
        {agent.format("sa")}, {agent.format("da")}, m.start_ns, m.end_ns
        FROM {STAGE}_m m LEFT JOIN {STAGE}_o o USING (operation)
        LEFT JOIN {STAGE}_a sa ON sa.handle = m.src_agent
        LEFT JOIN {STAGE}_a da ON da.handle = m.dst_agent"""
    )


def insert_copies(profile: Profile, path: Path, fmt: str) -> None:
    """The copies of every process, as an input of their own (never kernel time)."""
    rows = profile.count(f"{STAGE}_f")
    if rows:
        source = profile.begin_input()
        profile.con.execute(f"INSERT INTO copies SELECT {source}, * FROM {STAGE}_f")
        profile.add_input(str(path), fmt, rows, Role.COPIES)
