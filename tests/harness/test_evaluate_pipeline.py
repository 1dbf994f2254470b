"""The DVC `evaluate` stage: baselines on every cutoff's split, opt-in API models, resumable run state."""

import datetime as dt

import pyarrow.parquet as pq
import pytest

import oracleproto.stages.evaluate as stage
from oracleproto.config import parse_params
from oracleproto.errors import InputError
from oracleproto.harness.plan import plan_evaluation
from oracleproto.harness.runstore import RunStore
from oracleproto.io import write_parquet
from oracleproto.schema import QUESTION_SCHEMA
from tests.harness.test_evaluate_run import make_questions

PARAMS = parse_params({
    "models": {"a/old": "2024-06", "b/new": "2025-01-31", "c/twin": "2024-06-30"},
    "evaluate": {"trials": 2, "search": "none", "baselines": ["first", "base_rate"]},
})


@pytest.fixture
def splits(tmp_path):
    for name in ("cutoff-2024-06-30", "cutoff-2025-01-31"):
        for part, start in (("train", dt.date(2024, 1, 1)), ("test", dt.date(2026, 3, 12))):
            write_parquet(make_questions(4, start), tmp_path / "data" / "splits" / name / f"{part}.parquet",
                          QUESTION_SCHEMA, sort_by=("id",))
    return tmp_path / "data" / "splits"


def test_plan_has_baselines_per_distinct_cutoff(splits):
    settings, jobs = plan_evaluation(PARAMS, splits)
    assert settings.budgets.trials == 2
    assert [job.label for job in jobs] == [
        "baseline:first@cutoff-2024-06-30", "baseline:base_rate@cutoff-2024-06-30",
        "baseline:first@cutoff-2025-01-31", "baseline:base_rate@cutoff-2025-01-31",
    ]
    assert jobs[0].train is None and jobs[1].train.path.endswith("cutoff-2024-06-30/train.parquet")
    assert jobs[0].questions.path.endswith("cutoff-2024-06-30/test.parquet")


def test_always_no_keeps_the_label_of_the_no_baseline(splits):
    for name in ("always_no", "no"):
        _, jobs = plan_evaluation(PARAMS.overridden({"evaluate": {"baselines": [name]}}), splits)
        assert [job.label for job in jobs] == ["baseline:no@cutoff-2024-06-30", "baseline:no@cutoff-2025-01-31"]


def test_api_models_are_opt_in_and_use_their_own_split(splits):
    params = PARAMS.overridden({
        "models": {"b/new": {"price_prompt_per_mtok": 1.5, "label": "new"}},
        "evaluate": {"baselines": [], "models": ["b/new"]},
    })  # fmt: skip
    _, jobs = plan_evaluation(params, splits)
    (job,) = jobs
    assert job.label == "new" and job.spec.slug == "b/new"
    assert job.spec.cutoff == dt.date(2025, 1, 31) and job.spec.price_prompt_per_mtok == 1.5
    assert job.questions.path.endswith("cutoff-2025-01-31/test.parquet")


def test_api_models_run_on_every_split_of_evaluate_splits_under_distinct_labels(splits):
    params = PARAMS.overridden({"evaluate": {"baselines": ["first"], "models": ["b/new"], "splits": ["train", "test"]}})
    _, jobs = plan_evaluation(params, splits)
    runs = {job.label: job.questions.path.rsplit("/", 2)[-2:] for job in jobs}
    assert runs["b/new@train"] == ["cutoff-2025-01-31", "train.parquet"]
    assert runs["b/new"] == ["cutoff-2025-01-31", "test.parquet"]
    assert runs["baseline:first@cutoff-2025-01-31"] == ["cutoff-2025-01-31", "test.parquet"]  # baselines: test only


def test_a_missing_split_set_names_the_fix(splits):
    missing = parse_params({"models": {"z/model": "2023-01"}})
    with pytest.raises(InputError, match="cutoff-2023-01-31/test.parquet does not exist: run the admit stage"):
        plan_evaluation(missing, splits)


def test_stage_writes_the_two_artifacts_and_is_repeatable(splits, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(
        "models: {a/old: '2024-06', b/new: '2025-01-31'}\nevaluate:\n  trials: 2\n  search: none\n"
    )
    stage.main()
    first = {name: (tmp_path / "data" / "eval" / name).read_bytes() for name in ("trials.parquet", "manifest.json")}
    assert pq.read_table(tmp_path / "data" / "eval" / "trials.parquet").num_rows == 2 * 4 * 4 * 2
    # a baselines-only run leaves no run state behind (nothing to resume, no calls to replay)
    assert not any((tmp_path / "runs" / "evaluate").iterdir())
    # re-run: the artifacts come out identical
    (tmp_path / "data" / "eval" / "trials.parquet").unlink()
    stage.main()
    assert all((tmp_path / "data" / "eval" / name).read_bytes() == data for name, data in first.items())


def test_interrupted_stage_keeps_its_state_and_resumes(splits, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("models: {a/old: '2024-06'}\nevaluate:\n  trials: 2\n  search: none\n")
    calls = []
    real_put = RunStore.put

    def failing_put(store, row):
        calls.append(row["q_id"])
        if len(calls) == 5:
            raise KeyboardInterrupt  # the stage is interrupted mid-run
        real_put(store, row)

    monkeypatch.setattr(RunStore, "put", failing_put)
    with pytest.raises(KeyboardInterrupt):
        stage.main()
    (run_dir,) = (tmp_path / "runs" / "evaluate").iterdir()
    assert (run_dir / "db").exists()  # resume state kept
    monkeypatch.setattr(RunStore, "put", real_put)
    stage.main()
    table = pq.read_table(tmp_path / "data" / "eval" / "trials.parquet")
    assert table.num_rows == 4 * 4 * 2 and not run_dir.exists()


def test_the_plan_holds_the_splits_to_the_params_end_time_range(splits):
    narrow = PARAMS.overridden({"audit": {"end_time_max": "2025-12-31"}})  # the test splits end in 2026
    with pytest.raises(InputError, match="end_time_out_of_range"):
        plan_evaluation(narrow, splits)
