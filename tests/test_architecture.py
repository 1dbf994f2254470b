"""The package's shape: imports run one way, stage packages share files not modules,
functions fit on a screen, and no HTTP is parsed by hand."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "oracleproto"
# Pipeline stages: each may import only itself and the shared modules (not another stage).
STAGE_PACKAGES = {"corpus", "harness", "scoring", "export", "publish"}
# Layers above the stages: they may import any of them.
TOOL_PACKAGES = {"cli", "stages", "leakaudit"}
MAX_FUNCTION_LINES = 80


def modules() -> dict[str, ast.Module]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = ast.parse(path.read_text(), filename=str(path))
    return found


def imported(tree: ast.Module, known: set[str]) -> set[str]:
    """oracleproto modules a module imports anywhere (function-level imports too)."""
    out = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        out |= {n for n in names if n in known}
    return out


def test_no_import_circle():
    trees = modules()
    graph = {name: imported(tree, set(trees)) - {name} for name, tree in trees.items()}
    # a package's __init__ importing its own submodules is its face, not a circle
    graph = {name: {d for d in deps if not d.startswith(name + ".")} for name, deps in graph.items()}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                pytest.fail("import circle: " + " -> ".join(path[path.index(dep):] + [dep]) if dep in path else dep)
            if dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_stage_packages_import_no_other_stage():
    trees = modules()
    sideways = []
    for name, tree in trees.items():
        parts = name.split(".")
        if len(parts) < 2 or parts[1] not in STAGE_PACKAGES:
            continue
        for dep in imported(tree, set(trees)):
            dep_package = dep.split(".")[1] if "." in dep else None
            if dep_package in STAGE_PACKAGES | TOOL_PACKAGES and dep_package != parts[1]:
                sideways.append(f"{name} -> {dep}")
    assert sideways == []


def test_no_function_is_longer_than_a_screen():
    long = []
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert long == []


def test_no_hand_written_http():
    """HTTP goes through httpx (and the SDKs built on it): no socket protocol code, no
    status-line or header parsing of our own."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        for needle in ("asyncio.Protocol", "HTTP/1.1 ", "b\"\\r\\n\\r\\n\"", "transfer-encoding", "open_connection("):
            if needle in text:
                offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert offenders == []
