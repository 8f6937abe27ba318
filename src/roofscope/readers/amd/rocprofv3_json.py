"""rocprofv3's JSON output (``--output-format json``, ``<pid>_results.json``, gzipped or not;
docs/formats/rocprofv3.md, "JSON output").

``{"rocprofiler-sdk-tool": [ {process}, ... ]}`` (a bare object instead of the array is read
too): each process's ``buffer_records.kernel_dispatch`` gives the dispatches, named through
``kernel_symbols`` (``formatted_kernel_name``, the CSV's ``Kernel_Name``) and placed on the GPU
through ``agents`` (``logical_node_id``, the CSV's ``Agent N``); ``callback_records.
counter_collection`` gives counters (summed over instances, as the CSV writes them) and, when no
kernel trace was taken, the dispatches; ``buffer_records.memory_copy`` copies; the GPU agent the
run's facts. The document is walked in bounded memory (:mod:`~roofscope.readers.io.json_stream`):
the records a batch at a time, every other array passed over an element at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from roofscope.errors import InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.amd.rocminfo import MAX_CLOCK_MHZ, positive_int
from roofscope.readers.amd.rocprofv3_json_rows import Staged
from roofscope.readers.amd.rocprofv3_json_tables import Process, insert_copies, resolve
from roofscope.readers.io.json_stream import EventStream, open_text, paused_gc
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head, read_head

_START = re.compile(r'\s*\{\s*"rocprofiler-sdk-tool"\s*:')
TOOL = "rocprofiler-sdk-tool"


class _Walk(msgspec.Struct):
    """What the walk has read of the file so far."""

    path: Path
    stream: EventStream
    staged: Staged
    source: int
    processes: int = 0
    dispatches: int = 0
    gpus: list[Mapping[str, Any]] = msgspec.field(default_factory=list)
    devices: set[int] = msgspec.field(default_factory=set)


def _process(walk: _Walk) -> None:
    """One process's object: its facts kept, its records staged, then resolved."""
    stream, staged, facts = walk.stream, walk.staged, Process()
    readers: dict[str, Callable[[], None]] = {
        "metadata": lambda: facts.metadata(stream.value()),
        "agents": lambda: facts.set_agents(walk.path, stream.value()),
        "counters": lambda: facts.set_counters(walk.path, stream.value()),
        "kernel_symbols": lambda: facts.set_symbols(walk.path, stream.value()),
        "strings": lambda: _strings(stream, facts),
        "callback_records": lambda: _records(walk, "callback_records", {"counter_collection"}),
        "buffer_records": lambda: _records(
            walk, "buffer_records", {"kernel_dispatch", "memory_copy"}
        ),
    }
    for key in stream.object_keys():
        readers.get(key, stream.skip)()
    rows, devices = resolve(staged, facts, walk.source)
    walk.dispatches += rows
    walk.devices |= devices
    walk.gpus += facts.gpus()
    walk.processes += 1


def _strings(stream: EventStream, facts: Process) -> None:
    """The copy operations' names and the kernel renames (``--kernel-rename``)."""
    for key in stream.object_keys():
        if key == "buffer_records":
            facts.set_operations(stream.value())
        elif key == "correlation_id":
            facts.set_renames(stream.value())
        else:
            stream.skip()


def _records(walk: _Walk, group: str, wanted: set[str]) -> None:
    """The record arrays of ``buffer_records`` or ``callback_records`` the model takes."""
    stream, staged = walk.stream, walk.staged
    for key in stream.object_keys():
        if key not in wanted:
            stream.skip()
            continue
        where, n = f"{group}.{key}", 0
        for run in stream.elements(f"the {where} array"):
            for record in run:
                if key == "memory_copy":
                    staged.copy(record, f"{where}[{n}]")
                else:
                    staged.dispatch(record, int(key == "counter_collection"), f"{where}[{n}]")
                n += 1


def _walk(walk: _Walk) -> None:
    stream = walk.stream
    for key in stream.object_keys():
        if key != TOOL:
            stream.skip()
        elif stream.peek() == "{":
            _process(walk)
        else:
            for _ in stream.members():
                _process(walk)


def _run_info(gpus: list[Mapping[str, Any]], devices: set[int]) -> RunInfo:
    """The GPU agent the dispatches ran on, when they ran on one; else the first GPU."""
    mine = [g for g in gpus if g.get("logical_node_id") in devices]
    gpus = mine if len(mine) == 1 else gpus
    if not gpus:
        return RunInfo(producer=ResultsJson.producer)
    gpu = gpus[0]
    return RunInfo(
        producer=ResultsJson.producer,
        gpu=_text(gpu.get("product_name")),
        arch=_text(gpu.get("name")),
        compute_units=positive_int(gpu.get("cu_count")),
        xcds=positive_int(gpu.get("num_xcc")),
        clock_mhz=_clock(gpu.get("max_engine_clk_fcompute")),
        memory_bytes=positive_int(_device_memory(gpu.get("mem_banks"))),
    )


def _clock(value: object) -> float | None:
    """The engine clock in MHz; none outside (0, MAX_CLOCK_MHZ], which is damage."""
    return float(value) if isinstance(value, int) and 0 < value <= MAX_CLOCK_MHZ else None


def _device_memory(banks: object) -> int | None:
    """The bytes of the agent's frame-buffer banks (HSA heap types 1 and 2: the GPU's own
    memory, public and private); the memory clock and width beside them are not used: on
    HBM3 parts, 2 x mem_clk_max x width / 8 is half the data sheet's bandwidth."""
    sizes = [
        b.get("size_in_bytes")
        for b in (banks if isinstance(banks, list) else [])
        if isinstance(b, dict) and b.get("heap_type") in (1, 2)
    ]
    whole = [s for s in sizes if isinstance(s, int) and not isinstance(s, bool)]
    return sum(whole) if whole else None


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


class ResultsJson(Reader):
    name = "rocprofv3-json"
    description = (
        "rocprofv3 results.json (--output-format json: dispatches, counters, copies and the "
        "GPU from its agents; gzipped or not)"
    )
    producer = "rocprofv3"
    priority = 15
    compressed = True

    def detect(self, head: Head) -> bool:
        return _START.match(head.text) is not None

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        source = profile.begin_input()
        staged = Staged(profile, path)
        staged.create()
        try:
            with open_text(path, gzipped=head.gzip) as text, paused_gc():
                walk = _Walk(path, EventStream(text, str(path)), staged, source)
                _walk(walk)
            _require_dispatches(path, walk)
            profile.add_input(str(path), self.name, walk.dispatches, role)
            profile.warn_deviceless(path, source, "their agent is not in the agents list")
            insert_copies(profile, path, self.name)
        finally:
            staged.drop()
        profile.set_run(_run_info(walk.gpus, walk.devices))


def _require_dispatches(path: Path, walk: _Walk) -> None:
    if not walk.processes:
        raise InputError(
            str(path), f'has no process under "{TOOL}"', "export the profile again with rocprofv3"
        )
    if not walk.dispatches:
        raise InputError(
            str(path),
            "holds no kernel dispatches (buffer_records.kernel_dispatch and "
            "callback_records.counter_collection are empty)",
            "re-run rocprofv3 with --kernel-trace (or --pmc) and --output-format json",
        )


# -- beside a CSV of the same run ---------------------------------------------------------


def agents_beside(profile: Profile, path: Path) -> None:
    """The GPU from the agents of the run's ``<prefix>results.json`` beside the rocprofv3 CSV
    ``path`` (rocprofv3 --output-format csv,json), when no agent_info.csv named it: the file is
    read up to its first process's agents only, and listed as metadata."""
    # imported here to defer it: detecting a gzipped trace asks this module, never a CSV reader
    from roofscope.readers.amd.rocprofv3_agent_info import results_beside

    if profile.run.gpu is not None:
        return
    for found in results_beside(path):
        if profile.has_input(found):
            continue
        head = read_head(found)
        if head.kind == "text" and ResultsJson().detect(head):
            facts = _first_agents(found, head)
            devices = profile.con.execute("SELECT DISTINCT device FROM dispatches").fetchall()
            used = {int(d[0]) for d in devices if d[0] is not None}
            profile.set_run(_run_info(facts.gpus(), used))
            profile.add_input(str(found), ResultsJson.name, len(facts.agents), Role.METADATA)
            return


def _first_agents(path: Path, head: Head) -> Process:
    """The agents of the file's first process, reading no further."""
    facts = Process()
    with open_text(path, gzipped=head.gzip) as text:
        stream = EventStream(text, str(path))
        for key in stream.object_keys():
            if key != TOOL:
                stream.skip()
                continue
            if stream.peek() == "[" and next(stream.members(), "none") == "none":
                return facts  # no process
            for inner in stream.object_keys():
                if inner == "agents":
                    facts.set_agents(path, stream.value())
                    return facts
                stream.skip()
            return facts
    return facts
