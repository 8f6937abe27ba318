"""The layout issue 21 asks for: packages by stage, no two of which import each other, and
few modules at the top of the package."""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from pathlib import Path

from roofscope.model.schema import Table

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "roofscope"
STAGES = {"readers", "model", "analysis", "diagnosis", "verify", "render", "measure"}
STAGES |= {"catalogue", "cli", "checkup", "api", "agent"}


def _unit(module: str) -> str:
    """The package (or top-level module) a dotted ``roofscope.X.Y`` name belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imports(path: Path) -> set[str]:
    """The ``roofscope`` modules a file imports, at any depth (lazy imports count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "roofscope":
                found |= {f"roofscope.{a.name}" for a in node.names}
            elif node.module.startswith("roofscope."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("roofscope.")}
    return found


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        source = _unit(".".join(rel.parts))
        edges[source] |= {_unit(m) for m in _imports(path)} - {source}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more units (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in list(edges):
        if v not in index:
            visit(v)
    return found


def test_no_two_packages_import_each_other() -> None:
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# -- modules: no circle at all, however an import is written ----------------------------------


def _module_name(path: Path) -> str:
    """The dotted name of a source file (``roofscope.readers.io`` for its ``__init__.py``)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(source: str, module: str, *, package: bool, known: set[str]) -> set[str]:
    """The ``known`` modules that ``source`` (the module ``module``; ``package`` if it is an
    ``__init__``) imports, at any depth: in functions and under TYPE_CHECKING too, relative
    imports resolved. ``from x import y`` names the module ``x.y`` where that is one, else ``x``."""
    package_parts = (module if package else module.rpartition(".")[0]).split(".")
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            above = package_parts[: len(package_parts) + 1 - node.level] if node.level else []
            parts = [*above, *([node.module] if node.module else [])]
            names = {".".join([*parts, a.name]) for a in node.names}
            found |= names & known or {".".join(parts)}
    return (found & known) - {module}


def module_graph(prefix: str = "roofscope.") -> dict[str, set[str]]:
    """Which modules each module whose dotted name starts with ``prefix`` imports, of those."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = {m for m in paths if m.startswith(prefix)}
    return {
        m: module_imports(
            paths[m].read_text(encoding="utf-8"),
            m,
            package=paths[m].name == "__init__.py",
            known=known,
        )
        for m in sorted(known)
    }


def test_no_module_circle_anywhere() -> None:
    """No two modules import each other, directly or through others, not even from inside a
    function or under TYPE_CHECKING (issue 37): the top package and every module below it."""
    assert cycles(module_graph("roofscope")) == []


def test_the_api_stands_beside_the_command_line() -> None:
    """api/ and cli/ are both adapters over checkup/: neither imports the other."""
    edges = module_graph("roofscope")
    crossing = {
        (m, to)
        for adapter, other in (("api", "cli"), ("cli", "api"))
        for m, tos in edges.items() if m.startswith(f"roofscope.{adapter}")
        for to in tos if to.startswith(f"roofscope.{other}")
    }  # fmt: skip
    assert crossing == set()


def test_the_module_graph_sees_every_kind_of_import() -> None:
    source = "import p.q\nfrom . import b\nfrom .c import X\nfrom .. import top\n"
    source += "if TYPE_CHECKING:\n    from p.r import S\ndef f():\n    from p.s import t\n"
    known = {"p.a", "p.b", "p.c", "p.q", "p.r", "p.s", "p.s.t", "top"}
    found = module_imports(source, "p.a", package=False, known=known)
    assert found == {"p.q", "p.b", "p.c", "top", "p.r", "p.s.t"}


def test_no_folder_holds_more_than_20_modules() -> None:
    counts = Counter(str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))
    assert max(counts.values()) <= 20, counts.most_common(3)


def test_the_package_is_its_stages_and_a_few_modules() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.name for p in PACKAGE.glob("*.py")}
    assert packages == STAGES
    assert len(modules) <= 6, sorted(modules)


# -- only readers/ and model/ name the model's tables ------------------------------------------

OWNERS = {"readers", "model"}  # the stages that fill the tables and hand out relations
# Modules outside OWNERS that still name a table in SQL, each to be moved onto model/access.py;
# this list only shrinks (it is empty: every analysis reads relations).
STILL_NAMING: set[str] = set()


def _table_sql(source: str) -> list[str]:
    """The model tables that string literals in ``source`` name after FROM/JOIN/INTO/UPDATE."""
    tables = "|".join(re.escape(t.value) for t in Table)
    sql = re.compile(rf"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+({tables})\b")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += sql.findall(node.value)
    return found


def _outside_owners() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in OWNERS]


def test_only_readers_and_model_name_the_tables_in_sql() -> None:
    naming = {
        str(path.relative_to(PACKAGE)): tables
        for path in _outside_owners()
        if (tables := _table_sql(path.read_text(encoding="utf-8")))
    }
    assert set(naming) == STILL_NAMING, naming


def _imports_table(path: Path) -> bool:
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "roofscope.model.schema"
        and any(a.name == "Table" for a in node.names)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
    )


def test_only_readers_and_model_use_the_table_names() -> None:
    """The schema's Table enum is the model's own: others are handed relations."""
    assert [str(p.relative_to(PACKAGE)) for p in _outside_owners() if _imports_table(p)] == []


def test_the_table_scanner_finds_sql_in_strings_and_f_strings() -> None:
    code = 'a = "SELECT 1 FROM dispatches d"\nb = f"SELECT {x} FROM d JOIN names n ON {y}"\n'
    code += 'c = "reads counters from names"  # prose, not SQL\n'
    assert _table_sql(code) == ["dispatches", "names"]


def test_no_reader_counts_the_inputs_for_its_source_id() -> None:
    """Source ids come from Profile.begin_input(), never from the length of the inputs."""
    pattern = re.compile(r"len\(\s*\w+\.inputs\s*\)")
    found = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in PACKAGE.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line) and "self.inputs" not in line
    ]
    assert found == []


def test_only_readers_and_model_spell_a_duration() -> None:
    """A duration is ``model.schema.DURATION``, and which ones count ``VALID_DURATION``: one
    definition, not SQL text copied into every analysis."""
    spelled = [
        str(p.relative_to(PACKAGE))
        for p in _outside_owners()
        if "end_ns - start_ns" in p.read_text(encoding="utf-8")
    ]
    assert spelled == []


# -- results are msgspec structs ----------------------------------------------------------------

# No module defines a dataclass: a frozen dataclass costs 0.44 ms to build at import (CPython
# 3.11 compiles each generated method with exec), a msgspec.Struct 0.01 ms: the 120 that
# ``analyze`` of a rocprof-compute workload built took 67 ms of its start.


def test_no_module_defines_a_dataclass() -> None:
    found = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if re.search(r"^@(dataclasses\.)?dataclass\b", p.read_text(encoding="utf-8"), re.M)
    )
    assert not found, found
