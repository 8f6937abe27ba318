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
        return (_input_error, (type(self), *self.parts, self.line))


class EmptyInput(InputError):
    """A profiler file that holds no data: a failed or empty export (ncu's messages and no
    CSV, an nsys report of a header alone). Beside files that hold data it is named in a
    warning and they are read; alone it is the error."""


def _input_error(
    kind: type[InputError], path: str, problem: str, remedy: str, line: int | None
) -> InputError:
    return kind(path, problem, remedy, line=line)


class UsageError(RoofscopeError):
    """Options that contradict each other or name something that does not exist."""

    exit_code = 2
