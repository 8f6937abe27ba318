"""Deterministic fuzzing of the command line: hostile option values end in a result or one line.

The input fuzzers mutate profiles; this one keeps a real profile and draws the options:
numbers beyond any range (``1e400``, ``inf``, ``nan``, 23-digit integers), text that is SQL or
regex syntax, and paths that are folders, missing, beneath a file, too long or existing
reports or the input itself. The invariant: no exception escapes ``main``; the input is
unchanged; exit 0 (or 3, the gate) with output, or exit 1 or 2 with exactly one
``roofscope: error:`` line. Found by it: ``--html INPUT --force`` replaced the profile with
the report, and names too long for the file system were tracebacks; its campaign
(``bench/fuzz_campaign.py --family options``) found ``--fail-if-kernel-slower 1e400``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz_inputs import DEMO, fuzz, judge_error, run_cli

TRACE = DEMO / "results.csv"
NUMBERS = (
    *("0", "1", "-1", "0.5", "7", "1e-400", "1e308", "1e400", "-1e400", "inf", "nan"),
    *("99999999999999999999999", "abc", "", "1,5", "0x10"),
)
PLAIN_NUMBERS = ("1", "7", "0.5", "8")  # drawn as often as the rest: some lines run through
TEXTS = (
    *("laplacian", "(", "[a-", "a'b", 'a"b', "ü€", "x" * 4096, "", " ", "-"),
    *("k=1:2", "k=1e400:1"),
)
PATHS = ("file", "toml", "folder", "missing", "beneath-file", "long", "new", "report", "profile")
NUMBER_OPTIONS = ("--top", "--device", "--gap-us", "--peak-flops", "--peak-bw", "--jobs")
GATE_OPTIONS = ("--fail-if-slower", "--fail-if-kernel-slower", "--min-share")
TEXT_OPTIONS = ("--format", "--kernel", "--gpu", "--work")
PATH_OPTIONS = ("--ceilings", "--work", "--html", "--svg", "-o")
COMPARE_PATH_OPTIONS = ("--base-run", "--new-run", "--junit", "--markdown", "--html", "--svg")
ANALYZE_ONLY = {"--top"}  # compare takes every analysis option analyze takes


def path_of(kind: str, root: Path) -> str:
    """A path of the given kind under ``root`` (made fresh for each example)."""
    made = {
        "file": root / "plain.txt",
        "toml": root / "plain.toml",
        "folder": root / "folder",
        "missing": root / "no-such-folder" / "x",
        "beneath-file": root / "plain.txt" / "x",
        "long": root / ("n" * 300),
        "new": root / "new-output",
        "report": root / "report.html",
        "profile": root / "results.csv",  # the input itself
    }
    return str(made[kind])


def prepare(root: Path) -> None:
    shutil.copyfile(TRACE, root / "results.csv")
    (root / "plain.txt").write_text("hello\n", encoding="utf-8")
    (root / "plain.toml").write_text('x = 1\n[[kernel]]\nname = "("\n', encoding="utf-8")
    (root / "folder").mkdir()
    (root / "report.html").write_text("<html></html>\n", encoding="utf-8")


@st.composite
def command_lines(draw: st.DrawFn, command: str) -> list[tuple[str, str]]:
    """Options (with a path kind in place of a path) for one ``command`` line."""
    pick: list[st.SearchStrategy[tuple[str, str]]] = [
        st.tuples(st.sampled_from(TEXT_OPTIONS), st.sampled_from(TEXTS)),
        st.tuples(st.sampled_from(NUMBER_OPTIONS), st.sampled_from(NUMBERS)),
        st.tuples(st.sampled_from(NUMBER_OPTIONS), st.sampled_from(PLAIN_NUMBERS)),
        st.tuples(st.sampled_from(PATH_OPTIONS), st.sampled_from(PATHS).map(lambda k: "@" + k)),
        st.tuples(st.sampled_from(("--json", "--force")), st.just("")),
    ]
    if command == "compare":
        pick += [
            st.tuples(st.sampled_from(GATE_OPTIONS), st.sampled_from(NUMBERS)),
            st.tuples(st.sampled_from(GATE_OPTIONS), st.sampled_from(PLAIN_NUMBERS)),
            st.tuples(
                st.sampled_from(COMPARE_PATH_OPTIONS), st.sampled_from(PATHS).map(lambda k: "@" + k)
            ),
        ]
    options = draw(st.lists(st.one_of(pick), min_size=1, max_size=3))
    if command == "compare":
        options = [(o, v) for o, v in options if o not in ANALYZE_ONLY]
    return options


def check_line(command: str, options: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory(prefix="roofscope-opts-") as tmp:
        root = Path(tmp)
        prepare(root)
        trace = str(root / "results.csv")
        argv = [command, trace, *([trace] if command == "compare" else [])]
        for option, value in options:
            argv.append(option)
            if value:
                argv.append(path_of(value[1:], root) if value.startswith("@") else value)
        code, stdout, stderr, escaped = run_cli(argv, 60)
        assert (root / "results.csv").read_bytes() == TRACE.read_bytes(), f"{argv}: input changed"
    assert not escaped, f"{argv}: {escaped}"
    assert code is not None
    if code in (0, 3):
        assert stdout, f"{argv}: exit {code} without output"
    else:
        problem = judge_error(code, stderr) if code in (1, 2) else f"exit {code}: {stderr!r}"
        assert not problem, f"{argv}: {problem}"


@fuzz(150)
@given(options=command_lines("analyze"))
def test_fuzz_analyze_options(options: list[tuple[str, str]]) -> None:
    check_line("analyze", options)


@fuzz(80)
@given(options=command_lines("compare"))
def test_fuzz_compare_options(options: list[tuple[str, str]]) -> None:
    check_line("compare", options)
