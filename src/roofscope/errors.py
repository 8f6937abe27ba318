"""One error hierarchy. Only the CLI prints these and turns them into exit codes."""

from __future__ import annotations


class RoofscopeError(Exception):
    """An error the user can act on: the message names the place and the remedy."""

    exit_code = 1


class InputError(RoofscopeError):
    """A file or directory that cannot be read as a profile."""

    def __init__(self, path: str, problem: str, remedy: str, *, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}; {remedy}")
        self.path = path
        self.line = line
        self.parts = (path, problem, remedy)

    def __reduce__(self) -> tuple[object, ...]:  # crosses process boundaries (parallel reading)
        return (_input_error, (*self.parts, self.line))


def _input_error(path: str, problem: str, remedy: str, line: int | None) -> InputError:
    return InputError(path, problem, remedy, line=line)


class UsageError(RoofscopeError):
    """Options that contradict each other or name something that does not exist."""

    exit_code = 2
