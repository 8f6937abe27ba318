"""rocprof v1 ``results.json`` (Chrome trace; docs/formats/rocprof-v1.md,
"results.json").

Written by ``tblextr``/``sqlitedb``: ``{ "traceEvents":[{}`` then one ``,{...}`` event per
record, possibly spanning lines, then ``"otherData"``. Kernel events live in pid
``6 + gpu-id`` (``GPU<n>`` processes); their ``args`` hold the nanosecond ``BeginNs`` and
``EndNs`` as strings, which are used instead of the rounded microsecond ``ts``/``dur``.
Barrier packets (pid ``6 + gpu-id + 512``, ``GPU Barriers<n>``) are kept apart as barriers.
Names are never JSON-escaped, so events that are not valid JSON are recovered with a regex.
Copies (pid 1) are kept apart; HIP/HSA API events (pids 2, 3) become an API summary.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from roofscope.errors import InputError
from roofscope.model.profile import Profile, RunInfo
from roofscope.model.schema import Role
from roofscope.readers.amd.rocminfo import rocminfo_beside
from roofscope.readers.amd.rocprof_v1_csv import MODEL_FIELDS, layout_for
from roofscope.readers.io.barriers import is_barrier
from roofscope.readers.io.csvload import barrier_rows, insert_rows
from roofscope.readers.io.dispatch_csv import add_barrier_input
from roofscope.readers.io.no_kernels import ROCPROF_WIDEN, api_no_kernels
from roofscope.readers.io.rowfix import convert_row
from roofscope.readers.io.stats_csv import insert_activity
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

GPU_BASE_PID = 6
BARRIER_LANES = 512  # barrier packets of GPU n are in pid 6 + n + 512 ("GPU Barriers<n>")
COPY_PID = 1
API_PIDS = {2: "api", 3: "api"}
_EVENT_START = re.compile(r"\n?,\s*(?=\{)")
_FIELD = re.compile(r'"(?P<key>[A-Za-z_\-]+)"\s*:\s*"?(?P<value>-?\d+)"?')
_NAME = re.compile(
    r'"(?:KernelName|name)"\s*:\s*"(?P<name>.*?)"\s*,\s*\n?\s*"(?:gpu-id|pid|ph)"', re.S
)


def split_events(text: str) -> list[str]:
    """The text of each event object, whether or not the whole file is valid JSON."""
    body = text.lstrip("\ufeff").strip()
    if body.startswith("{"):
        m = re.match(r'\{\s*"traceEvents"\s*:\s*\[', body)
        if m:
            body = body[m.end() :]
    cut = body.find('"otherData"')
    if cut >= 0:
        body = body[:cut]
    chunks = _EVENT_START.split(body)
    return [c.strip().rstrip(",]").strip() for c in chunks if c.strip().startswith("{")]


def parse_event(chunk: str) -> dict[str, Any] | None:
    try:
        value = json.loads(chunk)
        return value if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    top, _, rest = chunk.partition('"args"')
    head = {m.group("key"): m.group("value") for m in _FIELD.finditer(top)}
    args: dict[str, Any] = {m.group("key"): m.group("value") for m in _FIELD.finditer(rest)}
    if '"ph":"X"' not in top.replace(" ", "") or "pid" not in head:
        return None
    kernel = _NAME.search(rest)
    if kernel:
        args["KernelName"] = kernel.group("name")
    own = _NAME.search(top)  # an OPS event's (a barrier packet's) name is its own
    name = own.group("name") if own else args.get("KernelName", "")
    return {"ph": "X", "pid": head["pid"], "name": name, "args": args}


class RocprofV1Json(Reader):
    name = "rocprof-v1-json"
    description = "rocprof v1 results.json (Chrome trace; nanosecond BeginNs/EndNs from args)"
    producer = "rocprof"
    priority = 20

    def detect(self, head: Head) -> bool:
        line = head.first_line.replace(" ", "")
        return line.startswith(('{"traceEvents":[{}', ',{"args":', ',{"ph":'))

    def role(self, head: Head) -> Role:
        return Role.DISPATCHES

    def read(self, path: Path, head: Head, profile: Profile, *, role: Role) -> None:
        text = path.read_bytes().decode("utf-8", errors="replace")
        kernels: list[dict[str, Any]] = []
        copies: list[tuple[str, int, int]] = []
        api: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
        for chunk in split_events(text):
            event = parse_event(chunk)
            if not event or event.get("ph") != "X":
                continue
            pid, args = _int(event.get("pid")), event.get("args") or {}
            begin, end = _int(args.get("BeginNs")), _int(args.get("EndNs"))
            if pid is None or begin is None or end is None:
                continue
            name = str(event.get("name", ""))
            if pid >= GPU_BASE_PID:
                kernels.append(
                    {
                        **{k: str(v) for k, v in args.items()},
                        "_name": name,
                        "_gpu": str((pid - GPU_BASE_PID) % BARRIER_LANES),
                        "_kern": "KernelName" in args or is_barrier(name),
                    }
                )
            elif pid == COPY_PID:
                copies.append((name, begin, end))
            elif pid in API_PIDS:
                entry = api[(API_PIDS[pid], name)]
                entry[0] += 1
                entry[1] += end - begin
        # with --hip-trace the same kernels come twice: from KERN (with KernelName) and OPS
        # (barrier packets come from OPS alone)
        if any(k["_kern"] and not is_barrier(k["_name"]) for k in kernels):
            kernels = [k for k in kernels if k["_kern"]]
        if all(is_barrier(k["_name"]) for k in kernels) and (api or copies):
            calls = {name: int(c) for (_, name), (c, _) in api.items()}
            raise api_no_kernels(str(path), calls, len(copies), ROCPROF_WIDEN)
        if all(is_barrier(k["_name"]) for k in kernels):
            raise InputError(
                str(path),
                "holds no kernel events (a results.json fragment, or a trace without GPU activity)",
                "analyse the results.csv written beside it, or re-run rocprof with --hsa-trace",
            )
        source = profile.begin_input()
        barriers = self._insert_kernels(profile, path, kernels, source)
        if copies:
            profile.con.executemany(
                "INSERT INTO copies VALUES (?, NULL, ?, NULL, NULL, ?, ?)",
                [(source, n, b, e) for n, b, e in copies],
            )
        if api:
            insert_activity(
                profile,
                source,
                "api",
                [(name, int(c), float(t)) for (_, name), (c, t) in api.items()],
            )
        profile.add_input(str(path), self.name, len(kernels) - barriers, role)
        add_barrier_input(profile, str(path), self.name, barriers, role)
        profile.set_run(RunInfo(producer=self.producer))
        rocminfo_beside(profile, path)

    @staticmethod
    def _insert_kernels(
        profile: Profile, path: Path, kernels: list[dict[str, Any]], source: int
    ) -> int:
        """Insert the GPU events as dispatches; how many of them are barrier packets."""
        kept = {k: None for e in kernels for k in e if k.lower() in MODEL_FIELDS}
        header = ["KernelName", "gpu-id", *[k for k in kept if k not in ("KernelName", "gpu-id")]]
        layout = layout_for(header)
        rows = []
        for e in kernels:
            fields = [
                e.get("KernelName", e["_name"]),
                e.get("gpu-id", e["_gpu"]),
                *[e.get(k, "None") for k in header[2:]],
            ]
            row = convert_row(fields, layout.columns)
            if row is not None:
                rows.append(row)
        insert_rows(profile, rows, layout, source, path)
        return barrier_rows(profile, layout, source)


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None
