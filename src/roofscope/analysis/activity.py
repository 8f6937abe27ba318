"""What the GPU and its host did beside kernels: API calls, copies, domains and barrier packets.

Three kinds of records, each listed as :class:`Activity` (kind, name, calls, total time):

- :func:`summaries`: the producer's own totals (``api``, ``copy``, ``domain`` and
  ``barrier`` stats files), per kind and name, largest first within a kind;
- :func:`copy_records`: the memory copies traced one by one, per direction (``copy``),
  largest first; their total is the sum of End - Begin;
- :func:`barrier_records`: the barrier packets among a dispatch file's rows (rocprof v1,
  ``readers/io/barriers.py``), per name, their valid durations summed.

A later pass repeating the first's trace or stats (``Role.PASS_REPEAT``) is not counted, nor
an API trace's calls where an API summary was read.
The check-up lists the three in that order (:func:`activity`); the cluster summary reduces
each run with the same functions (``cluster/records.py``).
"""

from __future__ import annotations

import msgspec

from roofscope.model.access import activity as activity_rows
from roofscope.model.access import copies, has_activity, named, query
from roofscope.model.profile import Profile
from roofscope.model.relation import among
from roofscope.model.schema import DURATION, VALID_DURATION, Role
from roofscope.model.selection import dispatches


class Activity(msgspec.Struct, frozen=True):
    kind: str  # api | copy | domain | barrier
    name: str
    calls: int
    total_ns: float


def activity(profile: Profile) -> tuple[Activity, ...]:
    """API, domain and copy activity, but that of a later pass repeating the first's."""
    return summaries(profile) + copy_records(profile) + barrier_records(profile)


def summaries(profile: Profile) -> tuple[Activity, ...]:
    """The producer's activity totals, per kind and name (kind, then largest, then name)."""
    if not has_activity(profile):
        return ()
    rows = query(
        profile,
        activity_rows(profile).filter(_counted(profile)),
        """SELECT kind, name, sum(calls), sum(total_ns) FROM d
        GROUP BY kind, name ORDER BY kind, sum(total_ns) DESC, name""",
    )
    return tuple(Activity(str(k), str(n), int(c), float(t)) for k, n, c, t in rows.fetchall())


def copy_records(profile: Profile) -> tuple[Activity, ...]:
    """The traced copies per direction (largest first)."""
    rows = query(
        profile,
        copies(profile).filter(_counted(profile)),
        f"""SELECT direction, count(*), sum({DURATION})
        FROM d GROUP BY direction ORDER BY 3 DESC""",
    ).fetchall()
    return tuple(Activity("copy", str(d), int(c), float(t or 0)) for d, c, t in rows)


def barrier_records(profile: Profile) -> tuple[Activity, ...]:
    """The barrier packets of the dispatch files, per name (valid durations summed)."""
    sources = profile.sources(Role.BARRIERS)
    if not sources:
        return ()
    rows = query(
        profile,
        named(profile, dispatches(profile, sources=sources)),
        f"""SELECT trim(trim(trim(raw_name), '"')), count(*),
        sum({DURATION}) FILTER ({VALID_DURATION}) FROM d GROUP BY 1 ORDER BY 3 DESC, 1""",
    )
    return tuple(Activity("barrier", str(n), int(c), float(t or 0)) for n, c, t in rows.fetchall())


def _counted(profile: Profile) -> str:
    """Not a later pass's repeat; nor an API trace's calls (``Role.HOST_CALLS``) where the
    producer's own API summary was read too, which holds the same calls."""
    left_out = profile.sources(Role.PASS_REPEAT)
    if profile.sources(Role.API_SUMMARY):
        left_out += profile.sources(Role.HOST_CALLS)
    return f"NOT {among('source', left_out)}"
