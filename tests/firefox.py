"""Firefox for the HTML report's browser tests, driven over WebDriver BiDi.

Playwright drives only its own patched Firefox builds, which come from a CDN this project's
machines cannot reach; Debian's ``firefox-esr`` (140) speaks the W3C WebDriver BiDi protocol
itself once started with ``--remote-debugging-port``. This is the smallest client the tests
need: open a file, collect console errors, uncaught exceptions and network requests of the
page, evaluate script, and move or click the real pointer on an element.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FIREFOX = os.environ.get("ROOFSCOPE_FIREFOX") or shutil.which("firefox-esr") or shutil.which(
    "firefox"
) or ""  # fmt: skip
LISTENING = re.compile(r"WebDriver BiDi listening on (ws://\S+)")


def missing() -> str | None:
    """Why Firefox cannot be driven here, or None."""
    try:
        import websockets.sync.client  # noqa: F401
    except ImportError:
        return "websockets is not installed (pip install websockets)"
    if not FIREFOX:
        return "no Firefox found (apt-get install firefox-esr, or set ROOFSCOPE_FIREFOX)"
    return None


class Page:
    """One browsing context of a BiDi session, and what its page logged and requested."""

    def __init__(self, ws: Any) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.context = self.send("browsingContext.getTree", {})["contexts"][0]["context"]
        viewport = {"width": 1100, "height": 1400}
        self.send("browsingContext.setViewport", {"context": self.context, "viewport": viewport})
        # the whole network module: Firefox reports a request that reaches its network stack
        events = ["log.entryAdded", "network", "browsingContext.userPromptOpened"]
        self.send("session.subscribe", {"events": events})

    def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A command's result; events that arrive meanwhile are recorded."""
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv(timeout=30))
            if message.get("type") == "event":
                self._event(message["method"], message["params"])
            elif message.get("id") == ident:
                if message.get("type") == "error":
                    raise RuntimeError(f"{method}: {message.get('message') or message}")
                result: dict[str, Any] = message["result"]
                return result

    def _event(self, method: str, params: dict[str, Any]) -> None:
        if method == "log.entryAdded" and params.get("level") == "error":
            self.errors.append(str(params.get("text")))
        elif method == "network.beforeRequestSent":
            url = str(params["request"]["url"])
            if not url.startswith(("file:", "data:", "about:")):
                self.requests.append(url)
        elif method == "browsingContext.userPromptOpened":
            self.errors.append(f"dialog: {params.get('message')}")

    def open(self, path: Path) -> None:
        self.send(
            "browsingContext.navigate",
            {"context": self.context, "url": path.as_uri(), "wait": "complete"},
        )

    def evaluate(self, expression: str) -> Any:
        """The value of a script expression (numbers, strings, booleans, null)."""
        result = self.send(
            "script.evaluate",
            {"expression": expression, "target": {"context": self.context}, "awaitPromise": False},
        )
        if result.get("type") == "exception":
            self.errors.append(str(result["exceptionDetails"].get("text")))
            raise RuntimeError(f"script failed: {result['exceptionDetails'].get('text')}")
        value = result["result"]
        return value.get("value")

    def pointer(self, selector: str, *, click: bool) -> None:
        """Scroll the element into view, move the real pointer to its centre (and click)."""
        found = self.send(
            "script.evaluate",
            {
                "expression": f"(e => (e && e.scrollIntoView({{block: 'center'}}), e))"
                f"(document.querySelector({json.dumps(selector)}))",
                "target": {"context": self.context},
                "awaitPromise": False,
            },
        )["result"]
        if found.get("type") != "node":
            raise AssertionError(f"no element {selector}")
        actions: list[dict[str, Any]] = [
            {
                "type": "pointerMove",
                "x": 0,
                "y": 0,
                "origin": {"type": "element", "element": {"sharedId": found["sharedId"]}},
            },
        ]
        if click:
            actions += [{"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]
        self.send(
            "input.performActions",
            {
                "context": self.context,
                "actions": [{"type": "pointer", "id": "mouse", "actions": actions}],
            },
        )

    def screenshot(self, path: Path) -> None:
        import base64

        data = self.send("browsingContext.captureScreenshot", {"context": self.context})["data"]
        path.write_bytes(base64.b64decode(data))


@contextmanager
def firefox() -> Iterator[Page]:
    """A headless Firefox with a fresh profile, and a page in it; closed on exit."""
    from websockets.sync.client import connect

    with tempfile.TemporaryDirectory(prefix="roofscope-firefox-") as profile:
        process = subprocess.Popen(
            [FIREFOX, "--headless", "--no-remote", "--profile", profile,
             "--remote-debugging-port", "0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            url = _listening(process)
            with connect(f"{url}/session", max_size=None, open_timeout=30) as ws:
                ws.send(json.dumps({"id": 0, "method": "session.new",
                                    "params": {"capabilities": {}}}))  # fmt: skip
                while json.loads(ws.recv(timeout=30)).get("id") != 0:
                    pass
                yield Page(ws)
        finally:
            process.kill()
            process.wait()


def _listening(process: subprocess.Popen[str]) -> str:
    """The BiDi address Firefox prints on stderr once it is ready. A thread keeps reading its
    stderr afterwards, so that a full pipe never stalls the browser."""
    lines: queue.Queue[str] = queue.Queue()

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line)
        found = LISTENING.search(line)
        if found:
            return found.group(1)
    raise RuntimeError("Firefox did not start its WebDriver BiDi server: " + "".join(seen)[-500:])
