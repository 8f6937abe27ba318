"""Which runs the files under a folder hold, and whether the runs read are ranks of one job.

A *run* is one invocation of a profiler over one program: the files of one folder that share a
name stem (a rocprof v1 ``results.*`` set, a rocprofv3 ``<pid>_*`` set), together with the
``pass_N``/``pmc_N`` folders of its counter passes, or one rocprof-compute workload folder.

- **Nested runs.** A run whose folder lies below another run's folder is an earlier or later
  run kept beside it (a re-run in a sub-folder), never a part of it: the folder's top-level run
  is read alone and the nested ones are named, with how to analyse them (``nested-runs``).
- **Ranks of one job.** Runs read together are ranks of one job only on evidence: every input
  records a distinct rank (an MPI rank variable in a rocpd database, Kineto's
  ``distributedInfo``); their paths differ only in a rank number or the process id of their
  own dispatches (``rank3/results.csv``, rocprofv3's ``<host>/<pid>/``); or their dispatches
  run at the same time on one clock. Without it they are separate profiles of one folder
  (``mixed-runs``): their kernel time is read together, but no per-rank view is made and a
  compare gate never passes on them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from roofscope.model import words
from roofscope.model.profile import Profile, Runs
from roofscope.model.schema import VALID_DURATION, Role
from roofscope.readers.registry import Reader
from roofscope.readers.sniff import Head

_PASS_DIR = re.compile(r"^(?:pass|pmc)_(\d+)$")
# a number that names a process of a job: after one of these words, or alone as a path part
_RANK_WORD = re.compile(
    r"(?<![a-z])(?:rank|proc|process|node|worker|gpu|device|dev|pe|task|mpi|r|p)[_\-.]?$",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+")
# the roles whose files make a run (metadata and API summaries go with the run beside them)
_RUN_ROLES = (Role.DISPATCHES, Role.WORKLOAD, Role.KERNEL_SUMMARY, Role.COUNTER_COLLECTION)

# the kinds rocprofv3 names its files by; the named ones are looked for first, so that a
# prefix with underscores (rocprofiler-compute's ``ps_file_``) is kept whole
_V3_NAMED = re.compile(
    r"_(kernel_trace|kernel_stats|memory_copy_trace|memory_copy_stats|agent_info|"
    r"counter_collection|results|hip_api_trace|hsa_api_trace|marker_api_trace|"
    r"hip_runtime_trace|hip_compile_trace)$"
)
_V3_SUFFIX = re.compile(r"_([a-z_]*api_stats|[a-z_]*domain_stats|[a-z_]*_trace)$")


class Found(msgspec.Struct, frozen=True):
    """A file a reader recognised, and the role that reader gives it."""

    head: Head
    reader: Reader
    role: Role
    scanned: bool = False  # found in a folder the user named (not named itself)

    @property
    def group(self) -> tuple[str, str]:
        stem = self.head.path.name.split(".")[0]
        named = _V3_NAMED.sub("", stem)
        return str(self.head.path.parent), named if named != stem else _V3_SUFFIX.sub("", stem)


Planned = tuple[Found, Role]  # a file and the role the planner reads it in


def pass_of(path: Path) -> tuple[Path, int] | None:
    """The folder holding the ``pass_N``/``pmc_N`` folder that ``path`` is in, and N."""
    for folder in path.parents:
        if m := _PASS_DIR.match(folder.name):
            return folder.parent, int(m.group(1))
    return None


def run_folder(path: Path) -> Path:
    """The folder of the run a file belongs to: above its pass folder, else its own."""
    found = pass_of(path)
    return (found[0] if found else path.parent).resolve()


def outside_nested(found: Sequence[Found]) -> tuple[list[Found], list[Path]]:
    """The files without those of runs nested below another run's folder, and the top folder
    of each nested run (in path order)."""
    workloads = {f.head.path.resolve().parent for f in found if f.role == Role.WORKLOAD}
    folders = {  # a workload's own files below it are its reader's, no runs of their own
        run_folder(f.head.path)
        for f in found
        if f.role in _RUN_ROLES and (f.role == Role.WORKLOAD or not _below(f.head.path, workloads))
    }
    nested = sorted(d for d in folders if any(o in d.parents for o in folders))
    tops = [d for d in nested if not any(o in d.parents for o in nested)]
    kept = [f for f in found if not _below(f.head.path, tops)]
    return kept, tops


def _below(path: Path, folders: Iterable[Path]) -> bool:
    return any(folder in path.resolve().parents for folder in folders)


_Known = tuple[int | None, int | None, int | None]  # a source's pid, first start, last end


class RunSource(msgspec.Struct, frozen=True):
    path: str
    rank: int | None
    pid: int | None
    span: tuple[int, int] | None  # first start, last end; None off the timeline


def describe(profile: Profile, nested: Sequence[Path]) -> None:
    """Set ``profile.runs`` and warn ``nested-runs`` / ``mixed-runs``."""
    sources = _sources(profile)
    read = tuple(s.path for s in sources)
    shown = tuple(str(d) for d in nested)
    job = job_evidence(sources) if len(sources) > 1 else None
    profile.runs = Runs(read=read, nested=shown, job=job)
    if shown:
        first = shown[0]
        profile.warn(
            "nested-runs",
            f"{words.count(len(shown), 'run')} in sub-folders of the run read "
            f"{words.plural(len(shown), 'is another run', 'are other runs')}, left out: "
            f"{', '.join(shown)}; analyse one alone (roofscope analyze {first}) or compare "
            "it with this one",
            count=len(shown),
        )
    formats = {profile.inputs[s].format for s in profile.sources(Role.DISPATCHES)}
    if profile.runs.separate and len(formats) < 2:
        profile.warn(  # of several dispatch formats, ``mixed-producers`` says it
            "mixed-runs",
            f"{len(read)} runs read together are not ranks of one job (no recorded ranks, no "
            "rank numbers in their paths, not at the same time on one clock): their kernel "
            "times add up separate runs and no per-rank view is made; analyse each alone: "
            + ", ".join(read),
            count=len(read),
        )


def _sources(profile: Profile) -> list[RunSource]:
    """One entry per dispatch source or counted kernel summary (one per run), with its pid and
    time span (None for a summary)."""
    ids = profile.sources(Role.DISPATCHES, Role.KERNEL_SUMMARY)
    if len(ids) < 2:
        return [RunSource(profile.inputs[s].path, None, None, None) for s in ids]
    found = _spans(profile, profile.sources(Role.DISPATCHES))
    found |= _summary_pids(profile, profile.sources(Role.KERNEL_SUMMARY))
    out = []
    for s in ids:
        f = profile.inputs[s]
        pid, start, end = found.get(s, (None, None, None))
        span = None
        if f.on_timeline and start is not None and end is not None:
            span = (int(start), int(end))
        out.append(RunSource(f.path, f.rank, None if pid is None else int(pid), span))
    return out


def _spans(profile: Profile, ids: Sequence[int]) -> dict[int, _Known]:
    """Per dispatch source: its lowest pid, first start and last end."""
    if not ids:
        return {}
    rows = profile.con.execute(
        f"""SELECT source, min(pid), min(start_ns) FILTER ({VALID_DURATION}),
        max(end_ns) FILTER ({VALID_DURATION}) FROM dispatches
        WHERE source IN ({", ".join(map(str, ids))}) GROUP BY source"""
    ).fetchall()
    return {int(s): (pid, start, end) for s, pid, start, end in rows}


def _summary_pids(profile: Profile, ids: Sequence[int]) -> dict[int, _Known]:
    """Per kernel summary source: its lowest pid, where it records one."""
    if not ids:
        return {}
    rows = profile.con.execute(
        f"""SELECT source, min(pid) FROM kernel_summary
        WHERE source IN ({", ".join(map(str, ids))}) GROUP BY source"""
    ).fetchall()
    return {int(s): (pid, None, None) for s, pid in rows}


def job_evidence(sources: Sequence[RunSource]) -> str | None:
    """Why the sources are ranks of one job, or None when nothing says they are."""
    ranks = [s.rank for s in sources]
    if None not in ranks and len(set(ranks)) == len(ranks):
        return "each input records its rank"
    if _numbered_alike(sources):
        return "their paths differ only in a rank number or process id"
    spans = [s.span for s in sources if s.span is not None]
    if len(spans) == len(sources) and max(a for a, _ in spans) < min(b for _, b in spans):
        return "their dispatches run at the same time on one clock"
    return None


def _numbered_alike(sources: Sequence[RunSource]) -> bool:
    """The paths are one template whose varying numbers name the process: after a rank word
    (``rank3``, ``worker_1``), as a whole path part (``7/``), or as the source's own pid."""
    paths = [s.path for s in sources]
    if len({_NUMBER.sub("#", p) for p in paths}) != 1 or len(set(paths)) != len(paths):
        return False
    numbers = [list(_NUMBER.finditer(p)) for p in paths]
    varying = [i for i in range(len(numbers[0])) if len({n[i].group() for n in numbers}) > 1]
    return all(
        _names_process(s, n[i]) for s, n in zip(sources, numbers, strict=True) for i in varying
    )


def _names_process(source: RunSource, number: re.Match[str]) -> bool:
    path = source.path
    before, after = path[: number.start()], path[number.end() :]
    if source.pid is not None and int(number.group()) == source.pid:
        return True
    whole_part = before.endswith("/") and (after.startswith("/") or not after)
    return whole_part or _RANK_WORD.search(before.rsplit("/", 1)[-1]) is not None
