"""kill -9 an evaluation at three points, then resume: every (q_id, trial) exactly once, nothing lost."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from oracleproto.io import write_parquet
from oracleproto.schema import QUESTION_SCHEMA
from tests.harness.test_evaluate_run import make_questions
from tests.servers.openai_server import OpenAIServer, SearchThenAnswer

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-kill-test-0123456789abcdef0123"


def start(out: Path, questions: Path, server: OpenAIServer) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": KEY,
    }
    command = [
        sys.executable, "-m", "oracleproto", "evaluate", "--questions", str(questions), "--model", "vendor/model",
        "--cutoff", "vendor/model=2025-01-31", "--search", "none", "--out", str(out), "--no-progress",
    ]
    return subprocess.Popen(command, cwd=out.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stored_rows(out: Path) -> dict[tuple[str, int], str]:
    """(q_id, trial) → created_at of every committed row (read beside the writer, WAL)."""
    paths = list((out / "db").glob("*.db")) if (out / "db").exists() else []
    if not paths:
        return {}
    conn = sqlite3.connect(f"file:{paths[0]}?mode=ro", uri=True)
    try:
        return {(q, t): c for q, t, c in conn.execute("SELECT q_id, trial, created_at FROM trials")}
    except sqlite3.OperationalError:
        return {}
    finally:
        conn.close()


def wait_until(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("condition not reached in time")


def test_sigkill_at_three_points_then_resume(tmp_path):
    questions = tmp_path / "questions.parquet"
    write_parquet(make_questions(), questions, QUESTION_SCHEMA, sort_by=("id",))
    out = tmp_path / "run"
    kill_points = [
        lambda s: len(server.requests) >= 1,  # first request in flight, nothing stored yet
        lambda s: len(stored_rows(out)) >= 30,  # mid-run
        lambda s: len(stored_rows(out)) >= 75,  # near the end
    ]
    with OpenAIServer(SearchThenAnswer(searches=0), latency_s=0.05) as server:
        before_each_kill = []
        for point in kill_points:
            process = start(out, questions, server)
            wait_until(lambda: point(server) or process.poll() is not None)
            assert process.poll() is None, process.stderr.read().decode()
            process.send_signal(signal.SIGKILL)
            process.wait()
            before_each_kill.append(len(stored_rows(out)))
        kept = stored_rows(out)
        assert before_each_kill[0] < before_each_kill[1] < 90 and before_each_kill[2] >= 75
        final = start(out, questions, server)
        stdout, stderr = final.communicate(timeout=60)
        assert final.returncode == 0, stderr.decode()
    assert b"90 rows" in stdout
    table = pq.read_table(out / "trials.parquet")
    keys = list(zip(table["q_id"].to_pylist(), table["trial"].to_pylist()))
    assert len(keys) == 90 and len(set(keys)) == 90
    assert table["error"].null_count == 90 and table["pred"].null_count == 0
    # trials finished before the kills were not redone
    after = stored_rows(out)
    assert all(after[key] == created for key, created in kept.items())
