"""The training examples run to completion on CPU from a published folder (skipped where TRL
is not installed: `pip install -e ".[train]"`)."""

import subprocess
import sys
from pathlib import Path

import pytest

from oracleproto.config import Publish
from oracleproto.publish.hubdir import build as build_hub_folder
from tests.publish.test_hub import make_project

pytest.importorskip("trl")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Path:
    layout = make_project(tmp_path_factory.mktemp("project"))
    build_hub_folder(layout, Publish(repo_id="org/OracleProto"))
    return layout.hub


@pytest.mark.slow
@pytest.mark.parametrize(("script", "kind"), [("train_sft.py", "sft"), ("train_grpo.py", "grpo")])
def test_the_example_trains_a_few_steps(hub, tmp_path, script, kind):
    env_args = {"env": {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}}
    result = subprocess.run([sys.executable, str(ROOT / "examples" / script), "--hub", str(hub), "--steps", "2"],
                            capture_output=True, text=True, timeout=600, **env_args)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1].startswith(f"{kind}: 2 step(s) on ")


def test_an_empty_sft_config_is_one_clear_line(tmp_path):
    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / "README.md").write_text("---\nconfigs:\n- config_name: questions\n  data_files:\n  - split: train\n    path: data/q/*\n---\n")
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "train_sft.py"), "--hub", str(tmp_path / "hub")],
                            capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert result.returncode == 1 and result.stderr.startswith("error: no sft train split")
