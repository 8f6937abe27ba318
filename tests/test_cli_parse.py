"""The command line as argparse reads it (cli/parse.py): each command's keywords, options
left out left to the function's defaults, environment variables, the profiled program's own
line after ``--``, and one-line usage errors."""

from __future__ import annotations

import inspect
import re

import msgspec
import pytest

from roofscope.checkup.options import CheckupOptions
from roofscope.cli.app import main
from roofscope.cli.commands import COMMANDS, chosen
from roofscope.cli.parse import Command, Opt, keywords
from roofscope.errors import UsageError

Cap = pytest.CaptureFixture[str]


def keywords_of(*args: str) -> dict[str, object]:
    found = chosen(list(args))
    assert not isinstance(found, str), found
    command, keywords = found
    assert command is COMMANDS[args[0]]
    return keywords


def test_options_between_and_after_the_paths_and_repeated() -> None:
    got = keywords_of("analyze", "a.csv", "--json", "b.csv", "--top", "3", "--work", "k=1:2")
    assert got == {"paths": ["a.csv", "b.csv"], "as_json": True, "top": 3, "work": ["k=1:2"]}
    more = keywords_of("analyze", "a", "--work", "x", "--work", "y", "-o", "out", "--gap-us", "2.5")
    assert more == {"paths": ["a"], "work": ["x", "y"], "out": "out", "gap_us": 2.5}


def test_an_option_left_out_is_the_functions_default() -> None:
    assert keywords_of("compare", "base", "new") == {"base": "base", "new": "new"}
    assert keywords_of("demo") == {}


def test_an_environment_variable_gives_an_option_the_line_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROOFSCOPE_MEMORY_LIMIT", "300MB")
    assert keywords_of("analyze", "a")["memory_limit"] == "300MB"
    assert keywords_of("analyze", "a", "--memory-limit", "1GB")["memory_limit"] == "1GB"


def test_the_profiled_programs_line_is_its_own() -> None:
    got = keywords_of("profile", "--set", "hotspots", "--", "python", "-h", "--json", "x.py")
    assert got == {"counter_set": "hotspots", "command": ["python", "-h", "--json", "x.py"]}
    with pytest.raises(UsageError, match=r"^Missing argument 'command': give it after --$"):
        chosen(["profile", "--set", "hotspots"])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["analyze", "a", "--top", "0"], "Argument --top: 0 is not >= 1"),
        (["analyze", "a", "--top", "x"], "Argument --top: invalid int value: 'x'"),
        (["mcp", "--http", "70000"], "Argument --http: 70000 is not >= 1 and <= 65535"),
        (["analyze", "a", "--nosuch"], "Unrecognized arguments: --nosuch"),
        (["analyze", "a", "--js"], "Unrecognized arguments: --js"),
        (["compare", "a"], "The following arguments are required: NEW"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(args: list[str], said: str, capsys: Cap) -> None:
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"roofscope: error: {said}; see roofscope {args[0]} --help\n")


def test_no_such_command_lists_the_commands(capsys: Cap) -> None:
    assert main(["nosuch"]) == 2
    assert capsys.readouterr().err == (
        "roofscope: error: No such command 'nosuch' (the commands: analyze, profile, peaks, "
        "demo, compare, devices, formats, mcp; see roofscope --help)\n"
    )


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["analyze", "--help"], ["mcp", "-h"]])
def test_asked_for_help_is_exit_0_on_stdout(args: list[str], capsys: Cap) -> None:
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: roofscope") and err == ""


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_default_the_help_says_is_the_functions(name: str) -> None:
    """An option whose help says its default ("Default: 10.") says the one its command
    takes when the option is left out: the function's own, or for an analysis option (which
    the function takes as ``**analysis``) CheckupOptions'."""
    command = COMMANDS[name]
    defaults = {f.name: f.default for f in msgspec.structs.fields(CheckupOptions)}
    defaults |= {p.name: p.default for p in inspect.signature(command.run).parameters.values()}
    for param in command.params:
        said = re.search(r"Default: ([^ ]+?)\.$", param.help)
        if said and isinstance(param, Opt):
            default = defaults[param.dest]
            shown = f"{default:g}" if isinstance(default, float) else str(default)
            assert said.group(1) == shown, (name, param.dest)


def test_the_defaults_said_are_there() -> None:
    said = {p.dest for p in COMMANDS["compare"].params if "Default:" in p.help}
    assert {"gap_us", "fp32_matmul", "min_share"} <= said


def test_an_environment_variable_that_does_not_parse_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An int option given by the environment: a value that is no int is a usage error
    naming the variable and the flag it stands for."""
    command = Command(
        "x", lambda jobs=None: None, (Opt(("--jobs",), "jobs", "N.", "int", env="X_JOBS"),)
    )
    monkeypatch.setenv("X_JOBS", "four")
    with pytest.raises(UsageError) as raised:
        keywords(command, [])
    assert str(raised.value) == (
        "X_JOBS='four': expected int (the value of --jobs); set it right or unset it"
    )
    monkeypatch.setenv("X_JOBS", "4")
    assert keywords(command, []) == {"jobs": 4}
    assert keywords(command, ["--jobs", "2"]) == {"jobs": 2}
