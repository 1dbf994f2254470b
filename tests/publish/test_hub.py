import contextlib
import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from oracleproto.config import Publish, parse_params
from oracleproto.corpus.build import build as build_corpus
from oracleproto.export.trajectories import ExportSettings, run_export
from oracleproto.io import write_json, write_parquet
from oracleproto.publish import hub
from oracleproto.publish.hubdir import Layout
from oracleproto.publish.hubdir import build as build_hub_folder
from oracleproto.schema import QUESTION_SCHEMA, TRIAL_SCHEMA

CARDS = Path(__file__).resolve().parents[2] / "cards"
QUESTIONS = [
    ("q1", "single", "yes_no", "Will the central bank cut rates?", ["Yes", "No"], "B", "2026-02-10"),
    ("q2", "single", "binary_named", "Who wins the final?", ["Lakers", "Celtics"], "A", "2026-02-14"),
    ("q3", "single", "multiple_choice", "Which city hosts?", ["Paris", "Rome", "Oslo"], "C", "2026-03-01"),
    ("q4", "multi", "multiple_choice", "Which films win two awards?", ["F1", "F2", "F3", "F4"], "A, D", "2026-03-15"),
    ("q5", "single", "yes_no", "Will the launch slip?", ["Yes", "No"], "A", "2026-03-20"),
]
MODELS = {"old/model": "2026-01-31", "mid/model": "2026-02-28", "future/model": "2026-12-31"}
HASHES = {  # the evaluate stage's manifest["hash_chain"] shape
    "sources": {
        "data/splits/cutoff-2026-01-31/test.parquet": {
            "source_hash": "a" * 64, "metadata_hash": "b" * 64, "prompt_templates_hash": "c" * 64, "rows": 2,
        },
    },
    "reflection_protocol_hash": "d" * 16,
    "belief_protocol_hash": None,
    "leak_detector_prompt_hash": "e" * 16,
    "config_snapshot_hash": "f" * 64,
}  # fmt: skip


def write_trials(path: Path, preds: tuple[str, ...]) -> None:
    trace = [
        {"role": "user", "content": "Will the central bank cut rates?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "rates"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "web_search",
         "content": json.dumps({"query": "rates", "results": [{"title": "t", "url": "https://x.example/1", "content": "c"}]})},
        {"role": "assistant", "content": "\\boxed{No}"},
    ]  # fmt: skip
    rows = []
    for number, pred in enumerate(preds, start=1):
        row = {name: None for name in TRIAL_SCHEMA.names}
        row.update(
            model="old/model", q_id="q1", question_type="yes_no", choice_type="single", options=["Yes", "No"], answer="B",
            trial=number, pred=pred, cost_usd=0.0, cutoff=dt.date(2026, 1, 31), prediction_cutoff=dt.date(2026, 2, 9),
            end_time=dt.date(2026, 2, 10), messages=json.dumps(trace), tools="[]", search_calls="[]",
        )  # fmt: skip
        rows.append(row)
    write_parquet(pa.Table.from_pylist(rows, schema=TRIAL_SCHEMA), path, TRIAL_SCHEMA)


def make_project(root: Path, preds: tuple[str, ...] = ("B", "A")) -> Layout:
    """The stage outputs the publish stage reads, built by the real library functions."""
    source = root / "source.jsonl"
    source.write_text(
        "".join(
            json.dumps(dict(zip(QUESTION_SCHEMA.names, values))) + "\n" for values in QUESTIONS
        )
    )
    data = root / "data"
    with contextlib.chdir(root):  # a relative source URI, as in a clone of the repo
        params = {"ingest": {"source": "jsonl:source.jsonl"}, "models": MODELS, "admit": {"delta_days": 1, "test_fraction": 0.34}}
        build_corpus(parse_params(params), data)
    write_trials(data / "eval" / "trials.parquet", preds)  # gold is B
    write_json({"hash_chain": HASHES, "config_snapshot": {"settings": {}}}, data / "eval" / "manifest.json")
    run_export(data / "eval" / "trials.parquet", data / "splits", data / "export", ExportSettings())
    (root / "metrics").mkdir()
    (root / "metrics" / "leaderboard.md").write_text("# Leaderboard\n\n| model | composite |\n|---|---|\n| old/model | 0.5000 |\n")
    return Layout(data=data, metrics=root / "metrics", cards=CARDS, hub=root / "hub")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Layout:
    layout = make_project(tmp_path_factory.mktemp("project"))
    build_hub_folder(layout, Publish(repo_id="org/OracleProto"))
    return layout


def front_matter(readme: str) -> dict:
    _, header, _ = readme.split("---\n", 2)
    return yaml.safe_load(header)


# ---------------------------------------------------------------------------------------- unit


def split(config, name, rows):
    return hub.SplitFile(config, name, Path("unused"), rows)


def test_configs_leave_out_empty_splits_and_empty_configs():
    files = [split("questions", "train", 5), split("cutoff-a", "train", 3), split("cutoff-a", "test", 0),
             split("cutoff-b", "train", 0), split("cutoff-b", "test", 0), split("sft", "train", 2)]  # fmt: skip
    assert hub.configs_yaml(files, default="questions") == [
        {"config_name": "questions", "default": True, "data_files": [{"split": "train", "path": "data/questions/train-*"}]},
        {"config_name": "cutoff-a", "data_files": [{"split": "train", "path": "data/cutoff-a/train-*"}]},
        {"config_name": "sft", "data_files": [{"split": "train", "path": "data/sft/train-*"}]},
    ]
    with pytest.raises(hub.HubError, match="default config 'cutoff-b' has no rows"):
        hub.configs_yaml(files, default="cutoff-b")


def test_hub_paths_follow_the_hub_naming_rules():
    assert hub.hub_data_path("cutoff-2026-02-25", "train") == "data/cutoff-2026-02-25/train-00000-of-00001.parquet"
    with pytest.raises(hub.HubError, match="split name 'test-admitted'"):
        hub.hub_data_path("cfg", "test-admitted")
    with pytest.raises(hub.HubError, match="'data' is reserved"):
        hub.hub_data_path("data", "train")


def test_render_template_demands_every_placeholder_and_value():
    assert hub.render_template("a ${x} $$5", {"x": 1}, "t") == "a 1 $5"
    with pytest.raises(hub.HubError, match=r"without a value \['y'\], values without a placeholder \['z'\]"):
        hub.render_template("${x} ${y}", {"x": 1, "z": 2}, "t")
    with pytest.raises(hub.HubError, match="neither"):
        hub.render_template("costs $ 5", {}, "t")


def test_question_stats_and_cutoff_table():
    table = pa.Table.from_pylist(
        [dict(zip(QUESTION_SCHEMA.names, (*v[:6], dt.date.fromisoformat(v[6])))) for v in QUESTIONS], schema=QUESTION_SCHEMA
    )
    stats = hub.question_stats([table.slice(0, 3), table.slice(3)])
    assert stats.rows == 5
    assert stats.by_bucket == {"yes_no/single": 2, "binary_named/single": 1, "multiple_choice/single": 1, "multiple_choice/multi": 1}
    assert stats.date_range == "2026-02-10 → 2026-03-20"
    empty = hub.question_stats([table.slice(0, 0)])
    config = hub.CutoffConfig("cutoff-x", "2026-01-31", ("a/m", "b/m"), stats, empty)
    lines = hub.cutoff_table([config, hub.CutoffConfig("cutoff-y", "2026-12-31", (), empty, empty)]).splitlines()
    assert lines[2] == "| `cutoff-x` | 2026-01-31 | `a/m`, `b/m` | 5 | 0 | 2 | 1 | 1 | 1 | 2026-02-10 → 2026-03-20 |"
    assert lines[3] == "| cutoff-y (empty: not a config) | 2026-12-31 | — | 0 | 0 | 0 | 0 | 0 | 0 | — |"


def test_hash_chain_table_shows_run_hashes_and_source_fingerprints():
    lines = hub.hash_chain_table(HASHES).splitlines()
    assert lines[:2] == ["| hash | value |", "|---|---|"]
    assert "| `belief_protocol_hash` | null (off) |" in lines  # a disabled protocol
    assert f"| `reflection_protocol_hash` | `{'d' * 16}` |" in lines
    assert "| sources | metadata_hash | prompt_templates_hash | rows | source_hash |" in lines
    source_row = f"| `data/splits/cutoff-2026-01-31/test.parquet` | `{'b' * 64}` | `{'c' * 64}` | `2` | `{'a' * 64}` |"
    assert source_row in lines


def test_release_checks_and_delete_patterns():
    with pytest.raises(hub.HubError, match="not ORG/NAME"):
        hub.check_release("OracleProto", "v1.0.0")
    with pytest.raises(hub.HubError, match="not a release tag"):
        hub.check_release("org/name", "1.0")
    listing = [hub.HubFile("README.md", 1, "x"), hub.HubFile("data/a/train.parquet", 1, "y"), hub.HubFile("openai/sft.jsonl", 1, "z")]
    assert hub.delete_patterns(listing) == ["data/**", "openai/**"]


def test_embedded_markdown_fits_under_a_card_section():
    assert hub.embedded_markdown("# Leaderboard\n\ntext\n## Notes\nmore\n") == "text\n#### Notes\nmore"
    assert hub.embedded_markdown("  \n") is None


def test_size_category():
    assert [hub.size_category(n) for n in (0, 999, 1000, 250_000, 5_000_000)] == ["n<1K", "n<1K", "1K<n<10K", "100K<n<1M", "1M<n<10M"]


# ---------------------------------------------------------------------------------------- the folder


def test_hub_folder_layout_and_card(project):
    listing = {f.path for f in hub.hub_listing(project.hub)}
    assert listing == {
        "README.md",
        "provenance.json",
        "data/questions/train-00000-of-00001.parquet",
        "data/cutoff-2026-01-31/train-00000-of-00001.parquet",
        "data/cutoff-2026-01-31/test-00000-of-00001.parquet",
        "data/cutoff-2026-02-28/train-00000-of-00001.parquet",
        "data/cutoff-2026-02-28/test-00000-of-00001.parquet",
        "data/sft/train-00000-of-00001.parquet",
        "data/rl/train-00000-of-00001.parquet",
        "data/rl/test-00000-of-00001.parquet",
        "openai/sft_train.jsonl",
    }
    readme = (project.hub / "README.md").read_text()
    meta = front_matter(readme)
    assert [c["config_name"] for c in meta["configs"]] == ["questions", "cutoff-2026-01-31", "cutoff-2026-02-28", "sft", "rl"]
    assert meta["configs"][0]["default"] is True
    assert meta["license"] == "apache-2.0" and meta["size_categories"] == ["n<1K"]
    # per-config table: models mapped to each cutoff, counts by type, date range; the empty cutoff is listed
    assert "| `cutoff-2026-01-31` | 2026-01-31 | `old/model` | 3 | 2 | 2 | 1 | 1 | 1 | 2026-02-10 → 2026-03-20 |" in readme
    assert "| `cutoff-2026-02-28` | 2026-02-28 | `mid/model` | 1 | 2 |" in readme  # q4, q5 are test everywhere
    assert "2 questions, from 2026-03-15 (id `q4`) on — are `test` in every configuration" in readme
    assert "| cutoff-2026-12-31 (empty: not a config) | 2026-12-31 | `future/model` | 0 | 0 |" in readme
    assert f"| `config_snapshot_hash` | `{'f' * 64}` |" in readme  # hash chain
    assert f"| `{'c' * 64}` | `2` |" in readme
    assert "## Leaderboard\n\n| model | composite |" in readme  # embedded under the card's own heading
    assert "| old/model | 0.5000 |" in readme
    assert 'load_dataset("org/OracleProto", "cutoff-2026-02-28", split="test")' in readme
    assert "${" not in readme
    provenance = json.loads((project.hub / "provenance.json").read_text())
    assert provenance["hash_chain"] == HASHES
    sft_file = "data/sft/train-00000-of-00001.parquet"
    assert provenance["files"][sft_file] == {"rows": 1, "sha256": hub.sha256_file(project.data / "export" / "sft" / "train.parquet")}
    assert f"| `{sft_file}` | 1 | `{provenance['files'][sft_file]['sha256']}` |" in readme


def test_hub_files_are_the_pipeline_outputs_byte_for_byte(project):
    assert (project.hub / "data/rl/train-00000-of-00001.parquet").read_bytes() == (project.data / "export/rl/train.parquet").read_bytes()
    split_file = project.data / "splits/cutoff-2026-01-31/test.parquet"
    assert (project.hub / "data/cutoff-2026-01-31/test-00000-of-00001.parquet").read_bytes() == split_file.read_bytes()


def test_two_fresh_builds_are_byte_identical(tmp_path, project):
    other = make_project(tmp_path)
    build_hub_folder(other, Publish(repo_id="org/OracleProto"))
    assert hub.hub_listing(other.hub) == hub.hub_listing(project.hub)


def test_rebuild_removes_stale_files(tmp_path):
    (tmp_path / "hub" / "data" / "old").mkdir(parents=True)
    (tmp_path / "hub" / "data" / "old" / "x.parquet").write_bytes(b"stale")
    listing = hub.build_hub(tmp_path / "hub", {}, {"README.md": "hi\n"})
    assert [f.path for f in listing] == ["README.md"]


def test_an_empty_sft_export_is_listed_but_not_a_config(tmp_path):
    layout = make_project(tmp_path, preds=("A", "A"))  # no correct trial
    build_hub_folder(layout, Publish())
    readme = (layout.hub / "README.md").read_text()
    assert [c["config_name"] for c in front_matter(readme)["configs"]][-1] == "rl"
    assert "| sft (empty: not a config) | train | 0 |" in readme
    assert 'load_dataset("MaYiding/OracleProto", "sft"' not in readme
    assert not (layout.hub / "data" / "sft").exists() and not (layout.hub / "openai").exists()


def test_missing_manifest_hash_chain_is_an_error(tmp_path):
    layout = make_project(tmp_path)
    write_json({"run": "x"}, layout.data / "eval" / "manifest.json")
    with pytest.raises(hub.HubError, match="no 'hash_chain' object"):
        build_hub_folder(layout, Publish())


LOAD_ALL = textwrap.dedent(
    """
    import json, sys
    import datasets, pyarrow.parquet as pq
    hub_dir = sys.argv[1]
    sources = json.loads(sys.argv[2])
    out = {}
    for config in datasets.get_dataset_config_names(hub_dir):
        for split in datasets.get_dataset_split_names(hub_dir, config):
            ds = datasets.load_dataset(hub_dir, config, split=split)
            source = pq.read_table(sources[config + "/" + split])
            loaded = ds.data.table.select(source.column_names).cast(source.schema)
            out[config + "/" + split] = [ds.num_rows, source.num_rows, loaded.equals(source)]
    print(json.dumps(out))
    """
)


def test_every_config_loads_offline_equal_to_its_source(project, tmp_path):
    data = project.data
    sources = {
        "questions/train": data / "questions.parquet",
        "sft/train": data / "export/sft/train.parquet",
        "rl/train": data / "export/rl/train.parquet",
        "rl/test": data / "export/rl/test.parquet",
    }
    for cutoff in ("cutoff-2026-01-31", "cutoff-2026-02-28"):
        for name in ("train", "test"):
            sources[f"{cutoff}/{name}"] = data / "splits" / cutoff / f"{name}.parquet"
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", LOAD_ALL, str(project.hub), json.dumps({k: str(v) for k, v in sources.items()})],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    loaded = json.loads(result.stdout)
    assert set(loaded) == set(sources)
    for key, (rows, source_rows, equal) in loaded.items():
        assert rows == source_rows and rows > 0 and equal, key


def test_the_card_shows_a_leak_audit_and_probed_cutoffs_when_given(tmp_path):
    layout = make_project(tmp_path)
    audit = {"residual_leak_rate": {"rate": 0.025, "successes": 1, "n": 40, "ci_low": 0.004, "ci_high": 0.129},
             "leak_pass_through": {"estimate": None}}  # fmt: skip
    (tmp_path / "audit.json").write_text(json.dumps(audit))
    probe = {"model": "old/model", "disclosed_cutoff": "2026-01-31", "effective_cutoff": "2026-03-31", "flagged": True}
    (tmp_path / "probe.json").write_text(json.dumps(probe))
    build_hub_folder(layout, Publish(leak_audit_report=str(tmp_path / "audit.json"), probe_reports=(str(tmp_path / "probe.json"),)))
    readme = (layout.hub / "README.md").read_text()
    assert "**Residual leak rate** (leaks among the search results shown to the model): 2.5 % (1 of 40 labelled" in readme
    assert "| old/model | 2026-01-31 | 2026-03-31 | yes |" in readme


def test_without_reports_the_card_says_none_was_published(project):
    assert "No leak audit or cutoff probe was published with this release" in (project.hub / "README.md").read_text()
