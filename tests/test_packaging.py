"""What the package declares: its runtime dependencies are exactly what it imports, and it
resolves beside the trainers users install it with."""

import ast
import json
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _name(requirement: str) -> str:
    return re.sub(r"[._]", "-", re.split(r"[\[<>=!~;\s]", requirement, maxsplit=1)[0].lower())


def _optional_imports(tree: ast.AST) -> set[int]:
    """ids of import nodes under ``try: … except ImportError`` (a fallback, not a dependency)."""
    optional = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError") for h in node.handlers
        ):
            optional |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return optional


def _imported_top_levels(include_optional: bool = False) -> set[str]:
    names = set()
    for path in (ROOT / "oracleproto").rglob("*.py"):
        tree = ast.parse(path.read_text())
        optional = set() if include_optional else _optional_imports(tree)
        for node in ast.walk(tree):
            if id(node) in optional:
                continue
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"oracleproto"}


def test_runtime_dependencies_are_what_the_library_imports():
    distributions = packages_distributions()

    def dists(names: set[str]) -> set[str]:
        return {_name(d) for name in names for d in distributions.get(name, [name])}

    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert dists(_imported_top_levels()) <= declared  # every hard import is declared
    assert declared <= dists(_imported_top_levels(include_optional=True))  # nothing declared goes unused


def test_dvc_and_test_tools_are_extras_and_no_stage_package_is_installed():
    runtime = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert not runtime & {"dvc", "pytest", "hypothesis", "respx", "pandas"}
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"] == ["oracleproto*"]


def test_the_lock_pins_every_runtime_dependency_with_hashes():
    lock = (ROOT / "requirements.lock").read_text()
    pinned = {_name(m.group(1)) for m in re.finditer(r"^([A-Za-z0-9_.-]+)==", lock, re.M)}
    assert {_name(r) for r in PYPROJECT["project"]["dependencies"] if "win32" not in r} <= pinned
    assert lock.count("==") == len(re.findall(r"^\S+==\S+ \\\n    --hash=sha256:", lock, re.M))


@pytest.mark.slow
@pytest.mark.parametrize("companion", ["verl==0.9.1", "trl"])
def test_resolves_beside_the_trainers(companion, tmp_path):
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report), str(ROOT), companion]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    installed = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert {"oracleproto", _name(companion)} <= installed
