"""One ncu run exported several times: the details page, the raw page (``--page raw``) and
per-section CSVs of the same launches, read together, are one run whose launches count once.

A later export holds the same launches as an earlier ncu input of the profile when both list
the same (``Process ID``, ``ID``, ``Kernel Name``) launches, no more and no fewer, and every
launch whose duration both give lasts the same in both (within :data:`DURATION_REL_TOL`: the
details page prints three significant digits, the raw page nanoseconds). Its metrics that the
earlier input's launch lacks and its rules (by section and rule name) that it lacks are put
on that launch; the file is listed as ``same-launches`` and adds no dispatch. Launches that
differ in any of these are another run, read as such (and warned ``mixed-runs``).
"""

from __future__ import annotations

import math
from pathlib import Path

from roofscope.model.profile import Profile
from roofscope.model.schema import Role
from roofscope.readers.nvidia.ncu_launches import Launch, insert_metrics

DURATION_REL_TOL = 0.01  # 3 printed digits round by at most 0.5 %
_JOINABLE = (Role.DISPATCHES, Role.COUNTER_RUN)

Key = tuple[int, int, str]  # process id, launch id, kernel name


def join_export(profile: Profile, path: Path, launches: list[Launch], *, fmt: str) -> bool:
    """Put the launches' metrics and rules on the dispatches of an earlier input of ``fmt``
    that holds the same launches; True when one does (the file is then listed as
    ``same-launches``), False when the launches are a run of their own."""
    earlier = _earlier(profile, fmt, len(launches))
    rows = next((r for s in earlier if (r := same_launches(profile, s, launches))), None)
    if rows is None:
        return False
    _add_counters(profile, rows, launches)
    _add_rules(profile, rows, launches)
    profile.add_input(str(path), fmt, len(launches), Role.SAME_LAUNCHES, on_timeline=False)
    return True


def _earlier(profile: Profile, fmt: str, launches: int) -> list[int]:
    """The inputs of ``fmt`` read before, of as many launches, that may hold the same."""
    return [
        s
        for s in profile.sources(*_JOINABLE)
        if profile.inputs[s].format == fmt and profile.inputs[s].rows == launches
    ]


def same_launches(profile: Profile, source: int, launches: list[Launch]) -> list[int] | None:
    """The dispatch row ids of ``source`` for each launch, in order, when ``source`` holds
    exactly these launches with the same durations; else None."""
    held = {
        (int(pid), int(launch), str(name)): (int(row), duration)
        for row, pid, launch, name, duration in profile.con.execute(
            """SELECT d.rowid, d.pid, d.dispatch_id, n.raw_name, d.end_ns - d.start_ns
            FROM dispatches d JOIN names n USING (name_id) WHERE d.source = ?""",
            [source],
        ).fetchall()
    }
    keys = [_key(x) for x in launches]
    if len(held) != len(launches) or set(keys) != held.keys():
        return None
    for key, launch in zip(keys, launches, strict=True):
        if not _same_duration(held[key][1], launch.duration_ns()):
            return None
    return [held[key][0] for key in keys]


def _key(launch: Launch) -> Key:
    return launch.pid, launch.id, launch.name


def _same_duration(held: int | None, duration: int | None) -> bool:
    if held is None or duration is None:
        return True
    return math.isclose(held, duration, rel_tol=DURATION_REL_TOL)


def _add_counters(profile: Profile, rows: list[int], launches: list[Launch]) -> None:
    """The launches' metrics that their rows lack, onto those rows."""
    has = set(
        profile.con.execute(
            """SELECT c.row_id, n.counter FROM counters c JOIN counter_names n
            USING (counter_id) WHERE c.row_id IN (SELECT unnest(?))""",
            [rows],
        ).fetchall()
    )
    insert_metrics(profile, rows, launches, has)


def _add_rules(profile: Profile, rows: list[int], launches: list[Launch]) -> None:
    """The launches' rules (by section and name) that their rows lack, onto those rows."""
    has = set(
        profile.con.execute(
            "SELECT row_id, section, rule FROM producer_rules WHERE row_id IN (SELECT unnest(?))",
            [rows],
        ).fetchall()
    )
    new = [
        (row, *rule)
        for row, launch in zip(rows, launches, strict=True)
        for rule in launch.rules
        if (row, rule[0], rule[1]) not in has
    ]
    if new:
        profile.con.executemany("INSERT INTO producer_rules VALUES (?, ?, ?, ?, ?, ?, ?)", new)
