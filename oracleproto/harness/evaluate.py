"""Evaluation orchestration (paper Algorithm 1, B.6–B.7): plan, admit, run, resume, export.

A run evaluates *jobs* (a model spec + its question set, plus the train split for
``baseline:base_rate``) into ``out_dir``:

```
out_dir/manifest.json        hash chain (Table 22) + redacted config snapshot
out_dir/trials.parquet       canonical export, exactly TRIAL_SCHEMA, sorted (model, q_id, trial)
out_dir/db/<label>.<h>.db    one SQLite run store per model label (resume state, created_at)
out_dir/calls.sqlite         record/replay cache of every outbound call (unless mode "off")
out_dir/logs/evaluate.log    the run's log (times live here, never in artifacts)
```

Start-up checks happen before any work: unique labels, no ``:online`` slug, every key
present (unless replaying), search settings valid. Then, per job, questions outside
κ ≤ χ < τ get a ``skipped_training_cutoff`` row for every trial, written before any LLM
work, and (q_id, trial) pairs already accounted for (Eq. 36) are skipped. The remaining
trials run as asyncio tasks: the main-LLM and search channels each have their own
semaphore (Table 20) and twice as many trials as LLM slots are kept in flight so the LLM
channel stays busy while other trials search. An auth failure or a replay miss cancels
everything in flight and aborts the run (:class:`EvaluationAborted`); any other failure of
a trial becomes an error row with its classified kind.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime as dt
import functools
import hashlib
import json
import logging
import os
import shutil
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa

from oracleproto import SCHEMA_VERSION
from oracleproto.harness import baselines
from oracleproto.harness.faults import AuthError, classify
from oracleproto.harness.llm import BrowsingBarrierError, ChannelMeter, ChatClient, encode_json, make_transport
from oracleproto.harness.react import LoopConfig, LoopResult, TrialQuestion, prediction_cutoff, run_react
from oracleproto.harness.replay import CallCache, CallContext, ReplayMissError, canonical_json
from oracleproto.harness.settings import (
    SECRETS,
    Endpoint,
    EvalSettings,
    ModelSpec,
    ScrubSecretsFilter,
    SettingsError,
    config_snapshot,
    reject_online,
    search_key_envs,
    resolve_endpoint,
    resume_fingerprint,
)
from oracleproto.errors import OracleProtoError
from oracleproto.io import SourceReadError, read_table, sha256_file
from oracleproto.parse import parse_answer
from oracleproto.prompts import (
    PromptQuestion,
    TemplateError,
    prompt_templates_hash,
    render_user_prompt,
    templates_from_schema,
    text_hash16,
)
from oracleproto.harness.runstore import RunStore, export_trials, store_filename, write_manifest
from oracleproto.schema import CHOICE_TYPES, CUTOFF_SKIP, QUESTION_SCHEMA, QUESTION_TYPES

log = logging.getLogger("oracleproto.harness.evaluate")

TRIALS_FILE = "trials.parquet"
MANIFEST_FILE = "manifest.json"
CACHE_FILE = "calls.sqlite"
LOG_FILE = "logs/evaluate.log"
SEARCH_CHANNEL = "search"


class EvaluationError(OracleProtoError, ValueError):
    """Bad evaluation input (questions, jobs, settings); raised before any work starts."""


class EvaluationAborted(OracleProtoError, RuntimeError):
    """The run stopped: auth failure, replay miss or browsing barrier. Finished trials are kept."""


# ---------------------------------------------------------------------------------------
# Inputs


@dataclass(frozen=True)
class QuestionRecord:
    q_id: str
    question_type: str
    choice_type: str
    event: str
    options: tuple[str, ...]
    answer: str
    end_time: dt.date

    def prompt_view(self) -> PromptQuestion:
        """What the renderer may see: everything but the answer."""
        return PromptQuestion(self.q_id, self.question_type, self.choice_type, self.event, self.options, self.end_time)

    def loop_view(self) -> TrialQuestion:
        return TrialQuestion(self.q_id, self.question_type, self.choice_type, self.options, self.end_time)


def question_records(table: pa.Table, source: str) -> list[QuestionRecord]:
    """Rows of a question table, checked for what evaluation relies on, sorted by id."""
    missing = [name for name in QUESTION_SCHEMA.names if name not in table.column_names]
    if missing:
        raise EvaluationError(f"{source}: question table lacks column(s) {missing}")
    try:
        table = table.select(QUESTION_SCHEMA.names).cast(QUESTION_SCHEMA.remove_metadata())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise EvaluationError(f"{source}: columns do not match the question schema: {exc}") from exc
    records = []
    seen: set[str] = set()
    for index, row in enumerate(table.to_pylist()):
        where = f"{source}: row {index} (id {row['id']!r})"
        if row["id"] in seen:
            raise EvaluationError(f"{where}: duplicate id")
        seen.add(row["id"])
        if row["question_type"] not in QUESTION_TYPES:
            raise EvaluationError(f"{where}: question_type {row['question_type']!r} is not one of {QUESTION_TYPES}")
        if row["choice_type"] not in CHOICE_TYPES:
            raise EvaluationError(f"{where}: choice_type {row['choice_type']!r} is not one of {CHOICE_TYPES}")
        if len(row["options"]) < 2:
            raise EvaluationError(f"{where}: needs at least 2 options")
        records.append(
            QuestionRecord(
                row["id"], row["question_type"], row["choice_type"], row["event"], tuple(row["options"]), row["answer"], row["end_time"]
            )
        )
    return sorted(records, key=lambda r: r.q_id)


@dataclass(frozen=True)
class QuestionSet:
    """A question table with the templates and fingerprints it travels with."""

    path: str
    records: tuple[QuestionRecord, ...]
    templates: dict[str, str]
    templates_from_corpus: bool
    source_hash: str
    metadata_hash: str | None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> QuestionSet:
        try:
            table = read_table(path)
        except SourceReadError as exc:
            raise EvaluationError(str(exc)) from exc
        try:
            templates, from_corpus = templates_from_schema(table.schema)
        except TemplateError as exc:
            raise EvaluationError(f"{path}: {exc}") from exc
        raw_meta = (table.schema.metadata or {}).get(b"oracleproto")
        metadata_hash = None
        if raw_meta is not None:
            try:
                metadata_hash = hashlib.sha256(canonical_json(json.loads(raw_meta)).encode()).hexdigest()
            except json.JSONDecodeError:
                metadata_hash = hashlib.sha256(raw_meta).hexdigest()
        return cls(
            path=str(path),
            records=tuple(question_records(table, str(path))),
            templates=templates,
            templates_from_corpus=from_corpus,
            source_hash=sha256_file(path),
            metadata_hash=metadata_hash,
        )

    @property
    def templates_hash(self) -> str:
        return prompt_templates_hash(self.templates)

    def fingerprint(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "source_hash": self.source_hash,
            "metadata_hash": self.metadata_hash,
            "prompt_templates_hash": self.templates_hash,
            "templates_from_corpus": self.templates_from_corpus,
            "rows": len(self.records),
        }


@dataclass(frozen=True)
class EvalJob:
    spec: ModelSpec
    questions: QuestionSet
    train: QuestionSet | None = None

    @property
    def label(self) -> str:
        return self.spec.label


def admissible(cutoff: dt.date | None, end_time: dt.date, delta_days: int) -> bool:
    """κ ≤ χ < τ with χ = τ − δ (paper Eq. 3); no cutoff (baselines) admits everything."""
    chi = prediction_cutoff(end_time, delta_days)
    return (cutoff is None or cutoff <= chi) and chi < end_time


# ---------------------------------------------------------------------------------------
# Progress and summary


@dataclass
class ProgressState:
    """Live counters for a progress display."""

    total: int = 0
    resumed: int = 0  # accounted for by an earlier run
    done: int = 0  # written by this run
    skipped_cutoff: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    parsed: int = 0
    cost_usd: float = 0.0
    in_flight: dict[str, int] = field(default_factory=dict)

    def record(self, row: Mapping[str, Any]) -> None:
        self.done += 1
        if row["error"] == CUTOFF_SKIP:
            self.skipped_cutoff += 1
        elif row["error"] is not None:
            self.errors[row["error"]] += 1
        elif row["pred"] is not None:
            self.parsed += 1
        self.cost_usd += row["cost_usd"]

    @property
    def completed(self) -> int:
        return self.resumed + self.done


ProgressCallback = Callable[[ProgressState], None]


@dataclass(frozen=True)
class EvalSummary:
    out_dir: Path
    trials_path: Path
    rows: int
    ran: int
    resumed: int
    skipped_cutoff: int
    parsed: int
    errors: dict[str, int]
    cost_usd: float

    def line(self) -> str:
        errors = sum(self.errors.values())
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(self.errors.items()))
        return (
            f"evaluated {self.ran} trial(s) ({self.resumed} already done, {self.skipped_cutoff} skipped by cutoff): "
            f"{self.parsed} parsed, {errors} error(s){' (' + kinds + ')' if kinds else ''}, "
            f"cost ${self.cost_usd:.4f}; {self.rows} rows in {self.trials_path}"
        )


# ---------------------------------------------------------------------------------------
# Rows


def base_row(job: EvalJob, question: QuestionRecord, trial: int, delta_days: int) -> dict[str, Any]:
    return {
        "model": job.label,
        "q_id": question.q_id,
        "question_type": question.question_type,
        "choice_type": question.choice_type,
        "options": list(question.options),
        "answer": question.answer,
        "trial": trial,
        "cutoff": job.spec.cutoff,
        "delta_days": delta_days,
        "prediction_cutoff": prediction_cutoff(question.end_time, delta_days),
        "end_time": question.end_time,
    }


def cutoff_row(job: EvalJob, question: QuestionRecord, trial: int, delta_days: int) -> dict[str, Any]:
    """A trial outside κ ≤ χ < τ: recorded, never run."""
    return {
        **base_row(job, question, trial, delta_days),
        "pred": None,
        "error": CUTOFF_SKIP,
        "cost_usd": 0.0,
        "raw_output": None,
        "messages": None,
        "tools": None,
        "search_calls": None,
        "react_steps": 0,
        "tool_calls_count": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "reasoning_tokens": 0,
        "latency_ms": 0,
        "finish_reason": None,
        "response_id": None,
        "system_fingerprint": None,
        "belief": None,
        "nudges_used": 0,
        "final_answer_retry_used": False,
    }


def loop_row(job: EvalJob, question: QuestionRecord, trial: int, delta_days: int, loop: LoopResult) -> dict[str, Any]:
    return {
        **base_row(job, question, trial, delta_days),
        "pred": None if loop.error else loop.pred,
        "error": loop.error,
        "cost_usd": loop.cost_usd,
        "raw_output": loop.raw_output,
        "messages": loop.messages_json(),
        "tools": encode_json(loop.tools),
        "search_calls": json.dumps(loop.search_calls, ensure_ascii=False, sort_keys=True),
        "react_steps": loop.react_steps,
        "tool_calls_count": loop.tool_calls_count,
        "prompt_tokens": loop.prompt_tokens,
        "completion_tokens": loop.completion_tokens,
        "reasoning_tokens": loop.reasoning_tokens,
        "latency_ms": loop.latency_ms,
        "finish_reason": loop.finish_reason,
        "response_id": loop.response_id,
        "system_fingerprint": loop.system_fingerprint,
        "belief": loop.belief,
        "nudges_used": loop.nudges_used,
        "final_answer_retry_used": loop.final_answer_retry_used,
    }


def baseline_loop(
    job: EvalJob, question: QuestionRecord, trial: int, prompt: str, seed: int, base_rates: baselines.BaseRates | None
) -> LoopResult:
    spec = job.spec
    indices = baselines.baseline_indices(
        spec.baseline_name,
        q_id=question.q_id,
        trial=trial,
        question_type=question.question_type,
        choice_type=question.choice_type,
        options=question.options,
        seed=seed,
        base_rates=base_rates,
    )
    reply = baselines.baseline_reply(spec.baseline_name, question.question_type, question.options, indices)
    return LoopResult(
        messages=[{"role": "user", "content": prompt}, {"role": "assistant", "content": reply}],
        tools=[],
        raw_output=reply,
        pred=parse_answer(reply, question.question_type, question.options, question.choice_type),
        react_steps=1,
    )


# ---------------------------------------------------------------------------------------
# Channels


class MeteredSearch:
    """The search backend behind the search-channel semaphore, counted in flight."""

    def __init__(self, backend: Any, semaphore: asyncio.Semaphore, meter: ChannelMeter) -> None:
        self._backend = backend
        self._semaphore = semaphore
        self._meter = meter

    async def search(self, query: str, end_date: dt.date, context: CallContext) -> Any:
        async with self._semaphore, self._meter.track(SEARCH_CHANNEL):
            return await self._backend.search(query, end_date, context)


SearchFactory = Callable[[CallCache, EvalSettings, Mapping[str, str]], Any]


def default_search_factory(
    cache: CallCache, settings: EvalSettings, env: Mapping[str, str], meter: ChannelMeter | None = None
) -> Any:
    """The configured backend (``archive`` / ``tavily``) and, for mode ``llm``, its leak detector
    (its calls counted in flight on ``meter``, for the progress bar).

    The backends read their own variables (``TAVILY_API_KEY``, ``TAVILY_BASE_URL``) from the
    process environment; the detector reads ``DETECTOR_*`` from ``env``.
    """
    from oracleproto.harness.detector import DetectorSettings, LeakDetector
    from oracleproto.harness.search import SearchSettings, make_backend

    values = {
        **dict(settings.search_options),
        "max_results": settings.budgets.max_results,
        "detector_mode": settings.detector,
        "archive_path": settings.archive_path,
    }
    try:
        search_settings = SearchSettings.from_mapping(values)
        detector = None
        if settings.detector == "llm":
            detector_settings = DetectorSettings.from_env(env, require_endpoint=cache.mode != "replay")
            detector_settings = dataclasses.replace(detector_settings, concurrency=settings.concurrency.detector)
            detector = LeakDetector(detector_settings, cache, meter=meter)
        return make_backend(settings.search_backend, search_settings, cache, detector)
    except (ValueError, OSError) as exc:
        raise SettingsError(f"search backend {settings.search_backend!r}: {exc}") from exc


def detector_snapshot(settings: EvalSettings, env: Mapping[str, str], searching: bool) -> dict[str, Any] | None:
    """The LLM leak detector's snapshot fields (model, prompt hash, call parameters), or None."""
    if not searching or settings.detector != "llm" or not settings.search_enabled:
        return None
    from oracleproto.harness.detector import DetectorSettings

    return DetectorSettings.from_env(env, require_endpoint=False).snapshot()


def detector_fingerprint(settings: EvalSettings) -> str | None:
    if settings.detector != "llm" or not settings.search_enabled:
        return None
    from oracleproto.harness.detector import detector_prompt_hash

    return detector_prompt_hash()


# ---------------------------------------------------------------------------------------
# The run


def check_jobs(jobs: Sequence[EvalJob]) -> None:
    if not jobs:
        raise EvaluationError("nothing to evaluate: no model given")
    labels = [job.label for job in jobs]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise EvaluationError(f"model label(s) {duplicates} appear twice; give each evaluated model a unique label")
    for job in jobs:
        if job.spec.is_baseline and job.spec.baseline_name == "base_rate" and job.train is None:
            raise EvaluationError(f"{job.label}: baseline:base_rate needs the train split of its cutoff")


def job_fingerprint(job: EvalJob, snapshot: Mapping[str, Any], settings: EvalSettings) -> dict[str, Any]:
    fingerprint = resume_fingerprint(snapshot)
    return {
        "settings": fingerprint["settings"],
        "model": next(m for m in fingerprint["models"] if m["label"] == job.label),
        "questions": job.questions.fingerprint(),
        "train": job.train.fingerprint() if job.train else None,
        "reflection_protocol_hash": text_hash16(settings.protocols.reflection_text),
        "belief_protocol_hash": text_hash16(settings.protocols.belief_text),
        "leak_detector_prompt_hash": detector_fingerprint(settings),
    }


def build_manifest(
    jobs: Sequence[EvalJob],
    settings: EvalSettings,
    snapshot: Mapping[str, Any],
    counts: Mapping[str, Mapping[str, int]] | None = None,
    trials: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    sources: dict[str, Any] = {}
    for job in jobs:
        for qs in (job.questions, job.train):
            if qs is not None:
                sources[qs.path] = qs.fingerprint()
    models = {
        job.label: {
            "slug": job.spec.slug,
            "cutoff": job.spec.cutoff.isoformat() if job.spec.cutoff else None,
            "questions": job.questions.path,
            "train": job.train.path if job.train else None,
            "store": f"db/{store_filename(job.label)}",
            **({"counts": dict(counts[job.label])} if counts and job.label in counts else {}),
        }
        for job in sorted(jobs, key=lambda j: j.label)
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "budgets": snapshot["settings"]["budgets"],
        "models": models,
        "hash_chain": {
            "sources": sources,
            "reflection_protocol_hash": text_hash16(settings.protocols.reflection_text),
            "belief_protocol_hash": text_hash16(settings.protocols.belief_text),
            "leak_detector_prompt_hash": detector_fingerprint(settings),
            "config_snapshot_hash": hashlib.sha256(canonical_json(snapshot).encode()).hexdigest(),
        },
        "config_snapshot": snapshot,
        "trials": dict(trials) if trials else None,
    }


@dataclass
class _Run:
    """The state of one run: clients, stores, prompt and base-rate caches, progress."""

    settings: EvalSettings
    clients: dict[str, ChatClient]
    search: MeteredSearch | None
    stores: dict[str, RunStore]
    state: ProgressState
    progress: ProgressCallback | None
    cache: CallCache | None = None
    prompts: dict[tuple[str, str, bool], str] = field(default_factory=dict)
    base_rates: dict[str, baselines.BaseRates] = field(default_factory=dict)

    def prompt_for(self, job: EvalJob, question: QuestionRecord) -> str:
        key = (job.questions.path, question.q_id, job.spec.is_baseline)
        if key not in self.prompts:
            budgets = self.settings.budgets
            searchable = self.settings.search_enabled and not job.spec.is_baseline
            self.prompts[key] = render_user_prompt(
                question.prompt_view(),
                job.questions.templates,
                max_steps=budgets.max_steps,
                max_search_calls=budgets.max_search_calls if searchable else 0,
                protocols=self.settings.protocols,
            )
        return self.prompts[key]

    def base_rates_for(self, job: EvalJob) -> baselines.BaseRates | None:
        if job.train is None:
            return None
        if job.train.path not in self.base_rates:
            rows = [(r.question_type, r.choice_type, r.answer) for r in job.train.records]
            self.base_rates[job.train.path] = baselines.BaseRates.from_rows(rows)
        return self.base_rates[job.train.path]

    async def run_trial(self, job: EvalJob, question: QuestionRecord, trial: int) -> dict[str, Any]:
        delta = self.settings.budgets.delta_days
        prompt = self.prompt_for(job, question)
        if job.spec.is_baseline:
            loop = baseline_loop(job, question, trial, prompt, self.settings.seed, self.base_rates_for(job))
            return loop_row(job, question, trial, delta, loop)
        config = LoopConfig(self.settings.budgets, self.search is not None, self.settings.protocols.belief)
        try:
            loop = await run_react(
                spec=job.spec,
                label=job.label,
                question=question.loop_view(),
                trial=trial,
                prompt=prompt,
                config=config,
                model=self.clients[job.label],
                search=self.search,
            )
        except (AuthError, ReplayMissError, BrowsingBarrierError):
            raise
        except Exception as exc:
            # a bug or an unexpected backend failure: keep the run going, record the kind
            log.exception("trial %s/%s/%d failed", job.label, question.q_id, trial)
            loop = LoopResult(messages=[{"role": "user", "content": prompt}], tools=[], error=classify(exc))
        if loop.error:
            log.warning("trial %s/%s/%d: %s: %s", job.label, question.q_id, trial, loop.error, loop.error_message)
        return loop_row(job, question, trial, delta, loop)

    def write(self, row: Mapping[str, Any]) -> None:
        if self.cache is not None:
            self.cache.flush()  # the trial's recorded calls are durable before the trial is
        self.stores[row["model"]].put(row)
        self.state.record(row)
        if self.progress is not None:
            self.progress(self.state)

    async def run_all(self, pending: collections.deque[tuple[EvalJob, QuestionRecord, int]]) -> None:
        async def worker() -> None:
            while pending:
                job, question, trial = pending.popleft()
                self.write(await self.run_trial(job, question, trial))

        workers = [asyncio.create_task(worker()) for _ in range(max(1, 2 * self.settings.concurrency.llm))]
        try:
            done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                if task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)


def _attach_log(out: Path) -> logging.Handler:
    path = out / LOG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(ScrubSecretsFilter())
    logger = logging.getLogger("oracleproto")
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return handler


async def evaluate_async(
    jobs: Sequence[EvalJob],
    settings: EvalSettings,
    out_dir: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    cache_path: str | os.PathLike[str] | None = None,
    search_factory: SearchFactory | None = None,
    progress: ProgressCallback | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    transport: httpx.AsyncBaseTransport | None = None,
    http_transport: str = "lean",
) -> EvalSummary:
    """Run (or resume) an evaluation; see the module docstring for the layout.

    ``http_transport`` picks the model-call transport when none is given: ``lean``
    (default, see :class:`~oracleproto.harness.llm.LeanTransport`) or ``httpx`` (httpx's own
    connection pool).
    """
    env = os.environ if env is None else env
    check_jobs(jobs)
    out = Path(out_dir)
    replaying = settings.cache_mode == "replay"
    api_jobs = [job for job in jobs if not job.spec.is_baseline]
    if api_jobs:
        settings.check_search_ready()
    endpoints: dict[str, Endpoint] = {job.label: resolve_endpoint(job.spec, env, need_key=not replaying) for job in api_jobs}
    key_envs = search_key_envs(settings) if api_jobs else []
    snapshot = config_snapshot(settings, [job.spec for job in jobs], env, key_envs, detector_snapshot(settings, env, bool(api_jobs)))

    out.mkdir(parents=True, exist_ok=True)
    handler = _attach_log(out)
    cache: CallCache | None = None
    owned_transport = transport is None and bool(api_jobs)
    backend = None
    stores: dict[str, RunStore] = {}
    try:
        meter = ChannelMeter()
        if api_jobs:
            cache = CallCache(cache_path or out / CACHE_FILE, settings.cache_mode, deferred=True)
            if settings.search_enabled:
                factory = search_factory or functools.partial(default_search_factory, meter=meter)
                backend = factory(cache, settings, env)
        if api_jobs and transport is None:
            transport = make_transport(http_transport, max_connections=settings.concurrency.llm * 2)
        llm_slots = asyncio.Semaphore(settings.concurrency.llm)
        clients = {}
        for job in api_jobs:
            assert cache is not None and transport is not None
            clients[job.label] = ChatClient(
                endpoints[job.label], settings.sampling, cache, semaphore=llm_slots, transport=transport, meter=meter, sleep=sleep
            )
        search = MeteredSearch(backend, asyncio.Semaphore(settings.concurrency.search), meter) if backend is not None else None

        state = ProgressState(in_flight=meter.in_flight)
        run = _Run(settings, clients, search, stores, state, progress, cache)
        pending: collections.deque[tuple[EvalJob, QuestionRecord, int]] = collections.deque()
        n_trials = settings.budgets.trials
        delta = settings.budgets.delta_days
        for job in sorted(jobs, key=lambda j: j.label):
            store = RunStore(out / "db" / store_filename(job.label), job.label)
            stores[job.label] = store
            store.bind_fingerprint(job_fingerprint(job, snapshot, settings))
            # a replay re-derives every trial from the recorded calls (it is free and offline)
            accounted = set() if replaying else store.accounted()
            for question in job.questions.records:
                admitted = admissible(job.spec.cutoff, question.end_time, delta)
                for trial in range(1, n_trials + 1):
                    state.total += 1
                    if (question.q_id, trial) in accounted:
                        state.resumed += 1
                    elif not admitted:
                        run.write(cutoff_row(job, question, trial, delta))
                    else:
                        pending.append((job, question, trial))
        write_manifest(build_manifest(jobs, settings, snapshot), out / MANIFEST_FILE)
        log.info("evaluate: %d trial(s) planned, %d already done, %d to run", state.total, state.resumed, len(pending))
        if progress is not None:
            progress(state)
        try:
            await run.run_all(pending)
        except AuthError as exc:
            raise EvaluationAborted(f"authentication failed, run aborted: {exc.message}") from None
        except (ReplayMissError, BrowsingBarrierError) as exc:
            raise EvaluationAborted(f"run aborted: {SECRETS.scrub(str(exc))}") from None

        rows = [row for job in sorted(jobs, key=lambda j: j.label) for row in stores[job.label].rows()]
        trials_path = out / TRIALS_FILE
        export_trials(rows, trials_path)
        counts = {
            job.label: dict(collections.Counter(row["error"] or "ok" for row in rows if row["model"] == job.label))
            for job in jobs
        }
        trials_meta = {"path": TRIALS_FILE, "rows": len(rows), "sha256": sha256_file(trials_path)}
        write_manifest(build_manifest(jobs, settings, snapshot, counts, trials_meta), out / MANIFEST_FILE)
        summary = EvalSummary(
            out_dir=out,
            trials_path=trials_path,
            rows=len(rows),
            ran=state.done,
            resumed=state.resumed,
            skipped_cutoff=state.skipped_cutoff,
            parsed=state.parsed,
            errors=dict(state.errors),
            cost_usd=state.cost_usd,
        )
        log.info("%s", summary.line())
        return summary
    finally:
        for store in stores.values():
            store.close()
        if backend is not None:
            await backend.aclose()
        if owned_transport and transport is not None:
            await transport.aclose()
        if cache is not None:
            cache.close()
        logging.getLogger("oracleproto").removeHandler(handler)
        handler.close()


def evaluate(jobs: Sequence[EvalJob], settings: EvalSettings, out_dir: str | os.PathLike[str], **kwargs: Any) -> EvalSummary:
    """Synchronous :func:`evaluate_async`, on uvloop where it exists (a C event loop: a
    tenth of the harness CPU per trial goes to asyncio's own scheduling otherwise)."""
    try:
        import uvloop
    except ImportError:  # Windows: uvloop is not built there
        return asyncio.run(evaluate_async(jobs, settings, out_dir, **kwargs))
    return uvloop.run(evaluate_async(jobs, settings, out_dir, **kwargs))


# ---------------------------------------------------------------------------------------
# Params (the ``evaluate`` section of params.yaml) → settings and model specs

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
        _known(sampling_values, ("temperature", "top_p", "max_tokens", "timeout_s", "reasoning_patterns"), "evaluate.sampling")
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


def run_key(jobs: Sequence[EvalJob], settings: EvalSettings, snapshot: Mapping[str, Any]) -> str:
    """12 hex characters naming a run by everything that shapes its trials.

    Two runs with the same key may resume each other; a changed param or input gives a
    new key (so a DVC re-run after a param change starts fresh instead of failing).
    """
    fingerprints = [job_fingerprint(job, snapshot, settings) for job in sorted(jobs, key=lambda j: j.label)]
    return hashlib.sha256(canonical_json(fingerprints).encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------
# The DVC stage: baselines on every cutoff's split, plus opt-in API models

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
