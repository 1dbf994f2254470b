"""Params (the ``evaluate`` section of params.yaml) → settings, model specs and the jobs of
the DVC stage: the baselines on every cutoff's split, plus opt-in API models."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oracleproto.harness.manifest import run_key
from oracleproto.harness.questions import EvalJob, EvaluationError, QuestionSet
from oracleproto.harness.settings import (
    EvalSettings,
    ModelSpec,
    SettingsError,
    config_snapshot,
    reject_online,
)

TRIALS_FILE = "trials.parquet"
MANIFEST_FILE = "manifest.json"
CACHE_FILE = "calls.sqlite"
LOG_FILE = "logs/evaluate.log"


SETTINGS_KEYS = (
    "trials", "max_steps", "max_search_calls", "max_results", "lookahead", "drop_tools_when_spent", "force_final",
    "min_search_calls", "max_nudges", "final_answer_retry", "seed", "search", "archive", "detector", "search_options", "cache", "protocols", "sampling", "concurrency",
    "baselines", "split", "models",
)


MODEL_KEYS = (
    "slug", "label", "cutoff", "base_url_env", "api_key_env", "max_tokens_param", "omit_sampling", "reasoning",
    "price_prompt_per_mtok", "price_completion_per_mtok",
)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SettingsError(f"params {where} must be a mapping, got {type(value).__name__}")
    return dict(value)


def _known(values: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise SettingsError(f"params {where}: unknown key(s) {unknown}; known: {sorted(known)}")


def settings_from_params(evaluate: Mapping[str, Any], delta_days: int = 1, **overrides: Any) -> EvalSettings:
    """:class:`EvalSettings` from the ``evaluate`` params section (+ ``admit.delta_days``).

    ``overrides`` (CLI flags) replace section values; None means "not given".
    """
    from oracleproto.harness.settings import Budgets, Concurrency, Sampling
    from oracleproto.prompts import ProtocolSwitches

    values = {**_mapping(evaluate, "evaluate"), **{k: v for k, v in overrides.items() if v is not None}}
    _known(values, SETTINGS_KEYS, "evaluate")
    try:
        budgets = Budgets(
            max_steps=values.get("max_steps", 6),
            max_search_calls=values.get("max_search_calls", 4),
            max_results=values.get("max_results", 5),
            trials=values.get("trials", 3),
            delta_days=delta_days,
            lookahead=values.get("lookahead", 2),
            drop_tools_when_spent=values.get("drop_tools_when_spent", True),
            force_final=values.get("force_final", True),
            min_search_calls=values.get("min_search_calls", 0),
            max_nudges=values.get("max_nudges", 2),
            final_answer_retry=values.get("final_answer_retry", False),
        )
        sampling_values = _mapping(values.get("sampling"), "evaluate.sampling")
        sampling_keys = ("temperature", "top_p", "max_tokens", "timeout_s", "reasoning_patterns", "max_response_bytes")
        _known(sampling_values, sampling_keys, "evaluate.sampling")
        if "reasoning_patterns" in sampling_values:
            sampling_values["reasoning_patterns"] = tuple(sampling_values["reasoning_patterns"])
        protocol_values = _mapping(values.get("protocols"), "evaluate.protocols")
        _known(protocol_values, ("budget_awareness", "reflection", "belief"), "evaluate.protocols")
        concurrency_values = _mapping(values.get("concurrency"), "evaluate.concurrency")
        _known(concurrency_values, ("llm", "search", "detector"), "evaluate.concurrency")
        archive = values.get("archive")
        return EvalSettings(
            budgets=budgets,
            sampling=Sampling(**sampling_values),
            protocols=ProtocolSwitches(**protocol_values),
            concurrency=Concurrency(**concurrency_values),
            search_backend=values.get("search", "archive"),
            archive_path=str(archive) if archive is not None else None,
            detector=values.get("detector", "heuristic"),
            cache_mode=values.get("cache", "record"),
            seed=values.get("seed", 0),
            search_options=_mapping(values.get("search_options"), "evaluate.search_options"),
        )
    except TypeError as exc:
        raise SettingsError(f"params evaluate: {exc}") from exc


def model_spec_from_entry(entry: Mapping[str, Any] | str, cutoffs: Mapping[str, Any], label: str | None = None) -> ModelSpec:
    """A :class:`ModelSpec` from one ``evaluate.models`` entry (a slug or a mapping).

    The cutoff comes from the entry, else from ``admit.models``; an API model without one
    is an error (admission needs κ).
    """
    from oracleproto.admission import AdmissionError, parse_cutoff

    values = {"slug": entry} if isinstance(entry, str) else _mapping(entry, "evaluate.models[]")
    _known(values, MODEL_KEYS, f"evaluate.models[{values.get('slug')!r}]")
    slug = values.get("slug")
    if not isinstance(slug, str) or not slug.strip():
        raise SettingsError("params evaluate.models: every entry needs a 'slug'")
    reject_online(slug)
    raw_cutoff = values.get("cutoff", cutoffs.get(slug))
    cutoff = None
    if raw_cutoff is not None:
        try:
            cutoff = parse_cutoff(raw_cutoff, slug)
        except AdmissionError as exc:
            raise SettingsError(str(exc)) from exc
    elif not slug.startswith("baseline:"):
        raise SettingsError(
            f"model {slug!r} has no knowledge cutoff: list it under admit.models or give its cutoff "
            "(admission needs κ ≤ τ − δ)"
        )
    extra = {k: values[k] for k in MODEL_KEYS if k in values and k not in ("slug", "label", "cutoff")}
    if "omit_sampling" in extra:
        extra["omit_sampling"] = tuple(extra["omit_sampling"])
    try:
        return ModelSpec(label=label or values.get("label") or slug, slug=slug, cutoff=cutoff, **extra)
    except TypeError as exc:
        raise SettingsError(f"params evaluate.models[{slug!r}]: {exc}") from exc


DEFAULT_BASELINES = ("uniform", "first", "no", "base_rate")


def plan_from_params(params: Mapping[str, Any], splits_dir: str | os.PathLike[str]) -> tuple[EvalSettings, list[EvalJob]]:
    """Settings and jobs of the ``evaluate`` stage.

    Every cutoff of ``admit.models`` gets the baselines (``evaluate.baselines``, default all
    four) on its ``evaluate.split`` (default ``test``), labelled ``baseline:<name>@cutoff-…``
    so (model, q_id, trial) stays unique. Each ``evaluate.models`` entry runs on the split
    of its own cutoff.
    """
    from oracleproto.admission import AdmissionError, parse_cutoff, split_name
    from oracleproto.params import section

    admit, evaluate_params = section(dict(params), "admit"), section(dict(params), "evaluate")
    settings = settings_from_params(evaluate_params, delta_days=admit.get("delta_days", 1))
    cutoffs = dict(admit.get("models") or {})
    split = evaluate_params.get("split", "test")
    names = evaluate_params.get("baselines", list(DEFAULT_BASELINES))
    if not isinstance(names, list) or any(n not in DEFAULT_BASELINES for n in names):
        raise SettingsError(f"params evaluate.baselines must be a list drawn from {list(DEFAULT_BASELINES)}, got {names!r}")
    splits = Path(splits_dir)
    try:
        split_names = sorted({split_name(parse_cutoff(value, str(model))) for model, value in cutoffs.items()})
    except AdmissionError as exc:
        raise SettingsError(str(exc)) from exc

    def load(name: str, part: str) -> QuestionSet:
        path = splits / name / f"{part}.parquet"
        if not path.exists():
            raise EvaluationError(f"{path} does not exist: run the admit stage, and list every evaluated model's cutoff under admit.models")
        return QuestionSet.load(path)

    jobs: list[EvalJob] = []
    for name in split_names:
        questions = load(name, split)
        for baseline in names:
            spec = ModelSpec(label=f"baseline:{baseline}@{name}", slug=f"baseline:{baseline}")
            jobs.append(EvalJob(spec, questions, load(name, "train") if baseline == "base_rate" else None))
    for entry in evaluate_params.get("models") or []:
        spec = model_spec_from_entry(entry, cutoffs)
        assert spec.cutoff is not None  # API models always have one (checked above)
        jobs.append(EvalJob(spec, load(split_name(spec.cutoff), split)))
    return settings, jobs


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

