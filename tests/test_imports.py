"""The one import rule: no cycle between modules or between stage packages, counting every import.

Imports at module level, inside functions and under ``TYPE_CHECKING`` all count: a function-level import that
closes a loop hides the same backward dependency as a module-level one. The graph is read from the AST of
``src/prefdisco``, so the test needs nothing to be importable.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "prefdisco"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}


def imported(module: str, path: Path, known: set[str]) -> set[str]:
    """Every module of the package that ``module`` imports (``from pkg import sub`` counts as ``pkg.sub``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            targets = [source, *(f"{source}.{alias.name}" for alias in node.names)]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    edges = {m: imported(m, p, known) for m, p in found.items()}
    return edges


def stage(module: str) -> str:
    """The stage a module belongs to: ``prefdisco.<first part>`` (the root ``__init__`` is its own node)."""
    parts = module.split(".")
    return module if len(parts) == 1 else ".".join(parts[:2])


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of nodes (first == last), or None. Iterative DFS with colours."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(edges, white)
    for start in sorted(edges):
        if colour[start] != white:
            continue
        stack: list[tuple[str, list[str]]] = [(start, sorted(edges[start]))]
        path = [start]
        colour[start] = grey
        while stack:
            node, todo = stack[-1]
            if not todo:
                colour[node] = black
                stack.pop()
                path.pop()
                continue
            nxt = todo.pop()
            if colour.get(nxt, black) == grey:
                return [*path[path.index(nxt) :], nxt]
            if colour.get(nxt) == white:
                colour[nxt] = grey
                path.append(nxt)
                stack.append((nxt, sorted(edges[nxt])))
    return None


def test_the_checker_finds_a_planted_cycle() -> None:
    cycle = find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert cycle is not None and cycle[0] == cycle[-1] and sorted(cycle[:-1]) == ["a", "b", "c"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_function_level_and_type_checking_imports_count(tmp_path: Path) -> None:
    body = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from prefdisco.b import X\n"
        "def f():\n    from prefdisco import c\n    from .d import y\n"
    )
    path = tmp_path / "prefdisco" / "a.py"
    path.parent.mkdir()
    path.write_text(body)
    known = {"prefdisco", "prefdisco.a", "prefdisco.b", "prefdisco.c", "prefdisco.d"}
    assert imported("prefdisco.a", path, known) == {"prefdisco", "prefdisco.b", "prefdisco.c", "prefdisco.d"}


def test_no_module_imports_in_a_circle() -> None:
    edges = graph()
    # a package's own __init__ importing its children is how a package hands names on, not a loop of code
    for module in edges:
        edges[module] = {t for t in edges[module] if not module.startswith(t + ".")}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_stage_package_imports_in_a_circle() -> None:
    stages: dict[str, set[str]] = {}
    for module, targets in graph().items():
        here = stage(module)
        stages.setdefault(here, set()).update(stage(t) for t in targets if stage(t) != here and t != PACKAGE)
    cycle = find_cycle(stages)
    assert cycle is None, "stage cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize(
    "lower",
    [
        "prefdisco.schema",
        "prefdisco.answer_spec",
        "prefdisco.modes",
        "prefdisco.errors",
        "prefdisco.atomic",
        "prefdisco.benchio",
    ],
)
def test_the_ground_floor_imports_no_stage(lower: str) -> None:
    stages = {stage(t) for t in graph()[lower]}
    allowed = {PACKAGE, "prefdisco.errors", "prefdisco.atomic", "prefdisco.schema", "prefdisco.prompts"}
    allowed |= {"prefdisco.answer_spec", "prefdisco.modes", "prefdisco.version"}  # the conditions' names: ground
    assert stages <= allowed, f"{lower} imports {sorted(stages - allowed)}"


def test_no_module_imports_a_name_of_the_package_root() -> None:
    """The root ``__init__`` reaches into ``env/`` (``load_environment``, the verifiers hub's entry point), so a
    module that took ``__version__`` from it joined a circle through ``env/`` that the graph above cannot see (it
    leaves out a package's own root). The version lives in ``prefdisco.version``; ``from prefdisco import prompts``
    (a subpackage) is an import of that subpackage, not of the root."""
    known = set(modules())
    taken = []
    for module, path in modules().items():
        if module == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module == PACKAGE:
                taken += [f"{module}: {a.name}" for a in node.names if f"{PACKAGE}.{a.name}" not in known]
    assert not taken, "names taken from the package root: " + ", ".join(taken)


def folder(module: str) -> str:
    """The folder of a stage a module belongs to (``prefdisco.analysis.report``), or the module itself where it sits
    at the stage's top (``prefdisco.evaluation.run``)."""
    return ".".join(module.split(".")[:3])


@pytest.mark.parametrize("stage_package", sorted({stage(m) for m in modules()} - {PACKAGE}))
def test_no_folder_of_a_stage_imports_in_a_circle(stage_package: str) -> None:
    """Inside a stage, its folders (``analysis/stats``, ``analysis/section``, ``analysis/report``…) point one way too:
    the report builds on the instruments, which build on the section protocol, never back."""
    folders: dict[str, set[str]] = {}
    for module, targets in graph().items():
        if module.startswith(stage_package + "."):
            here = folder(module)
            folders.setdefault(here, set()).update(
                folder(t) for t in targets if t.startswith(stage_package + ".") and folder(t) != here
            )
    cycle = find_cycle({k: v & set(folders) for k, v in folders.items()})
    assert cycle is None, "folder cycle: " + " -> ".join(cycle or [])
