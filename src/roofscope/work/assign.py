"""Which work each kernel gets: the user's rules first (the first that matches), then the
counters of its own dispatches, then those of a counter run of the same program, scaled
from that run's calls to the trace's."""

from __future__ import annotations

from collections.abc import Sequence

from roofscope.analysis.hotspots import Hotspots
from roofscope.errors import InputError
from roofscope.model import Profile, Warning
from roofscope.work.counters import ALL, counter_work
from roofscope.work.expr import ExprError
from roofscope.work.model import Work
from roofscope.work.spec import LAUNCH_FIELDS, Rule, evaluate_rule


def kernel_work(
    profile: Profile, hot: Hotspots, rules: Sequence[Rule]
) -> tuple[dict[str, Work], Work | None, list[Warning]]:
    """Work by kernel name, the whole profile's counter work (or None), and warnings."""
    ids = _name_ids(profile)
    out: dict[str, Work] = {}
    for k in hot.kernels:
        rule = next((r for r in rules if r.matches(k.name)), None)
        if rule is not None:
            out[k.name] = _from_rule(profile, rule, ids.get(k.name, []), k.calls)
    traced = counter_work(profile, profile.sources("dispatches"))
    runs = counter_work(profile, profile.sources("counter-run"))
    calls = {k.name: k.calls for k in hot.kernels}
    for kernel, name_ids in ids.items():
        if kernel in out or kernel not in calls:
            continue
        if mine := [traced[i] for i in name_ids if i in traced]:
            out[kernel] = _sum(mine, "counters")
        elif other := [runs[i] for i in name_ids if i in runs]:
            merged = _sum(other, "counters (counter run)")
            seen = merged.dispatches or calls[kernel]
            out[kernel] = merged.scaled(calls[kernel] / seen, merged.source)
    warnings = []
    measured = [w for w in out.values() if w.source.startswith("counters")]
    if measured and all(w.flops is None for w in measured):
        warnings.append(
            Warning(
                "no-flop-counters",
                "the counters give no FLOPs (this GPU or run has no per-type FP instruction "
                "counters): FLOPs are unknown and kernels are placed by bandwidth; pass "
                "--work to give them",
                len(measured),
            )
        )
    whole = traced.get(ALL) or runs.get(ALL)
    return out, whole, warnings


def _name_ids(profile: Profile) -> dict[str, list[int]]:
    ids: dict[str, list[int]] = {}
    for name_id, kernel in profile.con.execute("SELECT name_id, kernel FROM names").fetchall():
        ids.setdefault(str(kernel), []).append(int(name_id))
    return ids


def _from_rule(profile: Profile, rule: Rule, name_ids: list[int], calls: int) -> Work:
    launches: list[dict[str, float | None]] = []
    if rule.per == "call" and name_ids:
        fields = ", ".join(LAUNCH_FIELDS)
        rel = profile.launches()
        sources = profile.sources("dispatches")
        rows = (
            rel.filter(
                f"name_id IN ({', '.join(map(str, name_ids))}) "
                f"AND source IN ({', '.join(map(str, sources or [-1]))})"
            )
            .aggregate(f"{fields}, sum(dispatches)", fields)
            .fetchall()
        )
        launches = [dict(zip([*LAUNCH_FIELDS, "dispatches"], r, strict=True)) for r in rows]
    try:
        flops, nbytes = evaluate_rule(rule, launches, calls)
    except ExprError as e:
        where, _, what = rule.origin.partition(" ")
        raise InputError(
            where, f"{what or 'rule'}: {e}", 'fix the rule or give per = "total"'
        ) from None
    return Work(flops=flops or None, bytes=nbytes, source=rule.origin)


def _sum(works: list[Work], source: str) -> Work:
    if len(works) == 1:
        w = works[0]
        return Work(w.flops, dict(w.bytes), source, dict(w.rates), w.dispatches)
    flops: dict[str, float] | None = None
    if all(w.flops is not None for w in works):
        flops = {}
        for w in works:
            for k, v in (w.flops or {}).items():
                flops[k] = flops.get(k, 0.0) + v
    nbytes: dict[str, float] = {}
    for key in set.intersection(*(set(w.bytes) for w in works)):
        nbytes[key] = sum(w.bytes[key] for w in works)
    return Work(flops, nbytes, source, {}, sum(w.dispatches or 0 for w in works))
