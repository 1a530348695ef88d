"""The module graph of engine/ and pipeline/: no import cycles, and each heavy dependency has one owner.

Every import statement counts, wherever it stands (module level, inside a function, under
``TYPE_CHECKING`` or in a package ``__init__``), so a cycle cannot hide behind a local import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "pipeline")
#: third-party packages with exactly one importing module
OWNERS = {
    "ray": "pipeline.games.executor",
    "optuna": "pipeline.tuning.studies",
    "mlflow": "pipeline.tracking.mlflow_log",
}


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imported(module: str, path: Path) -> Iterator[str]:
    """Every module name an import statement of ``path`` names (``from a import b`` gives a and a.b)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = str(node.module)
            yield name
            yield from (f"{name}.{alias.name}" for alias in node.names)


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: {d for d in _imported(m, p) if d in mods and d != m} for m, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_cycle_finder_finds_a_cycle() -> None:
    """The checker itself can fail: a planted two-module cycle and a three-module one are found."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": set()}
    assert sorted(_cycles(graph)) == [["a", "b"], ["c", "d", "e"]]


def test_engine_never_imports_the_pipeline() -> None:
    mods = _modules()
    bad = [(m, d) for m, p in mods.items() if m.startswith("engine")
           for d in _imported(m, p) if d.split(".")[0] == "pipeline"]
    assert bad == []


@pytest.mark.parametrize("dependency", sorted(OWNERS))
def test_heavy_dependency_has_one_owner(dependency: str) -> None:
    importers = sorted(m for m, p in _modules().items()
                       if any(d.split(".")[0] == dependency for d in _imported(m, p)))
    assert importers == [OWNERS[dependency]]


def test_every_sub_package_says_its_role() -> None:
    inits = [p for package in PACKAGES for p in (REPO / package).rglob("__init__.py")]
    assert len(inits) >= 10
    for init in inits:
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and len(doc.split()) >= 8, f"{init.relative_to(REPO)} needs a docstring saying its role"
