"""The documents the code points to are in the repository: every ``docs/formats/<page>.md``
that a module cites exists and has each section the citation names in quotes, and no module
cites the notes outside the repository (``formats-amd.md``, ``formats-nvidia-torch.md``)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "roofscope"
FORMATS = ROOT / "docs" / "formats"
# a page, then the quoted section names that follow it: `page.md, "A", "B"` or `page.md: "A" to "B"`
CITATION = re.compile(r'docs/formats/([\w.-]+\.md)((?:(?:[,:;]| and| to)?\s*"[^"]+")*)')
OUTSIDE = ("formats-amd.md", "formats-nvidia-torch.md")


def _text(path: Path) -> str:
    """The file with each line's indentation and any comment or docstring marks flattened."""
    lines = (line.strip().lstrip("#").strip() for line in path.read_text("utf-8").splitlines())
    return " ".join(lines)


def headings(page: Path) -> set[str]:
    return {line.lstrip("#").strip() for line in page.read_text("utf-8").splitlines()
            if line.startswith("#")}  # fmt: skip


def citations() -> list[tuple[str, str, list[str]]]:
    """(module, page, sections) for every citation of a format page in the package."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for m in CITATION.finditer(_text(path)):
            found.append((path.name, m.group(1), re.findall(r'"([^"]+)"', m.group(2))))
    return found


def test_cited_pages_and_sections_exist() -> None:
    cited = citations()
    assert len(cited) >= 25  # every reader and formula module of the formats cites its page
    missing = [
        (module, page, section)
        for module, page, sections in cited
        for section in ([""] if not (FORMATS / page).is_file() else sections)
        if not (FORMATS / page).is_file() or section not in headings(FORMATS / page)
    ]
    assert missing == []


def prose(path: Path) -> str:
    """A module's docstrings and comments."""
    text = path.read_text("utf-8")
    nodes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Module | ast.ClassDef |
             ast.FunctionDef | ast.AsyncFunctionDef)]  # fmt: skip
    docs = [ast.get_docstring(n) or "" for n in nodes]
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return "\n".join([*docs, *(t.string for t in tokens if t.type == tokenize.COMMENT)])


def test_no_module_cites_notes_outside_the_repository() -> None:
    """Neither in its docstrings and comments nor in the sources it writes into reports."""
    assert [p.name for p in SRC.rglob("*.py") if any(n in prose(p) for n in OUTSIDE)] == []
    assert [p.name for p in SRC.rglob("*.py") if any(n in p.read_text() for n in OUTSIDE)] == []


def test_the_citation_finder_finds_sections() -> None:
    text = 'x (docs/formats/rocprofv3.md: "Folders and passes" to "Stats files") y'
    m = CITATION.search(text)
    assert m is not None and re.findall(r'"([^"]+)"', m.group(2)) == [
        "Folders and passes",
        "Stats files",
    ]


def test_every_format_page_is_listed() -> None:
    index = (FORMATS / "README.md").read_text("utf-8")
    pages = sorted(p.name for p in FORMATS.glob("*.md") if p.name != "README.md")
    assert pages and all(f"]({page})" in index for page in pages)


def test_architecture_names_files_that_exist() -> None:
    """Every ``src/...``, ``readers/...``-style path the recipes name is a file of the repo."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text("utf-8")
    assert "## Recipe: add an input format" in text and "## Recipe: add a diagnosis rule" in text
    named = set(re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.(?:py|md|toml))`", text))
    bases = (ROOT, ROOT / "src" / "roofscope", ROOT / "docs")
    new = {"src/roofscope/readers/tinyprof.py"}  # the file the recipe creates
    missing = sorted(
        p for p in named - new if "<" not in p and not any((b / p).exists() for b in bases)
    )
    assert len(named) >= 15 and missing == []


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    start = text.index(f"## {title}\n")
    return text[start : text.index("\n## ", start + 1)]


def test_the_readme_names_only_the_mcp_tools_and_options_that_exist() -> None:
    """Every tool in the README's MCP table is one the server lists (and every listed tool is
    in the table); every option the section gives ``roofscope mcp`` (on a command line or in
    a client's ``args``) is one of the command's."""
    import anyio
    import pytest

    pytest.importorskip("mcp")
    from roofscope.agent.server import build
    from roofscope.cli.commands import COMMANDS
    from roofscope.cli.parse import Opt

    section = _readme_section("roofscope for agents (MCP)")
    table = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.M))
    listed = {t.name for t in anyio.run(build([str(ROOT)]).list_tools)}
    assert table == listed
    flags = {f for p in COMMANDS["mcp"].params if isinstance(p, Opt) for f in p.flags}
    uses = re.findall(r"roofscope mcp[^`\n]*|\"args\": \[[^]]*\]", section)
    said = {f for use in uses for f in re.findall(r"--[a-z][a-z-]+", use)}
    assert len(uses) >= 5 and said == {"--root", "--http"} and said <= flags
