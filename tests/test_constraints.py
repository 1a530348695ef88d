"""constraints.txt: every dependency pinned exactly, used by every install line, equal to what runs."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)$")


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _pins() -> dict[str, str]:
    pins = {}
    for number, line in enumerate((REPO / "constraints.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = _PIN.match(line.strip())
        assert match, f"constraints.txt:{number}: {line!r} is not NAME==VERSION"
        assert _name(match.group(1)) not in pins, f"constraints.txt:{number}: {line!r} pinned twice"
        pins[_name(match.group(1))] = match.group(2)
    return pins


def _requirement_name(text: str) -> str:
    found = re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*", text)
    assert found, text
    return _name(found.group(0))


def test_every_dependency_is_pinned_and_matches_what_is_installed() -> None:
    pins = _pins()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    direct = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    for requirement in direct:
        assert _requirement_name(requirement) in pins, f"{requirement!r} is not in constraints.txt"
    for key in ("ray", "numba", "pyarrow", "numpy", "mlflow", "optuna"):
        assert key in pins
    drift = {}
    for name, version in pins.items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a marker-only dependency of another platform
        if installed != version:
            drift[name] = (installed, version)
    assert not drift, f"installed versions differ from constraints.txt (installed, pinned): {drift}"


def test_the_install_lines_use_the_constraints() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert 'pip install --quiet -c constraints.txt -e ".[dev]"' in ci
    readme = (REPO / "README.md").read_text()
    installs = [line for line in readme.splitlines() if "python -m pip install" in line]
    assert installs and all("-c constraints.txt" in line for line in installs), installs
    cluster = (REPO / "docs" / "cluster.md").read_text()
    assert "-c constraints.txt" in cluster and '"pip": "constraints.txt"' not in cluster
