"""params.yaml as one typed configuration: YAML 1.2, unknown keys and broken rules as one line,
defaults in oracleproto/config.py, overrides validated as the file is."""

import csv
import datetime as dt
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from oracleproto.config import (
    ConfigError,
    ModelEntry,
    Params,
    default_of,
    load_params,
    parse_params,
)


def params_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(data) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_params(data)
    return str(caught.value)


# ---------------------------------------------------------------------------------------- reading


def test_the_repository_params_load(project_root):
    params = load_params(project_root / "params.yaml")
    assert params.cutoffs["openai/gpt-4.1"] == dt.date(2024, 6, 30)  # YYYY-MM: the month's last day
    assert params.evaluate.baselines == ("uniform", "first", "always_no", "base_rate")
    assert params.evaluate.models == ()  # API models are opt-in


def test_yaml_1_2_keeps_no_a_string(tmp_path):
    params = load_params(params_file(tmp_path, "ingest:\n  hf_split: no\nevaluate:\n  baselines: [no, first]\n"))
    assert params.ingest.hf_split == "no"  # YAML 1.1 (PyYAML) would read false
    assert params.evaluate.baselines == ("always_no", "first")  # `no` is the old name of always_no


def test_absent_empty_and_null_mean_the_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_params() == Params()  # no ./params.yaml
    assert load_params(params_file(tmp_path, "")) == Params()
    assert load_params(params_file(tmp_path, "admit:\n  # delta_days: 2\nevaluate:\n")) == Params()


def test_file_errors_are_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"^params file .*nope\.yaml not found$"):
        load_params(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match=r"params\.yaml: not valid YAML: found duplicate key \"admit\".* \(line 3, column 1\)$"):
        load_params(params_file(tmp_path, "admit:\n  delta_days: 1\nadmit:\n  delta_days: 2\n"))
    with pytest.raises(ConfigError, match=r"not valid YAML: .* \(line 2, column 1\)$"):
        load_params(params_file(tmp_path, "admit: [1\n"))
    with pytest.raises(ConfigError, match=r"^params must be a mapping of sections, got \[1, 2\]$"):
        load_params(params_file(tmp_path, "[1, 2]\n"))


# ---------------------------------------------------------------------------------------- errors

MISSPELT = [
    ({"ingest": {"sourse": "sample"}}, "ingest.sourse: unknown key (did you mean source?)"),
    ({"audit": {"outcome_marker": []}}, "audit.outcome_marker: unknown key (did you mean outcome_markers?)"),
    ({"models": {"a/b": {"cutoff": "2024-01", "base_url": "X"}}}, "models.a/b.base_url: unknown key (did you mean base_url_env?)"),
    ({"admit": {"delta_dayz": 3}}, "admit.delta_dayz: unknown key (did you mean delta_days?)"),
    ({"evaluate": {"trails": 2}}, "evaluate.trails: unknown key (did you mean trials?)"),
    ({"evaluate": {"serch": "tavily"}}, "evaluate.serch: unknown key (did you mean search?)"),
    ({"evaluate": {"sampling": {"temprature": 0}}}, "evaluate.sampling.temprature: unknown key (did you mean temperature?)"),
    ({"evaluate": {"protocols": {"belif": True}}}, "evaluate.protocols.belif: unknown key (did you mean belief?)"),
    ({"evaluate": {"concurrency": {"llms": 2}}}, "evaluate.concurrency.llms: unknown key (did you mean llm?)"),
    ({"evaluate": {"search_options": {"serch_depth": "basic"}}}, "evaluate.search_options.serch_depth: unknown key (did you mean search_depth?)"),
    ({"score": {"bootstrapp": 0}}, "score.bootstrapp: unknown key (did you mean bootstrap?)"),
    ({"score": {"weights": {"mcq": 1}}}, "score.weights.mcq: unknown key (did you mean mc?)"),
    ({"export": {"format": "trl"}}, "export.format: unknown key (known: sft_mode, sft_models, sft_violations, rl_tools)"),
    ({"publish": {"repo": "a/b"}}, "publish.repo: unknown key (did you mean repo_id?)"),
    ({"admitt": {}}, "admitt: unknown key (did you mean admit?)"),
]


@pytest.mark.parametrize(("data", "message"), MISSPELT)
def test_an_unknown_key_in_any_section_is_named_with_a_suggestion(data, message):
    assert error_of(data) == message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"admit": {"delta_days": 0}}, "admit.delta_days: must be an integer >= 1, got 0"),
        ({"admit": {"delta_days": "2"}}, "admit.delta_days: must be an integer, got '2'"),
        ({"admit": {"test_fraction": 1.5}}, "admit.test_fraction: must be a number <= 1, got 1.5"),
        ({"evaluate": {"search": "bing"}}, "evaluate.search: must be one of 'archive', 'tavily' or 'none', got 'bing'"),
        ({"evaluate": {"final_answer_retry": "yes"}}, "evaluate.final_answer_retry: must be true or false, got 'yes'"),
        ({"evaluate": {"max_results": 21}}, "evaluate.max_results: must be an integer <= 20, got 21"),
        ({"evaluate": {"max_steps": 1}}, "evaluate.lookahead: must be <= max_steps (1), got 2"),
        ({"evaluate": {"min_search_calls": 5}}, "evaluate.min_search_calls: must be <= max_search_calls (4), got 5"),
        ({"evaluate": {"baselines": ["oracle"]}},
         "evaluate.baselines[0]: must be one of 'uniform', 'first', 'always_no' or 'base_rate', got 'oracle'"),
        ({"evaluate": {"baselines": ["no", "always_no"]}}, "evaluate.baselines: lists always_no more than once"),
        ({"evaluate": {"models": ["a/c"]}, "models": {"a/b": "2024-01"}}, "evaluate.models[0]: 'a/c' has no entry under models (did you mean a/b?)"),
        ({"evaluate": {"sampling": 0.7}}, "evaluate.sampling: must be a mapping, got 0.7"),
        ({"models": {"a/b": "2024-13"}}, "models.a/b.cutoff: must be YYYY-MM-DD, or YYYY-MM for that month's last day, got '2024-13'"),
        ({"models": {"a/b": {"label": "x"}}}, "models.a/b.cutoff: is required"),
        ({"models": {"a/b:online": "2024-01"}},
         "models.a/b:online: ':online' slugs enable provider-side browsing and break the time mask, got 'a/b:online'"),
        ({"models": {"baseline:first": "2024-01"}},
         "models.baseline:first: baselines are listed under evaluate.baselines, not as models, got 'baseline:first'"),
        ({"models": {"a/b": {"cutoff": "2024-01", "api_key_env": "MY-KEY"}}},
         "models.a/b.api_key_env: must be an environment variable name (letters, digits, _), got 'MY-KEY'"),
        ({"score": {"fallback_belief": 1}}, "score.fallback_belief: must be a number < 1, got 1"),
        ({"score": {"weights": {"mc": -1}}}, "score.weights.mc: must be a number >= 0, got -1"),
        ({"publish": {"language": "en"}}, "publish.language: must be a list, got 'en'"),
        ({"ingest": {"hf_revision": 1234}}, "ingest.hf_revision: must be a string, got 1234"),
    ],
)
def test_a_broken_rule_is_one_line_naming_key_and_rule(data, message):
    assert error_of(data) == message


def test_several_errors_stay_on_one_line():
    assert error_of({"admit": {"delta_days": 0, "test_fraction": -1}}) == (
        "admit.delta_days: must be an integer >= 1, got 0; admit.test_fraction: must be a number >= 0, got -1"
    )


# ---------------------------------------------------------------------------------------- values


def test_a_model_is_a_cutoff_or_a_mapping():
    short = parse_params({"models": {"a/b": "2025-09"}}).models["a/b"]
    full = parse_params({"models": {"a/b": {"cutoff": "2025-09-30"}}}).models["a/b"]
    assert short == full == ModelEntry(cutoff=dt.date(2025, 9, 30))
    assert full.api_key_env == "OPENAI_API_KEY" and full.label is None


def test_weights_in_the_cli_form_fill_the_missing_buckets():
    def weights(text):
        return parse_params({"score": {"weights": text}}).score.weights

    assert weights("yes_no=0.15,binary_named=0.15,mc=0.70") == {"yes_no": 0.15, "binary_named": 0.15, "mc": 0.70}
    assert weights("mc=1") == {"yes_no": 0.0, "binary_named": 0.0, "mc": 1.0}
    for bad, message in (("mcq=1", "unknown key"), ("mc", "'mc' is not bucket=value"), ("mc=x", "must be a number, got 'x'"),
                         ("mc=-1", ">= 0"), ("mc=0", "at least one bucket needs a weight > 0")):
        with pytest.raises(ConfigError, match=message):
            weights(bad)


def test_defaults_are_read_as_the_file_spells_the_keys():
    assert default_of("evaluate.search") == "archive" and default_of("evaluate.trials") == 3
    assert default_of("admit.delta_days") == 1 and default_of("score.bootstrap") == 5000


# ---------------------------------------------------------------------------------------- overrides


def test_overrides_are_validated_as_the_file_is():
    params = parse_params({"models": {"a/b": {"cutoff": "2024-01", "label": "AB"}}, "evaluate": {"trials": 2, "search": "none"}})
    changed = params.overridden({"evaluate": {"trials": 5, "seed": None}, "models": {"a/b": {"cutoff": "2024-03"}}})
    assert (changed.evaluate.trials, changed.evaluate.search_backend, changed.evaluate.seed) == (5, "none", 0)
    assert changed.models["a/b"] == ModelEntry(cutoff=dt.date(2024, 3, 31), label="AB")  # the entry's other keys stay
    assert params.evaluate.trials == 2  # frozen: overriding makes a new value
    with pytest.raises(ConfigError, match=r"^evaluate\.search: must be one of"):
        params.overridden({"evaluate": {"search": "bing"}})


# ---------------------------------------------------------------------------------------- DVC

EXPERIMENTS = [  # one key of every section: the -S assignment, a stage that re-runs, one upstream that does not
    ("admit.delta_days=2", "admit", "audit"),
    ("ingest.hf_split=validation", "ingest", None),
    ('audit.outcome_markers=["(winner)"]', "audit", "ingest"),
    # Hydra's override grammar (which -S parses) has no key with a "/": a slug is set by
    # merging a mapping into models.
    ("models={z-ai/glm-5: '2026-03'}", "admit", "audit"),
    ("evaluate.trials=2", "evaluate", "admit"),
    ("score.bootstrap=100", "score", "export"),
    ("export.sft_mode=all", "export", "score"),
    ("publish.pretty_name=Experiment", "publish", "export"),
]


def _run(cmd: list[str], cwd: Path) -> str:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_dvc_exp_run_sets_a_key_of_every_section(project_root):
    """`dvc exp run -S` writes params.yaml back (YAML 1.2): every run succeeds, re-runs the
    stages that read the key and nothing upstream, and the file still loads."""
    # Not pytest's tmp_path: other pytest sessions on the machine prune old base temp dirs.
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "oracleproto"
        _run(["git", "clone", "-q", str(project_root), str(clone)], Path(tmp))
        _run(["dvc", "repro"], clone)
        for assignment, reruns, stays in EXPERIMENTS:
            output = _run(["dvc", "exp", "run", "-S", assignment], clone)
            assert f"Running stage '{reruns}'" in output, output
            assert stays is None or f"Running stage '{stays}'" not in output, output
            load_params(clone / "params.yaml")
        params = load_params(clone / "params.yaml")
        shown = list(csv.DictReader(io.StringIO(_run(["dvc", "exp", "show", "--csv"], clone))))
    assert params.admit.delta_days == 2 and params.cutoffs["z-ai/glm-5"] == dt.date(2026, 3, 31)
    assert params.cutoffs["openai/gpt-4.1"] == dt.date(2024, 6, 30)  # the other models stay
    assert params.evaluate.baselines == ("uniform", "first", "always_no", "base_rate")
    workspace = next(row for row in shown if row["rev"] == "workspace")
    assert (workspace["admit.delta_days"], workspace["models.z-ai/glm-5"], workspace["export.sft_mode"]) == ("2", "2026-03", "all")
    assert {"ingest.hf_split", "audit.outcome_markers", "evaluate.trials", "score.bootstrap", "publish.pretty_name"} <= set(workspace)


def test_the_earliest_plausible_end_time_leaves_room_for_delta():
    """τ − δ of a question dated end_time_min must be a date: year 1 minus a day is not."""
    with pytest.raises(ConfigError, match=r"audit\.end_time_min: 0001-01-03 leaves no room for admit\.delta_days = 3"):
        parse_params({"audit": {"end_time_min": "0001-01-03"}, "admit": {"delta_days": 3}})
    assert parse_params({"audit": {"end_time_min": "0001-01-04"}, "admit": {"delta_days": 3}}).audit.end_time_min.day == 4
