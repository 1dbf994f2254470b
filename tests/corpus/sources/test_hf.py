"""``hf:`` reads any split layout of a local folder (the Hub path is the same once
downloaded), records each row's split, never leaves its folder, and fails at once offline."""

import csv
import json
import sqlite3
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from oracleproto.config import load_params
from oracleproto.corpus.build import build
from oracleproto.errors import InputError
from oracleproto.io import read_parquet
from tests.corpus.sources.helpers import FUTUREX, SEVEN, read_raw, reasons, write_jsonl

pytestmark = pytest.mark.usefixtures("offline_hub")


def _card(folder, yaml: str = "license: apache-2.0\n") -> None:
    (folder / "README.md").write_text(f"---\n{yaml}---\n# A dataset\n")


@pytest.fixture
def release_folder(tmp_path, paper_db):
    """The published OracleProto release's layout: the SQLite file, a CSV of the same rows
    (options as JSON text, answers like "A, B, C, D") and a card without ``configs``."""
    folder = tmp_path / "OracleProto"
    folder.mkdir()
    (folder / "forecast_eval_set_example.db").write_bytes(paper_db.read_bytes())
    conn = sqlite3.connect(f"file:{paper_db}?mode=ro&immutable=1", uri=True)
    cursor = conn.execute("SELECT * FROM forecast_eval_set_example ORDER BY rowid")
    with open(folder / "forecast_eval_set_example.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([d[0] for d in cursor.description])
        writer.writerows(cursor.fetchall())
    conn.close()
    _card(folder)
    return folder


def test_the_published_release_layout_loads(release_folder, paper_db, tmp_path, project_root):
    table, data = read_raw(f"hf:{release_folder}")
    assert table.num_rows == 80 and reasons(table) == [None] * 80
    assert set(table.column("split").to_pylist()) == {"test"}  # split named from the file name
    assert "A, B, C, D" in table.column("answer").to_pylist()
    assert data.metadata["splits"] == ["test"]
    params = load_params(project_root / "params.yaml")  # the default params read every split
    from_hf = build(params.overridden({"ingest": {"source": f"hf:{release_folder}"}}), tmp_path / "hf")
    build(params.overridden({"ingest": {"source": f"sqlite:{paper_db}"}}), tmp_path / "sqlite")
    assert from_hf["audit"]["rows_out"] == 80
    assert read_parquet(tmp_path / "hf" / "questions.parquet").equals(read_parquet(tmp_path / "sqlite" / "questions.parquet"))


def test_futurex_layout_in_a_data_tree(tmp_path):
    rows = [*FUTUREX[:2], {"id": "c" * 24, "prompt": "open-ended level 3 item", "ground_truth": "5.25%", "end_time": "2024-04-01", "level": 3, "title": "?"}]
    repo = tmp_path / "Futurex-Past"
    (repo / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), repo / "data" / "train-00000-of-00001.parquet")
    table, data = read_raw(f"hf:{repo}")
    assert table.column("answer").to_pylist() == ["B", "A", None]
    assert table.column("level").to_pylist() == [1, 1, 3]
    assert data.metadata["timezone"] == "Asia/Shanghai"


@pytest.fixture
def two_splits(tmp_path):
    folder = tmp_path / "two"
    (folder / "d").mkdir(parents=True)
    write_jsonl(folder / "d" / "a.jsonl", SEVEN[:1])
    write_jsonl(folder / "d" / "b.jsonl", [{**SEVEN[1], "note": "only in this file"}])
    _card(folder, "configs:\n- config_name: default\n  data_files:\n  - {split: train, path: d/a.jsonl}\n  - {split: holdout, path: d/b.jsonl}\n")
    return folder


def test_every_split_is_read_and_recorded(two_splits):
    table, data = read_raw(f"hf:{two_splits}")
    assert table.column("split").to_pylist() == ["train", "holdout"]
    assert table.column("source_row").to_pylist() == [0, 1]
    assert table.column("original").to_pylist()[0]["note"] is None  # files' extra columns unified
    assert data.metadata["splits"] == ["train", "holdout"]


def test_a_named_split_only(two_splits):
    table, _ = read_raw(f"hf:{two_splits}", hf_split="holdout")
    assert table.column("id").to_pylist() == ["q2"]
    with pytest.raises(InputError, match=r"no split 'validation' \(it has 'train', 'holdout'\)"):
        read_raw(f"hf:{two_splits}", hf_split="validation")


def test_a_card_never_reads_outside_its_folder(tmp_path):
    (tmp_path / "outside").mkdir()
    outside = write_jsonl(tmp_path / "outside" / "x.jsonl", SEVEN)
    card_escape = tmp_path / "card"
    card_escape.mkdir()
    _card(card_escape, "configs:\n- config_name: default\n  data_files: ../outside/x.jsonl\n")
    with pytest.raises(InputError, match=r"outside the folder"):
        read_raw(f"hf:{card_escape}")
    link_escape = tmp_path / "link"
    link_escape.mkdir()
    (link_escape / "train.jsonl").symlink_to(outside)
    with pytest.raises(InputError, match=r"train\.jsonl, which is outside the folder"):
        read_raw(f"hf:{link_escape}")


def _cached_hub_repo(hf_home, repo_id: str, files: dict[str, str]) -> None:
    """A dataset repo as huggingface_hub caches it: snapshot files are links into blobs/."""
    repo = hf_home / "hub" / f"datasets--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0" * 40)
    (repo / "blobs").mkdir()
    for name, text in files.items():
        blob = repo / "blobs" / f"blob{len(list((repo / 'blobs').iterdir()))}"
        blob.write_text(text)
        link = repo / "snapshots" / ("0" * 40) / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(blob)


def test_a_cached_hub_dataset_loads_offline(tmp_path):
    lines = "".join(json.dumps(r) + "\n" for r in SEVEN)
    _cached_hub_repo(tmp_path / "hf_home", "org/name", {"README.md": "---\nlicense: mit\n---\n", "data/test.jsonl": lines})
    table, data = read_raw("hf:org/name")
    assert table.column("id").to_pylist() == ["q1", "q2"] and reasons(table) == [None, None]
    assert table.column("split").to_pylist() == ["test", "test"]
    assert len(data.source_hash) == 64


def test_a_cached_hub_card_cannot_reach_outside_its_repo(tmp_path):
    (tmp_path / "secret.jsonl").write_text(json.dumps(SEVEN[0]) + "\n")
    card = "---\nconfigs:\n- config_name: default\n  data_files: ../../../../../secret.jsonl\n---\n"
    _cached_hub_repo(tmp_path / "hf_home", "org/name", {"README.md": card})
    with pytest.raises(InputError, match="outside the folder"):
        read_raw("hf:org/name")


def test_a_hub_id_offline_fails_at_once_in_one_line():
    start = time.monotonic()
    with pytest.raises(InputError) as info:
        read_raw("hf:futurex-ai/Futurex-Past")
    assert time.monotonic() - start < 10
    assert "HF_HUB_OFFLINE is set and no cached copy" in str(info.value) and "\n" not in str(info.value)


def test_a_hub_id_without_network_fails_at_once_in_one_line(monkeypatch):
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):  # CI sets both
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    start = time.monotonic()
    with pytest.raises(InputError, match="the Hub is unreachable") as info:
        read_raw("hf:futurex-ai/Futurex-Past")
    assert time.monotonic() - start < 20
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("arg, message", [("", "needs a dataset name"), ("not a repo id", "no such folder")])
def test_hf_argument_errors(arg, message):
    with pytest.raises(InputError, match=message):
        read_raw(f"hf:{arg}")


def test_a_file_is_not_a_dataset_folder(tmp_path):
    path = write_jsonl(tmp_path / "one.jsonl", SEVEN)
    with pytest.raises(InputError, match="not a folder"):
        read_raw(f"hf:{path}")
