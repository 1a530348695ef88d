"""The engine stands alone: it imports only numpy, numba and the standard library, and ships its
profiles as package data."""

from __future__ import annotations

import ast
import fnmatch
import sys
import tomllib
from pathlib import Path

import pytest

import engine
from engine.profile import PROFILE_DIR_ENV, profile_dir, shipped_profile

ENGINE_DIR = Path(engine.__file__).resolve().parent
REPO = ENGINE_DIR.parent
ALLOWED = frozenset(sys.stdlib_module_names) | {"numpy", "numba", "engine"}
_IMPORTERS = {"import_module", "__import__"}


def imported_modules(source: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every absolute import in ``source``, at any nesting level.

    Covers ``import x``, ``from x import y`` and calls of ``importlib.import_module`` /
    ``__import__`` with a constant name; relative imports stay inside the package.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _IMPORTERS and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def foreign_imports(source: str) -> list[str]:
    return [f"line {line}: {name}" for line, name in imported_modules(source)
            if name.partition(".")[0] not in ALLOWED]


def test_the_scan_sees_every_kind_of_import() -> None:
    source = (
        "import os, scipy.linalg\n"
        "from ray import remote\n"
        "def f():\n"
        "    import optuna\n"
        "    from pipeline.export import x\n"
        "    importlib.import_module('mlflow')\n"
        "    return __import__('pyarrow')\n"
        "from . import sibling\n"
        "import numpy, numba.core\n"
    )
    assert foreign_imports(source) == ["line 1: scipy.linalg", "line 2: ray", "line 4: optuna",
                                       "line 5: pipeline.export", "line 6: mlflow", "line 7: pyarrow"]


def test_engine_modules_import_only_numpy_numba_and_the_standard_library() -> None:
    sources = sorted(ENGINE_DIR.rglob("*.py"))
    assert ENGINE_DIR / "cli.py" in sources and ENGINE_DIR / "cli_engine.py" in sources
    assert ENGINE_DIR / "kernel" / "search.py" in sources and ENGINE_DIR / "batch" / "movegen.py" in sources
    bad = {str(path.relative_to(REPO)): foreign for path in sources
           if (foreign := foreign_imports(path.read_text(encoding="utf-8")))}
    assert not bad


def test_shipped_profiles_are_package_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROFILE_DIR_ENV, raising=False)
    folder = profile_dir()
    assert folder == ENGINE_DIR / "profiles"
    files = sorted(p.name for p in folder.glob("*.json"))
    assert "english.json" in files and "english-baseline.json" in files
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["engine"]
    for name in files:  # every shipped file goes into a wheel
        assert any(fnmatch.fnmatch(f"profiles/{name}", pattern) for pattern in patterns), name
    assert shipped_profile("english").variant.name == "english"


def test_no_profiles_left_outside_the_package() -> None:
    assert not list((REPO / "configs").glob("profiles/*.json"))
