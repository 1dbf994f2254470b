"""`dvc repro` from two fresh clones gives byte-identical artifacts; a second repro is a no-op.

This is the end-to-end check of the whole pipeline as a new user runs it (offline, on the
embedded sample). It clones the committed HEAD, so it tests what CI and users get.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path) -> str:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def _artifacts(repo: Path) -> dict[str, str]:
    """sha256 of every file the pipeline wrote (untracked by git, outside .git and .dvc)."""
    tracked = set(_run(["git", "ls-files"], repo).splitlines())
    digests = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if path.is_dir() or rel.startswith((".git/", ".dvc/")) or rel in tracked or "__pycache__" in rel:
            continue
        digests[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


@pytest.fixture(scope="module")
def two_clones(tmp_path_factory, project_root):
    head = _run(["git", "rev-parse", "HEAD"], project_root).strip()
    clones = []
    for name in ("first", "second"):
        clone = tmp_path_factory.mktemp(name) / "oracleproto"
        _run(["git", "clone", "-q", str(project_root), str(clone)], project_root.parent)
        _run(["git", "checkout", "-q", head], clone)
        _run(["dvc", "repro"], clone)
        clones.append(clone)
    return clones


def test_two_fresh_clones_build_identical_artifacts(two_clones):
    first, second = (_artifacts(clone) for clone in two_clones)
    assert "data/questions.parquet" in first and "data/splits/summary.json" in first
    assert first == second


def test_repro_matches_the_committed_lock_and_then_has_nothing_to_do(two_clones):
    clone = two_clones[0]
    diff = _run(["git", "diff", "HEAD", "--stat"], clone)  # HEAD: dvc autostages dvc.lock
    assert diff.strip() == "", f"dvc repro changed tracked files (dvc.lock or git-tracked metrics):\n{diff}"
    assert "Data and pipelines are up to date" in _run(["dvc", "repro"], clone)


def test_no_question_of_the_built_hub_is_train_somewhere_and_test_elsewhere(two_clones):
    import pyarrow.parquet as pq

    hub = two_clones[0] / "hub" / "data"
    ids: dict[str, set[str]] = {"train": set(), "test": set()}
    for path in hub.glob("*/*.parquet"):
        split = path.name.split("-")[0]
        if split in ids and path.parent.name != "questions":
            table = pq.read_table(path)
            column = "id" if "id" in table.column_names else "q_id"
            ids[split] |= set(table.column(column).to_pylist())
    assert ids["train"] and ids["test"]
    assert not ids["train"] & ids["test"]  # cutoff-*, rl and sft together
