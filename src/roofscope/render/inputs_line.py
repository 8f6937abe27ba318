"""Each input file once in the text and HTML headers (issue 36, point 8): a file read twice
(a Kineto trace: dispatches and copies) is one line, and so is a run's per-pass counter files
(rocprof-compute 3.6+: ``DIR/results_pmc_perf_{0..16}.csv``). The JSON keeps every input."""

from __future__ import annotations

import re
from collections.abc import Sequence

from roofscope.model.profile import InputFile
from roofscope.model.schema import Role
from roofscope.render.numbers import count

_DIGITS = re.compile(r"(\d+)")


def inputs_once(inputs: Sequence[InputFile]) -> list[tuple[str, str]]:
    """Each file once, with what each of its readings gave (``(path, "kineto, 1,154 rows,
    dispatches; 50 rows, copies")``); a first pass and the counter passes joined onto it as
    one numbered path, where their paths differ in one number only."""
    out: list[tuple[str, str]] = []
    for group in _groups(inputs):
        first, passes = group[0], group[1:]
        shown = numbered([g[0].path for g in group]) if passes else None
        if shown is None:  # no passes, or passes not told apart by one number
            out += [(g[0].path, _readings(g)) for g in group]
        else:
            out.append((shown, f"{_readings(first)}; {count(len(passes), 'counter pass')}"))
    return out


def _groups(inputs: Sequence[InputFile]) -> list[list[list[InputFile]]]:
    """The files (each with its readings) in the order read; a counter pass joins the group
    of the file before it."""
    by_path: dict[str, list[InputFile]] = {}
    for f in inputs:
        by_path.setdefault(f.path, []).append(f)
    groups: list[list[list[InputFile]]] = []
    for readings in by_path.values():
        if groups and all(f.role == Role.COUNTER_PASS for f in readings):
            groups[-1].append(readings)
        else:
            groups.append([readings])
    return groups


def numbered(paths: Sequence[str]) -> str | None:
    """``DIR/results_pmc_perf_{0..16}.csv`` for paths that differ in one number only (a range
    where the numbers run without a gap, else ``{1,3,7}``); the path itself for one path; None
    where they differ otherwise."""
    if len(paths) == 1:
        return paths[0]
    parts = [_DIGITS.split(p) for p in paths]
    if len({len(p) for p in parts}) != 1:
        return None
    differ = [i for i in range(len(parts[0])) if len({p[i] for p in parts}) > 1]
    if len(differ) != 1 or differ[0] % 2 == 0:  # odd pieces are the numbers
        return None
    at = differ[0]
    numbers = sorted(int(p[at]) for p in parts)
    if len(set(numbers)) != len(numbers):
        return None
    gapless = numbers == list(range(numbers[0], numbers[-1] + 1))
    middle = f"{numbers[0]}..{numbers[-1]}" if gapless else ",".join(map(str, numbers))
    return "".join(parts[0][:at]) + "{" + middle + "}" + "".join(parts[0][at + 1 :])


def _readings(fs: list[InputFile]) -> str:
    first = _summary(fs[0])
    rest = [_summary(f).removeprefix(f"{f.format}, ") for f in fs[1:]]
    return "; ".join([first, *rest])


def _summary(f: InputFile) -> str:
    """``FORMAT, N rows, ROLE``; no count for a file that only describes the run."""
    if f.role == Role.METADATA:
        return f"{f.format}, {f.role}"
    return f"{f.format}, {count(f.rows, 'row')}, {f.role}"
