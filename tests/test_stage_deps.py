"""dvc.yaml's deps cannot go stale: a stage depends on exactly the code it imports (at any
depth, lazily too) — its entry point, each shared module as a file and each stage package
as a folder — so editing any imported module re-runs exactly the stages that import it."""

import ast
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
STAGES = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]


def module_path(name: str) -> Path | None:
    base = ROOT / Path(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def imports_of(path: Path, package: str) -> set[str]:
    """Every oracleproto module ``path`` imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("oracleproto")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if not base.startswith("oracleproto"):
                continue
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names if module_path(f"{base}.{a.name}")}
    return {m for m in found if module_path(m)}


def closure(module: str) -> set[Path]:
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_path(name)
        parts = name.split(".")
        for i in range(1, len(parts)):  # importing a.b.c runs a/__init__ and a/b/__init__
            todo.append(".".join(parts[:i]))
        package = name if path.name == "__init__.py" else ".".join(parts[:-1])
        todo.extend(imports_of(path, package))
    return {module_path(m).relative_to(ROOT) for m in seen}


def stage_module(cmd: str) -> str:
    words = cmd.split()
    return words[words.index("-m") + 1]


PACKAGES = ("corpus", "harness", "scoring", "export", "publish")


def code_deps(module: str) -> list[str]:
    """What a stage's ``deps`` must list for its code: a stage package's modules as their
    folder, every other module as its file."""
    deps = set()
    for path in closure(module):
        parts = path.parts
        deps.add(str(Path(*parts[:2])) if len(parts) > 2 and parts[1] in PACKAGES else str(path))
    return sorted(deps)


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_stage_depends_on_exactly_the_code_it_imports(stage):
    spec = STAGES[stage]
    listed = sorted(d for d in spec["deps"] if d.startswith("oracleproto"))
    assert listed == code_deps(stage_module(spec["cmd"]))


def test_the_closure_follows_lazy_imports():
    assert Path("oracleproto/harness/detector.py") in closure("oracleproto.stages.evaluate")
