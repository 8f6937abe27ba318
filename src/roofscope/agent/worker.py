"""Where the server's calls are answered: in its own process (``Local``), or in a worker it
forks as it starts (``Forked``, stdio on a system with ``fork``). The worker imports the
engine (0.25 s of CPU) while the server imports the MCP SDK (0.45 s), so on two cores the
first answer waits for the slower of the two, not for both (docs/performance.md).

Neither imports the engine or the SDK here: ``Local`` loads the engine when made, the
worker after the fork."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Sequence
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any, Protocol

Reply = tuple[str, str]  # desk.Reply: ("ok", answer), ("error", line), ("fail", what broke)


class Engine(Protocol):
    def reply(self, what: str, arguments: dict[str, Any], folders: Sequence[str]) -> Reply: ...

    def close(self) -> None: ...


class Local:
    """The calls answered in this process (the HTTP server's, and the tests' in-memory one)."""

    def __init__(self, folders: Sequence[str]) -> None:
        from roofscope.agent.desk import Desk

        self.desk = Desk(folders)

    def reply(self, what: str, arguments: dict[str, Any], folders: Sequence[str]) -> Reply:
        return self.desk.reply(what, arguments, folders)

    def close(self) -> None:
        pass


class Forked:
    """The calls answered by a child process, over a pipe: one call at a time, each reply
    read before the next call is sent. The child ends when the pipe closes."""

    def __init__(self, folders: Sequence[str]) -> None:
        self.pipe, theirs = Pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the worker: never returns
            self.pipe.close()
            _work(theirs, folders)
        theirs.close()

    def reply(self, what: str, arguments: dict[str, Any], folders: Sequence[str]) -> Reply:
        try:
            self.pipe.send((what, arguments, tuple(folders)))
            answer: Reply = self.pipe.recv()
        except (EOFError, OSError):
            ended = self._end()
            return (
                "fail",
                f"the worker that answers the tools has ended ({ended}); restart the server",
            )
        return answer

    def close(self) -> None:
        """Close the pipe and wait for the worker (its CPU time then counts as the server's)."""
        self.pipe.close()
        self._end()

    def _end(self) -> str:
        """How the worker ended, once it has."""
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # reaped already
            return "reaped"
        if os.WIFSIGNALED(status):
            return f"killed by signal {os.WTERMSIG(status)}"
        return f"exit status {os.waitstatus_to_exitcode(status)}"


def _work(pipe: Connection, folders: Sequence[str]) -> None:
    """The worker's life: stdin and stdout stay the server's (its messages), so the worker
    reads none and writes to stderr; Ctrl-C is the server's to act on."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    code = 0
    try:
        _serve(pipe, folders)
    except BaseException:  # a fault of roofscope's: the server says the worker ended
        traceback.print_exc()
        code = 1
    finally:
        sys.stderr.flush()
        os._exit(code)


def _serve(pipe: Connection, folders: Sequence[str]) -> None:
    """Answer each call until the server closes the pipe (or goes)."""
    from roofscope.agent.desk import Desk, warm
    from roofscope.model.profile import close_spilled

    desk = Desk(folders)
    warm()
    try:
        while True:
            what, arguments, roots = pipe.recv()
            pipe.send(desk.reply(what, arguments, roots))
    except (EOFError, OSError):
        pass
    finally:
        close_spilled()


def start(folders: Sequence[str], *, fork: bool) -> Engine:
    """``Forked`` when asked and the system can fork, else ``Local``."""
    if fork and hasattr(os, "fork"):
        return Forked(folders)
    return Local(folders)
