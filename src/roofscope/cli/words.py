"""The model's errors in the words of the command line: a selection error names the options
(``--kernel``, ``--device``) the user gave."""

from __future__ import annotations

from roofscope.errors import RoofscopeError
from roofscope.model.selection import BadPattern, EmptySelection


def worded(exc: RoofscopeError) -> str:
    """The one line the CLI prints for ``exc``."""
    if isinstance(exc, BadPattern):
        return f"--kernel {exc.pattern!r}: not a valid regular expression ({exc.why})"
    if isinstance(exc, EmptySelection):
        given = [f"--kernel {exc.kernel!r}"] if exc.kernel is not None else []
        given += [f"--device {exc.device}"] if exc.device is not None else []
        known = ", ".join(map(str, exc.devices)) or "none named"
        return (
            f"{' '.join(given)}: selects nothing of the profile (its devices: {known}); "
            "widen the selection (--kernel searches the normalised kernel names)"
        )
    return str(exc)
