"""An inline ``--work NAME=FLOPS:BYTES`` whose NAME is no kernel of the profile is an error
that names the closest names, never a rule silently left unused."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from roofscope.analysis.work.spec import Rule, base_name
from roofscope.checkup.options import OPTIONS, Spelling
from roofscope.errors import UsageError
from roofscope.model.access import names, query
from roofscope.model.profile import Profile

CLOSEST = 3  # names offered
SHOWN = 80  # characters of a long (templated) name shown


def require_work_names(profile: Profile, rules: Sequence[Rule], spelling: Spelling) -> None:
    """Raise for the first inline rule that matches no normalised kernel name of the profile
    (whole, or its base name, as :meth:`Rule.matches` reads it)."""
    inline = [r for r in rules if r.exact and r.given is not None]
    if not inline:
        return
    kernels = kernel_names(profile)
    for rule in inline:
        if not any(rule.matches(k) for k in kernels):
            raise UsageError(unmatched(rule, kernels, spelling))


def kernel_names(profile: Profile) -> list[str]:
    """The profile's normalised kernel names, sorted."""
    rows = query(profile, names(profile), "SELECT DISTINCT kernel FROM d ORDER BY kernel")
    return [str(k) for (k,) in rows.fetchall()]


def unmatched(rule: Rule, kernels: Sequence[str], spelling: Spelling) -> str:
    """The one line: the option as given, the name it looked for, the closest names."""
    name = rule.origin.removeprefix("--work ")
    option = OPTIONS["work"].spelt(spelling)
    gap = "" if spelling is Spelling.PYTHON else " "
    closest = closest_names(name, kernels)
    offered = ", ".join(repr(c) for c in closest) if closest else "none (no kernel was read)"
    return (
        f"{option}{gap}{rule.given!r}: no kernel of the profile is named {name!r} (a whole "
        f"normalised name or its base name); closest: {offered}; use one of those names"
    )


def closest_names(name: str, kernels: Sequence[str]) -> list[str]:
    """The CLOSEST names nearest ``name`` (difflib's ratio) among the kernels' normalised
    names and their base names, each shortened to SHOWN characters."""
    candidates = list(dict.fromkeys([*kernels, *(base_name(k) for k in kernels)]))
    found = difflib.get_close_matches(name, candidates, n=CLOSEST, cutoff=0.0)
    return [c if len(c) <= SHOWN else c[: SHOWN - 1] + "…" for c in found]
