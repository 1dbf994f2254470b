"""Loading a configuration: a local folder is read as its files are now."""

import datetime as dt

import datasets
import pyarrow as pa
import pytest

from oracleproto.errors import InputError
from oracleproto.io import write_parquet
from oracleproto.publish.hub import build_hub, card_header, configs_yaml, split_file
from oracleproto.publish.load import load_config, looks_local
from oracleproto.schema import QUESTION_SCHEMA


def build(folder, tmp_path, events: list[str]):
    rows = [{"id": f"q{i}", "choice_type": "single", "question_type": "yes_no", "event": event,
             "options": ["Yes", "No"], "answer": "A", "end_time": dt.date(2026, 3, 1)} for i, event in enumerate(events)]  # fmt: skip
    source = write_parquet(pa.Table.from_pylist(rows, schema=QUESTION_SCHEMA), tmp_path / "q.parquet", QUESTION_SCHEMA)
    files = [split_file("questions", "train", source)]
    readme = card_header({"license": "apache-2.0"}, configs_yaml(files, default="questions")) + "\n# Test\n"
    build_hub(folder, {files[0].repo_path: source}, {"README.md": readme})


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")


def test_a_rebuilt_folder_loads_its_new_rows_and_the_same_bytes_load_from_cache(tmp_path):
    hub = tmp_path / "hub"
    build(hub, tmp_path, ["Will it rain?"])
    assert load_config(str(hub), "questions")["train"]["event"] == ["Will it rain?"]
    build(hub, tmp_path, ["Will it snow?", "Will it hail?"])  # same folder, same name, new rows
    assert load_config(str(hub), "questions")["train"]["event"] == ["Will it snow?", "Will it hail?"]
    assert load_config(str(hub), "questions")["train"].num_rows == 2


def test_two_folders_of_the_same_name_do_not_share_a_cache_entry(tmp_path):
    first, second = tmp_path / "a" / "hub", tmp_path / "b" / "hub"
    build(first, tmp_path, ["first"])
    build(second, tmp_path, ["second"])
    assert load_config(str(first), "questions")["train"]["event"] == ["first"]
    assert load_config(str(second), "questions")["train"]["event"] == ["second"]


def test_an_unknown_config_names_the_ones_there(tmp_path):
    build(tmp_path / "hub", tmp_path, ["x"])
    with pytest.raises(InputError, match=r"'rl' is not in .*\['questions'\]"):
        load_config(str(tmp_path / "hub"), "rl")


@pytest.mark.parametrize(("source", "local"), [("hub", True), ("./org/name", True), ("/abs/org/name", True), ("org/name", False)])
def test_what_counts_as_a_local_path(source, local):
    assert looks_local(source) is local


def test_a_missing_local_folder_is_never_sent_to_the_hub(tmp_path):
    with pytest.raises(InputError, match="is not a folder"):
        load_config("hubb", "questions")
