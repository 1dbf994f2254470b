"""Params → evaluation settings, model specs and the jobs of the DVC stage: the baselines on
every cutoff's split, plus the API models that ``evaluate.models`` opts in."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from oracleproto.admission import probed_cutoff, split_name
from oracleproto.config import LoopBudgets, ModelEntry, Params, RunKnobs
from oracleproto.errors import ConfigError, InputError
from oracleproto.harness.manifest import run_key
from oracleproto.harness.questions import EvalJob, QuestionSet
from oracleproto.harness.settings import (
    BASELINE_PREFIX,
    BASELINES,
    Budgets,
    EvalSettings,
    ModelSpec,
    config_snapshot,
)

TRIALS_FILE = "trials.parquet"
MANIFEST_FILE = "manifest.json"
CACHE_FILE = "calls.sqlite"
LOG_FILE = "logs/evaluate.log"


def eval_settings(params: Params) -> EvalSettings:
    """:class:`EvalSettings` from the ``evaluate`` section and ``admit.delta_days``."""
    evaluate = params.evaluate
    budgets = Budgets(**evaluate.fields_of(LoopBudgets), delta_days=params.admit.delta_days)
    return EvalSettings(**evaluate.fields_of(RunKnobs), budgets=budgets)


def model_spec(slug: str, models: Mapping[str, ModelEntry]) -> ModelSpec:
    """The spec of ``slug``: its ``models:`` entry, or a baseline. An API model without an entry
    is an error (admission needs its cutoff κ)."""
    entry = models.get(slug)
    options = entry.model_dump(exclude={"label", "cutoff_source", "probe_report"}) if entry is not None else {}
    if entry is not None and entry.cutoff_source == "probed":  # the cutoff admission used
        options["cutoff"] = probed_cutoff(entry.probe_report, slug)
    label = entry.label if entry is not None and entry.label else slug
    spec = ModelSpec(label=label, slug=slug, **options)
    if spec.cutoff is None and not spec.is_baseline:
        raise ConfigError(
            f"model {slug!r} has no knowledge cutoff: list it under models in params or give --cutoff "
            f"{slug}=YYYY-MM-DD (admission needs κ ≤ τ − δ)"
        )
    return spec


def plan_evaluation(params: Params, splits_dir: str | os.PathLike[str]) -> tuple[EvalSettings, list[EvalJob]]:
    """Settings and jobs of the ``evaluate`` stage.

    Every distinct cutoff of ``models`` gets the baselines of ``evaluate.baselines`` on its
    test split, labelled ``baseline:<name>@cutoff-…`` so (model, q_id, trial) stays unique;
    each slug of ``evaluate.models`` runs on each split of ``evaluate.splits`` of its own
    cutoff (labelled ``<label>@train`` on the train split, so its trials never join the
    test-split leaderboard).
    """
    evaluate, splits = params.evaluate, Path(splits_dir)

    def load(name: str, part: str) -> QuestionSet:
        path = splits / name / f"{part}.parquet"
        if not path.exists():
            raise InputError(f"{path} does not exist: run the admit stage (it makes one split set per cutoff under models)")
        return QuestionSet.load(path, params.audit)

    jobs: list[EvalJob] = []
    for name in sorted({split_name(cutoff) for cutoff in params.cutoffs.values()}):
        questions = load(name, "test")
        for baseline in (BASELINES[name] for name in evaluate.baselines):
            spec = ModelSpec(label=f"{BASELINE_PREFIX}{baseline}@{name}", slug=BASELINE_PREFIX + baseline)
            jobs.append(EvalJob(spec, questions, load(name, "train") if baseline == "base_rate" else None))
    for slug in evaluate.models:
        spec = model_spec(slug, params.models)
        assert spec.cutoff is not None  # every entry of models has one
        for part in evaluate.splits:
            labelled = spec if part == "test" else spec.model_copy(update={"label": f"{spec.label}@{part}"})
            jobs.append(EvalJob(labelled, load(split_name(spec.cutoff), part)))
    return eval_settings(params), jobs


def run_dir_for(jobs: Sequence[EvalJob], settings: EvalSettings, runs_dir: str | os.PathLike[str]) -> Path:
    """``runs_dir/<run key>``: the same params and inputs resume the same run state."""
    snapshot = config_snapshot(settings, [job.spec for job in jobs], {})
    return Path(runs_dir) / run_key(jobs, settings, snapshot)


def prune_run_dir(run_dir: str | os.PathLike[str]) -> None:
    """After a successful stage run, drop what only an interrupted run needs.

    The per-model stores (resume state, with wall-clock ``created_at``) and the exported
    copies go; the call cache stays, with the log of the run that filled it, so a forced
    re-run replays recorded calls instead of paying for them again. A run without model
    calls (baselines only) leaves nothing behind.
    """
    run_dir = Path(run_dir)
    shutil.rmtree(run_dir / "db", ignore_errors=True)
    for name in (TRIALS_FILE, MANIFEST_FILE):
        (run_dir / name).unlink(missing_ok=True)
    if not (run_dir / CACHE_FILE).exists():
        shutil.rmtree(run_dir / Path(LOG_FILE).parent, ignore_errors=True)
        if run_dir.exists() and not any(run_dir.iterdir()):
            run_dir.rmdir()

