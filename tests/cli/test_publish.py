import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import huggingface_hub
import pyarrow as pa
import pytest
from huggingface_hub import constants as hf_constants
from typer.testing import CliRunner

from oracleproto.cli import app
from oracleproto.io import write_parquet
from oracleproto.publish.hub import (
    build_hub,
    card_header,
    configs_yaml,
    hub_http_client,
    split_file,
)
from oracleproto.schema import QUESTION_SCHEMA

runner = CliRunner()
ENDPOINT = "http://127.0.0.1:9"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub_dir(tmp_path) -> Path:
    """A one-config hub folder: README with configs + one parquet shard."""
    rows = [{"id": "q1", "choice_type": "single", "question_type": "yes_no", "event": "Will it rain?",
             "options": ["Yes", "No"], "answer": "A", "end_time": dt.date(2026, 3, 1)}]  # fmt: skip
    source = write_parquet(pa.Table.from_pylist(rows, schema=QUESTION_SCHEMA), tmp_path / "q.parquet", QUESTION_SCHEMA)
    files = [split_file("questions", "train", source)]
    readme = card_header({"license": "apache-2.0"}, configs_yaml(files, default="questions")) + "\n# Test\n"
    build_hub(tmp_path / "hub", {files[0].repo_path: source}, {"README.md": readme})
    return tmp_path / "hub"


@pytest.fixture(autouse=True)
def no_hf_env(monkeypatch):
    """Start every test online and tokenless, whatever the caller's environment says
    (CI exports HF_HUB_OFFLINE=1; huggingface_hub reads it once, at import)."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_dry_run_lists_operations_and_every_file_with_its_sha256(hub_dir, monkeypatch, no_hf_env):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a dry run needs neither network nor token
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), "--repo-id", "org/OracleProto", "--tag", "v1.0.0", "--dry-run"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("dry run, nothing sent: 2 files, hub folder sha256 ")
    assert lines[1].startswith("upload_folder repo_id=org/OracleProto repo_type=dataset")
    assert "delete_patterns=['data/**']" in lines[1]
    assert lines[2].startswith("create_tag repo_id=org/OracleProto repo_type=dataset tag=v1.0.0")
    shard = "data/questions/train-00000-of-00001.parquet"
    for path, line in zip(["README.md", shard], lines[3:]):
        digest, size, name = line.split()
        assert (name, digest, int(size)) == (path, sha256(hub_dir / path), (hub_dir / path).stat().st_size)


def test_publish_needs_a_token(hub_dir, no_hf_env):
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), "--repo-id", "org/OracleProto", "--tag", "v1.0.0"])
    assert result.exit_code == 1
    assert result.output.strip() == "error: HF_TOKEN is not set: publishing needs a Hugging Face token with write access to org/OracleProto"


def test_offline_mode_is_a_clear_error(hub_dir, monkeypatch, no_hf_env):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), "--repo-id", "org/OracleProto", "--tag", "v1.0.0"])
    assert result.exit_code == 1
    assert "HF_HUB_OFFLINE is set: unset it, or use --dry-run" in result.output
    assert "hf_secret_value" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repo-id", "OracleProto", "--tag", "v1.0.0"], "repo id 'OracleProto' is not ORG/NAME"),
        (["--repo-id", "org/OracleProto", "--tag", "1.0"], "tag '1.0' is not a release tag vX.Y.Z"),
    ],
)
def test_bad_release_names_are_errors(hub_dir, args, message):
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), *args, "--dry-run"])
    assert result.exit_code == 1 and message in result.output


def test_missing_hub_folder_is_an_error(tmp_path):
    result = runner.invoke(app, ["publish", "--hub-dir", str(tmp_path / "nope"), "--repo-id", "o/n", "--tag", "v1.0.0", "--dry-run"])
    assert result.exit_code == 1 and "does not exist (run `dvc repro publish` first)" in result.output


httpx2 = hub_http_client()  # the Hub client's own HTTP library, whichever it is


class FakeHub:
    """huggingface_hub's own HTTP client, answered in-process (respx cannot see httpx2)."""

    def __init__(self, commit_status: int = 200, unreachable: bool = False) -> None:
        self.requests: list[httpx2.Request] = []
        self.commit_status = commit_status
        self.unreachable = unreachable

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if self.unreachable:
            raise httpx2.ConnectError("connection refused", request=request)
        path = request.url.path
        if path.endswith("/preupload/main"):
            files = json.loads(request.content)["files"]
            return httpx2.Response(200, json={"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]})
        if path == "/api/validate-yaml":
            return httpx2.Response(200, json={"errors": [], "warnings": []})
        if "/tree/main" in path:
            return httpx2.Response(200, json=[])
        if path.endswith("/commit/main"):
            if self.commit_status != 200:
                return httpx2.Response(self.commit_status, headers={"X-Error-Code": "RepoNotFound"}, json={"error": "no repo"})
            return httpx2.Response(200, json={"commitUrl": f"{ENDPOINT}/datasets/org/OracleProto/commit/{COMMIT}", "commitOid": COMMIT})
        if "/tag/" in path:
            return httpx2.Response(200, json={})
        return httpx2.Response(404, json={"error": f"unexpected {request.method} {path}"})

    def calls(self) -> list[tuple[str, str]]:
        return [(r.method, r.url.path) for r in self.requests if str(r.url).startswith(ENDPOINT)]


@pytest.fixture
def fake_hub(monkeypatch, no_hf_env):
    def install(**behaviour) -> FakeHub:
        fake = FakeHub(**behaviour)
        huggingface_hub.set_client_factory(lambda: httpx2.Client(transport=httpx2.MockTransport(fake)))
        huggingface_hub.close_session()
        return fake

    monkeypatch.setattr(hf_constants, "ENDPOINT", ENDPOINT)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    yield install
    huggingface_hub.set_client_factory(huggingface_hub.utils._http.default_client_factory)
    huggingface_hub.close_session()


def test_publish_uploads_the_folder_then_tags_the_commit(hub_dir, fake_hub):
    fake = fake_hub()
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), "--repo-id", "org/OracleProto", "--tag", "v1.2.0"])
    assert result.exit_code == 0, result.output
    assert f"published org/OracleProto v1.2.0: commit {COMMIT}" in result.output
    calls = fake.calls()
    assert calls[-3:] == [
        ("POST", "/api/datasets/org/OracleProto/preupload/main"),
        ("POST", "/api/datasets/org/OracleProto/commit/main"),
        ("POST", f"/api/datasets/org/OracleProto/tag/{COMMIT}"),
    ]
    assert ("GET", "/api/datasets/org/OracleProto/tree/main") in calls  # delete_patterns looks up stale files
    sent = {r.url.path: r for r in fake.requests}
    commit_lines = [json.loads(line) for line in sent["/api/datasets/org/OracleProto/commit/main"].content.splitlines()]
    assert commit_lines[0]["value"]["summary"] == "OracleProto v1.2.0"
    assert sorted(line["value"]["path"] for line in commit_lines[1:]) == ["README.md", "data/questions/train-00000-of-00001.parquet"]
    tag = sent[f"/api/datasets/org/OracleProto/tag/{COMMIT}"]
    assert json.loads(tag.content)["tag"] == "v1.2.0"
    repo_requests = [r for r in fake.requests if r.url.path.startswith("/api/datasets/")]
    assert all(r.headers.get("authorization") == "Bearer hf_test_token" for r in repo_requests)


def test_a_missing_repo_names_the_step_and_the_fix(hub_dir, fake_hub):
    fake = fake_hub(commit_status=404)
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), "--repo-id", "org/OracleProto", "--tag", "v1.2.0"])
    assert result.exit_code == 1
    assert "upload_folder: dataset repo org/OracleProto not found or not writable" in result.output
    assert not any("/tag/" in path for _, path in fake.calls())
    assert "hf_test_token" not in result.output


def run_cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-m", "oracleproto", *args], capture_output=True, text=True, env=env)


def test_load_prints_the_split_sizes_offline(hub_dir, tmp_path):
    result = run_cli(["load", "questions", "--from", str(hub_dir), "--revision", "v1.0.0"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"questions from {hub_dir}: train 1 rows"
    assert "--revision is ignored for the local folder" in result.stderr


def test_load_names_an_unknown_config(hub_dir, tmp_path, monkeypatch):
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    result = runner.invoke(app, ["load", "cutoff-1999-01-01", "--from", str(hub_dir)])
    assert result.exit_code == 1
    assert "error: config 'cutoff-1999-01-01' is not in" in result.output
    assert "questions" in result.output  # the card's configs are listed


def test_an_unreachable_hub_is_one_clear_line_in_seconds(hub_dir, fake_hub):
    fake = fake_hub(unreachable=True)
    started = time.monotonic()
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), "--repo-id", "org/OracleProto", "--tag", "v1.2.0"])
    assert result.exit_code == 1 and time.monotonic() - started < 3
    assert result.output.strip() == (
        f"error: publishing: cannot reach the Hub at {ENDPOINT} (ConnectError); working offline? set HF_HUB_OFFLINE=1 and use a local folder"
    )
    assert len(fake.requests) == 1  # one probe, no retries with backoff


def test_a_closed_port_hub_fails_fast_for_load_too(tmp_path, monkeypatch):
    monkeypatch.setattr(hf_constants, "ENDPOINT", "http://127.0.0.1:9")
    started = time.monotonic()
    result = runner.invoke(app, ["load", "questions", "--from", "org/OracleProto"])
    assert result.exit_code == 1 and time.monotonic() - started < 3
    assert result.output.startswith("error: loading org/OracleProto: cannot reach the Hub")


def test_offline_hub_ids_fail_at_once_with_the_flag_named(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = runner.invoke(app, ["load", "questions", "--from", "org/OracleProto"])
    assert result.exit_code == 1 and "HF_HUB_OFFLINE is set" in result.output


def test_a_token_echoed_by_the_hub_is_never_printed(hub_dir, fake_hub, monkeypatch):
    fake = fake_hub()

    def echo(request):
        fake.requests.append(request)
        auth = request.headers.get("authorization", "")
        return httpx2.Response(401, json={"error": f"token rejected: {auth} (also hf_abcdefghijkl)"})

    huggingface_hub.set_client_factory(lambda: httpx2.Client(transport=httpx2.MockTransport(echo)))
    huggingface_hub.close_session()
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), "--repo-id", "org/OracleProto", "--tag", "v1.2.0"])
    assert result.exit_code == 1 and "[redacted]" in result.output
    assert "hf_test_token" not in result.output and "hf_abcdefghijkl" not in result.output
    assert any(r.headers.get("authorization") == "Bearer hf_test_token" for r in fake.requests)  # it was sent


@pytest.mark.parametrize(
    ("repo_id", "tag"),
    [("org/name\n", "v1.0.0"), ("org/a..b", "v1.0.0"), ("org/a--b", "v1.0.0"), ("org/name", "v1.0.0\n"), ("org/name", "v\u0661.0.0"), ("ørg/name", "v1.0.0")],
)
def test_malformed_repo_ids_and_tags_are_refused_before_any_request(hub_dir, fake_hub, repo_id, tag):
    fake = fake_hub()
    result = runner.invoke(app, ["publish", "--hub-dir", str(hub_dir), "--repo-id", repo_id, "--tag", tag])
    assert result.exit_code == 1 and result.output.startswith("error: ")
    assert fake.requests == []