import signal
import subprocess
import sys
import time

"""The whole corpus build on the paper's released 80 questions and on the embedded sample."""

import json

import pyarrow.parquet as pq
import pytest

import oracleproto.corpus.build as build_module
from oracleproto.config import load_params
from oracleproto.corpus.build import build
from oracleproto.errors import InputError
from oracleproto.io import table_metadata
from oracleproto.validation import Failure, validate_questions

PAPER_MODELS = {
    "deepseek/deepseek-v3.2-exp", "z-ai/glm-5", "qwen/qwen3.5-flash",
    "minimax/minimax-m2.5", "moonshotai/kimi-k2.5", "bytedance-seed/seed-2.0-lite",
}


@pytest.fixture(scope="module")
def params(request):
    return load_params(request.config.rootpath / "params.yaml")


def test_paper_set_reproduces_tables_1_and_2(paper_db, tmp_path, params):
    result = build(params.overridden({"ingest": {"source": f"sqlite:{paper_db}"}}), tmp_path)
    report = result["audit"]
    assert report["counts_by_type"] == {
        "yes_no/single": 37, "binary_named/single": 3, "multiple_choice/single": 32, "multiple_choice/multi": 8,
    }
    assert report["rows_quarantined"] == 0 and report["rows_out"] == 80
    for model in PAPER_MODELS:
        assert result["admission"]["models"][model]["excluded_by_cutoff"] == 0, model
    questions = pq.read_table(tmp_path / "questions.parquet")
    assert validate_questions(questions) == []
    meta = table_metadata(tmp_path / "questions.parquet")
    assert meta["prompt_templates"]["agent_role"].startswith("You are an agent")
    assert len(meta["prompt_templates_hash"]) == 64 and len(meta["source_hash"]) == 64
    # The audited table is the released one, row for row.
    released = {r["id"]: r for r in map(json.loads, (paper_db.parent / "forecast_eval_set_80.jsonl").read_text().splitlines())}
    for row in questions.to_pylist():
        src = released[row["id"]]
        assert (row["event"], row["options"], row["answer"], row["end_time"].isoformat()) == (
            src["event"], src["options"], src["answer"], src["end_time"])


def test_sample_build_layout(project_root, tmp_path, params, monkeypatch):
    monkeypatch.chdir(project_root)
    result = build(params, tmp_path)
    splits = tmp_path / "splits"
    summary = json.loads((splits / "summary.json").read_text())
    assert summary == result["admission"]
    models = summary["models"]
    assert len({info["split"] for info in models.values()}) >= 4
    test_ids: set[str] = set()
    for info in models.values():
        train = pq.read_table(splits / info["split"] / "train.parquet")
        test = pq.read_table(splits / info["split"] / "test.parquet")
        assert (train.num_rows, test.num_rows) == (info["train"], info["test"])
        assert train.num_rows + test.num_rows == info["admitted"]
        test_ids |= set(test.column("id").to_pylist())
    assert len(test_ids) == summary["test_boundary"]["test_questions"]  # one boundary for the corpus
    log = pq.read_table(splits / "admission_log.parquet")
    assert log.num_rows == len(models) * result["audit"]["rows_out"]
    counts = result["audit"]["counts_by_type"]
    assert set(counts) == {"yes_no/single", "binary_named/single", "multiple_choice/single", "multiple_choice/multi"}
    assert counts["multiple_choice/multi"] >= 5 and counts["binary_named/single"] >= 2
    assert result["audit"]["rows_out"] >= 60


def test_failed_validation_writes_nothing(project_root, tmp_path, params, monkeypatch):
    # questions.parquet is encoded while validation runs: it must stay staged until validation passes.
    monkeypatch.chdir(project_root)
    build_module.ingest(params.ingest, tmp_path)

    def reject(_questions, _end_times=None):
        raise InputError([Failure(0, "q0", "answer", "forced failure", None)])

    monkeypatch.setattr(build_module, "check_questions", reject)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(InputError):
        build_module.run_audit(tmp_path, build_module.audit_config(params), tmp_path)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_killed_build_leaves_the_previous_output_and_a_rerun_cleans_up(project_root, tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "oracleproto", "build", "--source", "sample", "--out", str(out)]
    subprocess.run(cmd, cwd=project_root, check=True, capture_output=True)
    first = _tree(out)
    for delay in (0.3, 0.8, 1.5):
        process = subprocess.Popen(cmd, cwd=project_root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        previous = tmp_path / ".out.previous"
        survivor = out if out.exists() else previous  # the swap's two renames: one of them holds it
        assert _tree(survivor) == first
    subprocess.run(cmd, cwd=project_root, check=True, capture_output=True)
    assert _tree(out) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging or previous debris


def test_a_rerun_restores_an_output_caught_between_the_two_renames(project_root, tmp_path, params, monkeypatch):
    monkeypatch.chdir(project_root)
    out = tmp_path / "out"
    build(params, out)
    first = _tree(out)
    out.rename(tmp_path / ".out.previous")  # killed after the first rename of the swap
    (tmp_path / ".out.staging").mkdir()  # with a half-built staging folder
    monkeypatch.setattr("oracleproto.corpus.build.run_admit", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        build(params, out)  # the rerun fails too: the restored output must survive it
    assert _tree(out) == first and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
