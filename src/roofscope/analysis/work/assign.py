"""Which work each kernel gets: the user's rules first (the first that matches), then the
counters of its own dispatches, then those of a counter run of the same program, scaled
from that run's calls to the trace's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from msgspec.structs import replace

from roofscope.analysis.hotspots import Hotspots
from roofscope.analysis.work.expr import ExprError
from roofscope.analysis.work.model import ALL, Work
from roofscope.analysis.work.spec import LAUNCH_FIELDS, Rule, base_name, evaluate_rule
from roofscope.errors import InputError
from roofscope.model.access import has_counters, named, names, query
from roofscope.model.access import launches as launches_of
from roofscope.model.profile import Profile, Warning
from roofscope.model.relation import among
from roofscope.model.schema import Role
from roofscope.model.selection import dispatches


def kernel_work(
    profile: Profile,
    hot: Hotspots,
    rules: Sequence[Rule],
    from_operators: Mapping[str, Work] | None = None,
) -> tuple[dict[str, Work], Work | None, list[Warning]]:
    """Work by kernel name, the whole profile's counter work (or None), and warnings. The
    user's rules come first, then counters, then ``from_operators`` (shapes and
    annotations: derived, not measured)."""
    ids = kernel_name_ids(profile)
    out: dict[str, Work] = {}
    for k in hot.kernels:
        rule = next((r for r in rules if r.matches(k.name)), None)
        if rule is not None:
            out[k.name] = _from_rule(profile, rule, ids.get(k.name, []), k.calls)
    traced = _counter_work(profile, profile.sources(Role.DISPATCHES))
    calls = {k.name: k.calls for k in hot.kernels}
    runs = _RunWork(profile, list(calls))
    for kernel, name_ids in ids.items():
        if kernel in out or kernel not in calls:
            continue
        traced_here = [traced[i] for i in name_ids if i in traced and _known(traced[i])]
        if traced_here:
            out[kernel] = _sum(traced_here, "counters")
        elif per_pass := runs.of(kernel):
            out[kernel] = _per_call(per_pass).scaled(calls[kernel], "counters (counter run)")
    for kernel, work in (from_operators or {}).items():
        if kernel not in out and kernel in calls:
            out[kernel] = _covering(work, calls[kernel])
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
    whole = traced.get(ALL) or next((p[ALL] for p in runs.passes if ALL in p), None)
    return out, whole, warnings


def _covering(work: Work, calls: int) -> Work:
    """Operator work that covers only some of a kernel's dispatches says how many."""
    if work.dispatches is None or work.dispatches >= calls:
        return work
    return replace(work, source=f"{work.source} ({work.dispatches:,} of {calls:,} dispatches)")


def _counter_work(profile: Profile, sources: Sequence[int]) -> dict[int, Work]:
    """:func:`~roofscope.analysis.work.counters.counter_work`, whose formulas, over numpy
    arrays, load only for a profile with counters."""
    if not has_counters(profile):
        return {}
    from roofscope.analysis.work.counters import counter_work

    return counter_work(profile, sources)


class _RunWork:
    """The counter runs' work per name id, one dict per run, read when first asked: only a
    kernel whose own dispatches carry no counters (or a trace without any) needs it."""

    def __init__(self, profile: Profile, kernels: list[str]) -> None:
        self.profile, self.kernels = profile, kernels
        self._passes: list[dict[int, Work]] | None = None
        self._in_runs: Mapping[str, list[int]] = {}

    @property
    def passes(self) -> list[dict[int, Work]]:
        if self._passes is None:
            runs = self.profile.sources(Role.COUNTER_RUN)
            self._passes = [_counter_work(self.profile, [s]) for s in runs]
            if any(self._passes):
                self._in_runs = run_name_ids(self.profile, self.kernels)
        return self._passes

    def of(self, kernel: str) -> list[Work]:
        """The kernel's work in each run that counted it (its name ids there)."""
        passes = self.passes  # reads the runs (and their name ids) the first time
        ids = self._in_runs.get(kernel, [])
        return [
            _sum(found, "counters (counter run)")
            for run in passes
            if (found := [run[i] for i in ids if i in run and _known(run[i])])
        ]


def run_name_ids(profile: Profile, kernels: Sequence[str]) -> Mapping[str, list[int]]:
    """The name ids under which counter runs recorded each traced kernel: its own name, or,
    when the counter run was made with ``--basenames`` (names without template arguments
    and parameters), its base name when no other traced kernel shares that base name.
    Built once per profile and kernels (the metrics and the diagnosis ask for the same
    ones), and shared: read-only."""
    key = ("run_name_ids", tuple(kernels))
    return profile.derived(key, lambda: _run_name_ids(profile, kernels))


def _run_name_ids(profile: Profile, kernels: Sequence[str]) -> dict[str, list[int]]:
    runs = profile.sources(Role.COUNTER_RUN)
    if not runs:
        return {}
    ids = kernel_name_ids(profile)
    in_runs = profile.derived(("run_kernels",), lambda: _run_kernels(profile, runs))
    bases: dict[str, list[str]] = {}
    for kernel in kernels:
        bases.setdefault(base_name(kernel), []).append(kernel)
    out: dict[str, list[int]] = {}
    for kernel in kernels:
        if kernel in in_runs:
            out[kernel] = ids.get(kernel, [])
        elif (base := base_name(kernel)) in in_runs and len(bases[base]) == 1:
            out[kernel] = ids.get(base, [])
    return out


def _run_kernels(profile: Profile, runs: Sequence[int]) -> set[str]:
    """The kernels the counter runs recorded (once per profile: the work, the metrics and
    the diagnosis's evidence all ask)."""
    recorded = named(profile, dispatches(profile, sources=runs)).project("kernel").distinct()
    return {str(k) for (k,) in recorded.fetchall()}


def _known(w: Work) -> bool:
    """Counters that give some FLOPs or bytes (not only, say, LDS bank conflicts)."""
    return w.flops is not None or bool(w.bytes)


def kernel_name_ids(profile: Profile) -> dict[str, list[int]]:
    """The name ids of each kernel (normalised name), read once per profile; read-only."""
    return profile.derived(("kernel_name_ids",), lambda: _kernel_name_ids(profile))


def _kernel_name_ids(profile: Profile) -> dict[str, list[int]]:
    ids: dict[str, list[int]] = {}
    every = query(profile, names(profile), "SELECT name_id, kernel FROM d").fetchall()
    for name_id, kernel in every:
        ids.setdefault(str(kernel), []).append(int(name_id))
    return ids


def _from_rule(profile: Profile, rule: Rule, name_ids: list[int], calls: int) -> Work:
    launches: list[dict[str, float | None]] = []
    if rule.per == "call" and name_ids:
        fields = ", ".join(LAUNCH_FIELDS)
        rel = launches_of(profile, profile.sources(Role.DISPATCHES))
        rows = (
            rel.filter(among("name_id", name_ids))
            .aggregate(f"{fields}, sum(dispatches)", fields)
            .fetchall()
        )
        launches = [dict(zip([*LAUNCH_FIELDS, "dispatches"], r, strict=True)) for r in rows]
    return rule_work(rule, launches, calls)


def rule_work(rule: Rule, launches: Sequence[Mapping[str, float | None]], calls: int) -> Work:
    """A kernel's work by ``rule``, over its ``launches`` (each distinct launch shape with its
    ``dispatches``) and ``calls``; a rule that cannot be evaluated is an input error."""
    try:
        flops, nbytes = evaluate_rule(rule, launches, calls)
    except ExprError as e:
        where, _, what = rule.origin.partition(" ")
        raise InputError(
            where, f"{what or 'rule'}: {e}", 'fix the rule or give per = "total"'
        ) from None
    return Work(flops=flops or None, bytes=nbytes, source=rule.origin)


def _per_call(passes: list[Work]) -> Work:
    """One call's work from counter passes that each collected some counters: each
    quantity from the first pass that has it, divided by that pass's dispatches."""
    flops: dict[str, float] = {}
    nbytes: dict[str, float] = {}
    for w in passes:
        n = w.dispatches or 1
        for k, v in (w.flops or {}).items():
            flops.setdefault(k, v / n)
        for k, v in w.bytes.items():
            nbytes.setdefault(k, v / n)
    if "hbm-read" in nbytes and "hbm-write" in nbytes:
        nbytes["hbm"] = nbytes["hbm-read"] + nbytes["hbm-write"]
    known = flops if any(w.flops is not None for w in passes) else None
    return Work(known, nbytes, passes[0].source, {}, 1)


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
    for key in works[0].bytes:  # the levels every part has, in the first one's order
        if all(key in w.bytes for w in works):
            nbytes[key] = sum(w.bytes[key] for w in works)
    return Work(flops, nbytes, source, {}, sum(w.dispatches or 0 for w in works))
