"""Each call of the server answered from the session's check-ups, as a reply the server sends
on (a tool's answer as its JSON text): the tools' side of ``roofscope mcp``, pure of the MCP
SDK, run in the server's process or in the worker it forks (``worker.py``). Its imports are
the engine's (0.25 s of CPU)."""

from __future__ import annotations

import json
import traceback
from collections.abc import Sequence
from typing import Any

from roofscope.agent import tools
from roofscope.agent.roots import Roots
from roofscope.api.report import Report
from roofscope.errors import RoofscopeError, UsageError

# ("ok", the answer's text), ("error", the line the command prints), ("fail", what broke)
Reply = tuple[str, str]


def line(exc: RoofscopeError) -> str:
    """The one line ``roofscope`` prints on stderr for ``exc``."""
    from roofscope.checkup.options import worded

    return f"roofscope: error: {worded(exc)}"


def warm() -> None:
    """Load what a first check-up of any format loads before it reads: every reader's module
    and DuckDB's first database (0.05 s of CPU, 0.02-0.03 s less in the first answer). The
    worker does it while the server still imports the SDK."""
    from roofscope.model.profile import Profile
    from roofscope.readers import registry

    list(registry.readers())
    Profile.empty().con.close()


def _text(answer: dict[str, Any] | str) -> str:
    """A tool's answer as JSON (plain values only: the server need not import roofscope's
    types to read it), or a resource's text as it is."""
    if isinstance(answer, str):
        return answer
    return json.dumps(answer, separators=(",", ":"), allow_nan=False)


class Desk:
    """The session (its check-ups and the last report) and the calls it answers: each tool
    by its name, and the last report as JSON or Markdown."""

    def __init__(self, folders: Sequence[str]) -> None:
        self.session = tools.Session(Roots.of(list(folders)))

    def reply(self, what: str, arguments: dict[str, Any], folders: Sequence[str]) -> Reply:
        """The answer to ``what`` under the roots ``folders``; a RoofscopeError is the line
        the command prints, anything else a fault of roofscope's (its traceback on stderr)."""
        try:
            self.session.roots = Roots.of(list(folders))
            return "ok", _text(getattr(self, what)(**arguments))
        except RoofscopeError as exc:
            return "error", line(exc)
        except Exception as exc:  # said to the client whole, never a silent wrong answer
            traceback.print_exc()
            return "fail", str(exc)

    def analyze(self, path: str, options: tools.Options, **page: Any) -> dict[str, Any]:
        return tools.analyze_answer(self.session.report(path, options), **page)

    def kernel(self, path: str, name: str, options: tools.Options) -> dict[str, Any]:
        return tools.kernel_answer(self.session.report(path, options), name)

    def findings(self, path: str, options: tools.Options, **kept: Any) -> dict[str, Any]:
        return tools.findings_answer(self.session.report(path, options), **kept)

    def timeline(self, path: str, options: tools.Options, **kept: Any) -> dict[str, Any]:
        return tools.timeline_answer(self.session.report(path, options), **kept)

    def compare(
        self, sides: tuple[str, str], options: tools.Options, **gated: Any
    ) -> dict[str, Any]:
        return tools.compare_answer(self.session.comparison(*sides, options), **gated)

    def devices(self, **listed: Any) -> dict[str, Any]:
        return tools.devices_answer(**listed)

    def formats(self) -> dict[str, Any]:
        return tools.formats_answer()

    def last_json(self) -> str:
        return self._last().to_json()

    def last_markdown(self) -> str:
        from roofscope.render.registry import Options, renderer

        text = renderer("report", "text", Options(top=20, color=False)).render(self._last().checkup)
        return f"# roofscope check-up: {self.session.last_path}\n\n```text\n{text}```\n"

    def _last(self) -> Report:
        if self.session.last is None:
            raise UsageError("no report yet: call the analyze tool first")
        return self.session.last
